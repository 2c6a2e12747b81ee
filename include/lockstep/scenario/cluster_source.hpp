#pragma once
// Where a command's cluster comes from, decided in one place for every command: a scenario's
// `cluster:` section, or the preset flags (--system, --fabric, --nodes, ...). A cluster that names
// a `system` and no builder other than "preset" is a preset (docs/presets.md): it is resolved and
// checked when the source is made, so its errors come before any graph is built, and NCCL's view
// of it can come from the preset's figures; the graph of a preset is its rail-optimised fabric,
// any other cluster is built by its builder.
//
//   std::optional<Scenario> scenario = load_cluster_scenario(flags, "--scenario");
//   // ... the command reads its own sections here, so that their errors come first ...
//   const ClusterSource source(scenario ? &*scenario : nullptr, flags);
//   BuildResult built = source.build();  // built.graph is empty when too large to build
#include <optional>
#include <string>
#include <string_view>

#include "lockstep/config/arg_node.hpp"
#include "lockstep/scenario/scenario.hpp"
#include "lockstep/topology/builder.hpp"
#include "lockstep/topology/graph.hpp"
#include "lockstep/topology/presets.hpp"

namespace lockstep {

/// The cluster options `lockstep collective` and `lockstep train` share, as given on the command
/// line (an empty string is an option not given).
struct ClusterFlags {
  std::string scenario;  // a scenario file
  std::string system, fabric, nodes, gpus_per_node, nics_per_node, nic_speed, domain_nodes;
  std::string routing, qps_per_connection;
  bool sharp = false;
};

/// Loads the scenario file the flags name, if any. A scenario together with --system, --fabric or
/// --nodes is an InputError "give either <scenario_named> or --system/--fabric/--nodes", where
/// `scenario_named` says how the command takes its scenario ("--scenario", "a scenario file").
std::optional<Scenario> load_cluster_scenario(const ClusterFlags& flags,
                                              std::string_view scenario_named);

/// The preset flags as the map a preset's `cluster:` section is (system hgx-h100 unless given),
/// each value located at its flag (errors read "--nodes: ...").
ArgNode preset_flag_args(const ClusterFlags& flags);

/// True when `cluster` is a preset: it has `system`, and `builder` (or its alias `type`, as
/// build_topology reads them) is absent or "preset".
bool is_preset_cluster(const ArgNode& cluster);

class ClusterSource {
 public:
  /// The scenario's cluster, or the preset flags when there is no scenario. Throws InputError for
  /// a preset that does not resolve (unknown system, too many GPUs per node, ...) or has keys
  /// the preset does not know.
  ClusterSource(const Scenario* scenario, const ClusterFlags& flags);
  /// A `cluster:` section on its own (a variant of a scenario, `lockstep topo`'s flags).
  explicit ClusterSource(ArgNode cluster);

  /// The cluster as the user gave it (the `cluster:` section or the flags' map).
  const ArgNode& args() const { return args_; }
  /// The resolved preset, or null when the cluster names a builder.
  const PresetCluster* preset() const { return preset_ ? &*preset_ : nullptr; }
  /// What the graph is built from: the preset's rail_optimized arguments, else args().
  ArgNode build_args() const;

  /// Builds the cluster: its inventory, and its graph unless too large to build as one (the
  /// command that needs the graph says why it cannot go on).
  BuildResult build(const BuildOptions& options = {}) const;

  /// What the commands print as the cluster's name: "16 x hgx-h100 (128 GPUs), ib-ndr" for a
  /// preset, else "<scenario name> (<GPUs> GPUs)" of the built `graph`.
  std::string title(const Topology* graph) const;

 private:
  void resolve();

  ArgNode args_;
  std::string name_;  // the scenario's name, for the title
  std::optional<PresetCluster> preset_;
};

}  // namespace lockstep
