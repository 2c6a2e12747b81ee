#pragma once
// The explicit list of builder registrars. Static libraries drop object files nothing refers to,
// so builders do not self-register with static objects: build_topology() (and find_builder(),
// all_builders()) call register_all_builders() once, which calls each function below.
// To add a builder: declare its registrar here and add one line to register_all_builders() in
// src/topology/builder.cpp.
namespace lockstep::builders {

void register_full_mesh_builder();
void register_single_switch_builder();
void register_leaf_spine_builder();
void register_fat_tree_builder();
void register_rail_optimized_builder();
void register_torus_builder();
void register_dragonfly_builder();
void register_scale_up_builder();
// Other owners add theirs here, one line each:
void register_from_file_builder();   // from_file (scenario owner)
void register_multi_site_builder();  // multi_site (scenario owner)
void register_preset_builder();

}  // namespace lockstep::builders
