#pragma once
// The analytical engine: executes per-rank programs. Every transfer of S bytes between two GPUs
// takes
//     per_message_overhead + path latency + S / (path bottleneck bandwidth x transfer_efficiency)
// from the moment both its send and its receive may start and its path's links have sent what
// was ready on them before (alpha-beta, the path from the router; each link sends one transfer
// at a time, first come first served, for S x the path's share of it / its own rate: two
// transfers meeting on a link take twice as long together as one); local Copy / Reduce take
// bytes / local_copy_bandwidth; NetReduce takes the slowest member's arrival plus a round trip
// over each member's first link. Ops run in the order of their ready times (a longest path
// through the program DAG, links' queues included). Memory: one entry per operation and one time
// per directed link. What `lockstep collective --engine analytical`
// prints is the NCCL model priced on the graph (nccl/groups.hpp, docs/analytical-engine.md),
// which uses the link loads (link_loads.hpp) and critical_path() below rather than this engine.
//
//   auto engine = make_analytical_engine();
//   RunResult r = engine->run({&topo, programs.get(), topo.gpus(), router.get(), options});
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "lockstep/engine/engine.hpp"

namespace lockstep {

class AnalyticalEngine final : public Engine {
 public:
  std::string_view name() const override { return "analytical"; }
  RunResult run(const EngineInput& input) override;
};

std::unique_ptr<Engine> make_analytical_engine();

/// What each step of a chain of dependent operations costs in critical_path(): a matched
/// transfer from rank src to rank dst on a channel, one round of a NetReduce group (an empty
/// function costs nothing). Local work and bytes cost nothing.
struct ChainCosts {
  std::function<Time(Rank src, Rank dst, std::uint16_t channel)> transfer;
  std::function<Time(std::uint32_t group)> net_reduce;
};

/// The longest chain of dependent operations through the programs, each transfer and round
/// costing what `costs` says: e.g. the latency a collective cannot avoid however fast its links.
/// Throws InputError for programs that never complete.
///
///   Time t = critical_path(*programs, {[](Rank, Rank, std::uint16_t) { return Time::us(1); }});
///   // a ring all-reduce over n ranks: 2 (n - 1) us
Time critical_path(const ProgramSet& programs, const ChainCosts& costs);

/// The same walk, with when each op became ready and ended (per rank, per op): with every
/// transfer costing 1 ps, a transfer's end is its depth, the number of transfers on the longest
/// chain up to it and including it (the stage of a one-chunk pipeline it belongs to).
std::vector<std::vector<OpTiming>> critical_path_ops(const ProgramSet& programs,
                                                     const ChainCosts& costs);

}  // namespace lockstep
