// Every member of the pieces of a run and every field of their records, named once, with its
// part in the steady state (steady_state.hpp says what the parts are and why the names are
// structured bindings). Two things are done with the state, and they share these descriptions:
// a Writer writes it as canonical words, a Shifter moves it on by a jump. Both offer the same
// verbs:
//   word(w)      a word of the canonical state (a Shifter writes nothing)
//   op(i)        an op index: written relative to the origin, moved on by D
//   key(r, i)    a rank and an op index in one word, r << 32 | op(i)
//   since(t)     a past instant: written as the time since it, moved on by dT
//   until(t)     a pending instant: written as the time until it, moved on by dT
//   transfer(t)  a live transfer named by its send's key (pool indices differ from one cycle to
//                the next; a Shifter leaves them as they are)
//   flow(f)      a live flow named by its transfer and its share (two words)
#include "steady_state.hpp"

#include <algorithm>
#include <bit>

#include "connections.hpp"
#include "flows.hpp"
#include "lockstep/core/rng.hpp"
#include "net_reduce.hpp"
#include "ranks.hpp"
#include "route_table.hpp"
#include "simulation.hpp"
#include "transfers.hpp"
#include "uneven_orbits.hpp"

namespace lockstep::flow_detail {

namespace {

// Ends a list in the canonical state (no entry is all ones).
constexpr std::uint64_t kEndOfList = ~std::uint64_t{0};

std::uint64_t bits(double d) {
  return std::bit_cast<std::uint64_t>(d);
}

class Writer {
 public:
  static constexpr bool kMoves = false;
  Writer(std::vector<std::uint64_t>& out, OpIndex origin, Time now,
         const std::vector<Transfer>& transfers, const std::vector<Flow>& flows)
      : out_(out), origin_(origin), now_(now), transfers_(transfers), flows_(flows) {}

  void word(std::uint64_t w) { out_.push_back(w); }
  std::uint64_t op(OpIndex i) const { return static_cast<OpIndex>(i - origin_); }
  std::uint64_t key(Rank r, OpIndex i) const { return std::uint64_t{r} << 32 | op(i); }
  std::uint64_t since(Time t) const { return static_cast<std::uint64_t>((now_ - t).picoseconds()); }
  std::uint64_t until(Time t) const { return static_cast<std::uint64_t>((t - now_).picoseconds()); }
  // Rank and op of a transfer's send: unique among live transfers.
  std::uint64_t transfer(std::uint32_t t) const {
    return key(transfers_[t].src, transfers_[t].send_op);
  }
  void flow(std::uint32_t f) {
    word(transfer(flows_[f].transfer));
    word(flows_[f].share);
  }

 private:
  std::vector<std::uint64_t>& out_;
  OpIndex origin_;
  Time now_;
  const std::vector<Transfer>& transfers_;
  const std::vector<Flow>& flows_;
};

class Shifter {
 public:
  static constexpr bool kMoves = true;
  Shifter(OpIndex ops, Time dt) : ops_(ops), dt_(dt) {}

  void word(std::uint64_t) {}
  std::uint64_t op(OpIndex& i) const {
    i += ops_;
    return 0;
  }
  std::uint64_t key(Rank, OpIndex& i) const { return op(i); }
  std::uint64_t since(Time& t) const {
    t += dt_;
    return 0;
  }
  std::uint64_t until(Time& t) const { return since(t); }
  std::uint64_t transfer(std::uint32_t) const { return 0; }
  void flow(std::uint32_t) {}
  OpIndex ops() const { return ops_; }
  Time dt() const { return dt_; }

 private:
  OpIndex ops_;
  Time dt_;
};

// ---- Records ---------------------------------------------------------------------------------

// num_ops: none, fixed. base, loaded: compared, moved (the window is ops [base, loaded)).
// finish, done: none, as no jump is taken once a rank is done (FastForward::try_skip).
template <class V>
void describe(V& v, RankState& rank) {
  auto& [num_ops, base, loaded, finish, done] = rank;
  v.word(v.op(base) << 32 | v.op(loaded));
}

// time, kind, and what id and aux name: compared, moved. seq: none, the events are listed (and
// put back) in the order it gives.
template <class V>
void describe(V& v, Event& event) {
  auto& [time, seq, id, aux, kind] = event;
  v.word(v.until(time));
  v.word(static_cast<std::uint64_t>(kind));
  switch (kind) {
    case EventKind::OpDone:  // id: the rank, aux: its op
      v.word(v.key(id, aux));
      break;
    case EventKind::FlowDone:  // id: the flow; aux: its generation (stale events are not listed)
      v.flow(id);
      break;
    case EventKind::Delivered:
    case EventKind::TransferStart:  // id: the transfer
      v.word(v.transfer(id));
      break;
  }
}

// rank, op: compared, moved. bytes: none, the op's, which the program promises repeat.
template <class V>
void describe(V& v, PostedOp& posted) {
  auto& [rank, op, bytes] = posted;
  v.word(v.key(rank, op));
}

// src, send_op (its key), dst, recv_op: compared, ops moved. kind, route, pending, queue,
// streaming, wire_bytes: compared. group, net_round, member: none, NetReduce legs only (no
// fast-forward with groups). channel: none, the connection's, which `queue` names.
template <class V>
void describe(V& v, Transfer& transfer) {
  auto& [kind, src, dst, send_op, recv_op, route, pending, group, net_round, member, queue, channel,
         streaming, wire_bytes] = transfer;
  v.word(v.key(src, send_op));
  v.word(v.key(dst, recv_op));
  v.word(static_cast<std::uint64_t>(kind) << 32 | route);
  v.word(std::uint64_t{pending} << 32 | streaming);
  v.word(queue);
  v.word(bits(wire_bytes));
}

// transfer (by its key), share, cap_share, remaining, rate (bit patterns): compared. updated:
// compared, moved. var, cap: compared as the constraints' lists of flows (visit(Flows)). route:
// none, the transfer's. generation: none, stale events are dropped before listing. live: only
// live flows are listed. more: compared, by key (a bundle's other transfers).
template <class V>
void describe(V& v, Flow& flow) {
  auto& [transfer, route, var, cap, cap_share, remaining, rate, updated, generation, share, live,
         more] = flow;
  v.word(v.transfer(transfer));
  v.word(bits(cap_share));
  v.word(share);
  v.word(bits(remaining));
  v.word(bits(rate));
  v.word(v.since(updated));
  for (const std::uint32_t t : more) v.word(v.transfer(t));
  v.word(kEndOfList);
}

// sends, recvs (from their heads on): compared, ops moved. backlog (from its head on): compared,
// by key. busy: compared.
template <class V>
void describe(V& v, Connection& connection) {
  auto& [sends, recvs, send_head, recv_head, backlog, backlog_head, busy] = connection;
  v.word(kEndOfList);
  for (std::size_t k = send_head; k < sends.size(); ++k) describe(v, sends[k]);
  v.word(kEndOfList);
  for (std::size_t k = recv_head; k < recvs.size(); ++k) describe(v, recvs[k]);
  v.word(kEndOfList);
  for (std::size_t k = backlog_head; k < backlog.size(); ++k) v.word(v.transfer(backlog[k]));
  v.word(busy ? 1 : 0);
}

}  // namespace

// ---- Pieces ----------------------------------------------------------------------------------

// programs .. asymmetry: relied on (record_ops, copy_bandwidth: options). window_size: none,
// fixed. rank, slots: compared, moved.
// op_times: none (no fast-forward with record_ops). release_scratch: none, scratch. finished:
// none, as no jump is taken once a rank is done.
template <class V>
void SteadyState::visit(V& v, Ranks& ranks) {
  auto& [programs, map, record_ops, copy_bandwidth, events, connections, net_reduce, asymmetry,
         window_size, rank, slots, op_times, release_scratch, finished] = ranks;
  for (Rank r = 0; r < rank.size(); ++r) {
    if constexpr (V::kMoves) {
      // Slot of op i moves from i % W to (i + D) % W: rotate the rank's ring buffer right.
      const std::size_t turn = v.ops() % window_size;
      const auto first = slots.begin() + static_cast<std::ptrdiff_t>(r) * window_size;
      std::rotate(first, first + static_cast<std::ptrdiff_t>((window_size - turn) % window_size),
                  first + window_size);
    }
    RankState& rs = rank[r];
    describe(v, rs);
    for (OpIndex i = rs.base; i < rs.loaded; ++i) visit_slot(v, ranks, r, i);
  }
}

// op: none, the program's op i, which the program promises repeats (check_promise); a jump
// reloads it. state, unfinished: compared. first_dependent: compared as the list of the ops
// waiting for this one; next_dependent: compared as part of the lists of the ops this one waits
// for. net_round: none, NetReduce only.
template <class V>
void SteadyState::visit_slot(V& v, Ranks& ranks, Rank r, OpIndex i) {
  auto& [op, state, unfinished, net_round, first_dependent, next_dependent] = ranks.slot_of(r, i);
  v.word(static_cast<std::uint64_t>(state) << 8 | unfinished);
  if constexpr (V::kMoves) {
    op = IssuedOp(programs_.op(map_.real(r), i));
  } else {
    for (std::uint32_t link = first_dependent; link != kNoLink;) {
      const auto j = static_cast<OpIndex>(i + link / kMaxDeps);
      v.word(v.op(j) << 8 | link % kMaxDeps);
      link = ranks.slot_of(r, j).next_dependent[link % kMaxDeps];
    }
  }
  v.word(kEndOfList);
}

// in .. asymmetry: relied on. records: compared (describe), live ones in key order. free_ids:
// none, the pool's free list. done: an output, extrapolated. link_bytes: an output of one-off
// routes (adaptive routing, which has no fast-forward).
template <class V>
void SteadyState::visit(V& v, Transfers& transfers) {
  auto& [in, map, events, routes, flows, ranks, connections, net_reduce, load, asymmetry, records,
         free_ids, done, link_bytes] = transfers;
  free_.assign(records.size(), 0);
  for (const std::uint32_t t : free_ids) free_[t] = 1;
  sorted_.clear();
  for (std::uint32_t t = 0; t < records.size(); ++t)
    if (!free_[t]) sorted_.emplace_back(v.transfer(t), t);
  if constexpr (!V::kMoves) std::sort(sorted_.begin(), sorted_.end());
  for (const auto& [key, t] : sorted_) describe(v, records[t]);
}

// options .. uneven: relied on. records: compared (describe), live ones by (transfer key,
// share), then the solver's order of them on each constraint. free_ids: none, the pool's free
// list. flow_of_var: names the flows in those orders. cap_index: none, keys (rank, channel) a
// cycle does not move. uses_scratch: none, scratch. solves: none, a count. rate_log: an output,
// extrapolated. open: none, empty after a solve (fast-forward looks after one).
// done_more: none, scratch. bundled: none, a count.
template <class V>
void SteadyState::visit(V& v, Flows& flows) {
  auto& [options, bundle, events, routes, solver, uneven, records, free_ids, flow_of_var, cap_index,
         uses_scratch, solves, rate_log, open, done_more, bundled] = flows;
  free_.assign(records.size(), 0);
  for (const std::uint32_t f : free_ids) free_[f] = 1;
  sorted_.clear();
  for (std::uint32_t f = 0; f < records.size(); ++f)
    if (!free_[f]) sorted_.emplace_back(v.transfer(records[f].transfer), f);
  if constexpr (!V::kMoves) {
    const std::vector<Flow>& all = records;  // clang < 16 captures no structured binding
    std::sort(sorted_.begin(), sorted_.end(), [&all](const auto& x, const auto& y) {
      return x.first != y.first ? x.first < y.first : all[x.second].share < all[y.second].share;
    });
  }
  links_.clear();
  for (const auto& [key, f] : sorted_) {
    describe(v, records[f]);
    if constexpr (!V::kMoves) {
      for (const auto& use : routes[records[f].route].shares[records[f].share].uses)
        links_.push_back(use.cons);
      // A channel limit is keyed by (simulated rank, channel), which the cycle does not move,
      // and its id never changes once created; its order of flows is compared like a link's.
      if (records[f].cap != kNone) links_.push_back(records[f].cap);
    }
  }
  if constexpr (!V::kMoves) {
    // The solver's order of flows on each constraint they cross decides the order of its
    // floating-point sums.
    std::sort(links_.begin(), links_.end());
    links_.erase(std::unique(links_.begin(), links_.end()), links_.end());
    const std::vector<std::uint32_t>& flow_of = flow_of_var;
    for (const std::uint32_t l : links_) {
      v.word(l);
      solver.for_each_on(l, [&v, &flow_of](MaxMinSolver::VarId var, double coefficient) {
        v.flow(flow_of[var]);
        v.word(bits(coefficient));
      });
    }
  }
}

// now: moved, the origin of the instants written. seq: none, order stamps kept by a jump.
// queue: compared (describe), live events in the order they will run, moved. current: none, the
// instant's events, all run. instant: none, empty when fast-forward looks (an instant is over).
// processed: an output (events run), not extrapolated.
template <class V>
void SteadyState::visit(V& v, Events& events) {
  auto& [now, seq, queue, current, instant, processed] = events;
  events_scratch_.clear();
  queue.for_each([&](const Event& e) {
    if (live(e)) events_scratch_.push_back(e);
  });
  std::sort(events_scratch_.begin(), events_scratch_.end(),
            [](const Event& x, const Event& y) { return EventLater{}(y, x); });
  for (Event& e : events_scratch_) describe(v, e);
  if constexpr (V::kMoves) {
    // Put back in (time, seq) order, so each instant keeps its order.
    queue.clear();
    for (const Event& e : events_scratch_) queue.push(e);
    now += v.dt();
  }
}

// map, transfers: relied on. index: none, keys (class, receiver, channel) a cycle does not
// move. records: compared (describe), moved.
template <class V>
void SteadyState::visit(V& v, Connections& connections) {
  auto& [map, transfers, index, records] = connections;
  for (Connection& c : records) describe(v, c);
}

// NetReduce: fast-forward is off for programs with NetReduce groups (FastForward::enabled) and
// waits for every round to be finished, so none of it is state.
void SteadyState::none_of(const NetReduce& net_reduce) {
  [[maybe_unused]] const auto& [in, map, paths, routes, events, transfers, ranks, asymmetry, plans,
                                groups, states, free_states, rounds_open, rounds_loaded, roots,
                                group_of_members, hop_legs, targets_scratch, member_groups_scratch,
                                members_scratch, done_scratch] = net_reduce;
}

// UnevenOrbits: the relaxed capacities are set once per uneven orbit as routes are built, the
// summed rates per route follow the live flows (up to the order of their sums, which the check's
// slack of 1e-9 absorbs), and the changed routes and the check marks are scratch.
void SteadyState::none_of(const UnevenOrbits& uneven) {
  [[maybe_unused]] const auto& [routes, solver, directed_links, relaxed_capacity, route_rate,
                                changed, checked_in, checks] = uneven;
}

// Simulation: in, config, map: fixed. asymmetry: None whenever fast-forward looks. events, ranks,
// connections, transfers, flows: above. The solver's state is its order of flows per constraint
// (written with the flows); at the end of an instant it has just solved and holds no pending
// change. The route table is a function of the class map and the router, only ever added to;
// its bytes carried are outputs, extrapolated. uneven, net_reduce: above. steady (this) and
// fast_forward (its snapshots) observe the run.
void SteadyState::none_of(const Simulation& simulation) {
  [[maybe_unused]] const auto& [in, config, map, asymmetry, events, solver, routes, uneven, ranks,
                                connections, transfers, flows, net_reduce, steady, fast_forward] =
      simulation;
}

// ---- The state -------------------------------------------------------------------------------

SteadyState::SteadyState(const ProgramSet& programs, const ClassMap& map, Events& events,
                         Ranks& ranks, Connections& connections, Transfers& transfers, Flows& flows,
                         RouteTable& routes)
    : programs_(programs),
      map_(map),
      events_(events),
      ranks_(ranks),
      connections_(connections),
      transfers_(transfers),
      flows_(flows),
      routes_(routes) {}

bool SteadyState::live(const Event& e) const {
  return e.kind != EventKind::FlowDone || flows_.flows_[e.id].generation == e.aux;
}

void SteadyState::write(std::vector<std::uint64_t>& out, OpIndex origin) {
  out.clear();
  Writer w(out, origin, events_.now(), transfers_.transfers_, flows_.flows_);
  visit(w, ranks_);
  visit(w, transfers_);
  visit(w, flows_);
  visit(w, events_);
  visit(w, connections_);
}

void SteadyState::shift(OpIndex ops, Time dt) {
  Shifter s(ops, dt);
  visit(s, events_);
  visit(s, ranks_);
  visit(s, transfers_);
  visit(s, flows_);
  visit(s, connections_);
}

std::uint64_t SteadyState::signature(OpIndex origin) const {
  const auto rel = [origin](OpIndex i) -> std::uint64_t {
    return static_cast<OpIndex>(i - origin);
  };
  std::uint64_t h = ranks_.count();
  for (Rank r = 0; r < ranks_.count(); ++r)
    h = mix64(h ^ (rel(ranks_.cursor(r).base) << 32 | rel(ranks_.cursor(r).loaded)));
  // Events as a multiset: an order-free sum, so the queue's layout does not matter.
  std::uint64_t events = 0, live_events = 0;
  events_.queue_.for_each([&](const Event& e) {
    if (!live(e)) return;
    ++live_events;
    events += mix64(static_cast<std::uint64_t>((e.time - events_.now()).picoseconds()) << 2 |
                    static_cast<std::uint64_t>(e.kind));
  });
  return mix64(h ^ mix64(events ^ live_events));
}

void SteadyState::totals(Totals& out) const {
  out.carried.resize(routes_.size());
  for (std::uint32_t id = 0; id < routes_.size(); ++id) out.carried[id] = routes_[id].carried;
  out.transfers_done = transfers_.done_;
  out.rate_log = flows_.rate_log_.size();
}

void SteadyState::extrapolate(const Totals& earlier, std::uint64_t cycles, Time dt) {
  for (std::uint32_t id = 0; id < routes_.size(); ++id) {
    const double before = id < earlier.carried.size() ? earlier.carried[id] : 0.0;
    routes_[id].carried += static_cast<double>(cycles) * (routes_[id].carried - before);
  }
  transfers_.done_ += cycles * (transfers_.done_ - earlier.transfers_done);
  std::vector<RateChange>& log = flows_.rate_log_;
  const std::size_t end = log.size();
  if (end == earlier.rate_log) return;
  for (std::uint64_t c = 1; c <= cycles; ++c) {
    for (std::size_t e = earlier.rate_log; e < end; ++e) {
      RateChange change = log[e];
      change.at += dt * static_cast<std::int64_t>(c);
      log.push_back(change);
    }
  }
}

}  // namespace lockstep::flow_detail
