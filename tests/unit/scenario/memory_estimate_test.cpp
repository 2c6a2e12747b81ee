// The estimates are counts times bytes per thing: each expected value below is the count worked
// out by hand from the run's sizes, times the constant of memory_estimate.cpp.
#include "lockstep/scenario/memory_estimate.hpp"

#include <gtest/gtest.h>

#include "lockstep/workload/model.hpp"

namespace lockstep {
namespace {

double part(const RunEstimate& e, const std::string& what) {
  for (const auto& p : e.parts)
    if (p.what == what) return p.bytes;
  return -1;
}

// Llama 3 8B cut to 4 layers on 32 GPUs, TP 8 PP 2 DP 2: 64 micro-batches per replica.
TrainConfig llama3_8b_on_32_gpus() {
  TrainConfig c;
  c.model = model_preset("llama3-8b");
  c.model.layers = 4;
  c.par.tp = 8;
  c.par.pp = 2;
  c.par.dp = 2;
  c.global_batch = 128;
  return c;
}

TEST(MemoryEstimate, PlanAlltoallvMatrixIsRanksSquaredTimesEight) {
  RunEstimate e;
  add_plan_matrix_estimate(e, CollectiveOp::AllToAllV, 100'000);
  // 10^10 sizes x 8 B + a vector header (24 B) per row.
  EXPECT_DOUBLE_EQ(part(e, "alltoallv matrix"), 8e10 + 2.4e6);
  RunEstimate ring;
  add_plan_matrix_estimate(ring, CollectiveOp::AllReduce, 100'000);
  EXPECT_DOUBLE_EQ(part(ring, "alltoallv matrix"), -1);
}

TEST(MemoryEstimate, TrainingCountsOpsOfEverySimulatedRank) {
  TrainConfig c = llama3_8b_on_32_gpus();
  RunEstimate e;
  add_training_estimate(e, c, false);
  // 32 GPUs, full expansion, single rings (no topology yet: expansion.cpp's ring_ops).
  // Per layer pass: 2 kernels + sequence parallelism's all-gather (1 + 2 x 7 = 15 ops) and
  // reduce-scatter (3 x 7 = 21) twice, each with its mark: 2 + 2 x (15 + 21 + 2) = 78 ops x 240 B
  // + 4 collectives x 700 B = 21,520 B; 64 micro-batches x 2 layers x 2 passes = 256 passes.
  // Per step: pipeline 64 x (6 + 2) = 512 ops; gradient buckets of 80 MB (40 M parameters x 2)
  // over layers of 27.3 M parameters per rank (54.5 MB) and the 131 MB embedding / output
  // layer: stage 0 one bucket, stage 1 two, each an all-reduce over dp = 2 (4 ops): 12 ops and 3
  // instances over 2 stages, 6 and 1.5 per rank; the gradient norm's all-reduce over 32 ranks
  // 4 x 31 = 124 ops, 1 instance; a join each, 2.5: 512 + 6 + 124 + 2.5 = 644.5 ops x 240 B +
  // 2.5 x 700 B = 156,430 B. 32 x (256 x 21,520 + 156,430) = 181,297,600 B.
  EXPECT_DOUBLE_EQ(part(e, "training expansion"), 181'297'600.0);
  EXPECT_DOUBLE_EQ(part(e, "timeline and trace"), -1);
  // A billion sequences in full expansion: past any machine.
  c.global_batch = 1'000'000'000;
  c.expansion = Expansion::Full;
  RunEstimate huge;
  add_training_estimate(huge, c, false);
  EXPECT_GT(huge.total(), 1e15);
}

TEST(MemoryEstimate, RecordedTimelineCountsTheTracedRunsLinkSeries) {
  TrainConfig c = llama3_8b_on_32_gpus();
  // The flow engine keeps its 16 busiest links and the timeline copies 12 (the report's): 28
  // series of at most 1,000,000 float samples, 112,000,000 B (default.yaml: 64 + 48 MB).
  RunEstimate flow;
  add_training_estimate(flow, c, true, {}, 12);
  EXPECT_DOUBLE_EQ(part(flow, "link series"), 112'000'000.0);
  // The packet engine keeps 64; the analytical engine records no link.
  c.engine = "packet";
  RunEstimate packet;
  add_training_estimate(packet, c, true, {}, 8);
  EXPECT_DOUBLE_EQ(part(packet, "link series"), 288'000'000.0);
  c.engine = "analytical";
  RunEstimate analytical;
  add_training_estimate(analytical, c, true, {}, 8);
  EXPECT_DOUBLE_EQ(part(analytical, "link series"), -1);
  // Without a timeline no engine run records links.
  RunEstimate quiet;
  add_training_estimate(quiet, c, false, {}, 8);
  EXPECT_DOUBLE_EQ(part(quiet, "link series"), -1);
}

TEST(MemoryEstimate, OnlyJobsThatMayExpandInFullAreCountedOnTheCluster) {
  TrainConfig c;
  c.model = model_preset("llama3-8b");
  c.par.dp = 64;
  EXPECT_TRUE(counts_collectives_on_cluster(c));  // 64 GPUs: auto may expand in full
  c.expansion = Expansion::Reduced;
  EXPECT_FALSE(counts_collectives_on_cluster(c));
  c.expansion = Expansion::Auto;
  c.par.dp = 128;  // past kFullExpansionGpus: auto reduces whatever the memory
  EXPECT_FALSE(counts_collectives_on_cluster(c));
}

TEST(MemoryEstimate, FlowPerGpuAndPacketEvents) {
  CollectiveSweep s;
  s.engine = "flow";
  s.algo = Algorithm::Ring;
  RunEstimate flow;
  add_sweep_estimate(flow, s, 1024, 3);
  // 16 MiB fixed, 32 KiB a GPU folded, 512 KiB a rank for up to 2,048 ranks simulated one by
  // one: 16 + 32 + 512 MiB.
  EXPECT_DOUBLE_EQ(part(flow, "flow engine"), (16.0 + 32 + 512) * 1024 * 1024);
  // 640 GPUs (a ring over 80 HGX H100 nodes, 316 MiB peak, every rank on its own): 16 + 20 +
  // 320 = 356 MiB, never under the measured peak.
  RunEstimate ring640;
  add_sweep_estimate(ring640, s, 640, 3);
  EXPECT_DOUBLE_EQ(part(ring640, "flow engine"), 356.0 * 1024 * 1024);
  EXPECT_GE(part(ring640, "flow engine"), 316.0 * 1024 * 1024);
  // 131,072 GPUs fold: the one-by-one term stops at 2,048 ranks (1 GiB): 16 MiB + 4 GiB + 1 GiB.
  RunEstimate big;
  add_sweep_estimate(big, s, 131072, 3);
  EXPECT_DOUBLE_EQ(part(big, "flow engine"), 16.0 * 1024 * 1024 + 5.0 * 1024 * 1024 * 1024);
  // NCCL's tree: 768 KiB a GPU (already above a rank on its own), plus the fixed 16 MiB.
  s.algo = Algorithm::Tree;
  RunEstimate tree;
  add_sweep_estimate(tree, s, 256, 3);
  EXPECT_DOUBLE_EQ(part(tree, "flow engine"), (16.0 + 192) * 1024 * 1024);
  s.algo = Algorithm::Ring;
  s.engine = "packet";
  s.min_bytes = s.max_bytes = Bytes::mib(1);
  RunEstimate packet;
  add_sweep_estimate(packet, s, 16, 3);
  // A ring all-reduce on 16 ranks sends 2 x 15/16 x 1 MiB per rank: x 16 ranks / 4 KiB = 7,680
  // packets, 2 events on each of 3 links: 46,080.
  EXPECT_DOUBLE_EQ(packet.events, 46'080.0);
}

TEST(MemoryEstimate, InferenceStepsAndRequests) {
  InferenceConfig c;
  c.count = 500;
  c.prompt.lo = c.prompt.hi = 1024;
  c.output.lo = c.output.hi = 128;
  c.max_batch = 64;
  // Decode: 500 requests x 127 tokens after the first, 64 sequences a step: 992.1875 steps;
  // prefill: 500 x 1,024 prompt tokens at 2,048 a step (vLLM's floor): 250. Each weighs 50
  // events; each request 160 B, a recorded step 192 B.
  EXPECT_DOUBLE_EQ(inference_steps_lower_bound(c), 992.1875 + 250);
  RunEstimate e;
  add_inference_estimate(e, c, true);
  EXPECT_DOUBLE_EQ(e.events, 1242.1875 * 50);
  EXPECT_DOUBLE_EQ(part(e, "inference requests"), 80'000.0);
  EXPECT_DOUBLE_EQ(part(e, "inference steps and trace"), 1242.1875 * 192);
  // A million requests of 16 M tokens each at batch 1 is beyond any budget of events.
  c.count = 1'000'000;
  c.output.lo = c.output.hi = std::uint64_t{1} << 24;
  c.max_batch = 1;
  RunEstimate absurd;
  add_inference_estimate(absurd, c, false);
  EXPECT_GT(absurd.events, 1e14);
}

TEST(MemoryEstimate, SensitivityIsASecondGraph) {
  RunEstimate graph, copy;
  add_graph_estimate(graph, 4096);
  add_sensitivity_estimate(copy, 4096);
  EXPECT_DOUBLE_EQ(part(copy, "graph copy (why section)"), graph.total());
}

}  // namespace
}  // namespace lockstep
