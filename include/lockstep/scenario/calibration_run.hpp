#pragma once
// One calibration row run on an engine as bench_calibration runs it (docs/calibration.md): the
// row read (calibration_row.hpp), its preset cluster and the cluster NCCL sees, the preset's
// graph (rail_optimized_args), the tuner's choice, and the sweep of `lockstep collective` at the
// row's one size on the engine. Shared by the bench and the test that runs every public row, so
// that a row the bench would skip fails a test.
//
//   CalibrationRun run = run_calibration_row(row, "analytical");
//   // run.prediction.busbw_GBps against run.c.measured_busbw_GBps
#include <string>

#include "lockstep/nccl/cluster.hpp"
#include "lockstep/nccl/tuner.hpp"
#include "lockstep/scenario/calibration_row.hpp"
#include "lockstep/topology/graph.hpp"
#include "lockstep/topology/presets.hpp"

namespace lockstep {

struct CalibrationRun {
  CalibrationCase c;      // tuner.algo cleared when NCCL would not run the row's forced algorithm
  PresetCluster preset;   // resolve_preset(c.preset)
  NcclCluster cluster;    // calibration_nccl_cluster
  Topology graph;         // the preset's rail-optimised graph the engine ran on
  Prediction prediction;  // the tuner's choice; time and busbw_GBps from the engine's sweep
};

/// Runs `row` on `engine` (analytical, flow or packet). A forced algorithm NCCL would not run on
/// the row's cluster (InputError "algo") falls back to NCCL's own choice, as a run would. Throws
/// InputError naming the column or key when the row is not expressible or its preset refuses to
/// build, and InputError("bytes") when the size holds no whole element.
CalibrationRun run_calibration_row(const CalibrationRow& row, const std::string& engine);

}  // namespace lockstep
