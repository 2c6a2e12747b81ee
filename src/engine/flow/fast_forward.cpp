// Steady-state fast-forward of a flow-engine run (docs/flow-engine.md).
//
// A ring step repeats the one before it, so once the transient has died out the simulation state
// at some instant t_b equals the state at an earlier instant t_a with every op index moved on by
// D ops: the same ops waiting or running relative to each rank's cursor, the same transfers with
// the same remaining bytes and rates, the same pending events at the same distances in time, the
// same order inside the solver. Everything after t_b is then the run after t_a moved by D ops and
// dT = t_b - t_a, so j more cycles are applied at once: op indices + j*D, times + j*dT, and
// j times the cycle's bytes per route, transfer count and link-rate log. The program promises the
// repetition of its ops (ProgramSet::periodic_region); the engine checks the state itself, so the
// result equals the full simulation's to the picosecond.
//
// The state is compared as a list of 64-bit words written in a canonical order (pool indices and
// event sequence numbers do not appear, only what decides the future). Snapshots are taken only
// when simulated rank 0 has just reached a period boundary. Each gets a cheap signature (the
// cursors and the live events' distances in time); the whole state is written only for the first
// few snapshots, every power-of-two-th, and those whose signature repeated, and a few are kept
// whole to verify a repetition exactly. Many-channel rings can wander for thousands of steps
// without repeating (channels sharing NVLink ports drift in and out of phase); the signature
// keeps those runs from paying for a full state at every boundary.
#include <algorithm>
#include <bit>
#include <cstring>
#include <stdexcept>

#include "lockstep/core/rng.hpp"
#include "simulation.hpp"

namespace lockstep::flow_detail {

namespace {
// Whole snapshots kept per region: the first few (one of them usually already in the steady
// state), every power-of-two-th, and those whose hash repeated an earlier one (verified one
// cycle later).
constexpr std::size_t kSavedFirst = 8;
constexpr std::size_t kSavedMax = 48;
// A snapshot word costs about a hundredth of an event; allow ~1/32 of the run's time for them.
constexpr std::uint64_t kWordsPerEvent = 32;
constexpr std::uint32_t kMaxStride = 1u << 12;
// Ends a list in the canonical state (no entry is all ones).
constexpr std::uint64_t kEndOfList = ~std::uint64_t{0};

std::uint64_t bits(double d) {
  return std::bit_cast<std::uint64_t>(d);
}
std::uint64_t rel(OpIndex i, OpIndex origin) {
  return static_cast<OpIndex>(i - origin);
}
}  // namespace

void Simulation::reset_fast_forward() {
  ff_marks_.clear();
  ff_by_hash_.clear();
  ff_saved_.clear();
}

// Rank and op of a transfer's send, relative to the origin: unique among live transfers.
std::uint64_t Simulation::transfer_key(std::uint32_t t, OpIndex origin) const {
  const Transfer& tr = transfers_[t];
  return static_cast<std::uint64_t>(tr.src) << 32 | rel(tr.send_op, origin);
}

void Simulation::canonical_state(std::vector<std::uint64_t>& out, OpIndex origin) {
  out.clear();
  // Ranks: cursors and the window's slots with their waiting dependents (in list order).
  for (Rank r = 0; r < classes_; ++r) {
    const RankState& rs = rank_[r];
    out.push_back(rel(rs.base, origin) << 32 | rel(rs.loaded, origin));
    for (OpIndex i = rs.base; i < rs.loaded; ++i) {
      const Slot& s = slot_of(r, i);
      out.push_back(static_cast<std::uint64_t>(s.state) << 8 | s.unfinished);
      for (std::uint32_t link = s.first_dependent; link != kNoLink;) {
        const auto j = static_cast<OpIndex>(i + link / kMaxDeps);
        out.push_back(rel(j, origin) << 8 | link % kMaxDeps);
        link = slot_of(r, j).next_dependent[link % kMaxDeps];
      }
      out.push_back(kEndOfList);
    }
  }
  // Live transfers, by key.
  ff_free_.assign(transfers_.size(), 0);
  for (const std::uint32_t t : free_transfers_) ff_free_[t] = 1;
  ff_sort_.clear();
  for (std::uint32_t t = 0; t < transfers_.size(); ++t)
    if (!ff_free_[t]) ff_sort_.emplace_back(transfer_key(t, origin), t);
  std::sort(ff_sort_.begin(), ff_sort_.end());
  for (const auto& [key, t] : ff_sort_) {
    const Transfer& tr = transfers_[t];
    out.push_back(key);
    out.push_back(static_cast<std::uint64_t>(tr.dst) << 32 | rel(tr.recv_op, origin));
    out.push_back(static_cast<std::uint64_t>(tr.kind) << 32 | tr.route);
    out.push_back(static_cast<std::uint64_t>(tr.pending) << 32 | tr.streaming);
    out.push_back(tr.queue);
    out.push_back(bits(tr.wire_bytes));
  }
  // Live flows, by (transfer, share), and the solver's per-link order of them.
  ff_free_.assign(flows_.size(), 0);
  for (const std::uint32_t f : free_flows_) ff_free_[f] = 1;
  auto flow_key = [&](std::uint32_t f) {  // two words: transfer, share
    out.push_back(transfer_key(flows_[f].transfer, origin));
    out.push_back(flows_[f].share);
  };
  ff_sort_.clear();
  for (std::uint32_t f = 0; f < flows_.size(); ++f)
    if (!ff_free_[f]) ff_sort_.emplace_back(transfer_key(flows_[f].transfer, origin), f);
  std::sort(ff_sort_.begin(), ff_sort_.end(), [&](const auto& x, const auto& y) {
    return x.first != y.first ? x.first < y.first : flows_[x.second].share < flows_[y.second].share;
  });
  std::vector<DirLinkId>& links = ff_links_;
  links.clear();
  for (const auto& [key, f] : ff_sort_) {
    const Flow& flow = flows_[f];
    flow_key(f);
    out.push_back(bits(flow.remaining));
    out.push_back(bits(flow.rate));
    out.push_back(static_cast<std::uint64_t>((now_ - flow.updated).picoseconds()));
    for (const auto& use : routes_[transfers_[flow.transfer].route].shares[flow.share].uses)
      links.push_back(use.cons);
    // A channel limit is keyed by (simulated rank, channel), which the cycle does not move, and
    // its id never changes once created; its order of flows is compared like a link's.
    if (flow.cap != kNone) links.push_back(flow.cap);
  }
  std::sort(links.begin(), links.end());
  links.erase(std::unique(links.begin(), links.end()), links.end());
  for (const DirLinkId l : links) {
    out.push_back(l);
    solver_.for_each_on(l, [&](MaxMinSolver::VarId v, double coefficient) {
      flow_key(flow_of_var_[v]);
      out.push_back(bits(coefficient));
    });
  }
  // Live events in the order they will run, at their distance in time.
  ff_events_.clear();
  queue_.for_each([&](const Event& ev) {
    if (ev.kind != EventKind::FlowDone || flows_[ev.id].generation == ev.aux)
      ff_events_.push_back(ev);
  });
  std::sort(ff_events_.begin(), ff_events_.end(),
            [](const Event& x, const Event& y) { return EventLater{}(y, x); });
  for (const Event& ev : ff_events_) {
    out.push_back(static_cast<std::uint64_t>((ev.time - now_).picoseconds()));
    out.push_back(static_cast<std::uint64_t>(ev.kind));
    switch (ev.kind) {
      case EventKind::OpDone:
        out.push_back(static_cast<std::uint64_t>(ev.id) << 32 | rel(ev.aux, origin));
        break;
      case EventKind::FlowDone:
        flow_key(ev.id);
        break;
      case EventKind::Delivered:
      case EventKind::TransferStart:
        out.push_back(transfer_key(ev.id, origin));
        break;
    }
  }
  // Connections: unmatched sends and recvs, backlog, busy flag.
  for (const MatchQueue& q : queues_) {
    out.push_back(kEndOfList);
    for (std::size_t k = q.send_head; k < q.sends.size(); ++k)
      out.push_back(static_cast<std::uint64_t>(q.sends[k].rank) << 32 | rel(q.sends[k].op, origin));
    out.push_back(kEndOfList);
    for (std::size_t k = q.recv_head; k < q.recvs.size(); ++k)
      out.push_back(static_cast<std::uint64_t>(q.recvs[k].rank) << 32 | rel(q.recvs[k].op, origin));
    out.push_back(kEndOfList);
    for (std::size_t k = q.backlog_head; k < q.backlog.size(); ++k)
      out.push_back(transfer_key(q.backlog[k], origin));
    out.push_back(q.busy ? 1 : 0);
  }
}

std::uint64_t Simulation::signature(OpIndex origin) const {
  std::uint64_t h = classes_;
  for (Rank r = 0; r < classes_; ++r)
    h = mix64(h ^ (rel(rank_[r].base, origin) << 32 | rel(rank_[r].loaded, origin)));
  // Events as a multiset: an order-free sum, so the heap's layout does not matter.
  std::uint64_t events = 0, live = 0;
  queue_.for_each([&](const Event& ev) {
    if (ev.kind == EventKind::FlowDone && flows_[ev.id].generation != ev.aux) return;
    ++live;
    events += mix64(static_cast<std::uint64_t>((ev.time - now_).picoseconds()) << 2 |
                    static_cast<std::uint64_t>(ev.kind));
  });
  return mix64(h ^ mix64(events ^ live));
}

// Keeps `mark`'s whole state. When kSavedMax are kept, the oldest one kept only because its
// signature had repeated makes room: a newer snapshot with that signature replaced it in
// ff_by_hash_ anyway, or its cycle is longer than the slots cover (the kept ones catch those).
void Simulation::save_state(PeriodMark& mark, bool keep) {
  std::size_t slot = ff_saved_.size();
  if (slot >= kSavedMax) {
    for (std::size_t s = 0; s < ff_saved_.size(); ++s)
      if (!ff_saved_[s].keep &&
          (slot == ff_saved_.size() || ff_saved_[s].mark < ff_saved_[slot].mark))
        slot = s;
    if (slot == ff_saved_.size()) return;
    ff_marks_[ff_saved_[slot].mark].saved = -1;
  }
  SavedState saved;
  saved.mark = static_cast<std::uint32_t>(ff_marks_.size());  // mark is pushed next
  saved.keep = keep;
  saved.words = ff_words_;
  saved.carried.resize(routes_.size());
  for (std::uint32_t id = 0; id < routes_.size(); ++id) saved.carried[id] = routes_[id].carried;
  saved.rate_log = rate_log_.size();
  saved.transfers_done = transfers_done_;
  mark.saved = static_cast<std::int32_t>(slot);
  if (slot == ff_saved_.size()) {
    ff_saved_.push_back(std::move(saved));
  } else {
    ff_saved_[slot] = std::move(saved);
  }
}

// Called at the end of every instant.
void Simulation::fast_forward_check() {
  const RankState& r0 = rank_[0];
  if (r0.base == ff_last_base_) return;
  ff_last_base_ = r0.base;
  if (r0.base >= r0.num_ops || net_rounds_open_ > 0) return reset_fast_forward();
  const PeriodicRegion region = programs_.periodic_region(0, r0.base);
  // A window reaching past the region's last period leaves nothing to skip (the CLI gives ranks
  // their whole program as window so that channels laid out one after another overlap).
  if (region.period_ops == 0 || r0.loaded + region.period_ops > region.end()) {
    ff_region_first_ = 0;
    return reset_fast_forward();
  }
  if (region.first_op != ff_region_first_ || ff_marks_.empty()) {
    reset_fast_forward();
    ff_region_first_ = region.first_op;
    ff_stride_ = 1;
  }
  const OpIndex boundary = (r0.base - region.first_op) / region.period_ops;
  if ((r0.base - region.first_op) % region.period_ops != 0 || boundary % ff_stride_ != 0) return;

  const std::uint64_t hash = signature(r0.base);
  PeriodMark mark{hash, now_, r0.base, events_, -1};
  const auto it = ff_by_hash_.find(hash);
  // The first few and then every power-of-two-th are kept whole: one of them lies past the
  // transient and within one cycle of the steady state's start, to be matched a cycle later.
  const bool keep = ff_marks_.size() < kSavedFirst || std::has_single_bit(ff_marks_.size());
  if (it != ff_by_hash_.end() || keep) {
    canonical_state(ff_words_, r0.base);
    // Keep the snapshots' cost a small fraction of the simulation's: with wide issue windows a
    // state has many words per event, so look only at every stride-th boundary (a power of
    // two, so earlier snapshots stay on the grid).
    if (!ff_marks_.empty()) {
      const PeriodMark& last = ff_marks_.back();
      const std::uint64_t periods = boundary - (last.origin - region.first_op) / region.period_ops;
      const std::uint64_t per_period =
          std::max<std::uint64_t>(1, (events_ - last.events) / periods);
      while (ff_stride_ < kMaxStride && ff_words_.size() > kWordsPerEvent * per_period * ff_stride_)
        ff_stride_ *= 2;
    }
    if (it != ff_by_hash_.end()) {
      const PeriodMark& earlier = ff_marks_[it->second];
      if (earlier.saved >= 0 && ff_saved_[earlier.saved].words == ff_words_ &&
          try_skip(earlier, ff_saved_[earlier.saved])) {
        return reset_fast_forward();
      }
    }
    // A repeated signature: so that the next repetition can be verified against this one.
    save_state(mark, keep);
  }
  ff_by_hash_[hash] = static_cast<std::uint32_t>(ff_marks_.size());
  ff_marks_.push_back(mark);
}

// The state now equals `a`'s moved on by D ops; apply as many further cycles as every rank's
// periodic region holds.
bool Simulation::try_skip(const PeriodMark& a, const SavedState& saved) {
  const OpIndex d = rank_[0].base - a.origin;
  const Time dt = now_ - a.time;
  if (d == 0 || dt <= Time::zero()) return false;
  std::uint64_t cycles = ~std::uint64_t{0};
  for (Rank r = 0; r < classes_ && cycles > 0; ++r) {
    const RankState& rs = rank_[r];
    if (rs.done || rs.base < d) return false;
    // Every op touched from `a` on, and in the cycles to skip, must lie in one region.
    const PeriodicRegion region = programs_.periodic_region(map_.real(r), rs.base - d);
    if (region.period_ops == 0 || d % region.period_ops != 0 || rs.loaded > region.end())
      return false;
    cycles = std::min<std::uint64_t>(cycles, (region.end() - rs.loaded) / d);
  }
  if (cycles == 0 || cycles == ~std::uint64_t{0}) return false;
  const auto ops = static_cast<OpIndex>(cycles * d);
  // The program's promise, checked on the ops in the window.
  for (Rank r = 0; r < classes_; ++r) {
    for (OpIndex i = rank_[r].base; i < rank_[r].loaded; ++i) {
      const Op now = programs_.op(map_.real(r), i);
      const Op later = programs_.op(map_.real(r), i + ops);
      bool same = now.kind == later.kind && now.peer == later.peer &&
                  now.channel == later.channel && now.bytes() == later.bytes() &&
                  now.duration == later.duration && now.num_deps == later.num_deps;
      for (std::uint32_t k = 0; same && k < now.num_deps; ++k)
        same = now.deps[k] + ops == later.deps[k];
      if (!same) {
        throw std::logic_error(
            "flow engine: " + programs_.label() +
            " declares a periodic region whose ops do not repeat (ProgramSet::periodic_region)");
      }
    }
  }

  // Per-cycle increments, then the jump.
  const auto k = static_cast<std::int64_t>(cycles);
  for (std::uint32_t id = 0; id < routes_.size(); ++id) {
    const double before = id < saved.carried.size() ? saved.carried[id] : 0.0;
    routes_[id].carried += static_cast<double>(cycles) * (routes_[id].carried - before);
  }
  transfers_done_ += cycles * (transfers_done_ - saved.transfers_done);
  if (in_.options.record_link_series) {
    const std::size_t end = rate_log_.size();
    for (std::int64_t c = 1; c <= k; ++c)
      for (std::size_t e = saved.rate_log; e < end; ++e) {
        RateChange change = rate_log_[e];
        change.at += dt * c;
        rate_log_.push_back(change);
      }
  }
  shift_state(ops, dt * k);
  ++ff_jumps_;
  ff_skipped_ops_ += ops;
  return true;
}

// Moves every op index on by `ops` and every time by `dt`.
void Simulation::shift_state(OpIndex ops, Time dt) {
  now_ += dt;
  const std::size_t turn = ops % window_size_;
  for (Rank r = 0; r < classes_; ++r) {
    RankState& rs = rank_[r];
    // Slot of op i moves from i % W to (i + ops) % W: rotate the rank's ring buffer right.
    const auto first = slots_.begin() + static_cast<std::ptrdiff_t>(r) * window_size_;
    std::rotate(first, first + static_cast<std::ptrdiff_t>((window_size_ - turn) % window_size_),
                first + window_size_);
    rs.base += ops;
    rs.loaded += ops;
    for (OpIndex i = rs.base; i < rs.loaded; ++i) {
      Slot& s = slot_of(r, i);
      s.op = IssuedOp(programs_.op(map_.real(r), i));
    }
  }
  ff_last_base_ = rank_[0].base;
  ff_events_.clear();
  queue_.for_each([&](Event e) {
    if (e.kind == EventKind::FlowDone && flows_[e.id].generation != e.aux) return;
    e.time += dt;
    if (e.kind == EventKind::OpDone) e.aux += ops;
    ff_events_.push_back(e);
  });
  // Re-queued in (time, seq) order, so each instant keeps its order.
  std::sort(ff_events_.begin(), ff_events_.end(),
            [](const Event& x, const Event& y) { return EventLater{}(y, x); });
  queue_.clear();
  for (const Event& e : ff_events_) queue_.push(e);
  ff_free_.assign(transfers_.size(), 0);
  for (const std::uint32_t t : free_transfers_) ff_free_[t] = 1;
  for (std::uint32_t t = 0; t < transfers_.size(); ++t) {
    if (ff_free_[t]) continue;
    transfers_[t].send_op += ops;
    transfers_[t].recv_op += ops;
  }
  ff_free_.assign(flows_.size(), 0);
  for (const std::uint32_t f : free_flows_) ff_free_[f] = 1;
  for (std::uint32_t f = 0; f < flows_.size(); ++f)
    if (!ff_free_[f]) flows_[f].updated += dt;
  for (MatchQueue& q : queues_) {
    for (std::size_t k = q.send_head; k < q.sends.size(); ++k) q.sends[k].op += ops;
    for (std::size_t k = q.recv_head; k < q.recvs.size(); ++k) q.recvs[k].op += ops;
  }
}

}  // namespace lockstep::flow_detail
