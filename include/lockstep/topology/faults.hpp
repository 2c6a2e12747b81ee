#pragma once
// Named faults, as users type them on the command line or in a scenario (`lockstep train`'s
// `--fault` and `job.faults`, `lockstep collective`'s `--fault` and `collectives[].faults`):
//   slow-gpu:rank=5,x=1.3                 rank 5 computes 1.3 times slower (training only)
//   slow-gpu:rank=5,delay=2ms             rank 5 starts its collective 2 ms late (collective only)
//   slow-gpu:node=12,gpu=3,x=1.5          GPU 3 of node 12, whatever its rank (training only)
//   slow-gpu:stage=2,x=1.5                the first GPU of pipeline stage 2 (training only)
//   degraded-link:link=12,x=0.25          link 12 keeps a quarter of its bandwidth
//   degraded-link:link=nic3-leaf3,x=0.5   the same for the link between two named devices
//   failed-link:a=nic3,b=leaf3            that link is removed; routes go around it
// A link is an index into `lockstep topo --emit`'s links, or its two ends by name
// (topology/device_names.hpp). docs/training.md and docs/routing.md (NIC failover) describe the
// model.
//
//   std::vector<FaultSpec> faults = parse_faults(job.find("faults"));
//   Topology faulted = apply_link_faults(topo, faults);
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "lockstep/config/arg_node.hpp"
#include "lockstep/core/error.hpp"
#include "lockstep/core/units.hpp"
#include "lockstep/topology/graph.hpp"

namespace lockstep {

struct FaultSpec {
  enum class Kind : std::uint8_t { SlowGpu, DegradedLink, FailedLink };
  Kind kind = Kind::SlowGpu;
  std::uint32_t rank = 0;      // SlowGpu
  std::uint32_t node = kNone;  // ... placed by node and GPU instead (the job maps it to a rank)
  std::uint32_t gpu = kNone;
  std::uint32_t stage = kNone;   // ... or by pipeline stage (its first GPU)
  std::uint32_t link = kNone;    // DegradedLink, FailedLink given by id (index of --emit's links)
  std::string a, b;              // ... or by the names of its two ends (when link is kNone)
  double factor = 1;             // SlowGpu: slowdown >= 1; DegradedLink: bandwidth fraction (0, 1]
  bool late = false;             // SlowGpu given delay=: a straggler (`lockstep collective`)
  Time delay;                    // ... how late it starts, <= 1e6 s
  std::string text;              // as given, for reports
  std::string field = "faults";  // where it was given, for errors found once a topology exists
  SourceLocation where;

  bool on_link() const { return kind != Kind::SlowGpu; }
  /// A slow GPU given by node and GPU or by stage: its rank is known once the job's layout is.
  bool placed() const { return node != kNone || stage != kNone; }
};

/// Parses one fault text; InputError naming `field` on anything malformed.
FaultSpec parse_fault(std::string_view text, std::string_view field);
/// A `faults:` value: one text or a list of them (null: none). Errors carry each entry's place.
std::vector<FaultSpec> parse_faults(const ArgNode* node);

/// The undirected link a link fault names in `topo`. InputError at the fault's field when there
/// is none, listing what is valid (the link count, the device names, the links of a named end).
LinkId fault_link(const FaultSpec& fault, const Topology& topo);

/// A copy of `topo` with the link faults applied (others are ignored): a degraded link keeps
/// `factor` of its bandwidth (several multiply), a failed link is removed, so routes go around
/// it, and ids of later links shift down. `adjust`, when given, first sees every link, failed
/// ones included, in id order (a per-link random draw then does not depend on the faults).
/// InputError when the failed links separate a GPU from the others.
Topology apply_link_faults(const Topology& topo, std::span<const FaultSpec> faults,
                           const std::function<void(Link&)>& adjust = {});

}  // namespace lockstep
