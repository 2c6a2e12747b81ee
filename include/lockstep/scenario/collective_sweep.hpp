#pragma once
// Collective sweeps (nccl/sweep.hpp) as `lockstep collective`'s flags and the `collectives:` /
// `engine:` sections of scenario files give them (docs/scenario-collectives.md): both go through
// these readers, so flags and files accept the same names and fail with the same messages.
//
//   CollectiveSweep sweep = parse_collective_sweep(args);  // {op: all_reduce, max_bytes: 1GiB}
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lockstep/config/arg_node.hpp"
#include "lockstep/nccl/sweep.hpp"

namespace lockstep {

/// A collective's name as a sweep takes it: lockstep's (all_reduce), nccl-tests' binary
/// (all_reduce_perf) or without underscores (allreduce). InputError naming `field` otherwise.
CollectiveOp parse_sweep_op(std::string_view name, std::string_view field);
/// Reads one sweep from a map with keys op, algo, proto, min_bytes, max_bytes, step_factor,
/// step_bytes (instead of step_factor: nccl-tests -i), type, channels, sharp, skew (alltoallv),
/// engine, faults (link faults only); every error names the key and file:line:column. Checks that
/// no unknown key remains.
CollectiveSweep parse_collective_sweep(const ArgNode& args);
/// A scenario's `collectives:` section: one sweep map or a list of them. `engine` (from the
/// `engine:` section, see parse_engine_name) is the default engine of each sweep.
std::vector<CollectiveSweep> parse_collectives_section(const ArgNode& section,
                                                       const std::string& engine = "analytical");
/// NCCL_PXN_DISABLE as a scenario's `collectives:` section sets it for the job beside its sweeps
/// (`lockstep train`, `serve`, `run`; docs/training.md "DeepEP and PXN"): its sweeps' `pxn`, true
/// without the section. NCCL reads the variable once a process, so sweeps that set it both ways
/// leave the job's undecided: an error at the first that differs.
bool collectives_pxn(const std::optional<ArgNode>& section);
/// A scenario's `engine:` section: a name ("flow") or a map {name: flow}.
std::string parse_engine_name(const ArgNode& section);

}  // namespace lockstep
