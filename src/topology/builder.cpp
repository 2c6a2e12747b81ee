// Builder registry: a table of builders by name, filled once from the explicit registrar list
// (builders/registrars.hpp) so that no builder is lost to static-library dead-stripping.
#include "lockstep/topology/builder.hpp"

#include <fmt/format.h>

#include <map>
#include <mutex>

#include "builders/registrars.hpp"
#include "lockstep/core/error.hpp"

namespace lockstep {
namespace {

std::map<std::string, BuilderInfo>& table() {
  static std::map<std::string, BuilderInfo> builders;
  return builders;
}

void register_all_builders() {
  static std::once_flag once;
  std::call_once(once, [] {
    builders::register_full_mesh_builder();
    builders::register_single_switch_builder();
    builders::register_leaf_spine_builder();
    builders::register_fat_tree_builder();
    builders::register_rail_optimized_builder();
    builders::register_torus_builder();
    builders::register_dragonfly_builder();
    builders::register_scale_up_builder();
    // One line per builder owned elsewhere (declare it in builders/registrars.hpp):
    builders::register_from_file_builder();
    builders::register_multi_site_builder();
    builders::register_preset_builder();
  });
}

std::string known_names() {
  std::string out;
  for (const auto& [name, info] : table()) {
    if (!out.empty()) out += ", ";
    out += name;
  }
  return out;
}

}  // namespace

void register_builder(BuilderInfo info) {
  auto name = info.name;
  table().insert_or_assign(std::move(name), std::move(info));
}

const BuilderInfo* find_builder(const std::string& name) {
  register_all_builders();
  auto it = table().find(name);
  return it == table().end() ? nullptr : &it->second;
}

std::vector<const BuilderInfo*> all_builders() {
  register_all_builders();
  std::vector<const BuilderInfo*> out;
  for (const auto& [name, info] : table()) out.push_back(&info);
  return out;
}

BuildResult build_topology(const ArgNode& cluster, const BuildOptions& options) {
  register_all_builders();
  if (cluster.kind() != ArgNode::Kind::Map) cluster.fail("expected a map of builder arguments");
  std::string name;
  const ArgNode* key = cluster.find("builder");
  if (key == nullptr) key = cluster.find("type");
  if (key != nullptr) {
    if (key->kind() != ArgNode::Kind::Scalar) key->fail("expected a builder name");
    name = key->text();
  } else if (cluster.has("system")) {
    name = "preset";  // {system: hgx-h100, fabric: ib-ndr, ...} names a preset
  } else {
    cluster.fail(fmt::format("missing required key 'builder' (one of {})", known_names()));
  }
  const BuilderInfo* info = find_builder(name);
  if (info == nullptr) {
    const std::string message =
        fmt::format("unknown builder '{}' (known: {})", name, known_names());
    if (key != nullptr) key->fail(message);
    cluster.fail(message);
  }
  BuildResult result = info->build(cluster, options);
  cluster.check_all_used();
  return result;
}

}  // namespace lockstep
