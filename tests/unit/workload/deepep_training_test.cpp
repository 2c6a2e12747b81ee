// DeepSeek-V3's expert all-to-all in training (arXiv:2412.19437 sections 2.1.2, 3.2.2, 3.3.3):
// node-limited routing and FP8 dispatch price EP with DeepEP's normal kernels (docs/training.md).
#include <gtest/gtest.h>

#include "lockstep/workload/model.hpp"
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
TEST(DeepEpTraining, NodeLimitedFp8DispatchTakesTheHandDerivedTime) {
  const auto opts = reference_options(Time::ns(700), Bandwidth::gBps(50));
  const Topology topo = ndr_h100_nodes(2, 2);
  const TrainResult r = simulate_training(topo, deepseek_like(1, true), opts);
  EXPECT_NEAR(r.breakdown.ep.seconds(), 171.14144e-6, 2e-12 * 1000);
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

}  // namespace
}  // namespace lockstep
