#include "lockstep/scenario/memory_estimate.hpp"

#include <algorithm>
#include <cmath>

#include "lockstep/workload/expansion.hpp"

namespace lockstep {
namespace {

// Flow engine state per GPU at scale, for ring, NVLS, NVLS tree, CollNet and PAT: 24 KB per GPU
// measured on 8,192 GPUs (ring 1 GiB all-reduce, 201 MB peak) and 22 KB on 131,072 (NVLS tree,
// 2.8 GiB); 32 KiB keeps the estimate above both.
constexpr double kFlowBytesPerGpu = 32.0 * 1024;
// NCCL's double binary tree on the flow engine splits its rank classes: 1.4 GiB on 2,048 GPUs,
// 1.8 GiB on 4,096 (README): 768 KiB per GPU.
constexpr double kFlowTreeBytesPerGpu = 768.0 * 1024;
// What one flow run holds whatever its size: the issue window's 65,536 op slots of 64 B (4 MiB,
// simulation.cpp), the solver's and the transfer tables: CollNet on 16 and 128 H100s peaks at
// 17-19 MiB, NVLS at 13-15 MiB (bench_flow_cases, 2026-11-27, a 5 MiB process before), 16 MiB.
constexpr double kFlowFixedBytes = 16.0 * 1024 * 1024;
// Ranks the engine simulates on their own: when the fabric tells the members of a rank class
// apart (a ring over 40, 48, 80 or 96 HGX H100 nodes, which do not fill the leaf groups of the
// rail-optimised fabric; 64 nodes after 13 failed attempts at coarser classes), each rank keeps
// its own op window, connections and flows of every channel: 512 GPUs one by one 152 MiB (bench_
// flow_allreduce --nccl --individual 512, 287 KiB a GPU), 640 GPUs 316 MiB (ring over 80 nodes,
// 494 KiB a GPU). Counted for up to kFlowIndividualRanks ranks: a run of more ranks one by one
// takes hours (512 ranks: 25 M events, 16 s of CPU; events grow as ranks^2 on a ring), so
// larger runs are those that fold.
constexpr double kFlowIndividualBytesPerRank = 512.0 * 1024;
constexpr double kFlowIndividualRanks = 2048;
// Direct (alltoall, alltoallv, sendrecv) flows: one per ordered pair of ranks and channel.
constexpr double kFlowBytesPerPair = 160;
// The analytical engine prices the model on the graph: 366 MiB peak for 131,072 GPUs
// (bench_analytical_scale), 2.9 KB per GPU.
constexpr double kAnalyticalBytesPerGpu = 4.0 * 1024;
// The packet engine's queues and in-flight packets: 30 MB for 64 GPUs, 8 MB for 16.
constexpr double kPacketBytesPerGpu = 512.0 * 1024;
// Packets of the interconnect's MTU (4 KiB, InfiniBand's and RoCE's usual), two events (arrival,
// departure) on each link of a path.
constexpr double kPacketPayload = 4096;
// A recorded slice: its TimelineSlice and its line in the trace JSON.
constexpr double kTraceBytesPerSlice = 400;
// The traced engine run's link utilisation series (engine.hpp's LinkSeries): a float per sample
// of each of the busiest links the engine keeps (FlowEngineConfig::series_links, 16;
// PacketConfig's 64), at most 1,000,000 samples (link_series.cpp's kMaxBins: a step past 10 s
// widens the 10 us period), and the copies the timeline keeps of the busiest of them
// (train_detail::busiest_links). Measured with heaptrack on scenarios/default.yaml (a 21.4 s
// step): 64.00 MB in fill_link_series (16 links x 1,000,000 samples x 4 B) and 48.00 MB in
// busiest_links (the report's 12 tracks), 112 of its 138 MB heap peak.
constexpr double kLinkSeriesSamples = 1'000'000;
constexpr double kLinkSeriesBytesPerSample = 4;
constexpr double kFlowSeriesLinks = 16;
constexpr double kPacketSeriesLinks = 64;
// The functional executor: 150 B per op (plan all_reduce, ring, 1,000 ranks: 570 MB for 4 M
// ops; FunctionalOptions::max_ops says about 100), and alltoall's per-pair queues 250 B a pair
// (plan alltoallv, 1,000 ranks: 585 MB for 2 M ops and 1 M pairs).
constexpr double kExecutorBytesPerOp = 150;
constexpr double kExecutorBytesPerPair = 250;
// alltoallv's programs are held, a send and a receive per pair: 938 MB at 4,000 ranks, 29 B an op
// (every other program set generates its ops on demand: 328 B for 131,072 ranks, README).
constexpr double kHeldBytesPerOp = 32;

}  // namespace

void add_graph_estimate(RunEstimate& e, std::uint64_t gpus) {
  e.add("graph", 512.0 * static_cast<double>(gpus));
}

void add_sweep_estimate(RunEstimate& e, const CollectiveSweep& sweep, std::uint64_t ranks,
                        std::uint32_t diameter_links) {
  const double n = static_cast<double>(ranks);
  const bool pairs = sweep.op == CollectiveOp::AllToAll || sweep.op == CollectiveOp::AllToAllV ||
                     sweep.algo == Algorithm::Direct;
  if (sweep.engine == "flow") {
    // NCCL's tree per GPU already exceeds a rank simulated on its own; direct flows are counted
    // per pair (measured within x1.4 at 128 GPUs).
    const bool tree = sweep.algo == Algorithm::Tree;
    const double per_gpu = tree ? kFlowTreeBytesPerGpu : kFlowBytesPerGpu;
    const double alone =
        tree || pairs ? 0 : std::min(n, kFlowIndividualRanks) * kFlowIndividualBytesPerRank;
    e.add("flow engine",
          kFlowFixedBytes + n * per_gpu + alone + (pairs ? n * n * kFlowBytesPerPair : 0));
  } else if (sweep.engine == "packet") {
    e.add("packet engine", n * kPacketBytesPerGpu);
    // Every byte a rank sends crosses the fabric in packets: busbw x time bytes per rank.
    double bytes = 0;
    for (const Bytes size : sweep.sizes(static_cast<std::uint32_t>(ranks)))
      bytes += static_cast<double>(size.count()) * busbw_factor(sweep.op, static_cast<Rank>(ranks));
    e.events += bytes * n / kPacketPayload * 2.0 * std::max<std::uint32_t>(1, diameter_links);
  } else {
    e.add("analytical engine", n * kAnalyticalBytesPerGpu);
  }
  if (sweep.op == CollectiveOp::AllToAllV) e.add("alltoallv matrix", n * n * 8);
}

void add_sweeps_estimate(RunEstimate& e, const std::vector<CollectiveSweep>& sweeps,
                         std::uint64_t ranks, std::uint32_t diameter_links) {
  RunEstimate largest;
  for (const auto& s : sweeps) {
    RunEstimate one;
    add_sweep_estimate(one, s, ranks, diameter_links);
    largest.events += one.events;
    if (one.total() > largest.total()) largest.parts = one.parts;
  }
  e.parts.insert(e.parts.end(), largest.parts.begin(), largest.parts.end());
  e.events += largest.events;
}

void add_plan_matrix_estimate(RunEstimate& e, CollectiveOp op, std::uint64_t ranks) {
  const double n = static_cast<double>(ranks);
  if (op == CollectiveOp::AllToAllV) {
    e.add("alltoallv matrix", n * n * 8 + n * 24);
    e.add("program set", n * n * 2 * kHeldBytesPerOp);
  }
  e.add("per-rank summaries", n * 64);
}

void add_plan_executor_estimate(RunEstimate& e, std::uint64_t ops, std::uint64_t ranks,
                                bool all_pairs) {
  const double n = static_cast<double>(ranks);
  e.add("functional executor", static_cast<double>(ops) * kExecutorBytesPerOp +
                                   (all_pairs ? n * n * kExecutorBytesPerPair : 0));
}

void add_training_estimate(RunEstimate& e, const TrainConfig& c, bool record_timeline,
                           const CollectiveOpCount& count, std::size_t busiest_links) {
  // The plan's buckets and message sizes, in time independent of the batch (make_step_shapes).
  const StepPlan plan = make_step_shapes(c);
  const ExpansionSize s = expansion_size(c, plan, expands_fully(c, plan, count), count);
  e.add("training expansion", s.bytes);
  if (record_timeline) {
    const double recorded =
        std::min<double>(s.ranks, c.trace_ranks.empty() ? 8 : c.trace_ranks.size());
    e.add("timeline and trace", recorded * s.units * s.ops * kTraceBytesPerSlice);
    // One engine run records the links (the whole job in full expansion, replica 0 in reduced);
    // the analytical engine records none.
    const double kept = c.engine == "packet" ? kPacketSeriesLinks
                        : c.engine == "flow" ? kFlowSeriesLinks
                                             : 0;
    if (kept > 0) {
      e.add("link series", (kept + static_cast<double>(busiest_links)) * kLinkSeriesSamples *
                               kLinkSeriesBytesPerSample);
    }
  }
}

bool counts_collectives_on_cluster(const TrainConfig& c) {
  return c.expansion != Expansion::Reduced && c.par.world() <= kFullExpansionGpus;
}

namespace {
// A request's timing record (48 B) and its scheduler entry (queue slot, context and counters):
// 160 B each, on the safe side.
constexpr double kInferenceBytesPerRequest = 160;
// A recorded engine step (StepRecord, 40 B) and its trace event (about 150 B of JSON).
constexpr double kInferenceBytesPerRecordedStep = 192;
// One engine step costs 1-17 us of CPU (lockstep serve, 20,000 requests of Llama 3 70B on one
// HGX H100: 2.56 M batch-1 steps in 2.9 s, 42,500 steps of batch 64 in 0.73 s), where a packet
// event costs 0.1-0.3 us (docs/packet-engine.md "Speed"): a step weighs 50 events.
constexpr double kEventsPerInferenceStep = 50;
}  // namespace

double inference_steps_lower_bound(const InferenceConfig& c) {
  const double count = static_cast<double>(c.count);
  const double batch = std::max<double>(1, c.max_batch);
  const double prefill_budget = std::max<double>(2048, static_cast<double>(c.max_prefill_tokens));
  const double decode = count * std::max(0.0, c.output.mean() - 1) / batch;
  const double prefill = std::ceil(count * c.prompt.mean() / prefill_budget);
  return decode + prefill;
}

void add_inference_estimate(RunEstimate& e, const InferenceConfig& c, bool record_steps) {
  const double steps = inference_steps_lower_bound(c);
  e.add("inference requests", static_cast<double>(c.count) * kInferenceBytesPerRequest);
  if (record_steps) e.add("inference steps and trace", steps * kInferenceBytesPerRecordedStep);
  e.events += steps * kEventsPerInferenceStep;
}

void add_sensitivity_estimate(RunEstimate& e, std::uint64_t gpus) {
  RunEstimate copy;
  add_graph_estimate(copy, gpus);
  e.add("graph copy (why section)", copy.total());
}

}  // namespace lockstep
