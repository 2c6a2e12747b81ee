// Contention-free execution of per-rank programs: a longest-path evaluation of the program DAG
// (dag_walk.hpp) where each matched send/recv pair costs overhead + latency + bytes / bandwidth.
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

// A transfer's fixed cost and bandwidth over the route between two devices.
struct PathCost {
  Time latency;
  double seconds_per_byte = 0;  // over the bottleneck, already divided by the efficiency
  std::vector<std::pair<DirLinkId, double>> hops;  // directed link, fraction of bytes
};

// Alpha-beta costs on the routed path; records the bytes each directed link carries.
class AlphaBeta final : public DagCosts {
 public:
  AlphaBeta(const EngineInput& in, std::vector<double>& link_bytes)
      : in_(in), topo_(*in.topology), link_bytes_(link_bytes) {}

  Time transfer(Rank src, Rank dst, std::uint16_t channel, std::uint64_t bytes) override {
    const DeviceId a = in_.placement[src], b = in_.placement[dst];
    const Time overhead = in_.options.per_message_overhead;
    if (a == b) return overhead + local(bytes);
    const PathCost& p = path(a, b, channel);
    for (const auto& [link, fraction] : p.hops) link_bytes_[link] += bytes * fraction;
    const double ps = std::ceil(static_cast<double>(bytes) * p.seconds_per_byte * 1e12 - 1e-6);
    return overhead + p.latency + Time::from_ps(std::max(0.0, ps));
  }

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
      slowest = std::max(slowest, l.latency * 2 + transfer_time(Bytes(bytes), l.bandwidth * eff()));
    }
    return in_.options.per_message_overhead + slowest;
  }

 private:
  double eff() const {
    return in_.options.transfer_efficiency > 0 ? in_.options.transfer_efficiency : 1.0;
  }

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
      double bottleneck = 0;
      for (DirLinkId d : share.hops) {
        const Link& l = topo_.link(Topology::link_of(d));
        latency += l.latency;
        const double bw = l.bandwidth.bytes_per_second();
        bottleneck = bottleneck == 0 ? bw : std::min(bottleneck, bw);
        cost.hops.emplace_back(d, share.fraction);
      }
      // Parallel shares run side by side: the slowest share sets the time.
      cost.latency = std::max(cost.latency, latency);
      if (bottleneck > 0)
        cost.seconds_per_byte =
            std::max(cost.seconds_per_byte, share.fraction / (bottleneck * eff()));
    }
    return paths_.emplace(key, std::move(cost)).first->second;
  }

  const EngineInput& in_;
  const Topology& topo_;
  std::vector<double>& link_bytes_;
  std::unordered_map<std::uint64_t, PathCost> paths_;
  std::vector<PathShare> scratch_;
};

// A chain of latencies: only what the caller's functions say each transfer and round cost.
class ChainOnly final : public DagCosts {
 public:
  explicit ChainOnly(const ChainCosts& costs) : costs_(costs) {}
  Time transfer(Rank src, Rank dst, std::uint16_t channel, std::uint64_t) override {
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
