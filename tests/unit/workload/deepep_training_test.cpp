// DeepSeek-V3's expert all-to-all in training (arXiv:2412.19437 sections 2.1.2, 3.2.2, 3.3.3):
// node-limited routing and FP8 dispatch price EP with DeepEP's normal kernels (docs/training.md).
#include <gtest/gtest.h>

#include <stdexcept>

#include "lockstep/workload/model.hpp"
#include "lockstep/workload/step_builder.hpp"
#include "lockstep/workload/training.hpp"
#include "test_cluster.hpp"

namespace lockstep {
namespace {

using testing::ndr_h100_nodes;
using testing::reference_options;
using testing::tiny_config;

TEST(DeepEpTraining, OnInTheDeepSeekV3PresetOnly) {
  const ModelSpec v3 = model_preset("deepseek-v3");
  EXPECT_EQ(v3.moe_max_nodes, 4u);  // section 2.1.2: M = 4
  EXPECT_TRUE(v3.moe_fp8_dispatch);
  for (const char* name : {"kimi-k2", "mixtral-8x7b", "llama3-8b"}) {
    const ModelSpec m = model_preset(name);
    EXPECT_EQ(m.moe_max_nodes, 0u) << name;
    EXPECT_FALSE(m.moe_fp8_dispatch) << name;
    EXPECT_FALSE(m.deepep_training()) << name;
  }
}

// tiny_config's two layers made MoE: 8 experts, top-2, EP 4 over 2 nodes of 2 GPUs, 1024 tokens
// of hidden 1024 per rank, one micro-batch; the exposed EP time is 2 layers x (forward,
// backward) x (dispatch + combine).
TrainConfig deepseek_like(std::uint32_t max_nodes, bool fp8) {
  TrainConfig c = tiny_config(1, 1, 4, 4);
  c.model.experts = 8;
  c.model.top_k = 2;
  c.model.expert_ffn = 4096;
  c.model.moe_max_nodes = max_nodes;
  c.model.moe_fp8_dispatch = fp8;
  c.par.ep = 4;
  c.expansion = Expansion::Reduced;
  return c;
}

// M = 1 of N = 2 nodes: a token crosses to the other node with P = 1/2 and reaches the other
// GPU of a node with P = 1/2 x (1 - C(2,2) / C(4,2)) = 5/12. Dispatch (FP8: 1024 + 4 x 8 =
// 1056 B a token): network 512 x 1056 = 540,672 B in 4 chained chunks of 135,168 B, the last
// forwarded over NVLink as 450,560 / 4 = 112,640 B: 4 (0.7 us + 2.70336 us) + 0.7 us + 2.2528 us
// = 16.56624 us on the contention-free reference engine (50 GB/s). Combine (BF16, 2048 B): the
// two NVLink parts of 873,813 / 4 B chained, 4 (0.7 + 4.36906) us, then the last network chunk
// of 262,144 B, 0.7 + 5.24288 us: 26.21912 us. EP: 4 x 42.78536 = 171.14144 us.
// The full expansion runs the same exchanges in the rank programs: the same EP time and step.
TEST(DeepEpTraining, NodeLimitedFp8DispatchTakesTheHandDerivedTime) {
  const auto opts = reference_options(Time::ns(700), Bandwidth::gBps(50));
  const Topology topo = ndr_h100_nodes(2, 2);
  const TrainResult r = simulate_training(topo, deepseek_like(1, true), opts);
  EXPECT_EQ(r.expansion, "reduced");
  EXPECT_NEAR(r.breakdown.ep.seconds(), 171.14144e-6, 2e-12 * 1000);
  TrainConfig full = deepseek_like(1, true);
  full.expansion = Expansion::Full;
  const TrainResult f = simulate_training(topo, full, opts);
  EXPECT_EQ(f.expansion, "full");
  EXPECT_NEAR(f.breakdown.ep.seconds(), 171.14144e-6, 2e-12 * 1000);
  EXPECT_EQ(f.iteration, r.iteration);
  // FP8 dispatch moves 1056 of 2048 B a token: faster than BF16; routing to every node reaches
  // the other node with P = 1 - C(4,2) / C(8,2) = 22/28 > 1/2: slower.
  EXPECT_LT(r.breakdown.ep, simulate_training(topo, deepseek_like(1, false), opts).breakdown.ep);
  EXPECT_LT(r.breakdown.ep, simulate_training(topo, deepseek_like(0, true), opts).breakdown.ep);
}

TEST(DeepEpTraining, WithoutTheKeysEpIsNcclsAllToAllOfEveryCopy) {
  // Each rank's buffer: 1024 tokens x 1024 x 2 B x top-2 = 4 MiB, 1 MiB to each of 3 peers at
  // once: 0.7 us + 20.97152 us per all-to-all, 8 of them: 173.37216 us.
  const auto opts = reference_options(Time::ns(700), Bandwidth::gBps(50));
  const TrainResult r = simulate_training(ndr_h100_nodes(2, 2), deepseek_like(0, false), opts);
  EXPECT_NEAR(r.breakdown.ep.seconds(), 173.37216e-6, 2e-12 * 1000);
}

// The bytes of the two hops in the full expansion's programs, per rank, in the case above (EP 4
// on 2 nodes of 2, M = 1, 1024 tokens of hidden 1024, P(node) = 1/2, P(GPU) = 5/12). Per
// exchange: dispatch (FP8, 1056 B a token) crosses the network once, 512 x 1056 = 540,672 B to
// the rail peer of the other node, and NVLink twice (the rank's own tokens, the other node's it
// forwards), 1024 x 5/12 x 1056 = 450,560 B each; combine (BF16, 2048 B) sends 2 x 1024 x 5/12 x
// 2048 = 2 x 873,813 B (rounded) over NVLink to the forwarders and 512 x 2048 = 1,048,576 B over
// the network. Two MoE layers, forward and backward: 4 of each. Network 4 x 1,589,248 =
// 6,356,992 B, NVLink 4 x 2,648,746 = 10,594,984 B. NCCL's all-to-all of every copy (without
// the keys) sends 1 MiB to each of the 3 others, 8 times: 16 MiB across nodes, 8 MiB inside.
struct EpSends {
  std::uint64_t network = 0, nvlink = 0;  // GPUs r / 2 are a node's
};
EpSends ep_sends(const TrainConfig& c, const Topology& topo, Rank r, bool deepep) {
  const StepPlan plan = make_step_plan(c, c.peak_flops);
  StepBuildOptions o;
  o.full = true;
  o.collectives = default_collective_factory();
  if (deepep) o.moe_exchange = deepep_training_exchanges(topo, deepep_training_spec(c, plan));
  const StepPrograms programs = build_step_programs(c, plan, o);
  EpSends out;
  for (OpIndex i = 0; i < programs.programs->num_ops(r); ++i) {
    const Op op = programs.programs->op(r, i);
    if (programs.tags[r][i].role != OpRole::EpComm || op.kind != OpKind::Send) continue;
    (op.peer / 2 == r / 2 ? out.nvlink : out.network) += op.bytes();
  }
  return out;
}

TEST(DeepEpTraining, FullExpansionSendsTheTwoHopsBytes) {
  const Topology topo = ndr_h100_nodes(2, 2);
  for (Rank r = 0; r < 4; ++r) {
    const EpSends deepep = ep_sends(deepseek_like(1, true), topo, r, true);
    EXPECT_EQ(deepep.network, 6'356'992u) << "rank " << r;
    EXPECT_EQ(deepep.nvlink, 10'594'984u) << "rank " << r;
    const EpSends nccl = ep_sends(deepseek_like(0, false), topo, r, false);
    EXPECT_EQ(nccl.network, 16u << 20) << "rank " << r;
    EXPECT_EQ(nccl.nvlink, 8u << 20) << "rank " << r;
  }
  // Without a factory the full expansion cannot run DeepEP's exchange: an internal error, not
  // NCCL's all-to-all in its place.
  EXPECT_THROW(ep_sends(deepseek_like(1, true), topo, 0, false), std::logic_error);
}

// On the analytical engine with NCCL's collectives (the default options) the two expansions run
// the same exchanges: the same exposed EP time, and the steps differ only by their gradient
// reduction (the full expansion runs NCCL's DP programs on one channel, the reduced one takes the
// NCCL model's time: docs/training.md, "Collectives as NCCL runs them"). NCCL's all-to-all of
// every copy, without the keys, took different EP times in the two (756.7 against 693.2 us).
TEST(DeepEpTraining, ExpansionsAgreeOnTheAnalyticalEngine) {
  const Topology topo = ndr_h100_nodes(2, 2);
  TrainConfig c = deepseek_like(1, true);
  c.engine = "analytical";
  const TrainResult reduced = simulate_training(topo, c);
  c.expansion = Expansion::Full;
  const TrainResult full = simulate_training(topo, c);
  EXPECT_GT(full.breakdown.ep, Time::zero());
  EXPECT_EQ(full.breakdown.ep, reduced.breakdown.ep);
  EXPECT_EQ(full.breakdown.compute, reduced.breakdown.compute);
  EXPECT_NEAR((full.iteration - full.breakdown.dp).seconds(),
              (reduced.iteration - reduced.breakdown.dp).seconds(), 1e-11);
}

// tp 2 on 2 nodes of 4 H100: each TP rank holds half of the micro-batch's tokens (sequence
// parallelism) and dispatches them over its own EP group, GPUs {0, 2, 4, 6} and {1, 3, 5, 7}, at
// the same time as the other. With 2 NICs per node GPUs 0 and 1 share NIC 0 and GPUs 2 and 3
// NIC 1, so both groups' network hops meet on every NIC: the exchange takes longer than with a
// NIC per GPU. The full expansion runs both groups' exchanges in the step; the reduced one
// measures them at once too (it measured group 0 alone: on the analytical engine 8.95 + 12.20
// us per dispatch and combine, against 12.17 + 22.69 us at once). On the flow engine the two
// expansions agree to the picosecond.
TrainConfig deepep_tp2(const std::string& engine) {
  TrainConfig c = deepseek_like(1, true);
  c.par.tp = 2;
  c.global_batch = 8;
  c.engine = engine;
  return c;
}
Topology four_gpu_nodes(std::uint32_t nics, std::uint32_t nodes = 2) {
  PresetRequest request;
  request.fabric = "ib-ndr";
  request.nodes = nodes;
  request.gpus_per_node = 4;
  request.nics_per_node = nics;
  return *build_topology(rail_optimized_args(resolve_preset(request))).graph;
}

TEST(DeepEpTraining, TpRanksEpGroupsShareTheNicsInBothExpansions) {
  const Topology shared = four_gpu_nodes(2);
  TrainConfig c = deepep_tp2("flow");
  const TrainResult reduced = simulate_training(shared, c);
  c.expansion = Expansion::Full;
  const TrainResult full = simulate_training(shared, c);
  EXPECT_GT(full.breakdown.ep, Time::zero());
  EXPECT_EQ(full.breakdown.ep, reduced.breakdown.ep);
  const TrainResult own_nics = simulate_training(four_gpu_nodes(4), deepep_tp2("flow"));
  EXPECT_GT(reduced.breakdown.ep, own_nics.breakdown.ep);
}

// The two expansions' EP time for tp 1, 2 and 4 (EP 4, 2 GPUs per NIC: TP ranks 2i and 2i + 1
// of a node share NIC i). tp 1: every EP group is one node's 4 GPUs, NVLink only, no link shared
// between groups: equal. tp 2 and 4: the TP ranks' groups meet on each NIC. The flow engine shares
// a link fairly: the groups' exchanges end together, in both expansions alike (equal to the
// picosecond). The analytical engine serves a link's transfers one at a time, first come first
// served: of k = 2 groups queued on a NIC, the one served first ends its network hop after half
// the queue's drain, the other after all of it. The reduced expansion delays every rank by the
// exchange's makespan (the last group's end); the full one charges each rank its own end. So a
// rank's full-expansion EP time lies between the first-served group's share and the makespan:
// mean over the k groups >= (1/k + ... + k/k) / k = (k + 1) / (2k) = 3/4 of the reduced one
// (the NVLink hop and latencies, shared by no group, only raise the ratio), and <= the reduced
// one (no group waits for more bytes than the at-once run queues on its links). The time the
// first-served ranks gain they wait for their TP peers in the next TP collective, counted as TP
// there (docs/training.md, "DeepSeek-V3's expert all-to-all").
TEST(DeepEpTraining, ExpansionsAgreeOnEpTimeWithinTheFifoBound) {
  for (const char* engine : {"flow", "analytical"}) {
    for (std::uint32_t tp : {1u, 2u, 4u}) {
      TrainConfig c = deepep_tp2(engine);
      c.par.tp = tp;
      c.par.dp = tp == 4 ? 4 : 8 / tp;  // 8 GPUs, 16 with tp 4
      c.global_batch = 2 * c.par.dp;
      const Topology topo = four_gpu_nodes(2, tp == 4 ? 4 : 2);
      const TrainResult reduced = simulate_training(topo, c);
      c.expansion = Expansion::Full;
      const TrainResult full = simulate_training(topo, c);
      SCOPED_TRACE(std::string(engine) + " tp " + std::to_string(tp));
      ASSERT_GT(reduced.breakdown.ep, Time::zero());
      if (tp == 1 || std::string(engine) == "flow") {
        EXPECT_EQ(full.breakdown.ep, reduced.breakdown.ep);
        continue;
      }
      EXPECT_LE(full.breakdown.ep, reduced.breakdown.ep);
      EXPECT_GE(full.breakdown.ep.seconds(), 0.75 * reduced.breakdown.ep.seconds());
    }
  }
}

}  // namespace
}  // namespace lockstep
