#pragma once
// The results of one `lockstep run`: everything the report shows, as one plain data structure
// that the producers (topology + inventory, collective sweeps, training steps) fill and the
// writers (results.json, CSV tables, report.html) read. Field names carry their unit (time_us,
// busbw_GBps, cost_usd) exactly as results.json spells them; 1 GB = 1e9 bytes as in nccl-tests.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "lockstep/topology/inventory.hpp"

namespace lockstep::report {

/// One line of an nccl-tests style sweep.
struct SweepRow {
  std::uint64_t bytes = 0;
  std::uint64_t count = 0;  // elements of `type`
  std::string type;         // "float", "bfloat16", ...
  std::string algorithm;    // the one used (after auto selection): ring, tree, nvls, ...
  std::string protocol;     // ll, ll128, simple
  double time_us = 0;
  double algbw_GBps = 0;
  double busbw_GBps = 0;
};

/// One collective swept over message sizes.
struct Sweep {
  std::string op;         // all_reduce, all_gather, ...
  std::string algorithm;  // as requested: auto, ring, tree, ...
  std::string engine;     // analytical, flow, packet
  std::vector<SweepRow> rows;
};

/// One slice of the iteration time; the slices add up to the iteration time.
struct BreakdownPart {
  std::string name;  // compute, exposed_tp, exposed_dp, pipeline_bubble, straggler_wait, ...
  double time_us = 0;
};

/// Monte Carlo statistics of the iteration time under noise.
struct JitterStats {
  std::uint64_t trials = 0;
  double p50_us = 0;
  double p99_us = 0;
  double max_us = 0;
  double mean_us = 0;
  std::vector<double> iteration_time_us;  // one per trial, sorted ascending (the CDF's points)
  double lockstep_waste_gpu_s = 0;        // GPU-seconds idle waiting for others, per iteration
  double lockstep_waste_usd = 0;          // its cost per iteration
};

/// One training step of a model with a given parallelism.
struct Training {
  std::string model;
  std::string parallelism;  // "TP8 PP4 DP8", one line
  std::uint64_t gpus = 0;
  double iteration_time_us = 0;  // noise-free
  std::vector<BreakdownPart> breakdown;
  double mfu = 0;  // model FLOP/s utilisation, 0..1
  double tokens_per_s = 0;
  double gpu_hours_per_step = 0;
  double cost_per_step_usd = 0;
  double cost_per_trillion_tokens_usd = 0;
  std::optional<JitterStats> jitter;
};

/// Utilisation of the busiest links over time, for the heat map.
struct LinkHeatmap {
  double bucket_us = 0;                          // width of one time bucket
  std::string source;                            // which run it was recorded from
  std::vector<std::string> links;                // link names, busiest first
  std::vector<std::vector<double>> utilisation;  // [link][bucket], each 0..1
};

/// One variant of the scenario: the cluster with some keys substituted.
struct Variant {
  std::string name;  // "fabric=ib-ndr", or "base" when the scenario declares no variants
  std::vector<std::pair<std::string, std::string>> substitutions;  // cluster key -> value
  Inventory inventory;
  std::vector<Sweep> sweeps;
  std::optional<Training> training;
  std::optional<LinkHeatmap> heatmap;
  std::vector<std::string> notes;  // what did not run for this variant, and why
};

struct RunResults {
  std::string title;
  std::string scenario_path;
  std::string scenario_text;  // the file as given, shown in the report
  std::string lockstep_version;
  std::uint64_t seed = 0;
  std::vector<std::string> variant_keys;  // the cluster keys the variants substitute
  std::vector<Variant> variants;
  std::vector<std::string> notes;  // run-wide diagnostics worth showing in the report
};

}  // namespace lockstep::report
