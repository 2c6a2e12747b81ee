#pragma once
// Internals of simulate_training shared by its translation units: collective timing by engine
// runs, and the per-rank analysis of an engine run of step programs.
#include <map>
#include <memory>
#include <tuple>
#include <vector>

#include "lockstep/collective/collective.hpp"
#include "lockstep/engine/engine.hpp"
#include "lockstep/routing/router.hpp"
#include "lockstep/workload/step_builder.hpp"
#include "lockstep/workload/training.hpp"

namespace lockstep::train_detail {

/// Runs programs on one engine over one topology (with the rank -> GPU placement given by
/// global rank numbers).
class Runner {
 public:
  Runner(const Topology& topo, Engine& engine, const Router& router)
      : topo_(topo), engine_(engine), router_(router) {}
  RunResult run(const ProgramSet& programs, const std::vector<std::uint32_t>& global_ranks,
                bool record_ops, bool record_links);
  /// Duration of `op` of `bytes` run concurrently by each group of global ranks (cached).
  Time collective(CollectiveOp op, Bytes bytes,
                  const std::vector<std::vector<std::uint32_t>>& groups,
                  std::uint32_t gpus_per_node);
  /// Duration of one point-to-point transfer between two global ranks.
  Time transfer(std::uint32_t from, std::uint32_t to, Bytes bytes);
  const Topology& topology() const { return topo_; }

 private:
  const Topology& topo_;
  Engine& engine_;
  const Router& router_;
  std::map<std::tuple<int, std::uint64_t, std::uint64_t>, Time> cache_;
};

/// One program rank's iteration, from the engine's op timings.
struct RankTimes {
  Time chain_end;                  // last op of the compute chain
  Time engine_finish;              // last op of any kind (trailing sends, full-mode DP)
  Time send_end;                   // last pipeline send
  std::vector<Time> bucket_ready;  // per bucket of its stage
  TrainBreakdown parts;            // compute, tp, ep, pp, bubble, dp (ZeRO-3 waits) so far
};

/// Walks each rank's compute chain and attributes every interval (docs/training.md).
std::vector<RankTimes> analyse(const StepPrograms& programs, const RunResult& run,
                               Time pp_transfer);

/// Timeline slices of program rank `r` (reported as global rank `global`).
void append_timeline(const StepPrograms& programs, const RunResult& run, std::uint32_t r,
                     std::uint32_t global, std::vector<TimelineSlice>& out);

/// The busiest directed links' utilisation series, named by their endpoints.
std::vector<LinkTrack> busiest_links(const Topology& topo, const RunResult& run, std::size_t count,
                                     Time period);

}  // namespace lockstep::train_detail
