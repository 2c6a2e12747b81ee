#pragma once
// Helpers for topology tests (and the layers above): builder arguments as a flat map, building
// through the registry, a preset's graph.
#include <string>
#include <utility>
#include <vector>

#include "lockstep/topology/builder.hpp"
#include "lockstep/topology/presets.hpp"

namespace lockstep::test {

using Kv = std::vector<std::pair<std::string, std::string>>;

inline ArgNode args(const Kv& kv) {
  ArgNode m = ArgNode::map("cluster");
  for (const auto& [k, v] : kv) m.set(k, ArgNode::scalar(v, "cluster." + k));
  return m;
}

inline BuildResult build(const Kv& kv, bool want_graph = true) {
  BuildOptions options;
  options.want_graph = want_graph;
  return build_topology(args(kv), options);
}

inline std::uint64_t switches_in(const Inventory& inv, const std::string& tier) {
  for (const auto& t : inv.tiers)
    if (t.tier == tier) return t.switches;
  return 0;
}

inline const TierFigures* tier_of(const Inventory& inv, const std::string& tier) {
  for (const auto& t : inv.tiers)
    if (t.tier == tier) return &t;
  return nullptr;
}

/// A dragonfly of 5 groups of 2 routers with 2 global ports each (one global link per pair of
/// groups), one single-GPU node per router, no scale-up: 10 GPUs, group i's GPUs 2i and 2i + 1.
inline Kv small_dragonfly() {
  return {{"builder", "dragonfly"},
          {"nodes_per_router", "1"},
          {"routers_per_group", "2"},
          {"global_links_per_router", "2"},
          {"groups", "5"},
          {"gpus_per_node", "1"},
          {"scale_up", "none"}};
}

/// The graph of `nodes` HGX H100 servers on the preset's NDR rail-optimised fabric (one leaf
/// per rail).
inline Topology hgx_h100(std::uint32_t nodes) {
  PresetRequest request;
  request.system = "hgx-h100";
  request.fabric = "ib-ndr";
  request.nodes = nodes;
  return std::move(*build_topology(rail_optimized_args(resolve_preset(request))).graph);
}

/// The graph the `preset` builder makes of `system` on `nodes` nodes (`gpus` per node: 0, as
/// shipped).
inline Topology preset_graph(const char* system, std::uint32_t nodes, std::uint32_t gpus = 0) {
  Kv kv = {{"builder", "preset"}, {"system", system}, {"nodes", std::to_string(nodes)}};
  if (gpus > 0) kv.emplace_back("gpus_per_node", std::to_string(gpus));
  return std::move(*build(kv).graph);
}

}  // namespace lockstep::test
