// A calibration row run on an engine (calibration_run.hpp).
#include "lockstep/scenario/calibration_run.hpp"

#include <utility>
#include <vector>

#include "lockstep/core/error.hpp"
#include "lockstep/nccl/sweep.hpp"
#include "lockstep/topology/builder.hpp"

namespace lockstep {

namespace {

// The graph the preset describes; InputError from the builder when it refuses one (a NIC port
// faster than the switch port it reaches, say).
Topology preset_graph(const PresetCluster& preset) {
  BuildResult built = build_topology(rail_optimized_args(preset));
  if (!built.graph) throw InputError("system", "the preset built no graph");
  return std::move(*built.graph);
}

}  // namespace

CalibrationRun run_calibration_row(const CalibrationRow& row, const std::string& engine) {
  CalibrationCase c = calibration_case(row);
  PresetCluster preset = resolve_preset(c.preset);
  NcclCluster cluster = calibration_nccl_cluster(c, preset);
  Prediction p;
  try {
    p = predict(cluster, c.tuner);
  } catch (const InputError& e) {
    if (e.field() != "algo") throw;
    c.tuner.algo = std::nullopt;  // an algorithm NCCL would not run here: take NCCL's choice
    p = predict(cluster, c.tuner);
  }
  Topology graph = preset_graph(preset);
  // The sweep of `lockstep collective` at this one size.
  CollectiveSweep sweep;
  sweep.op = c.tuner.op;
  sweep.algo = c.tuner.algo;
  sweep.proto = c.tuner.proto;  // a protocol the row forces (NCCL_PROTO=, "Ring / LL128")
  sweep.min_bytes = sweep.max_bytes = c.tuner.bytes;
  sweep.sharp = cluster.sharp;  // the row ran with SHARP on
  sweep.engine = engine;
  const std::vector<CollectiveRow> rows = run_collective_sweep(sweep, cluster, &graph);
  if (rows.empty()) throw InputError("bytes", "no whole element at this size");
  p.time = rows.front().time;
  p.busbw_GBps = rows.front().busbw_GBps;
  return CalibrationRun{std::move(c), std::move(preset), std::move(cluster), std::move(graph), p};
}

}  // namespace lockstep
