// The reference architectures `lockstep topo --reference` builds, each with its document's
// numbers. Only numbers read in the documents are written here; a figure a document does not
// state (or that could not be checked) has no document number and prints as "-".
#include "lockstep/topology/reference.hpp"

#include <fmt/format.h>

#include "lockstep/core/error.hpp"

namespace lockstep {
namespace {

const TierFigures* tier(const Inventory& inv, std::string_view name) {
  for (const TierFigures& t : inv.tiers) {
    if (t.tier == name) return &t;
  }
  return nullptr;
}

std::uint64_t ports(const Inventory& inv, std::string_view name) {
  const TierFigures* t = tier(inv, name);
  return t ? t->ports_used : 0;
}

// NVIDIA DGX SuperPOD Reference Architecture featuring DGX H100 systems (RA-11333-001),
// "Compute fabric" section and its component-count table for 1-4 scalable units: an SU is 32
// node positions on 8 rail leaves (Quantum-2 QM9700, 64 x NDR 400G), one position of the
// fabric given to the UFM appliances' links, so 31 / 63 / 95 / 127 DGX H100; leaves 8 / 16 /
// 24 / 32, spines 4 / 8 / 16 / 16 (each leaf with equal links to every spine); cables
// compute + UFM to leaf 252 / 508 / 764 / 1,020 (the UFM's 4), leaf to spine 256 / 512 / 768 /
// 1,024. DGX H100 user guide: its 8 ConnectX-7 sit behind 4 twin-port OSFP cages (2 x NDR
// each); the QM9700's 64 ports are on 32 twin-port OSFP cages (QM9700 datasheet).
ReferenceDesign dgx_h100(std::uint32_t sus) {
  static constexpr std::uint64_t kSpines[] = {4, 8, 16, 16};
  const std::uint64_t nodes = 32ull * sus - 1;
  ReferenceDesign d;
  d.name = fmt::format("dgx-superpod-h100-{}su", sus);
  d.title = fmt::format("NVIDIA DGX SuperPOD H100, {} SU{} ({} DGX H100, {} GPUs)", sus,
                        sus > 1 ? "s" : "", nodes, nodes * 8);
  d.source =
      "NVIDIA DGX SuperPOD Reference Architecture, DGX H100 (RA-11333-001): compute fabric "
      "component counts by SU";
  d.args = {{"builder", "rail_optimized"},
            {"gpu", "h100"},
            {"nic", "cx7_ndr"},
            {"switch", "qm9700"},
            {"nodes_per_su", "32"},
            {"nodes", std::to_string(nodes)},
            {"tiers", "2"},
            {"management_links", "4"},
            {"optics", "per_module"},
            {"nic_ports_per_module", "2"}};
  const std::string c = "compute fabric";
  d.figures = {
      {c, "DGX H100 nodes", ReferenceQuantity::Nodes, nodes},
      {c, "GPUs", ReferenceQuantity::Gpus, nodes * 8},
      {c, "leaf switches (QM9700)", ReferenceQuantity::LeafSwitches, 8ull * sus},
      {c, "spine switches (QM9700)", ReferenceQuantity::SpineSwitches, kSpines[sus - 1]},
      {c, "cables node + UFM to leaf", ReferenceQuantity::NodeLeafCables, nodes * 8 + 4},
      {c, "cables leaf to spine", ReferenceQuantity::LeafSpineCables, 256ull * sus},
      {c, "transceivers (per OSFP module)", ReferenceQuantity::Transceivers, std::nullopt},
  };
  d.notes =
      "UFM appliance links (4) are in the node-to-leaf cables, as the RA counts them; the "
      "storage and in-band management fabrics are separate networks lockstep does not build; "
      "the RA states no transceiver count (lockstep's: one twin-port module per 2 NDR ports "
      "at the switch and the DGX, one single-port module per UFM link).";
  return d;
}

}  // namespace

std::span<const ReferenceDesign> reference_designs() {
  static const std::vector<ReferenceDesign> table = {dgx_h100(1), dgx_h100(2), dgx_h100(3),
                                                     dgx_h100(4)};
  return table;
}

const ReferenceDesign& reference_design(std::string_view name, std::string_view field) {
  std::string known;
  for (const ReferenceDesign& d : reference_designs()) {
    if (d.name == name) return d;
    known += (known.empty() ? "" : ", ") + d.name;
  }
  throw InputError(
      std::string(field),
      fmt::format("unknown reference architecture '{}' (known: list, {})", name, known));
}

ArgNode reference_args(const ReferenceDesign& design) {
  const std::string where = "--reference " + design.name;
  ArgNode args = ArgNode::map(where);
  for (const auto& [key, value] : design.args) args.set(key, ArgNode::scalar(value, where));
  return args;
}

std::uint64_t reference_value(const Inventory& inv, ReferenceQuantity what) {
  const std::uint64_t spine_core = ports(inv, "core");
  const std::uint64_t leaf_spine = ports(inv, "spine") - spine_core;
  switch (what) {
    case ReferenceQuantity::Nodes:
      return inv.nodes;
    case ReferenceQuantity::Gpus:
      return inv.gpus;
    case ReferenceQuantity::LeafSwitches:
      return tier(inv, "leaf") ? tier(inv, "leaf")->switches : 0;
    case ReferenceQuantity::SpineSwitches:
      return tier(inv, "spine") ? tier(inv, "spine")->switches : 0;
    case ReferenceQuantity::CoreSwitches:
      return tier(inv, "core") ? tier(inv, "core")->switches : 0;
    case ReferenceQuantity::NodeLeafCables:
      return ports(inv, "leaf") - leaf_spine;
    case ReferenceQuantity::LeafSpineCables:
      return leaf_spine;
    case ReferenceQuantity::SpineCoreCables:
      return spine_core;
    case ReferenceQuantity::Transceivers:
      return inv.transceivers;
  }
  return 0;
}

}  // namespace lockstep
