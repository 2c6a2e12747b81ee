#pragma once
// The bill of materials and figures of merit of a fabric design. Builders fill it either by
// counting a built graph or, for designs too large to materialise (a 200,000-GPU full mesh has
// 2e10 cables), analytically from the design's parameters.
#include <cstdint>
#include <string>
#include <vector>

#include "lockstep/core/units.hpp"

namespace lockstep {

struct InventoryLine {
  std::string item;      // "Quantum-2 QM9700 (64x400G)", "OSFP 800G SR8 transceiver", ...
  std::string category;  // gpu | nic | switch | cable | transceiver | other
  std::string tier;      // for switches: leaf | spine | core | scale_up ...; else ""
  std::uint64_t count = 0;
  double unit_power_w = 0;
  double unit_price_usd = 0;
  // Where the price comes from when it is not a catalog price of the item's own: "included in
  // NVIDIA H100 SXM5 80GB (on the HGX baseboard, ...)" for a part priced 0 because another line
  // pays for it, "estimate: ..." for an unpublished price; empty otherwise.
  std::string price_note;
};

struct TierFigures {
  std::string tier;  // "leaf", "spine", "core", "scale_up", "dci"
  std::uint64_t switches = 0;
  std::uint64_t ports_used = 0;
  std::uint64_t ports_free = 0;
  double oversubscription = 1.0;  // downlink : uplink bandwidth at this tier
};

struct Inventory {
  std::string design;  // builder name and its key arguments, one line
  std::uint64_t gpus = 0;
  std::uint64_t nodes = 0;
  std::uint64_t nics = 0;
  std::vector<TierFigures> tiers;
  std::vector<InventoryLine> lines;  // everything bought, with counts, power and price
  std::uint64_t cables = 0;
  std::uint64_t transceivers = 0;
  std::uint64_t ports_per_gpu = 0;  // network ports each GPU needs (full mesh: n-1)
  Bandwidth injection_per_gpu;      // scale-out bandwidth per GPU
  Bandwidth bisection;              // one direction, worst balanced cut
  std::uint32_t diameter_switch_hops = 0;
  Time max_one_way_latency;  // longest GPU-to-GPU path's fixed latency
  double power_w = 0;
  double cost_usd = 0;
  bool feasible = true;
  std::vector<std::string> problems;  // why it is infeasible, one sentence each
  bool graph_built = false;           // false when computed analytically (too large to build)
};

/// The network's share of the cost: every line but the GPUs (NICs, switches including scale-up
/// NVSwitch chips, cables, transceivers, DCI gateways), the part a fabric choice changes.
inline double network_cost_usd(const Inventory& inv) {
  double usd = 0;
  for (const InventoryLine& l : inv.lines) {
    if (l.category != "gpu") usd += l.unit_price_usd * static_cast<double>(l.count);
  }
  return usd;
}

/// network_cost_usd per GPU (0 without GPUs).
inline double network_cost_per_gpu_usd(const Inventory& inv) {
  return inv.gpus == 0 ? 0 : network_cost_usd(inv) / static_cast<double>(inv.gpus);
}

}  // namespace lockstep
