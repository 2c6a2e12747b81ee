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

TrainConfig with_placed_faults(const Topology& topo, const TrainConfig& c) {
  TrainConfig out = c;
  const ParallelConfig& p = c.par;
  const std::uint32_t world = p.world();
  const std::uint32_t gpn = std::max<std::uint32_t>(1, gpus_per_node_of(topo));
  for (FaultSpec& f : out.faults) {
    if (f.kind != FaultSpec::Kind::SlowGpu || !f.placed()) continue;
    if (f.stage != kNone) {
      if (f.stage >= p.pp) {
        throw InputError(f.field,
                         fmt::format("'{}': stage {} does not exist (pp {}: stages 0-{})", f.text,
                                     f.stage, p.pp, p.pp - 1),
                         f.where);
      }
      f.rank = p.tp * p.cp * p.dp * f.stage;  // t = c = d = 0
      continue;
    }
    const std::uint32_t nodes = (world + gpn - 1) / gpn;
    if (f.gpu >= gpn || f.node >= nodes) {
      throw InputError(f.field,
                       fmt::format("'{}': {} {} does not exist ({} nodes of {} GPUs: node 0-{}, "
                                   "gpu 0-{})",
                                   f.text, f.gpu >= gpn ? "gpu" : "node",
                                   f.gpu >= gpn ? f.gpu : f.node, nodes, gpn, nodes - 1, gpn - 1),
                       f.where);
    }
    f.rank = f.node * gpn + f.gpu;
  }
  return out;
}

std::vector<SlowGpuPlace> slow_gpu_places(const Topology& topo, const TrainConfig& c) {
  const ParallelConfig& p = c.par;
  const std::uint32_t gpn = std::max<std::uint32_t>(1, gpus_per_node_of(topo));
  std::vector<SlowGpuPlace> out;
  for (const FaultSpec& f : c.faults) {
    if (f.kind != FaultSpec::Kind::SlowGpu) continue;
    SlowGpuPlace s;
    s.text = f.text;
    s.factor = f.factor;
    s.rank = f.rank;
    s.node = f.rank / gpn;
    s.gpu = f.rank % gpn;
    s.tp_rank = f.rank % p.tp;
    s.replica = f.rank / (p.tp * p.cp) % p.dp;
    s.stage = f.rank / (p.tp * p.cp * p.dp);
    out.push_back(s);
  }
  return out;
}

}  // namespace lockstep::train_detail
