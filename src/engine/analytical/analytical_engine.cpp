// Execution of per-rank programs as a longest-path evaluation of the program DAG (dag_walk.hpp)
// where each matched send/recv pair costs overhead + latency + bytes / bandwidth, after the
// transfers before it on the same links have gone (each link sends one transfer at a time).
#include "lockstep/engine/analytical/analytical_engine.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <unordered_map>
#include <vector>

#include "dag_walk.hpp"
#include "lockstep/core/error.hpp"

namespace lockstep {
namespace {

using analytical_detail::DagCosts;

// A transfer's fixed cost and the links it loads.
struct PathCost {
  Time latency;
  struct Hop {
    DirLinkId link;
    double fraction;          // of the transfer's bytes, over every share of the path using it
    double seconds_per_byte;  // of payload: the link's rate x link_payload_efficiency
  };
  std::vector<Hop> hops;  // each directed link once
};

// Picoseconds to send `bytes` at `seconds_per_byte`, rounded up.
Time serialisation(std::uint64_t bytes, double seconds_per_byte) {
  const double ps = std::ceil(static_cast<double>(bytes) * seconds_per_byte * 1e12 - 1e-6);
  return Time::from_ps(std::max(0.0, ps));
}

// Alpha-beta costs on the routed path; records the bytes each directed link carries. Each link
// is a queue that sends one transfer at a time, first come first served (the walk runs in time
// order): a transfer's bytes go over a link once what was ready on it before has gone, taking
// their share of the transfer over the link's rate, and the transfer ends when its last link is
// done. Transfers meeting on a link thus take it in turn: the last of k equal ones ends after
// k x S / B, as when k flows share the link fairly (the flow engine); alone on its links a
// transfer costs what it always did (its bottleneck's time).
class AlphaBeta final : public DagCosts {
 public:
  AlphaBeta(const EngineInput& in, std::vector<double>& link_bytes)
      : in_(in), topo_(*in.topology), link_bytes_(link_bytes), free_(link_bytes.size()) {}

  Time transfer(Rank src, Rank dst, std::uint16_t channel, std::uint64_t bytes,
                Time ready) override {
    const DeviceId a = in_.placement[src], b = in_.placement[dst];
    const Time overhead = in_.options.per_message_overhead;
    if (a == b) return overhead + local(bytes);
    const PathCost& p = path(a, b, channel);
    // Ready past Time's range (a kernel that long): it ends there too, whatever the links do.
    if (!ready.is_finite()) return p.latency;
    const Time start = ready + overhead;
    Time sent = start;
    for (const PathCost::Hop& h : p.hops) {
      link_bytes_[h.link] += bytes * h.fraction;
      Time& busy = free_[h.link];
      busy = std::max(busy, start) + serialisation(bytes, h.fraction * h.seconds_per_byte);
      sent = std::max(sent, busy);
    }
    return sent - ready + p.latency;
  }

  bool in_time_order() const override { return true; }

  Time local(std::uint64_t bytes) override {
    const double bw = in_.options.local_copy_bandwidth.bytes_per_second();
    if (bw <= 0 || bytes == 0) return Time::zero();
    return transfer_time(Bytes(bytes), in_.options.local_copy_bandwidth);
  }

  // Every member pushes its bytes one hop up and gets the result back.
  Time net_reduce(std::uint32_t, std::span<const std::pair<Rank, std::uint64_t>> members) override {
    Time slowest;
    for (const auto& [m, bytes] : members) {
      const auto ports = topo_.ports(in_.placement[m]);
      if (ports.empty()) throw InputError("topology", fmt::format("rank {} has no links", m));
      const Link& l = topo_.link(Topology::link_of(ports[0].out));
      const double eff =
          link_payload_efficiency(topo_, Topology::link_of(ports[0].out), in_.options);
      slowest = std::max(slowest, l.latency * 2 + transfer_time(Bytes(bytes), l.bandwidth * eff));
    }
    return in_.options.per_message_overhead + slowest;
  }

 private:
  const PathCost& path(DeviceId a, DeviceId b, std::uint16_t channel) {
    const std::uint64_t key = (std::uint64_t{a} << 40) ^ (std::uint64_t{b} << 12) ^ channel;
    const auto it = paths_.find(key);
    if (it != paths_.end()) return it->second;
    PathCost cost;
    in_.router->route(FlowKey{a, b, channel}, nullptr, scratch_);
    if (scratch_.empty())
      throw InputError("topology", fmt::format("no route from device {} to device {}", a, b));
    for (const PathShare& share : scratch_) {
      Time latency;
      bool network = false;
      for (DirLinkId d : share.hops) {
        const Link& l = topo_.link(Topology::link_of(d));
        latency += l.latency;
        network = network || is_network_link(topo_, Topology::link_of(d));
        // Payload per second: a network link at NCCL's network efficiency, the others at its
        // scale-up one, as the flow engine runs them (one rule, engine.hpp).
        const double bw = l.bandwidth.bytes_per_second() *
                          link_payload_efficiency(topo_, Topology::link_of(d), in_.options);
        const auto same = [d](const PathCost::Hop& h) { return h.link == d; };
        const auto seen = std::find_if(cost.hops.begin(), cost.hops.end(), same);
        if (seen != cost.hops.end()) {
          seen->fraction += share.fraction;
        } else {
          cost.hops.push_back({d, share.fraction, bw > 0 ? 1 / bw : 0.0});
        }
      }
      // A share through the network pays NCCL's network step latency beyond its path, as on the
      // flow engine (route_table.cpp).
      if (network) latency += in_.options.network_message_latency;
      // Parallel shares run side by side: the longest sets the latency.
      cost.latency = std::max(cost.latency, latency);
    }
    return paths_.emplace(key, std::move(cost)).first->second;
  }

  const EngineInput& in_;
  const Topology& topo_;
  std::vector<double>& link_bytes_;
  std::vector<Time> free_;  // per directed link: when it has sent what was queued on it
  std::unordered_map<std::uint64_t, PathCost> paths_;
  std::vector<PathShare> scratch_;
};

// A chain of latencies: only what the caller's functions say each transfer and round cost.
class ChainOnly final : public DagCosts {
 public:
  explicit ChainOnly(const ChainCosts& costs) : costs_(costs) {}
  Time transfer(Rank src, Rank dst, std::uint16_t channel, std::uint64_t, Time) override {
    return costs_.transfer ? costs_.transfer(src, dst, channel) : Time::zero();
  }
  Time local(std::uint64_t) override { return Time::zero(); }
  Time net_reduce(std::uint32_t group, std::span<const std::pair<Rank, std::uint64_t>>) override {
    return costs_.net_reduce ? costs_.net_reduce(group) : Time::zero();
  }

 private:
  const ChainCosts& costs_;
};

}  // namespace

RunResult AnalyticalEngine::run(const EngineInput& in) {
  if (in.topology == nullptr || in.programs == nullptr || in.router == nullptr)
    throw InputError("engine", "the analytical engine needs a topology, programs and a router");
  if (in.placement.size() < in.programs->num_ranks())
    throw InputError("placement", fmt::format("{} ranks but {} placed GPUs",
                                              in.programs->num_ranks(), in.placement.size()));
  RunResult result;
  result.link_bytes.assign(in.topology->num_directed_links(), 0.0);
  AlphaBeta costs(in, result.link_bytes);
  auto walked = analytical_detail::walk_dag(*in.programs, costs, in.options.record_ops);
  result.makespan = walked.makespan;
  result.rank_finish = std::move(walked.rank_finish);
  result.ops = std::move(walked.ops);
  result.events = walked.events;
  keep_payload_counts(in, result.link_bytes, result.makespan);
  return result;
}

std::unique_ptr<Engine> make_analytical_engine() {
  return std::make_unique<AnalyticalEngine>();
}

Time critical_path(const ProgramSet& programs, const ChainCosts& costs) {
  ChainOnly chain(costs);
  return analytical_detail::walk_dag(programs, chain, false).makespan;
}

std::vector<std::vector<OpTiming>> critical_path_ops(const ProgramSet& programs,
                                                     const ChainCosts& costs) {
  ChainOnly chain(costs);
  return analytical_detail::walk_dag(programs, chain, true).ops;
}

}  // namespace lockstep
