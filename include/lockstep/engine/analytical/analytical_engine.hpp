#pragma once
// The analytical engine: executes per-rank programs with no contention. Every transfer of S bytes
// between two GPUs takes
//     per_message_overhead + path latency + S / (path bottleneck bandwidth x transfer_efficiency)
// from the moment both its send and its receive may start (alpha-beta, the path from the
// router); local Copy / Reduce take bytes / local_copy_bandwidth; NetReduce takes the slowest
// member's arrival plus a round trip over each member's first link. Nothing shares a link, so an
// operation's end depends only on the ends of what it waits for (a longest path through the
// program DAG). Memory: one entry per operation; for closed-form predictions at any scale use the
// NCCL model (nccl/tuner.hpp: predict()), which `lockstep collective --engine analytical`
// prints.
//
//   auto engine = make_analytical_engine();
//   RunResult r = engine->run({&topo, programs.get(), topo.gpus(), router.get(), options});
#include <memory>

#include "lockstep/engine/engine.hpp"

namespace lockstep {

class AnalyticalEngine final : public Engine {
 public:
  std::string_view name() const override { return "analytical"; }
  RunResult run(const EngineInput& input) override;
};

std::unique_ptr<Engine> make_analytical_engine();

}  // namespace lockstep
