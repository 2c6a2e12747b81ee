#include "lockstep/workload/expansion.hpp"

#include <cmath>

namespace lockstep {
namespace {

// The step builder: bytes per op and per collective instance on one rank, from llama3-8b with 4
// layers on 32 H100s (tp 8 pp 2 dp 2 and tp 2 pp 2 dp 8, 16-256 micro-batches): 2.58 MB and
// 0.73 MB per micro-batch for 9,216 and 1,536 ops over 512 collective instances.
constexpr double kTrainBytesPerOp = 240;
constexpr double kTrainBytesPerCollective = 700;
// An expert all-to-all's op: the direct program's send or receive to one peer (collective/
// direct.cpp; inside a node one channel, nccl/groups.cpp), with the transfer the engine keeps
// for it. Measured apart from the ring ops above, as the growth of peak RSS with the EP degree:
// Qwen3 235B-A22B on 64 GB200, TP 1 PP 8 DP 8, 32 micro-batches, full expansion, EP 2 / 4 / 8:
// 190 / 336 / 635 MiB, 74.3 MiB per peer (least squares) over 64 ranks x 768 layer passes x 4
// ops (send and receive in dispatch and combine) = 396 B an op.
constexpr double kTrainBytesPerExpertOp = 400;

}  // namespace

ExpansionSize expansion_size(const TrainConfig& c, bool full) {
  const ParallelConfig& p = c.par;
  ExpansionSize s;
  // Reduced expansion simulates one data-parallel replica with its TP group collapsed to one
  // rank (step_builder's collapse_tp): pp x cp ranks.
  s.ranks = full ? static_cast<double>(p.world()) : double(p.cp) * p.pp;
  const double layers = std::ceil(static_cast<double>(c.model.layers) / p.pp);
  const double passes = c.recompute == Recompute::Full ? 3 : 2;
  s.units = static_cast<double>(c.micro_batches()) * layers * passes;
  // Per layer pass on one rank: two kernels (attention, MLP; ring attention splits its kernel
  // in four), the TP collectives around each (all-gather and reduce-scatter, or all-reduce),
  // expert all-to-alls, the KV ring; each ring collective's ops on one rank: send and receive
  // per step, and a reduction per step of a reduce-scatter.
  s.ops = p.cp > 1 ? 5 : 2;
  double expert_ops = 0;
  if (p.tp > 1) {
    s.collectives += p.sequence_parallel ? 4 : 2;
    s.ops += 10.0 * (p.tp - 1);  // AG 2 + RS 3 per step, twice; or AR 5 per step, twice
  }
  if (p.ep > 1) {
    s.collectives += 2;
    expert_ops = 4.0 * (p.ep - 1);
    s.ops += expert_ops;
  }
  if (p.cp > 1) {
    s.collectives += 1;
    s.ops += 2.0 * (p.cp - 1);
  }
  s.bytes = s.ranks * s.units *
            ((s.ops - expert_ops) * kTrainBytesPerOp + expert_ops * kTrainBytesPerExpertOp +
             s.collectives * kTrainBytesPerCollective);
  return s;
}

bool expands_fully(const TrainConfig& c) {
  if (c.expansion != Expansion::Auto) return c.expansion == Expansion::Full;
  return c.par.world() <= kFullExpansionGpus &&
         expansion_size(c, true).bytes <= kFullExpansionBudgetBytes;
}

}  // namespace lockstep
