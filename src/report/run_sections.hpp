#pragma once
// The producers `lockstep run` calls for each variant, one file each (run_collectives.cpp,
// run_training.cpp): each reads its scenario section, runs the library that owns it and fills
// its part of the Variant.
#include <optional>
#include <string>

#include "lockstep/report/progress.hpp"
#include "lockstep/report/results.hpp"
#include "lockstep/report/run.hpp"
#include "lockstep/topology/builder.hpp"

namespace lockstep::report {

/// Sweeps the collectives the `collectives:` section names on the variant's cluster.
void run_collectives(const RunInput& input, const BuildResult& cluster, Variant& variant,
                     Progress& progress);
/// How many sweeps run_collectives will run (one progress step each).
std::uint64_t count_collective_steps(const RunInput& input);

/// Simulates the `job:` section's training step on the variant's cluster; fills `trace_json`
/// when it is non-null; `progress` (may be null) hears how far its simulations have got.
void run_training(const RunInput& input, const ReportOptions& options, const BuildResult& cluster,
                  Variant& variant, std::string* trace_json, ProgressHook* progress = nullptr);

/// Serves the `job: {type: inference}` section's requests on the variant's cluster
/// (docs/inference.md); fills `trace_json` with its engine steps when it is non-null.
void run_inference(const RunInput& input, const BuildResult& cluster, Variant& variant,
                   std::string* trace_json);

}  // namespace lockstep::report
