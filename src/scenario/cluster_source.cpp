#include "lockstep/scenario/cluster_source.hpp"

#include <fmt/format.h>

#include <utility>

#include "lockstep/core/error.hpp"

namespace lockstep {

std::optional<Scenario> load_cluster_scenario(const ClusterFlags& flags,
                                              std::string_view scenario_named) {
  if (flags.scenario.empty()) return std::nullopt;
  if (!flags.system.empty() || !flags.fabric.empty() || !flags.nodes.empty()) {
    throw InputError("scenario",
                     fmt::format("give either {} or --system/--fabric/--nodes", scenario_named));
  }
  return load_scenario(flags.scenario);
}

ArgNode preset_flag_args(const ClusterFlags& flags) {
  ArgNode m = ArgNode::map("flags");
  auto put = [&](const char* key, const std::string& value, const char* flag) {
    if (!value.empty()) m.set(key, ArgNode::scalar(value, flag));
  };
  put("system", flags.system.empty() ? "hgx-h100" : flags.system, "--system");
  put("fabric", flags.fabric, "--fabric");
  put("nodes", flags.nodes, "--nodes");
  put("gpus_per_node", flags.gpus_per_node, "--gpus-per-node");
  put("nics_per_node", flags.nics_per_node, "--nics-per-node");
  put("nic_speed", flags.nic_speed, "--nic-speed");
  put("domain_nodes", flags.domain_nodes, "--domain-nodes");
  put("routing", flags.routing, "--routing");
  put("qps_per_connection", flags.qps_per_connection, "--qps-per-connection");
  if (flags.sharp) put("sharp", "true", "--sharp");
  return m;
}

bool is_preset_cluster(const ArgNode& cluster) {
  // build_topology()'s reading: `builder`, or else its alias `type`, names the builder. find()
  // marks the key as read, so that the preset's check_all_used() does not call it unknown.
  const ArgNode* builder = cluster.find("builder");
  if (builder == nullptr) builder = cluster.find("type");
  return cluster.has("system") && (builder == nullptr || builder->text() == "preset");
}

ClusterSource::ClusterSource(const Scenario* scenario, const ClusterFlags& flags)
    : args_(scenario ? scenario->cluster : preset_flag_args(flags)),
      name_(scenario ? scenario->name : std::string()) {
  resolve();
}

ClusterSource::ClusterSource(ArgNode cluster) : args_(std::move(cluster)) {
  resolve();
}

void ClusterSource::resolve() {
  if (!is_preset_cluster(args_)) return;
  preset_ = resolve_preset(preset_request(args_));
  args_.check_all_used();
}

ArgNode ClusterSource::build_args() const {
  return preset_ ? rail_optimized_args(*preset_, args_.path()) : args_;
}

BuildResult ClusterSource::build(const BuildOptions& options) const {
  if (preset_) return build_topology(build_args(), options);
  return build_topology(args_, options);  // not a copy: a from_file graph's tree can be large
}

std::string ClusterSource::title(const Topology* graph) const {
  if (preset_) {
    const PresetCluster& p = *preset_;
    return fmt::format("{} x {} ({} GPUs), {}", p.nodes, p.system.name, p.ranks(), p.fabric.name);
  }
  return fmt::format("{} ({} GPUs)", name_, graph ? graph->gpus().size() : 0);
}

}  // namespace lockstep
