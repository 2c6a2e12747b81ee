#include "lockstep/workload/expansion.hpp"

#include <algorithm>
#include <cmath>

#include "lockstep/workload/step_builder.hpp"

namespace lockstep {
namespace {

// The step builder: bytes per op and per collective instance on one rank, from llama3-8b with 4
// layers on 32 H100s (tp 8 pp 2 dp 2 and tp 2 pp 2 dp 8, 16-256 micro-batches): 2.58 MB and
// 0.73 MB per micro-batch for 9,216 and 1,536 ops over 512 collective instances. What an op
// holds while the engine runs (heaptrack, bench_training --speed line 50, 8.23 M ops on 64
// ranks): its Op (88 B) in the rank's program and its OpTag (16 B), each in a vector whose
// capacity may reach twice its size (libstdc++ doubles; 131,072 slots a rank there, 738 and 134
// MB), and its start and end (OpTiming, 16 B) in the engine and again in the run's result (132
// and 128 MB): 2 x (88 + 16) + 2 x 16 = 240 B at most, 138 B measured (the vectors nearly full).
constexpr double kTrainBytesPerOp = 240;
constexpr double kTrainBytesPerCollective = 700;
// An expert all-to-all's op: the direct program's send or receive to one peer (collective/
// direct.cpp; inside a node one channel, nccl/groups.cpp), with the transfer the engine keeps
// for it. Measured apart from the ring ops above, as the growth of peak RSS with the EP degree:
// Qwen3 235B-A22B on 64 GB200, TP 1 PP 8 DP 8, 32 micro-batches, full expansion, EP 2 / 4 / 8:
// 190 / 336 / 635 MiB, 74.3 MiB per peer (least squares) over 64 ranks x 768 layer passes x 4
// ops (send and receive in dispatch and combine) = 396 B an op.
constexpr double kTrainBytesPerExpertOp = 400;
// A data-parallel collective's op (gradient buckets, ZeRO gathers, the gradient norm): the same
// ops (sends, receives, reductions, gates) as the TP rings' above, taken at their cost. Not yet
// measured apart (docs/training.md, "Symmetry": to do, from the RSS of line 50 against its
// bucket count).
constexpr double kTrainBytesPerDpOp = 240;

// Without the topology: ops one rank runs in a single ring over n ranks (collective/ring.cpp),
// per step a send and a receive, and a reduction in a reduce-scatter's steps; all-reduce
// 2 (n - 1) steps, the others n - 1, an all-gather first copying its own block.
double ring_ops(CollectiveOp op, Bytes, const std::vector<std::uint32_t>& group) {
  const double n = static_cast<double>(group.size());
  if (n < 2) return 1;  // a group of one: the builder's zero-time op
  switch (op) {
    case CollectiveOp::AllReduce:
      return 4 * (n - 1);
    case CollectiveOp::ReduceScatter:
      return 3 * (n - 1);
    default:
      return 1 + 2 * (n - 1);
  }
}

// Global ranks `stride` apart from `first`, n of them.
std::vector<std::uint32_t> strided(std::uint32_t first, std::uint32_t stride, std::uint32_t n) {
  std::vector<std::uint32_t> g;
  for (std::uint32_t i = 0; i < n; ++i) g.push_back(first + i * stride);
  return g;
}

}  // namespace

double spliced_ops_per_rank(const ProgramSet& programs) {
  const Rank n = programs.num_ranks();
  if (n == 0) return 0;
  // Splice into a scratch program set after one op per member, as the builder splices after the
  // member's stream, and count what it adds.
  MaterializedProgramSet scratch(n, programs.data_type());
  std::vector<Rank> members(n);
  std::vector<OpIndex> after(n);
  for (Rank r = 0; r < n; ++r) {
    members[r] = r;
    after[r] = scratch.add(r, make_compute(Time::zero()));
  }
  append_collective(scratch, programs, members, after, 0);
  double ops = 0;
  for (Rank r = 0; r < n; ++r) ops += static_cast<double>(scratch.num_ops(r)) - 1;
  return ops / n;
}

ExpansionSize expansion_size(const TrainConfig& c, const StepPlan& plan, bool full,
                             const CollectiveOpCount& count) {
  const ParallelConfig& p = c.par;
  const CollectiveOpCount ops_of = count ? count : CollectiveOpCount(ring_ops);
  ExpansionSize s;
  // Reduced expansion simulates one data-parallel replica with its TP group collapsed to one
  // rank (step_builder's collapse_tp): pp x cp ranks.
  s.ranks = full ? static_cast<double>(p.world()) : double(p.cp) * p.pp;
  const double layers = std::ceil(static_cast<double>(c.model.layers) / p.pp);
  const double passes = c.recompute == Recompute::Full ? 3 : 2;
  const double micro = static_cast<double>(c.micro_batches());
  s.units = micro * layers * passes;
  const bool dualpipe = c.pipeline == PipelineSchedule::DualPipe;
  const std::uint32_t replicas = p.replicas();
  // Per layer pass on one rank: two kernels (attention, MLP; ring attention splits its kernel
  // in four); the TP collectives around each (sequence parallelism's all-gather and
  // reduce-scatter, or an all-reduce) and the KV ring (half the passes forward, half backward
  // with twice the bytes), each with the mark the chain gets at its end; expert all-to-alls.
  s.ops = p.cp > 1 ? 5 : 2;
  double expert_ops = 0, dp_ops = 0;
  if (p.tp > 1) {
    const auto tp = strided(0, 1, p.tp);
    if (!full) {
      s.ops += p.sequence_parallel ? 4 : 2;  // delays on the collapsed group's chain
    } else if (p.sequence_parallel) {
      s.ops += 2 * (ops_of(CollectiveOp::AllGather, plan.tp_bytes, tp) +
                    ops_of(CollectiveOp::ReduceScatter, plan.tp_bytes, tp) + 2);
    } else {
      s.ops += 2 * (ops_of(CollectiveOp::AllReduce, plan.tp_bytes, tp) + 1);
    }
    s.collectives += p.sequence_parallel ? 4 : 2;
  }
  if (p.ep > 1) {
    s.collectives += 2;
    expert_ops = 4.0 * (p.ep - 1);
    s.ops += expert_ops;
  }
  if (p.cp > 1) {
    const auto ring = strided(0, p.tp, p.cp);
    const std::uint64_t block = plan.cp_block_bytes.count() * p.cp;
    s.ops += !full ? 1
                   : (ops_of(CollectiveOp::AllGather, Bytes(block), ring) +
                      ops_of(CollectiveOp::AllGather, Bytes(2 * block), ring)) /
                         2;
    s.collectives += 1;
  }
  // The ranks that hold stage s's parameter shards and reduce its gradients (tp rank 0's): its
  // data-parallel group (routed experts: one in ep of it), under DualPipe joined with stage
  // pp - 1 - s's, in global rank order (step_collectives.cpp, holder_groups).
  auto holders = [&](std::uint32_t stage, bool expert) {
    const std::uint32_t step = expert ? p.ep : 1;
    auto g = strided(p.tp * replicas * stage, p.tp * step, replicas / step);
    if (dualpipe) {
      const auto other =
          strided(p.tp * replicas * (p.pp - 1 - stage), p.tp * step, replicas / step);
      g.insert(g.end(), other.begin(), other.end());
      std::sort(g.begin(), g.end());
    }
    return g;
  };
  // ZeRO-3 gathers a layer's parameters before each of its passes (the routed experts apart):
  // the layers' mean on the stage holding the rank's first layer.
  if (p.zero == ZeroStage::Parameters && replicas > 1) {
    double gather = 0;
    const auto n = static_cast<double>(plan.layer_grad_bytes.size());
    for (std::size_t l = 0; l < plan.layer_grad_bytes.size(); ++l) {
      if (!full) {
        gather += 1;
        continue;
      }
      gather += ops_of(CollectiveOp::AllGather, plan.layer_grad_bytes[l], holders(0, false));
      if (plan.layer_expert_grad_bytes[l].count() > 0)
        gather +=
            ops_of(CollectiveOp::AllGather, plan.layer_expert_grad_bytes[l], holders(0, true));
    }
    dp_ops = n > 0 ? gather / n : 0;
    s.ops += dp_ops;
    s.collectives += c.model.is_moe() ? 2 : 1;
  }
  // Pipeline transfers per micro-batch and model chunk: forward and backward each a receive
  // (and the chain's mark of it) and a send; the last stage's output layer two kernels.
  if (p.pp > 1) s.step_ops += micro * (6.0 * p.interleave + 2);
  double step_dp_ops = 0;
  if (full && holders(0, false).size() >= 2) {
    // Each stage's buckets (under DualPipe a pair's two stages' on each of its ranks), reduced
    // (all-reduce, or ZeRO's reduce-scatter) and with ZeRO-1/2 gathered back after the step:
    // the stages' mean per rank.
    const CollectiveOp reduce =
        p.zero == ZeroStage::None ? CollectiveOp::AllReduce : CollectiveOp::ReduceScatter;
    const bool gather_after = p.zero == ZeroStage::Optimizer || p.zero == ZeroStage::Gradients;
    double ops = 0, instances = 0;
    for (std::uint32_t stage = 0; stage < p.pp; ++stage) {
      const double held = dualpipe ? 2 : 1;  // ranks of the group's stages hold both copies
      for (const GradientBucket& b : plan.buckets[stage]) {
        const auto g = holders(stage, b.expert);
        ops += held * ops_of(reduce, bucket_bytes(b, reduce), g);
        instances += held;
        if (gather_after && plan.gather_exposed(stage, b, c.overlap_param_gather)) {
          ops +=
              held * ops_of(CollectiveOp::AllGather, bucket_bytes(b, CollectiveOp::AllGather), g);
          instances += held;
        }
      }
    }
    step_dp_ops += ops / p.pp;
    s.step_collectives += instances / p.pp;
  }
  // Megatron's gradient-norm all-reduce of one FP32 over every rank.
  if (full && c.clip_grad > 0 && p.world() > 1) {
    step_dp_ops += ops_of(CollectiveOp::AllReduce, Bytes(4), strided(0, 1, p.world()));
    s.step_collectives += 1;
  }
  // Each of them starts with a join of its member's stream and chain (step_collectives.cpp).
  step_dp_ops += s.step_collectives;
  s.step_ops += step_dp_ops;
  const double plain = s.ops - expert_ops - dp_ops;
  const double per_pass = plain * kTrainBytesPerOp + expert_ops * kTrainBytesPerExpertOp +
                          dp_ops * kTrainBytesPerDpOp + s.collectives * kTrainBytesPerCollective;
  const double per_step = (s.step_ops - step_dp_ops) * kTrainBytesPerOp +
                          step_dp_ops * kTrainBytesPerDpOp +
                          s.step_collectives * kTrainBytesPerCollective;
  s.bytes = s.ranks * (s.units * per_pass + per_step);
  return s;
}

bool expands_fully(const TrainConfig& c, const StepPlan& plan, const CollectiveOpCount& count) {
  if (c.expansion != Expansion::Auto) return c.expansion == Expansion::Full;
  return c.par.world() <= kFullExpansionGpus &&
         expansion_size(c, plan, true, count).bytes <= kFullExpansionBudgetBytes;
}

}  // namespace lockstep
