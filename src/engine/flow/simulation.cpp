#include "simulation.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "lockstep/core/error.hpp"
#include "lockstep/core/rng.hpp"

namespace lockstep::flow_detail {

namespace {
// Wire bytes are payload / transfer_efficiency everywhere; a network link with its own
// efficiency gets its capacity scaled so that it moves payload at network_transfer_efficiency.
std::vector<double> link_capacities(const Topology& topo, const EngineOptions& options) {
  const double network_scale =
      options.network_transfer_efficiency > 0
          ? options.network_transfer_efficiency / options.transfer_efficiency
          : 1.0;
  std::vector<double> caps(topo.num_directed_links());
  for (std::size_t d = 0; d < caps.size(); ++d) {
    const auto link = static_cast<LinkId>(d >> 1);
    caps[d] = topo.link(link).bandwidth.bytes_per_second();
    if (network_scale != 1.0 && is_network_link(topo, link)) caps[d] *= network_scale;
  }
  return caps;
}

// Op slots for all simulated ranks together (about 150 bytes each). By default (issue_window 0)
// few ranks get deep windows (independent channels laid out one after another still overlap)
// and many ranks shallow ones, down to 16, so the working set stays in cache. An explicit
// window is honoured up to a hard memory cap of 16 M slots (about 2.4 GB): a window below what
// the program needs holds later chunks back and changes the answer (at 4 M, 1,024-GPU nvls_tree
// runs got a 3,906-op window for 16,384-op programs and finished 5% late).
constexpr std::uint64_t kAutoSlotBudget = 65'536;
constexpr std::uint64_t kMaxSlots = 16'777'216;
static_assert(kMaxSlots * kMaxDeps < 0xFFFFFFFFull, "dependent links are 32-bit offsets");

std::uint32_t issue_window(const FlowEngineConfig& config, Rank classes) {
  const std::uint64_t ranks = std::max<Rank>(1, classes);
  const std::uint64_t cap = std::max<std::uint64_t>(16, kMaxSlots / ranks);
  const std::uint64_t wanted = config.issue_window > 0
                                   ? config.issue_window
                                   : std::max<std::uint64_t>(16, kAutoSlotBudget / ranks);
  return static_cast<std::uint32_t>(std::max<std::uint64_t>(1, std::min(wanted, cap)));
}

}  // namespace

std::uint32_t Simulation::queue(Rank src_class, Rank to, std::uint16_t channel) {
  const std::uint64_t a = static_cast<std::uint64_t>(src_class) << 32 | to;
  const std::uint64_t b = channel;
  std::uint32_t id = queue_index_.find(a, b);
  if (id == FlatIndex::kMissing) {
    id = static_cast<std::uint32_t>(queues_.size());
    queues_.emplace_back();
    queue_index_.insert(a, b, id);
  }
  return id;
}

Simulation::Simulation(const EngineInput& input, const FlowEngineConfig& config, PathCache& paths,
                       const ClassMap& classes)
    : in_(input),
      config_(config),
      topo_(*input.topology),
      programs_(*input.programs),
      ranks_(input.programs->num_ranks()),
      classes_(classes.classes()),
      map_(classes),
      window_size_(issue_window(config, classes_)),
      routes_(topo_, paths, input.placement, classes),
      paths_(paths),
      solver_(link_capacities(topo_, input.options)) {
  routes_.set_network_latency(input.options.network_message_latency);
  rank_.resize(classes_);
  OpIndex longest = 1;
  for (Rank r = 0; r < classes_; ++r) {
    rank_[r].num_ops = programs_.num_ops(map_.real(r));
    longest = std::max(longest, rank_[r].num_ops);
  }
  window_size_ = std::min<std::uint32_t>(window_size_, longest);
  slots_.resize(static_cast<std::size_t>(classes_) * window_size_);
  if (in_.options.record_ops) {
    op_times_.resize(classes_);
    for (Rank r = 0; r < classes_; ++r) op_times_[r].resize(rank_[r].num_ops);
  }
  link_bytes_.assign(topo_.num_directed_links(), 0.0);
  instant_.reserve(1024);
  // Skipped cycles leave no per-op times, adaptive routes depend on history the canonical state
  // does not hold, and NetReduce groups are keyed by group, not by op.
  ff_enabled_ = config_.fast_forward && !in_.options.record_ops &&
                in_.router->policy() != RoutingPolicy::Adaptive && programs_.num_groups() == 0;
}

// Events run in (time, seq) order. An event for the current instant goes behind the instant's
// other events: those queued before the instant began were pushed before it (smaller seq).
void Simulation::push(Time at, EventKind kind, std::uint32_t id, std::uint32_t aux) {
  const Event e{at, seq_++, id, aux, kind};
  if (at == now_) {
    instant_.push_back(e);
  } else {
    queue_.push(e);
  }
}

void Simulation::dispatch(const Event& e) {
  ++events_;
  switch (e.kind) {
    case EventKind::OpDone:
      finish_op(e.id, e.aux);
      break;
    case EventKind::FlowDone:
      flow_done(e.id, e.aux);
      break;
    case EventKind::Delivered:
      delivered(e.id);
      break;
    case EventKind::TransferStart:
      begin_transfer(e.id);
      break;
  }
}

std::optional<RunResult> Simulation::run() {
  // An asymmetry ends the attempt where it is found (the state is then of no use).
  for (Rank r = 0; r < classes_; ++r) {
    advance(r);
    if (gave_up()) return std::nullopt;
  }
  apply_rates();
  if (gave_up()) return std::nullopt;
  // With events of now_ queued (the initial load's, or flows the last solve finished at once)
  // the next instant is now_ again.
  while (!queue_.empty() || !instant_.empty()) {
    if (instant_.empty()) {
      now_ = queue_.next_time();
      queue_.take_next(current_);
      for (const Event& e : current_) {
        dispatch(e);
        if (gave_up()) return std::nullopt;
      }
    }
    for (std::size_t k = 0; k < instant_.size(); ++k) {
      dispatch(Event{instant_[k]});
      if (gave_up()) return std::nullopt;
    }
    instant_.clear();
    apply_rates();
    if (gave_up()) return std::nullopt;
    if (ff_enabled_ && instant_.empty()) fast_forward_check();
  }
  if (finished_ranks_ < classes_) report_deadlock();

  RunResult result;
  result.events = events_;
  result.rank_finish.resize(ranks_);
  for (Rank r = 0; r < ranks_; ++r) {
    result.rank_finish[r] = rank_[map_.where(r).cls].finish;
    result.makespan = std::max(result.makespan, result.rank_finish[r]);
  }
  if (in_.options.record_ops) {
    result.ops.resize(ranks_);
    for (Rank r = 0; r < ranks_; ++r) result.ops[r] = op_times_[map_.where(r).cls];
  }
  routes_.add_link_bytes(link_bytes_);
  if (in_.options.record_link_series) fill_link_series(result);
  result.link_bytes = std::move(link_bytes_);
  return result;
}

// ---- program execution ----------------------------------------------------------------------

void Simulation::advance(Rank r) {
  RankState& rs = rank_[r];
  // Loading can finish ops at once (load), which moves the base on and may open the window.
  do {
    while (rs.base < rs.loaded && slot_of(r, rs.base).state == SlotState::Done) ++rs.base;
    while (rs.loaded < rs.num_ops && rs.loaded < rs.base + window_size_) {
      load(r, rs.loaded++);
      if (gave_up()) return;
    }
  } while (rs.base < rs.loaded && slot_of(r, rs.base).state == SlotState::Done);
  if (!rs.done && rs.base == rs.num_ops) {
    rs.done = true;
    rs.finish = now_;
    ++finished_ranks_;
  }
}

void Simulation::load(Rank r, OpIndex i) {
  Slot& s = slot_of(r, i);
  const Op op = programs_.op(map_.real(r), i);
  s.op = IssuedOp(op);
  if ((op.kind == OpKind::Send || op.kind == OpKind::Recv) && op.peer >= ranks_) {
    throw InputError("programs", fmt::format("rank {} op {} ({}) names peer rank {} of {}",
                                             map_.real(r), i, to_string(op.kind), op.peer, ranks_));
  }
  if (op.kind == OpKind::NetReduce) {
    if (classes_ < ranks_ && !group_is_class(r, op.peer)) {
      asymmetry_ = Asymmetry::Group;
      return;
    }
    s.net_round = net_rounds_loaded_[net_key(r, op.peer)]++;
  }
  s.state = SlotState::Waiting;
  s.unfinished = 0;
  s.first_dependent = kNoLink;
  const RankState& rs = rank_[r];
  for (std::uint32_t k = 0; k < op.num_deps; ++k) {
    const OpIndex d = op.deps[k];
    if (d >= i) {
      throw InputError("programs", fmt::format("rank {} op {} depends on op {}, which is not "
                                               "earlier in the program",
                                               map_.real(r), i, d));
    }
    if (d < rs.base) continue;
    Slot& dep = slot_of(r, d);
    if (dep.state == SlotState::Done) continue;
    ++s.unfinished;
    s.next_dependent[k] = dep.first_dependent;
    dep.first_dependent = static_cast<std::uint32_t>((i - d) * kMaxDeps + k);
  }
  if (s.unfinished != 0) return;
  if (op.kind == OpKind::Compute && op.duration == Time::zero()) {
    // Nothing to wait for and nothing to do (programs pad their blocks to a common length with
    // these, a quarter of a 1,024-GPU NVLS tree's ops): done as issued. No op can wait for it
    // yet, as later ops are loaded after it.
    s.state = SlotState::Done;
    if (in_.options.record_ops) op_times_[r][i] = OpTiming{now_, now_};
    return;
  }
  s.state = SlotState::Running;
  start_op(r, i);
}

void Simulation::start_op(Rank r, OpIndex i) {
  if (gave_up()) return;  // the attempt is over: start nothing more
  if (in_.options.record_ops) op_times_[r][i].start = now_;
  const IssuedOp& op = slot(r, i);
  switch (op.kind) {
    case OpKind::Compute:
      push(now_ + op.duration(), EventKind::OpDone, r, i);
      break;
    case OpKind::Copy:
    case OpKind::Reduce: {
      const Bandwidth bw = in_.options.local_copy_bandwidth;
      const Time d = bw.bytes_per_second() > 0 && op.src_bytes > 0
                         ? transfer_time(Bytes(op.src_bytes), bw)
                         : Time::zero();
      push(now_ + d, EventKind::OpDone, r, i);
      break;
    }
    case OpKind::Send:
    case OpKind::Recv:
      post(r, i, op);
      break;
    case OpKind::NetReduce:
      post_net_reduce(r, i, op);
      break;
  }
}

void Simulation::finish_op(Rank r, OpIndex i) {
  Slot& s = slot_of(r, i);
  s.state = SlotState::Done;
  if (in_.options.record_ops) op_times_[r][i].end = now_;
  // Release the ops that waited for this one, in program order (the list holds them newest
  // first): the order in which sends and recvs post decides FIFO matching.
  const std::size_t first = release_scratch_.size();
  for (std::uint32_t link = s.first_dependent; link != kNoLink;) {
    const auto j = static_cast<OpIndex>(i + link / kMaxDeps);
    Slot& dependent = slot_of(r, j);
    link = dependent.next_dependent[link % kMaxDeps];
    if (--dependent.unfinished == 0) release_scratch_.push_back(j);
  }
  s.first_dependent = kNoLink;
  std::sort(release_scratch_.begin() + static_cast<std::ptrdiff_t>(first), release_scratch_.end());
  for (std::size_t k = first; k < release_scratch_.size(); ++k) {
    const OpIndex j = release_scratch_[k];
    slot_of(r, j).state = SlotState::Running;
    start_op(r, j);
  }
  release_scratch_.resize(first);
  advance(r);
}

// Connections are keyed as the sender's class representative sees them. A recv from rank p = e(x)
// (x the representative of p's class, e a symmetry) is member e of the transfer that x sends to
// e^-1(this representative) on channel e^-1(channel).
void Simulation::post(Rank r, OpIndex i, const IssuedOp& op) {
  if (op.kind == OpKind::Send) {
    const std::uint32_t qid = queue(r, op.peer, op.channel);
    MatchQueue& q = queues_[qid];
    if (q.recv_head < q.recvs.size()) {
      const Pending recv = q.recvs[q.recv_head++];
      if (q.recv_head == q.recvs.size()) q.recvs.clear(), q.recv_head = 0;
      match({r, i, op.src_bytes}, recv, op.peer, op.channel, qid);
    } else {
      q.sends.push_back({r, i, op.src_bytes});
    }
  } else {
    const ClassMap::Where from = map_.where(op.peer);
    const ClassMap::Element back = map_.inverse(from.e);
    const Rank to = map_.apply(back, map_.real(r));
    const std::uint16_t channel = map_.apply_channel(back, op.channel);
    const std::uint32_t qid = queue(from.cls, to, channel);
    MatchQueue& q = queues_[qid];
    if (q.send_head < q.sends.size()) {
      const Pending send = q.sends[q.send_head++];
      if (q.send_head == q.sends.size()) q.sends.clear(), q.send_head = 0;
      match(send, {r, i, op.dst_bytes()}, to, channel, qid);
    } else {
      q.recvs.push_back({r, i, op.dst_bytes()});
    }
  }
}

// ---- transfers ------------------------------------------------------------------------------

std::uint32_t Simulation::new_transfer() {
  const std::uint32_t t = take_slot(transfers_, free_transfers_);
  transfers_[t] = Transfer{};
  return t;
}

void Simulation::match(const Pending& send, const Pending& recv, Rank to, std::uint16_t channel,
                       std::uint32_t queue) {
  const Rank sender = send.rank;
  const std::uint64_t sent = send.bytes;
  if (sent != recv.bytes) {
    throw InputError("programs",
                     fmt::format("rank {} op {} sends {} bytes to rank {} but the matching recv "
                                 "(op {}) expects {} bytes",
                                 map_.real(sender), send.op, sent, to, recv.op, recv.bytes));
  }
  std::uint32_t route;
  if (in_.router->policy() == RoutingPolicy::Adaptive) {
    route = routes_.load_route(*in_.router, in_.placement[map_.real(sender)], in_.placement[to],
                               channel, *this);
  } else {
    route = routes_.class_route(sender, to, channel);
    if (route == RouteTable::kNoRoute) {
      asymmetry_ = Asymmetry::Paths;
      return;
    }
    if (routes_.any_retargeted()) readd_retargeted();
  }
  const std::uint32_t t = new_transfer();
  Transfer& tr = transfers_[t];
  tr.src = sender;
  tr.dst = recv.rank;
  tr.send_op = send.op;
  tr.recv_op = recv.op;
  tr.wire_bytes = static_cast<double>(sent) / in_.options.transfer_efficiency;
  tr.route = route;
  tr.queue = queue;
  tr.channel = channel;
  MatchQueue& q = queues_[queue];
  if (q.busy) {
    q.backlog.push_back(t);
  } else {
    q.busy = true;
    launch(t);
  }
}

void Simulation::launch(std::uint32_t t) {
  if (in_.options.per_message_overhead > Time::zero() && !in_.options.overhead_as_latency) {
    push(now_ + in_.options.per_message_overhead, EventKind::TransferStart, t);
  } else {
    begin_transfer(t);
  }
}

// The connection's bandwidth phase for transfer t is over: the next matched transfer may stream.
void Simulation::stream_done(std::uint32_t t) {
  const std::uint32_t qid = transfers_[t].queue;
  if (qid == kNone) return;
  MatchQueue& q = queues_[qid];
  if (q.backlog_head < q.backlog.size()) {
    const std::uint32_t next = q.backlog[q.backlog_head++];
    if (q.backlog_head == q.backlog.size()) q.backlog.clear(), q.backlog_head = 0;
    launch(next);
  } else {
    q.busy = false;
  }
}

// The per-message overhead when it is charged as latency after the bytes (point-to-point only:
// in-network reductions pay none, as before).
Time Simulation::trailing_overhead(std::uint32_t t) const {
  return in_.options.overhead_as_latency && transfers_[t].kind == TransferKind::PointToPoint
             ? in_.options.per_message_overhead
             : Time::zero();
}

void Simulation::begin_transfer(std::uint32_t t) {
  const ClassRoute& route = routes_[transfers_[t].route];
  transfers_[t].pending = static_cast<std::uint32_t>(route.shares.size());
  transfers_[t].streaming = 0;
  for (std::uint32_t s = 0; s < route.shares.size(); ++s) {
    const ShareRoute& share = route.shares[s];
    const double bytes = transfers_[t].wire_bytes * share.fraction;
    if (share.uses.empty() || bytes <= 0) {
      push(now_ + share.latency + trailing_overhead(t), EventKind::Delivered, t);
      continue;
    }
    const std::uint32_t f = take_slot(flows_, free_flows_);
    Flow& flow = flows_[f];
    flow.transfer = t;
    flow.share = s;
    flow.remaining = bytes;
    flow.rate = 0;
    flow.updated = now_;
    flow.cap = kNone;
    flow.live = true;
    if (in_.options.channel_send_bandwidth.bytes_per_second() > 0 &&
        transfers_[t].kind == TransferKind::PointToPoint) {
      flow.cap = channel_cap(transfers_[t].src, transfers_[t].channel);
    }
    flow.var = add_variable(f);
    ++transfers_[t].streaming;
  }
  if (transfers_[t].streaming == 0) stream_done(t);
}

MaxMinSolver::VarId Simulation::add_variable(std::uint32_t f) {
  const Flow& flow = flows_[f];
  const ShareRoute& share = routes_[transfers_[flow.transfer].route].shares[flow.share];
  MaxMinSolver::VarId v;
  if (flow.cap != kNone) {
    // The sender's channel limit goes in front of the share's links, where a port link on the
    // sending GPU would sit, as one more constraint the flow crosses.
    uses_scratch_.assign(1, MaxMinSolver::Use{flow.cap, 1.0});
    uses_scratch_.insert(uses_scratch_.end(), share.uses.begin(), share.uses.end());
    v = solver_.add(uses_scratch_);
  } else {
    v = solver_.add(share.uses);
  }
  if (flow_of_var_.size() <= v) flow_of_var_.resize(v + 1);
  flow_of_var_[v] = f;
  return v;
}

// Same remaining bytes and (until the next solve) the same rate: only the constraints change, so
// the pending completion event is dropped (generation) and the solve schedules a new one.
void Simulation::readd_retargeted() {
  const std::vector<std::uint32_t> routes = routes_.take_retargeted();
  for (std::uint32_t f = 0; f < flows_.size(); ++f) {
    Flow& flow = flows_[f];
    if (!flow.live) continue;
    const std::uint32_t route = transfers_[flow.transfer].route;
    if (std::find(routes.begin(), routes.end(), route) == routes.end()) continue;
    settle(flow);
    solver_.remove(flow.var);
    flow.var = add_variable(f);
    ++flow.generation;
  }
}

MaxMinSolver::ConsId Simulation::channel_cap(Rank r, std::uint16_t channel) {
  std::uint32_t id = cap_index_.find(r, channel);
  if (id == FlatIndex::kMissing) {
    id = solver_.add_constraint(in_.options.channel_send_bandwidth.bytes_per_second());
    cap_index_.insert(r, channel, id);
  }
  return id;
}

void Simulation::settle(Flow& flow) {
  flow.remaining -= flow.rate * (now_ - flow.updated).seconds();
  flow.updated = now_;
}

void Simulation::record_rate(const Flow& flow, double delta_rate) {
  if (!in_.options.record_link_series || delta_rate == 0) return;
  const Transfer& tr = transfers_[flow.transfer];
  for (const auto& use : routes_[tr.route].shares[flow.share].uses)
    rate_log_.push_back(RateChange{use.cons, now_, delta_rate * use.coefficient});
}

void Simulation::add_route_rate(std::uint32_t route, double delta) {
  if (route >= route_rate_.size()) route_rate_.resize(routes_.size(), 0.0);
  route_rate_[route] += delta;
}

void Simulation::apply_rates() {
  uneven_scratch_.clear();
  if (const RouteTable::Watch watch = routes_.refresh_watch();
      watch != RouteTable::Watch::Unchanged) {
    if (watch == RouteTable::Watch::SharesOnUnevenOrbit) {
      asymmetry_ = Asymmetry::SharesOnUnevenOrbit;
      return;
    }
    relax_uneven_orbits();
    for (std::uint32_t route = 0; route < routes_.size(); ++route)
      if (!routes_.watched_by(route).empty()) uneven_scratch_.push_back(route);
  }
  solver_.solve();
  ++components_;
  for (const MaxMinSolver::VarId v : solver_.changed()) {
    Flow& flow = flows_[flow_of_var_[v]];
    settle(flow);
    const double rate = solver_.rate(v);
    record_rate(flow, rate - flow.rate);
    const std::uint32_t route = transfers_[flow.transfer].route;
    add_route_rate(route, rate - flow.rate);
    if (routes_.any_watched() && !routes_.watched_by(route).empty())
      uneven_scratch_.push_back(route);
    flow.rate = rate;
    ++flow.generation;
    if (rate <= 0) continue;
    // Round up to the picosecond, forgiving representation error well below one picosecond.
    const double ps = std::max(0.0, std::ceil(flow.remaining / rate * 1e12 - 1e-3));
    push(now_ + Time::ps(static_cast<std::int64_t>(ps)), EventKind::FlowDone, flow_of_var_[v],
         flow.generation);
  }
  if (!uneven_scratch_.empty()) {
    if (route_rate_.size() < routes_.size()) route_rate_.resize(routes_.size(), 0.0);
    if (!uneven_orbits_feasible(uneven_scratch_)) asymmetry_ = Asymmetry::Overload;
  }
}

void Simulation::flow_done(std::uint32_t f, std::uint32_t generation) {
  Flow& flow = flows_[f];
  if (flow.generation != generation) return;  // its rate changed since this was scheduled
  record_rate(flow, -flow.rate);
  add_route_rate(transfers_[flow.transfer].route, -flow.rate);
  solver_.remove(flow.var);
  flow.live = false;
  ++flow.generation;
  const std::uint32_t t = flow.transfer;
  push(now_ + routes_[transfers_[t].route].shares[flow.share].latency + trailing_overhead(t),
       EventKind::Delivered, t);
  free_flows_.push_back(f);
  if (--transfers_[t].streaming == 0) stream_done(t);
}

void Simulation::delivered(std::uint32_t t) {
  if (--transfers_[t].pending == 0) complete_transfer(t);
}

void Simulation::complete_transfer(std::uint32_t t) {
  const Transfer tr = transfers_[t];
  free_transfers_.push_back(t);
  routes_[tr.route].carried += tr.wire_bytes;
  routes_.release(tr.route, link_bytes_);
  switch (tr.kind) {
    case TransferKind::PointToPoint:
      ++transfers_done_;
      finish_op(tr.src, tr.send_op);
      finish_op(tr.dst, tr.recv_op);
      break;
    case TransferKind::NetUp:
      net_member_done(tr.group, tr.net_round, kNone);
      break;
    case TransferKind::NetDown:
      net_member_done(tr.group, tr.net_round, tr.member);
      break;
  }
}

}  // namespace lockstep::flow_detail
