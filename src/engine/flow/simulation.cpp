#include "simulation.hpp"

#include <algorithm>

#include "link_series.hpp"

namespace lockstep::flow_detail {

namespace {
// Wire bytes are payload / transfer_efficiency everywhere (transfers.cpp); a link whose payload
// runs at another fraction of its line rate (link_payload_efficiency, engine.hpp: a network
// link's) gets its capacity scaled by that fraction over transfer_efficiency, so that it moves
// payload at the rate the analytical engine prices it at.
std::vector<double> link_capacities(const Topology& topo, const EngineOptions& options) {
  std::vector<double> caps(topo.num_directed_links());
  for (std::size_t d = 0; d < caps.size(); ++d) {
    const auto link = static_cast<LinkId>(d >> 1);
    caps[d] = topo.link(link).bandwidth.bytes_per_second() *
              (link_payload_efficiency(topo, link, options) / options.transfer_efficiency);
  }
  return caps;
}

// Op slots for all simulated ranks together (64 bytes each). By default (issue_window 0) few
// ranks get deep windows (independent channels laid out one after another still overlap) and
// many ranks shallow ones, down to 16, so the working set stays in cache. An explicit window is
// honoured up to a hard memory cap of 16 M slots: a window below what the program needs holds
// later chunks back and changes the answer (at 4 M, 1,024-GPU nvls_tree runs got a 3,906-op
// window for 16,384-op programs and finished 5% late).
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

Simulation::Simulation(const EngineInput& input, const FlowEngineConfig& config, PathCache& paths,
                       const ClassMap& classes)
    : in_(input),
      config_(config),
      map_(classes),
      solver_(link_capacities(*input.topology, input.options)),
      routes_(*input.topology, paths, input.placement, classes, config.bundle),
      uneven_(routes_, solver_, input.topology->num_directed_links()),
      ranks_(*input.programs, map_, input.options, issue_window(config, map_.classes()), events_,
             connections_, net_reduce_, asymmetry_),
      connections_(map_, transfers_),
      transfers_(input, map_, events_, routes_, flows_, ranks_, connections_, net_reduce_, *this,
                 asymmetry_),
      flows_(input.options, config.bundle, events_, routes_, solver_, uneven_),
      net_reduce_(input, map_, paths, routes_, events_, transfers_, ranks_, asymmetry_),
      steady_(*input.programs, map_, events_, ranks_, connections_, transfers_, flows_, routes_),
      fast_forward_(input, config, map_, events_, ranks_, net_reduce_, steady_) {
  routes_.set_network_latency(input.options.network_message_latency);
}

void Simulation::dispatch(const Event& e) {
  switch (e.kind) {
    case EventKind::OpDone:
      ranks_.finish_op(e.id, e.aux);
      break;
    case EventKind::FlowDone:
      if (const Flows::Streamed s = flows_.finish(e.id, e.aux); s.transfer != kNone) {
        transfers_.streamed(s.transfer, s.share);
        for (const std::uint32_t t : s.more) transfers_.streamed(t, s.share);
      }
      break;
    case EventKind::Delivered:
      transfers_.delivered(e.id);
      break;
    case EventKind::TransferStart:
      transfers_.begin(e.id);
      break;
  }
}

bool Simulation::solve() {
  record(asymmetry_, flows_.solve());
  return !gave_up();
}

double Simulation::ops_done_share() const {
  std::uint64_t done = 0, total = 0;
  for (Rank r = 0; r < ranks_.count(); ++r) {
    done += ranks_.cursor(r).base;
    total += ranks_.cursor(r).num_ops;
  }
  return total == 0 ? 1.0 : static_cast<double>(done) / static_cast<double>(total);
}

std::optional<RunResult> Simulation::run(ProgressHook* progress) {
  // An asymmetry ends the attempt where it is found (the state is then of no use).
  for (Rank r = 0; r < ranks_.count(); ++r) {
    ranks_.advance(r);
    if (gave_up()) return std::nullopt;
  }
  if (!solve()) return std::nullopt;
  // With events of now queued (the initial load's, or flows the last solve finished at once)
  // the next instant is now again.
  std::uint64_t instants = 0;
  while (!events_.empty()) {
    if (events_.only_infinite_left()) return result();
    if (progress && ++instants % kProgressPoll == 0) progress->fraction(ops_done_share());
    const bool instant_run = events_.run_instant([this](const Event& e) {
      dispatch(e);
      return !gave_up();
    });
    if (!instant_run || !solve()) return std::nullopt;
    if (fast_forward_.enabled() && events_.instant_over()) fast_forward_.check();
  }
  if (!ranks_.all_done()) ranks_.report_deadlock();
  return result();
}

RunResult Simulation::result() {
  const Rank n = map_.ranks();
  RunResult result;
  result.events = events_.processed();
  result.rank_finish.resize(n);
  for (Rank r = 0; r < n; ++r) {
    const RankState& rs = ranks_.cursor(map_.where(r).cls);
    // A rank still busy when the run stopped at the end of Time's range finishes past it.
    result.rank_finish[r] = rs.done ? rs.finish : Time::infinite();
    result.makespan = std::max(result.makespan, result.rank_finish[r]);
  }
  if (in_.options.record_ops) {
    result.ops.resize(n);
    for (Rank r = 0; r < n; ++r) result.ops[r] = ranks_.op_times(map_.where(r).cls);
  }
  std::vector<double>& link_bytes = transfers_.link_bytes();
  routes_.add_link_bytes(link_bytes);
  if (in_.options.record_link_series) {
    fill_link_series(link_capacities(*in_.topology, in_.options), flows_.rate_log(), link_bytes,
                     config_.series_links, in_.options.link_sample_period, result);
  }
  result.link_bytes = std::move(link_bytes);
  return result;
}

}  // namespace lockstep::flow_detail
