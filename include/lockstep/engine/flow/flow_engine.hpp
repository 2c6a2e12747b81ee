#pragma once
// The flow-level engine: event-driven execution of per-rank programs where concurrent transfers
// share each directed link's bandwidth max-min fairly (maxmin.hpp), re-solved only where a
// transfer starts or ends. Model and assumptions: docs/flow-engine.md.
//
//   auto engine = make_flow_engine();
//   RunResult r = engine->run({&topo, &programs, topo.gpus(), router.get(), {}});
#include <cstdint>
#include <memory>

#include "lockstep/engine/engine.hpp"

namespace lockstep {

struct FlowEngineConfig {
  // Simulate the rank classes of a symmetric program (ProgramSet::symmetry_period,
  // local_symmetry) once each, weighted by their size, when routing shows their transfers are
  // indistinguishable.
  bool aggregate = true;
  // Ops a rank may consider beyond its oldest unfinished op (a stream's issue queue). 0 (auto):
  // the longest program clamped to [32, 16 Ki] when the programs need it whole
  // (Lookahead::Program), else max(16, 65536 / simulated ranks); an explicit value is capped at
  // max(16, 16M / simulated ranks) op slots of 64 bytes to bound memory (1 GiB).
  std::uint32_t issue_window = 0;
  // How many of the busiest links RunResult::link_series keeps (with record_link_series).
  std::uint32_t series_links = 16;
  // Run a program's channel-split form (ProgramSet::split_channels) when it offers one and
  // aggregation is on: its channels then form classes together (same times). false: as given.
  bool split_channels = true;
  // Skip repeating cycles of a steady state (ProgramSet::periodic_region) once the engine has
  // verified that the whole simulation state repeats; results are those of the full run.
  // Not used with record_ops, adaptive routing or NetReduce groups.
  bool fast_forward = true;
  // Simulate identical flows (same route, bytes and start: the channels of one peer in a direct
  // alltoall when every channel takes the same paths) as one solver variable of their summed
  // coefficients, channels of identical paths on one route, and a connection's queue pairs of
  // identical paths as one variable; results are those of flows one by one (docs/flow-engine.md,
  // "Bundles", R4). false: one variable and one route each (to compare).
  bool bundle = true;
};

/// What the last run did, for tests and benchmarks.
struct FlowRunStats {
  std::uint32_t simulated_ranks = 0;  // ranks simulated (classes when aggregated)
  std::uint32_t class_size = 1;       // ranks per class (1: every rank individually)
  std::uint32_t local_rotation = 1;   // rotations inside a node per class (local_symmetry; 1: none)
  std::uint32_t attempts = 0;         // runs started (a class that splits restarts finer)
  std::uint64_t transfers = 0;        // matched send/recv pairs simulated
  // Flows that joined another's solver variable (bundles; queue pairs of identical paths).
  std::uint64_t bundled_flows = 0;
  std::uint64_t solver_components = 0;
  std::uint32_t fast_forwards = 0;  // steady-state jumps taken
  std::uint64_t skipped_ops = 0;    // ops per simulated rank that the jumps skipped
};

class FlowEngine final : public Engine {
 public:
  explicit FlowEngine(FlowEngineConfig config) : config_(config) {}
  std::string_view name() const override { return "flow"; }
  RunResult run(const EngineInput& input) override;
  const FlowRunStats& last_stats() const { return stats_; }

 private:
  RunResult run_programs(const EngineInput& input);

  FlowEngineConfig config_;
  FlowRunStats stats_;
};

std::unique_ptr<Engine> make_flow_engine(const FlowEngineConfig& config = {});

}  // namespace lockstep
