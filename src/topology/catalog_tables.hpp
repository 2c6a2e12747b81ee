#pragma once
// The catalog's tables, one file per kind of part (catalog_gpus.cpp; catalog_network.cpp: NICs,
// switches, scale-up systems; catalog_cables.cpp: cables and modules; catalog.cpp: PCIe links, CPU
// socket links and the lookups by name). Private to the topology layer: callers use catalog.hpp.
#include <vector>

#include "lockstep/topology/catalog.hpp"

namespace lockstep::catalog_tables {

const std::vector<GpuSpec>& gpus();
const std::vector<NicSpec>& nics();
const std::vector<SwitchSpec>& switches();
const std::vector<ScaleUpSpec>& scale_ups();
const std::vector<CableSpec>& cables();
const std::vector<PcieSpec>& pcies();
const std::vector<CpuLinkSpec>& cpu_links();

}  // namespace lockstep::catalog_tables
