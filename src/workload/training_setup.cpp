// The setup of a training simulation: the cluster checks, the trial's perturbed topology and the
// engines by name.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

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
  TopologyBuilder b(topo.name());
  b.set_traits(topo.traits());
  b.reserve(topo.num_devices(), topo.num_links());
  for (const Device& d : topo.devices()) b.add_device(d);
  for (LinkId l = 0; l < topo.num_links(); ++l) {
    Link link = topo.link(l);
    bool failed = false;
    for (const FaultSpec& f : c.faults) {
      if (f.kind == FaultSpec::Kind::FailedLink && f.link == l) failed = true;
      if (f.kind == FaultSpec::Kind::DegradedLink && f.link == l)
        link.bandwidth = link.bandwidth * f.factor;
    }
    if (rng && c.link_jitter > 0) {
      const double factor = std::max(0.0, 1.0 + c.link_jitter * rng->normal());
      link.latency = link.latency.scaled(factor);
    }
    // A failed link is removed: the router finds the paths around it, if there are any.
    if (!failed) b.add_link(link);
  }
  Topology out = std::move(b).build();
  if (!out.connected()) {
    throw InputError("faults",
                     "the failed links disconnect the cluster: no route goes around them");
  }
  return out;
}

EngineFactory default_engines() {
  return [](std::string_view name) { return make_engine(std::string(name)); };
}

void check_topology(const Topology& topo, const TrainConfig& c,
                    std::vector<std::string>& warnings) {
  const ParallelConfig& p = c.par;
  const std::uint64_t world = std::uint64_t{p.tp} * p.pp * p.dp;
  if (world != topo.gpus().size()) {
    throw InputError("dp", fmt::format("tp x pp x dp = {} x {} x {} = {} ranks but the cluster "
                                       "has {} GPUs",
                                       p.tp, p.pp, p.dp, world, topo.gpus().size()));
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
          "faults", fmt::format("'{}': rank {} does not exist ({} ranks)", f.text, f.rank, world));
    }
    if (f.kind != FaultSpec::Kind::SlowGpu && f.link >= topo.num_links()) {
      throw InputError("faults", fmt::format("'{}': link {} does not exist ({} links)", f.text,
                                             f.link, topo.num_links()));
    }
  }
}

}  // namespace lockstep::train_detail
