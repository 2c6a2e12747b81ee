#pragma once
// Published reference architectures as lockstep builds them (`lockstep topo --reference NAME`):
// each names its source document, the builder arguments that follow the document's rules, and
// the document's own component counts, so the built bill of materials can be held against them
// side by side (docs/topology.md "Reference architectures").
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "lockstep/config/arg_node.hpp"
#include "lockstep/topology/inventory.hpp"

namespace lockstep {

/// A count the inventory gives (cables per tier are read from the tiers' ports: spine-core links
/// are the core tier's ports, leaf-spine the spine tier's less those, node-leaf the leaf tier's
/// less the leaf-spine ones).
enum class ReferenceQuantity {
  Nodes,
  Gpus,
  LeafSwitches,
  SpineSwitches,
  CoreSwitches,
  NodeLeafCables,
  LeafSpineCables,
  SpineCoreCables,
  Transceivers,
};

struct ReferenceFigure {
  std::string category;  // the document's: "compute fabric", "management", ...
  std::string item;      // "leaf switches (QM9700)"
  ReferenceQuantity what;
  std::optional<std::uint64_t> document;  // the document's number; none: it states none
};

struct ReferenceDesign {
  std::string name;    // "dgx-superpod-h100-4su"
  std::string title;   // one line
  std::string source;  // the document, with the table the numbers come from
  std::vector<std::pair<std::string, std::string>> args;  // builder arguments
  std::vector<ReferenceFigure> figures;
  std::string notes;  // what lockstep leaves out, what could not be verified
};

std::span<const ReferenceDesign> reference_designs();

/// InputError naming `field` and listing the known names when there is none of that name.
const ReferenceDesign& reference_design(std::string_view name, std::string_view field);

/// The builder arguments as a cluster map (locations name the reference).
ArgNode reference_args(const ReferenceDesign& design);

/// What the built inventory gives for `what`.
std::uint64_t reference_value(const Inventory& inv, ReferenceQuantity what);

}  // namespace lockstep
