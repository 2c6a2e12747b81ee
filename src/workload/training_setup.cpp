// The setup of a training simulation: the cluster checks, the trial's perturbed topology and the
// engines by name.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>

#include "lockstep/core/error.hpp"
#include "lockstep/engine/registry/registry.hpp"
#include "training_detail.hpp"

namespace lockstep::train_detail {

std::uint32_t gpus_per_node_of(const Topology& topo) {
  if (topo.traits().gpus_per_node) return topo.traits().gpus_per_node;
  std::uint32_t count = 0;
  for (DeviceId g : topo.gpus()) count += topo.device(g).node == topo.device(topo.gpus()[0]).node;
  return count;
}

// A copy of the topology with the trial's link latency jitter and the link faults applied.
Topology perturbed(const Topology& topo, const TrainConfig& c, Rng* rng) {
  std::function<void(Link&)> jitter;
  if (rng && c.link_jitter > 0) {
    jitter = [&](Link& link) {
      const double factor = std::max(0.0, 1.0 + c.link_jitter * rng->normal());
      link.latency = link.latency.scaled(factor);
    };
  }
  return apply_link_faults(topo, c.faults, jitter);
}

EngineFactory default_engines() {
  return [](std::string_view name) { return make_engine(std::string(name)); };
}

void check_topology(const Topology& topo, const TrainConfig& c,
                    std::vector<std::string>& warnings) {
  const ParallelConfig& p = c.par;
  const std::uint64_t world = std::uint64_t{p.tp} * p.cp * p.pp * p.dp;
  if (world != topo.gpus().size()) {
    throw InputError(c.world_field,
                     fmt::format("tp x cp x pp x dp = {} x {} x {} x {} = {} ranks but the "
                                 "cluster has {} GPUs",
                                 p.tp, p.cp, p.pp, p.dp, world, topo.gpus().size()),
                     c.world_where);
  }
  const std::uint32_t gpn = gpus_per_node_of(topo);
  if (gpn && (p.tp > gpn || gpn % p.tp != 0)) {
    warnings.push_back(
        fmt::format("tensor-parallel groups of {} GPUs span servers of {} GPUs: "
                    "their collectives cross the scale-out network",
                    p.tp, gpn));
  }
  for (const FaultSpec& f : c.faults) {
    if (f.kind == FaultSpec::Kind::SlowGpu && f.rank >= world) {
      throw InputError(
          f.field, fmt::format("'{}': rank {} does not exist ({} ranks)", f.text, f.rank, world),
          f.where);
    }
    // A late start is a collective's straggler; a step's slow GPU is its compute (x=).
    if (f.kind == FaultSpec::Kind::SlowGpu && f.late) {
      throw InputError(f.field,
                       fmt::format("'{}': delay= is for `lockstep collective`; a training step "
                                   "times a slow GPU by its compute: slow-gpu:rank={},x=X",
                                   f.text, f.rank),
                       f.where);
    }
    if (f.on_link()) fault_link(f, topo);  // throws when the link does not exist
  }
}

}  // namespace lockstep::train_detail
