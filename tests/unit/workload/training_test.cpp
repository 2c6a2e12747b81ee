// Training iterations whose times are derived by hand on the contention-free reference engine
// (every transfer takes latency + bytes / bandwidth); see test_cluster.hpp for the model, whose
// layer forward pass takes 1 ms and backward pass 2 ms per micro-batch, as does the output head.
#include "lockstep/workload/training.hpp"

#include <gtest/gtest.h>

#include "lockstep/collective/collective.hpp"
#include "lockstep/core/error.hpp"
#include "lockstep/topology/builder.hpp"
#include "lockstep/topology/presets.hpp"
#include "lockstep/workload/waste.hpp"
#include "test_cluster.hpp"

namespace lockstep {
namespace {

using testing::reference_options;
using testing::star_cluster;
using testing::tiny_config;

constexpr double kMs = 1e-3;

TEST(Training, TwoStagePipelineBubble) {
  // pp = 2, m = 2 micro-batches. Stage 0 holds layer 0 (F 1 ms, B 2 ms); stage 1 layer 1 and the
  // head (F 2 ms, B 4 ms). Activations per rank 1024 tokens x 1024 x 2 B = 2 MiB at 2.097152 GB/s:
  // c = 1 ms per pipeline transfer. 1F1B:
  //   stage 0: F0 0-1, F1 1-2 (sends arrive at 2 and 3) ... B0 9-11, B1 15-17
  //   stage 1: F0 2-4, B0 4-8 (grad arrives at 9), F1 8-10, B1 10-14 (grad arrives at 15)
  // Iteration 17 ms. Stage 0 computes 6 ms, waits 7 + 4 ms of which 1 ms each is transfer;
  // stage 1 computes 12 ms, waits 2 ms at the start (1 ms transfer), sends for 1 ms at the end
  // and idles 2 ms while stage 0 drains (bubble too). Means: compute 9, pp (2 + 2) / 2 = 2,
  // bubble (9 + 1 + 2) / 2 = 6.
  const Topology topo = star_cluster(1, 2);
  const TrainConfig c = tiny_config(1, 2, 1, 2);
  const TrainResult r = simulate_training(
      topo, c, reference_options(Time::zero(), Bandwidth::bytes_per_second(2'097'152'000)));
  EXPECT_EQ(r.expansion, "full");
  EXPECT_NEAR(r.iteration.seconds(), 17 * kMs, 1e-9);
  EXPECT_NEAR(r.breakdown.compute.seconds(), 9 * kMs, 1e-9);
  EXPECT_NEAR(r.breakdown.pp.seconds(), 2 * kMs, 1e-9);
  EXPECT_NEAR(r.breakdown.bubble.seconds(), 6 * kMs, 1e-9);
  EXPECT_EQ(r.breakdown.imbalance, Time::zero());
  EXPECT_EQ(r.breakdown.dp, Time::zero());
}

// dp = 2, one micro-batch per replica, one bucket per layer: the layer-1 bucket (layer 1 + head,
// 54,525,952 B) is ready at 3 + 2 + 2 = 7 ms, the layer-0 bucket (layer 0 + embedding, the same
// size) at 9 ms. A 2-rank ring all-reduce is 2 steps of S/2 = 27,262,976 B; at 27.262976 GB/s
// each step takes 1 ms, so each all-reduce takes 2 ms.
TrainConfig overlap_config(bool overlap) {
  TrainConfig c = tiny_config(1, 1, 2, 2);
  c.bucket = Bytes(1);
  c.overlap_dp = overlap;
  return c;
}

TEST(Training, OverlappedGradientAllReduceHidesAllButTheLastBucket) {
  // Overlapped: bucket 1 all-reduces 7-9 under the layer-0 backward, bucket 0 9-11: 11 ms.
  const auto opts = reference_options(Time::zero(), Bandwidth::bytes_per_second(27'262'976'000));
  const TrainResult r = simulate_training(star_cluster(1, 2), overlap_config(true), opts);
  EXPECT_NEAR(r.iteration.seconds(), 11 * kMs, 1e-9);
  EXPECT_NEAR(r.breakdown.compute.seconds(), 9 * kMs, 1e-9);
  EXPECT_NEAR(r.breakdown.dp.seconds(), 2 * kMs, 1e-9);
}

TEST(Training, UnoverlappedGradientAllReduceIsFullyExposed) {
  // Without overlap both buckets run after the backward pass: 9 + 2 + 2 = 13 ms.
  const auto opts = reference_options(Time::zero(), Bandwidth::bytes_per_second(27'262'976'000));
  const TrainResult r = simulate_training(star_cluster(1, 2), overlap_config(false), opts);
  EXPECT_NEAR(r.iteration.seconds(), 13 * kMs, 1e-9);
  EXPECT_NEAR(r.breakdown.dp.seconds(), 4 * kMs, 1e-9);
}

TEST(Training, Fp32GradientBufferReducesTwiceTheBytes) {
  // Megatron-LM's FP32 gradient buffer (grad_reduce_in_fp32, its default with --bf16) reduces
  // the buffer itself: each bucket is 2 x 54,525,952 B, its 2-rank ring all-reduce 2 steps of
  // 54,525,952 B at 27.262976 GB/s = 2 ms each: 9 + 4 + 4 = 17 ms, 8 ms of it DP.
  const auto opts = reference_options(Time::zero(), Bandwidth::bytes_per_second(27'262'976'000));
  TrainConfig c = overlap_config(false);
  c.grad_reduce_in_fp32 = true;
  TrainResult r = simulate_training(star_cluster(1, 2), c, opts);
  EXPECT_NEAR(r.iteration.seconds(), 17 * kMs, 1e-9);
  EXPECT_NEAR(r.breakdown.dp.seconds(), 8 * kMs, 1e-9);
  // The distributed optimizer: a reduce-scatter of the FP32 bucket is one step of 54,525,952 B
  // (2 ms), the parameters' all-gather after the step one of the BF16 27,262,976 B (1 ms):
  // 9 + 2 + 2 + 1 + 1 = 15 ms (13 with a BF16 buffer).
  c.par.zero = ZeroStage::Optimizer;
  r = simulate_training(star_cluster(1, 2), c, opts);
  EXPECT_NEAR(r.iteration.seconds(), 15 * kMs, 1e-9);
  c.expansion = Expansion::Reduced;  // the buckets scheduled after the run: the same sizes
  r = simulate_training(star_cluster(1, 2), c, opts);
  EXPECT_NEAR(r.iteration.seconds(), 15 * kMs, 1e-9);
  c.grad_reduce_in_fp32 = false;
  r = simulate_training(star_cluster(1, 2), c, opts);
  EXPECT_NEAR(r.iteration.seconds(), 13 * kMs, 1e-9);
}

TEST(Training, ReducedAndFullExpansionsAgree) {
  // tp 2, pp 2, dp 2 on 2 nodes of 4 GPUs: the reduced run (one replica, TP collectives as
  // measured delays, DP buckets scheduled across replicas) must give the full run's answer.
  const auto opts = reference_options(Time::ns(700), Bandwidth::gBps(50));
  TrainConfig c = tiny_config(2, 2, 2, 8);
  c.model.layers = 4;
  c.par.zero = ZeroStage::Optimizer;
  c.expansion = Expansion::Full;
  const TrainResult full = simulate_training(star_cluster(2, 4), c, opts);
  c.expansion = Expansion::Reduced;
  const TrainResult reduced = simulate_training(star_cluster(2, 4), c, opts);
  EXPECT_EQ(full.expansion, "full");
  EXPECT_EQ(reduced.expansion, "reduced");
  EXPECT_GT(full.breakdown.tp, Time::zero());
  EXPECT_GT(full.breakdown.dp, Time::zero());
  EXPECT_EQ(full.iteration, reduced.iteration);
  EXPECT_EQ(full.breakdown.compute, reduced.breakdown.compute);
  EXPECT_EQ(full.breakdown.tp, reduced.breakdown.tp);
}

TEST(Training, ReducedAndFullAgreeUnderNoise) {
  // With noise the reduced expansion simulates every replica (each with the same per-rank noise
  // streams as the full run, and real TP collectives) and joins them at the DP buckets.
  const auto opts = reference_options(Time::ns(700), Bandwidth::gBps(50));
  TrainConfig c = tiny_config(2, 2, 2, 8);
  c.model.layers = 4;
  c.jitter.push_back(parse_jitter("normal:10%", "jitter"));
  c.jitter.push_back(parse_jitter("straggler:p=0.2,x=1.5", "jitter"));
  c.trials = 3;
  c.expansion = Expansion::Full;
  const TrainResult full = simulate_training(star_cluster(2, 4), c, opts);
  c.expansion = Expansion::Reduced;
  const TrainResult reduced = simulate_training(star_cluster(2, 4), c, opts);
  ASSERT_EQ(full.trial_times.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_NEAR(reduced.trial_times[i].seconds(), full.trial_times[i].seconds(),
                1e-3 * full.trial_times[i].seconds());
  }
  EXPECT_NEAR(reduced.waste_gpu_seconds, full.waste_gpu_seconds, 1e-2 * full.waste_gpu_seconds);
}

TEST(Training, ReducedStragglerTrialsReuseUnchangedReplicasAndAgreeWithFull) {
  // Straggler noise without per-kernel jitter: a replica whose ranks drew the same factors as in
  // an earlier trial is reused (with p = 0.2 over 4-rank replicas, about 40% of them have no
  // straggler at all). Each TP group runs as one rank paced by its slowest member. Both
  // shortcuts must leave every trial where the full expansion puts it.
  const auto opts = reference_options(Time::ns(700), Bandwidth::gBps(50));
  TrainConfig c = tiny_config(2, 2, 2, 8);
  c.model.layers = 4;
  c.jitter.push_back(parse_jitter("straggler:p=0.2,x=1.5", "jitter"));
  c.trials = 6;
  c.expansion = Expansion::Full;
  const TrainResult full = simulate_training(star_cluster(2, 4), c, opts);
  c.expansion = Expansion::Reduced;
  const TrainResult reduced = simulate_training(star_cluster(2, 4), c, opts);
  ASSERT_EQ(reduced.trial_times.size(), 6u);
  for (std::size_t i = 0; i < 6; ++i) {
    EXPECT_NEAR(reduced.trial_times[i].seconds(), full.trial_times[i].seconds(),
                1e-3 * full.trial_times[i].seconds());
  }
  EXPECT_GT(reduced.p99, reduced.iteration);
  EXPECT_NEAR(reduced.waste_gpu_seconds, full.waste_gpu_seconds, 1e-2 * full.waste_gpu_seconds);
}

TEST(Training, OneSlowGpuWastesEveryOtherGpusTime) {
  // dp = 4 on a (practically) infinitely fast network: the iteration is 9 ms of compute. Rank 0
  // twice slower makes it 18 ms; the three others wait 9 ms each: 27 ms of lockstep waste. Rank
  // 0's own extra 9 ms is its own compute, not waste.
  TrainConfig c = tiny_config(1, 1, 4, 4);
  c.faults.push_back(parse_fault("slow-gpu:rank=0,x=2", "faults"));
  const auto opts = reference_options(Time::zero(), Bandwidth::bytes_per_second(1e18));
  const TrainResult r = simulate_training(star_cluster(1, 4), c, opts);
  EXPECT_NEAR(r.iteration.seconds(), 9 * kMs, 1e-9);
  EXPECT_NEAR(r.p50.seconds(), 18 * kMs, 1e-9);
  EXPECT_NEAR(r.waste_gpu_seconds, 3 * 9 * kMs, 1e-9);
  EXPECT_NEAR(r.breakdown.straggler.seconds(), 27 * kMs / 4, 1e-9);
}

TEST(Training, SlowGpuPlacedByNodeAndGpuIsTheRankOfThatGpu) {
  // The test above on 2 nodes of 2 GPUs: node 1 GPU 0 is rank 1 x 2 + 0 = 2 (rank r on the r-th
  // GPU, node-major); TP 1, PP 1: stage 0, replica 2. Same 18 ms step, 27 ms of waste. A day of
  // 18 ms steps is 86,400 / 0.018 = 4.8 M steps: 0.027 x 4.8 M / 3600 = 36 GPU-hours, at
  // $2.50 = $90.
  TrainConfig c = tiny_config(1, 1, 4, 4);
  c.faults.push_back(parse_fault("slow-gpu:node=1,gpu=0,x=2", "faults"));
  const auto opts = reference_options(Time::zero(), Bandwidth::bytes_per_second(1e18));
  const TrainResult r = simulate_training(star_cluster(2, 2), c, opts);
  EXPECT_NEAR(r.p50.seconds(), 18 * kMs, 1e-9);
  EXPECT_NEAR(r.waste_gpu_seconds, 3 * 9 * kMs, 1e-9);
  EXPECT_NEAR(r.waste_gpu_hours_per_day, 36, 1e-6);
  EXPECT_NEAR(r.waste_cost_per_day_usd, 90, 1e-6);
  ASSERT_EQ(r.slow_gpus.size(), 1u);
  EXPECT_EQ(r.slow_gpus[0].rank, 2u);
  EXPECT_EQ(r.slow_gpus[0].node, 1u);
  EXPECT_EQ(r.slow_gpus[0].gpu, 0u);
  EXPECT_EQ(r.slow_gpus[0].replica, 2u);
  EXPECT_EQ(r.slow_gpus[0].stage, 0u);
  c.faults[0] = parse_fault("slow-gpu:node=2,gpu=0,x=2", "faults");
  EXPECT_THROW(simulate_training(star_cluster(2, 2), c, opts), InputError);  // nodes 0-1
  c.faults[0] = parse_fault("slow-gpu:node=0,gpu=2,x=2", "faults");
  EXPECT_THROW(simulate_training(star_cluster(2, 2), c, opts), InputError);  // GPUs 0-1
}

TEST(Training, SlowGpuPlacedByStageIsThatStagesFirstRank) {
  // TP 2, PP 2, DP 1: stage 1's first GPU is rank tp x cp x dp x 1 = 2, and gives the very
  // step rank=2 gives.
  TrainConfig c = tiny_config(2, 2, 1, 4);
  const auto opts = reference_options(Time::us(1), Bandwidth::gBps(50));
  c.faults.push_back(parse_fault("slow-gpu:stage=1,x=2", "faults"));
  const TrainResult by_stage = simulate_training(star_cluster(1, 4), c, opts);
  ASSERT_EQ(by_stage.slow_gpus.size(), 1u);
  EXPECT_EQ(by_stage.slow_gpus[0].rank, 2u);
  EXPECT_EQ(by_stage.slow_gpus[0].stage, 1u);
  EXPECT_EQ(by_stage.slow_gpus[0].tp_rank, 0u);
  c.faults[0] = parse_fault("slow-gpu:rank=2,x=2", "faults");
  const TrainResult by_rank = simulate_training(star_cluster(1, 4), c, opts);
  EXPECT_EQ(by_stage.p50, by_rank.p50);
  EXPECT_GT(by_stage.p50, by_stage.iteration);
  c.faults[0] = parse_fault("slow-gpu:stage=2,x=2", "faults");
  EXPECT_THROW(simulate_training(star_cluster(1, 4), c, opts), InputError);    // stages 0-1
  EXPECT_THROW(parse_fault("slow-gpu:node=1,x=2", "faults"), InputError);      // gpu= missing
  EXPECT_THROW(parse_fault("slow-gpu:rank=1,stage=1", "faults"), InputError);  // two places
}

TEST(Training, SeedExampleTenThousandGpusOneTwentyMicrosecondsLate) {
  // 10,000 GPUs meet at an all-reduce; one arrives 20 us late: 9,999 x 20 us = 0.19998 GPU-s.
  std::vector<Time> arrivals(10'000, Time::ms(5));
  arrivals[1234] = Time::ms(5) + Time::us(20);
  EXPECT_EQ(barrier_waste(arrivals), Time::us(20) * 9'999);
  // The same through the iteration accounting: the late GPU's 20 us are its own compute.
  std::vector<Time> extra(10'000, Time::zero());
  extra[1234] = Time::us(20);
  EXPECT_NEAR(lockstep_waste_gpu_seconds(Time::ms(100) + Time::us(20), Time::ms(100), extra),
              0.19998, 1e-12);
}

TEST(Training, DataParallelAllReduceOf70BGradientsAt100GbpsTakesAbout22s) {
  // The seed: ~140 GB of gradients over 100 Gb/s "would take over 11 seconds per step" (one pass
  // of the data); a ring all-reduce moves 2(n-1)/n x S per GPU: at n = 16,
  // 30/16 x 141,104,775,168 B / 12.5 GB/s = 21.16 s, tending to 2 S / B = 22.6 s at large n.
  const std::uint64_t grads = 2 * model_preset("llama3-70b").total_params();
  CollectiveSpec spec;
  spec.op = CollectiveOp::AllReduce;
  spec.ranks = 16;
  spec.bytes = Bytes(grads);
  auto programs = make_collective(spec);
  testing::ReferenceEngine engine(Time::zero(), Bandwidth::gbps(100));
  const Topology topo = star_cluster(2, 8);
  EngineInput in;
  in.topology = &topo;
  in.programs = programs.get();
  in.placement = topo.gpus();
  const double seconds = engine.run(in).makespan.seconds();
  EXPECT_NEAR(seconds, 30.0 / 16 * static_cast<double>(grads) / 12.5e9, 1e-6);
  EXPECT_GT(seconds, 21.0);
  EXPECT_LT(2.0 * static_cast<double>(grads) / 12.5e9, 23.0);
}

TrainConfig jitter_config(const std::string& jitter) {
  TrainConfig c = tiny_config(1, 2, 4, 16);
  c.jitter.push_back(parse_jitter(jitter, "jitter"));
  c.trials = 20;
  c.seed = 7;
  return c;
}

TEST(Training, IdenticalSeedsGiveIdenticalTrials) {
  const auto opts = reference_options(Time::us(2), Bandwidth::gBps(50));
  const TrainResult a = simulate_training(star_cluster(2, 4), jitter_config("normal:5%"), opts);
  const TrainResult b = simulate_training(star_cluster(2, 4), jitter_config("normal:5%"), opts);
  ASSERT_EQ(a.trial_times.size(), 20u);
  EXPECT_EQ(a.trial_times, b.trial_times);
  EXPECT_EQ(a.waste_gpu_seconds, b.waste_gpu_seconds);
  TrainConfig other = jitter_config("normal:5%");
  other.seed = 8;
  EXPECT_NE(simulate_training(star_cluster(2, 4), other, opts).trial_times, a.trial_times);
}

TEST(Training, MoreJitterNeverLowersTheP99) {
  // With a fixed seed the straggler draws are the same uniforms: a higher p makes a superset of
  // ranks slow and a higher x makes them slower, so every trial (and every quantile) can only
  // grow; and any jitter is at least the noise-free iteration.
  const auto opts = reference_options(Time::us(2), Bandwidth::gBps(50));
  const Topology topo = star_cluster(2, 4);
  const TrainResult none = simulate_training(topo, tiny_config(1, 2, 4, 16), opts);
  const TrainResult some = simulate_training(topo, jitter_config("straggler:p=0.1,x=1.2"), opts);
  const TrainResult more = simulate_training(topo, jitter_config("straggler:p=0.3,x=1.5"), opts);
  for (std::size_t i = 0; i < some.trial_times.size(); ++i) {
    EXPECT_LE(some.trial_times[i], more.trial_times[i]);
    EXPECT_GE(some.trial_times[i], none.iteration);
  }
  EXPECT_GE(some.p99, none.p99);
  EXPECT_GE(more.p99, some.p99);
  EXPECT_GT(more.p99, none.p99);
  EXPECT_GE(more.waste_gpu_seconds, some.waste_gpu_seconds);
}

TEST(Training, WorldSizeMismatchAndMemoryOverflowAreInputErrors) {
  const auto opts = reference_options(Time::us(2), Bandwidth::gBps(50));
  TrainConfig c = tiny_config(2, 2, 2, 8);
  try {
    simulate_training(star_cluster(1, 4), c, opts);
    FAIL() << "8 ranks on 4 GPUs";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("8 ranks but the cluster has 4 GPUs"), std::string::npos);
  }
  // llama3-70b unsharded on one GPU: 70.6B x 18 B = 1.27 TB of weights and optimizer state.
  TrainConfig big;
  big.model = model_preset("llama3-70b");
  big.global_batch = 1;
  try {
    simulate_training(star_cluster(1, 1), big, opts);
    FAIL() << "70B does not fit in 80 GB";
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "memory");
    EXPECT_NE(std::string(e.what()).find("over"), std::string::npos);
  }
}

TEST(Training, FaultsNamingMissingThingsOrDisconnectingAreInputErrors) {
  // The star has one link per GPU: failing GPU 0's link (link 0) leaves it unreachable.
  const auto opts = reference_options(Time::us(2), Bandwidth::gBps(50));
  TrainConfig c = tiny_config(1, 1, 2, 2);
  c.faults.push_back(parse_fault("failed-link:link=0", "faults"));
  try {
    simulate_training(star_cluster(1, 2), c, opts);
    FAIL() << "GPU 0 has no other link";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("disconnect"), std::string::npos);
  }
  c.faults = {parse_fault("failed-link:link=9", "faults")};
  EXPECT_THROW(simulate_training(star_cluster(1, 2), c, opts), InputError);
  c.faults = {parse_fault("slow-gpu:rank=2,x=2", "faults")};
  EXPECT_THROW(simulate_training(star_cluster(1, 2), c, opts), InputError);
}

TEST(Training, CostAndThroughputFollowFromTheIterationTime) {
  // 17 ms iteration (TwoStagePipelineBubble), 2 GPUs, 2 x 1024 tokens per iteration.
  TrainConfig c = tiny_config(1, 2, 1, 2);
  c.gpu_hour_usd = 3.6;
  const TrainResult r = simulate_training(
      star_cluster(1, 2), c,
      reference_options(Time::zero(), Bandwidth::bytes_per_second(2'097'152'000)));
  EXPECT_NEAR(r.tokens_per_second, 2048 / 0.017, 1e-6);
  EXPECT_NEAR(r.gpu_hours_per_step, 2 * 0.017 / 3600, 1e-15);
  EXPECT_NEAR(r.cost_per_step_usd, 2 * 0.017 / 1000, 1e-12);
  EXPECT_NEAR(r.cost_per_trillion_tokens_usd, r.cost_per_step_usd * 1e12 / 2048, 1e-3);
  // MFU: the model's FLOPs per token are 3 x (2 layers + head) x 28 Mi, over 2048 tokens,
  // against 2 GPUs x 28 Gi FLOP/ms x 17 ms.
  const double flops = 2048.0 * 3 * (3 * 28.0 * 1024 * 1024);
  EXPECT_NEAR(r.mfu, flops / (2 * 28.0 * 1024 * 1024 * 1024 * 1000 * 0.017), 1e-12);
}

}  // namespace
}  // namespace lockstep

namespace lockstep {
namespace {

TEST(Training, ReducedAndFullAgreeOnTheFlowEngine) {
  // Two HGX-H100 nodes using 4 GPUs each on NDR: tp 2, pp 2, dp 2 with ZeRO-1. The flow engine
  // shares links, so the runs differ only by contention between DP and PP traffic, which this
  // rail-optimised, non-blocking fabric keeps small: within 1%.
  PresetRequest request;
  request.fabric = "ib-ndr";
  request.nodes = 2;
  request.gpus_per_node = 4;
  const Topology topo = *build_topology(rail_optimized_args(resolve_preset(request))).graph;
  TrainConfig c = testing::tiny_config(2, 2, 2, 8);
  c.model.layers = 4;
  c.par.zero = ZeroStage::Optimizer;
  c.expansion = Expansion::Full;
  const TrainResult full = simulate_training(topo, c);
  c.expansion = Expansion::Reduced;
  const TrainResult reduced = simulate_training(topo, c);
  EXPECT_EQ(full.engine, "flow");
  EXPECT_NEAR(reduced.iteration.seconds(), full.iteration.seconds(),
              0.01 * full.iteration.seconds());
  EXPECT_NEAR(reduced.breakdown.tp.seconds(), full.breakdown.tp.seconds(),
              0.01 * full.breakdown.tp.seconds());
}

}  // namespace
}  // namespace lockstep
