#pragma once
// A preset cluster for the NCCL model's tests: the PresetRequest fields the tests vary, in one
// place (0 or "" keeps the preset's own figure).
#include <cstdint>

#include "lockstep/core/units.hpp"
#include "lockstep/topology/presets.hpp"

namespace lockstep::test {

inline PresetCluster preset_of(const char* system, const char* fabric, std::uint32_t nodes,
                               std::uint32_t gpus = 0, std::uint32_t nics = 0, double gbps = 0,
                               bool sharp = false) {
  PresetRequest r;
  r.system = system;
  r.fabric = fabric;
  r.nodes = nodes;
  r.gpus_per_node = gpus;
  r.nics_per_node = nics;
  if (gbps > 0) r.nic_speed = Bandwidth::gbps(gbps);
  r.sharp = sharp;
  return resolve_preset(r);
}

}  // namespace lockstep::test
