#pragma once
// Topology builders, registered by name ("fat_tree", "rail_optimized", "torus", ...). A builder
// reads its arguments from an ArgNode map (validating each, with file:line:column when the
// arguments came from a file) and returns the graph plus its inventory. A design too large to
// materialise returns no graph, only the inventory (computed analytically) or a clear error.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "lockstep/config/arg_node.hpp"
#include "lockstep/topology/graph.hpp"
#include "lockstep/topology/inventory.hpp"

namespace lockstep {

struct BuildOptions {
  // Above this many links a builder returns the inventory without the graph (or, for builders
  // without a closed-form inventory, an InputError). 20M links take about 1.2 GB.
  std::uint64_t max_links = 20'000'000;
  bool want_graph = true;  // false: the caller only needs the inventory
};

struct BuildResult {
  std::optional<Topology> graph;
  Inventory inventory;
};

using BuilderFn = std::function<BuildResult(const ArgNode& args, const BuildOptions& options)>;

struct BuilderInfo {
  std::string name;
  std::string summary;            // one line for --help
  std::vector<std::string> keys;  // the argument keys it accepts, for --help and docs
  BuilderFn build;
};

/// Registers a builder (called by each builder's translation unit at start-up via a registrar
/// function listed in src/topology/builders/registrars.hpp and called from builder.cpp, so
/// static libraries do not drop it).
void register_builder(BuilderInfo info);
const BuilderInfo* find_builder(const std::string& name);
std::vector<const BuilderInfo*> all_builders();

/// Builds from a map with a "builder" key (or "type"), e.g. {builder: fat_tree, k: 4}.
/// A map without "builder" but with "system" goes to the "preset" builder. Unknown builder
/// names are an InputError listing the known ones; keys the builder did not read are an
/// "unknown key" InputError at their location.
BuildResult build_topology(const ArgNode& cluster, const BuildOptions& options = {});

}  // namespace lockstep
