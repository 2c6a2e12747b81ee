#pragma once
// Scenario variants: the same job on clusters that differ in a few keys, compared side by side.
// Two spellings (docs/scenario-variants.md):
//   variants: {fabric: [ib-ndr, roce-400g, tcp]}      one variant per value; with several keys,
//                                                     every combination (first key slowest)
//   variants: [{name: IB, fabric: ib-ndr}, ...]       explicit variants, each naming its values
// Keys name keys of the cluster section, dotted for nested maps ("scale_out.fabric"); a key the
// cluster lacks is added (the builder then rejects it if it does not know it).
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "lockstep/config/arg_node.hpp"

namespace lockstep::report {

/// More variants than this is almost certainly a mistake (a product of long lists).
inline constexpr std::size_t kMaxVariants = 64;

struct VariantSpec {
  std::string name;                                        // "fabric=ib-ndr" or the given name
  std::vector<std::pair<std::string, std::string>> shown;  // key -> value as text, for reports
  std::vector<std::pair<std::string, ArgNode>> values;     // key -> value node to substitute
};

/// The variants a `variants:` section declares; one unnamed "base" variant when there is none.
/// Throws InputError (with file:line:column) for empty lists, non-map list items, duplicate
/// names and more than kMaxVariants variants. Returns the keys varied in `keys` (file order).
std::vector<VariantSpec> parse_variants(const std::optional<ArgNode>& section,
                                        std::vector<std::string>& keys);

/// A copy of `cluster` with the variant's values substituted.
ArgNode apply_variant(const ArgNode& cluster, const VariantSpec& variant);

}  // namespace lockstep::report
