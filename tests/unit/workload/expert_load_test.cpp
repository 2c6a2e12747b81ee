// Expert popularity, EPLB's placement and what they do to a serving step (docs/inference.md,
// "Expert load and redundant experts"): a placement derived by hand, the busiest GPU's expected
// slots against the closed form, the exchange's bytes per NIC by hand, determinism per seed and
// bad values refused.
#include "lockstep/workload/expert_load.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <numbers>
#include <string>
#include <vector>

#include "inference_support.hpp"
#include "lockstep/collective/moe.hpp"
#include "lockstep/core/error.hpp"
#include "lockstep/workload/inference.hpp"
#include "test_cluster.hpp"

namespace lockstep {
namespace {

using testing::FixedComm;

// 8 experts with these shares of the slots, on 4 GPUs.
const std::vector<double> kShares = {0.28, 0.16, 0.12, 0.12, 0.10, 0.08, 0.08, 0.06};

// In place, two experts a GPU: GPU 0 holds experts 0 and 1, 0.28 + 0.16 = 0.44 of the slots;
// GPU 1 0.24, GPU 2 0.18, GPU 3 0.14.
TEST(ExpertLoad, ContiguousPlacementSumsEachGpusExperts) {
  const ExpertPlacement p = contiguous_placement(kShares, 4);
  EXPECT_EQ(p.slots, 2u);
  const std::vector<double> want = {0.44, 0.24, 0.18, 0.14};
  for (std::size_t g = 0; g < 4; ++g) EXPECT_NEAR(p.gpu_share[g], want[g], 1e-12);
  EXPECT_EQ(hottest_gpu(p), 0u);
}

// EPLB with 4 redundant experts (12 physical, 3 a GPU), by hand.
// replicate_experts, each copy to the highest load per copy: expert 0 (0.28 -> 2 copies of 0.14),
// expert 1 (0.16 -> 2 of 0.08), expert 0 again (0.14 > 0.12 -> 3 of 0.0933), expert 2 (the first
// of the 0.12s -> 2 of 0.06).
// balanced_packing, heaviest first, each to the least loaded GPU with a free slot:
//   e3 0.12 -> G0; e4 0.10 -> G1; e0 0.0933 -> G2; e0' -> G3; e0'' -> G2 (G2 = G3: the first);
//   e1 0.08 -> G3 (0.0933); e5 0.08 -> G1 (0.10); e6 0.08 -> G0 (0.12); e1' 0.08 -> G3 (0.1733,
//   now full); e2 0.06 -> G1 (0.18, full); e7 0.06 -> G2 (0.1867, full); e2' 0.06 -> G0.
// GPU shares: G0 0.12 + 0.08 + 0.06 = 0.26, G1 0.10 + 0.08 + 0.06 = 0.24, G2 2 x 0.28/3 + 0.06 =
// 0.2467, G3 0.28/3 + 0.16 = 0.2533. The hottest GPU takes 0.26 of the slots, not 0.44: with
// 1,000 slots 260 against 440 (the means; the fluctuation is the next test's).
TEST(ExpertLoad, EplbReplicatesTheHottestAndPacksToEvenTheGpus) {
  const ExpertPlacement p = eplb_placement(kShares, 4, 4);
  EXPECT_EQ(p.slots, 3u);
  EXPECT_EQ(p.replicas, (std::vector<std::uint32_t>{3, 2, 2, 1, 1, 1, 1, 1}));
  EXPECT_EQ(p.logical, (std::vector<std::uint32_t>{3, 6, 2, 4, 5, 2, 0, 0, 7, 0, 1, 1}));
  const std::vector<double> want = {0.26, 0.24, 2 * 0.28 / 3 + 0.06, 0.28 / 3 + 0.16};
  for (std::size_t g = 0; g < 4; ++g) EXPECT_NEAR(p.gpu_share[g], want[g], 1e-12);
  EXPECT_EQ(hottest_gpu(p), 0u);
  EXPECT_NEAR(1000 * p.gpu_share[hottest_gpu(p)], 260, 1e-9);
  double sum = 0;
  for (double x : p.relative_load()) sum += x;
  EXPECT_NEAR(sum, 4, 1e-12);
}

// The busiest of two GPUs: E[max(X1, X2)] of two independent normals is Clark's (1961) closed
// form mu1 Phi(d / t) + mu2 Phi(-d / t) + t phi(d / t), d = mu1 - mu2, t = sqrt(s1^2 + s2^2).
// 100 slots on shares 0.6 / 0.4: means 60 and 40, variances 100 x 0.6 x 0.4 = 24 each,
// t = sqrt(48) = 6.93, d / t = 2.887: 60 x 0.99805 + 40 x 0.00195 + 6.93 x 0.00618 = 60.004.
// Shares 1/2 each: the means tie and the maximum is 50 + sqrt(50) phi(0) = 50 + 2.821.
TEST(ExpertLoad, HottestOfTwoGpusMatchesClarksClosedForm) {
  const auto clark = [](double m1, double m2, double v1, double v2) {
    const double t = std::sqrt(v1 + v2), a = (m1 - m2) / t;
    const double cdf = 0.5 * std::erfc(-a / std::sqrt(2.0));
    const double pdf = std::exp(-a * a / 2) / std::sqrt(2 * std::numbers::pi);
    return m1 * cdf + m2 * (1 - cdf) + t * pdf;
  };
  EXPECT_NEAR(expected_hottest_gpu_slots(100, {0.6, 0.4}), clark(60, 40, 24, 24), 1e-4);
  EXPECT_NEAR(expected_hottest_gpu_slots(100, {0.6, 0.4}), 60.004, 1e-3);
  EXPECT_NEAR(expected_hottest_gpu_slots(100, {0.5, 0.5}), clark(50, 50, 25, 25), 1e-4);
  EXPECT_NEAR(expected_hottest_gpu_slots(100, {0.5, 0.5}), 52.821, 1e-3);
  // Properties: never below the hottest mean; one GPU holds them all.
  EXPECT_GE(expected_hottest_gpu_slots(1000, {0.26, 0.24, 0.2467, 0.2533}), 260);
  EXPECT_DOUBLE_EQ(expected_hottest_gpu_slots(64, {1.0}), 64);
}

// Few slots are sampled, as the uniform model samples them: 4 equally popular experts, one a GPU,
// 2 tokens of top 2: the busiest GPU holds 2 slots unless the second token picks the first one's
// complement (1 of the C(4, 2) = 6 pairs), then 1: 2 - 1/6 = 11/6 (inference_test.cpp's case).
// One token of top 2 on 4 experts a GPU: 2 slots, 2 experts, always.
TEST(ExpertLoad, FewSlotsAreSampledAsTheUniformModel) {
  const HottestGpu two =
      expected_hottest_gpu(contiguous_placement({0.25, 0.25, 0.25, 0.25}, 4), 2, 2);
  EXPECT_NEAR(two.slots, 11.0 / 6, 0.02);
  const HottestGpu one =
      expected_hottest_gpu(contiguous_placement({0.25, 0.25, 0.25, 0.25}, 1), 1, 2);
  EXPECT_DOUBLE_EQ(one.slots, 2);
  EXPECT_DOUBLE_EQ(one.experts, 2);
}

// DeepEP's low-latency dispatch with these loads, 4 GPUs on 2 nodes of 2 (one NIC a GPU), 16
// tokens a GPU, top 2 of 8, hidden 4,096 in BF16: the mean message to a GPU is 16 x 2 / 4 x
// 8,192 B = 65,536 B, scaled by the receiver's load (its share x 4). GPU 0's NIC receives the
// messages of the other node's 2 GPUs: in place 2 x 65,536 x 1.76 = 2 x 115,343 B (whole bytes
// a message); with EPLB's 4 replicas 2 x 65,536 x 1.04 = 2 x 68,157 B; uniform 2 x 65,536 B.
TEST(ExpertLoad, DispatchBytesPerNicFollowTheLoadByHand) {
  const auto into_gpu0_from_other_node = [](const std::vector<double>& load) {
    MoeSpec s;
    s.tokens = 16;
    s.hidden = 4096;
    s.topk = 2;
    s.experts = 8;
    s.ranks = 4;
    s.ranks_per_node = 2;
    s.kernel = MoeKernel::LowLatency;
    s.fp8_dispatch = false;
    s.rank_load = load;
    const auto programs = make_moe_programs(s, MoePhase::Dispatch);
    std::uint64_t bytes = 0;
    for (OpIndex i = 0; i < programs->num_ops(0); ++i) {
      const Op op = programs->op(0, i);
      if (op.kind == OpKind::Recv && op.peer >= 2) bytes += op.bytes();
    }
    return bytes;
  };
  EXPECT_EQ(into_gpu0_from_other_node(contiguous_placement(kShares, 4).relative_load()),
            2u * 115'343);
  EXPECT_EQ(into_gpu0_from_other_node(eplb_placement(kShares, 4, 4).relative_load()), 2u * 68'157);
  EXPECT_EQ(into_gpu0_from_other_node({}), 2u * 65'536);
}

// What a token reaches, for DeepEP's normal kernels: 4 experts of shares 0.4, 0.3, 0.2, 0.1, one
// a GPU, GPUs 0, 1 on node 0 and 2, 3 on node 1, top 2, each pick in proportion to the shares of
// the experts not yet picked. P(expert i among the two) = s_i + sum_{j != i} s_j s_i / (1 - s_j):
//   expert 0: 0.4 + 0.3 x 0.4 / 0.7 + 0.2 x 0.4 / 0.8 + 0.1 x 0.4 / 0.9 = 0.715873
//   expert 1: 0.3 + 0.4 x 0.3 / 0.6 + 0.2 x 0.3 / 0.8 + 0.1 x 0.3 / 0.9 = 0.608333
//   expert 2: 0.2 + 0.4 x 0.2 / 0.6 + 0.3 x 0.2 / 0.7 + 0.1 x 0.2 / 0.9 = 0.441270
//   expert 3: 0.1 + 0.4 x 0.1 / 0.6 + 0.3 x 0.1 / 0.7 + 0.2 x 0.1 / 0.8 = 0.234524 (sum 2 = k).
// A token misses node 1 when both picks are experts 0 and 1: 0.4 x 0.3 / 0.6 + 0.3 x 0.4 / 0.7 =
// 0.371429, so node 1's reach is 0.628571; it misses node 0 with 0.2 x 0.1 / 0.8 + 0.1 x 0.2 /
// 0.9 = 0.047222: reach 0.952778. Scaling the uniform reach 1 - C(2, 2) / C(4, 2) = 5/6 by node
// 0's load (0.7 of the slots, 1.4 x the mean) gave 1.167 tokens for each token, node 1 0.5.
// Sampled from 2^17 tokens: within 0.005 (3.5 standard errors at 1/2).
TEST(ExpertLoad, ReachOfAGpuAndANodeByHand) {
  const ExpertPlacement p = contiguous_placement({0.4, 0.3, 0.2, 0.1}, 4);
  const ExpertReach r = expert_reach(p, 2, {0, 0, 1, 1});
  const std::vector<double> gpu = {0.715873, 0.608333, 0.441270, 0.234524};
  const std::vector<double> node = {0.952778, 0.952778, 0.628571, 0.628571};
  ASSERT_EQ(r.gpu.size(), 4u);
  ASSERT_EQ(r.domain.size(), 4u);
  for (std::size_t g = 0; g < 4; ++g) {
    EXPECT_NEAR(r.gpu[g], gpu[g], 0.005) << g;
    EXPECT_NEAR(r.domain[g], node[g], 0.005) << g;
  }
  // A node reaches at most every token, and at least its hottest GPU's.
  for (std::size_t g = 0; g < 4; ++g) EXPECT_LE(r.gpu[g], r.domain[g]);
  EXPECT_EQ(expert_reach(p, 2, {0, 0, 1, 1}).gpu, r.gpu);  // a fixed seed
}

// The normal dispatch with that reach, 16 tokens a GPU, hidden 4,096 in BF16 (8,192 B a token):
// each GPU sends its rail peer on the other node its tokens that reach that node, once each. The
// uniform message is 16 x 5/6 x 8,192 = 109,227 B (whole bytes), scaled by reach / (5/6): into
// node 0 x 1.143334 = 124,883 B (of at most 16 x 8,192 = 131,072), into node 1 x 0.754285 =
// 82,388 B. The load alone (0.7 and 0.3 of the slots) scaled it by 1.4 and 0.6: 152,918 B into
// node 0, more bytes than the sender's 16 tokens hold, and 65,536 B into node 1.
TEST(ExpertLoad, NormalDispatchSendsATokenToANodeOnce) {
  MoeSpec s;
  s.tokens = 16;
  s.hidden = 4096;
  s.topk = 2;
  s.experts = 4;
  s.ranks = 4;
  s.ranks_per_node = 2;
  s.kernel = MoeKernel::Normal;
  s.fp8_dispatch = false;
  s.chunks = 1;
  s.rank_load = {1.6, 1.2, 0.8, 0.4};
  const auto net_into = [](const MoeSpec& spec, Rank rank) {
    const auto programs = make_moe_programs(spec, MoePhase::Dispatch);
    std::uint64_t bytes = 0;
    for (OpIndex i = 0; i < programs->num_ops(rank); ++i) {
      const Op op = programs->op(rank, i);
      if (op.kind == OpKind::Recv && op.peer / 2 != rank / 2) bytes += op.bytes();
    }
    return bytes;
  };
  EXPECT_EQ(net_into(s, 0), 152'918u);  // the load alone
  EXPECT_EQ(net_into(s, 2), 65'536u);
  s.rank_reach = {0.715873, 0.608333, 0.441270, 0.234524};
  s.node_reach = {0.952778, 0.952778, 0.628571, 0.628571};
  EXPECT_EQ(net_into(s, 0), 124'883u);
  EXPECT_EQ(net_into(s, 2), 82'388u);
  EXPECT_LE(net_into(s, 0), 16u * 8'192);
  s.node_reach[1] = 0.5;
  EXPECT_THROW(make_moe_programs(s, MoePhase::Dispatch), InputError);  // one reach a node
}

// Zipf shares: exponent 1 over 4 experts gives 1, 1/2, 1/3, 1/4 over 25/12 = 0.48, 0.24, 0.16,
// 0.12, dealt to the experts by the seed; exponent 0 is uniform whatever the seed.
TEST(ExpertLoad, ZipfSharesAreDealtBySeed) {
  std::vector<double> a = zipf_expert_shares(4, 1, 7);
  std::vector<double> sorted = a;
  std::sort(sorted.rbegin(), sorted.rend());
  const std::vector<double> want = {0.48, 0.24, 0.16, 0.12};
  for (std::size_t i = 0; i < 4; ++i) EXPECT_NEAR(sorted[i], want[i], 1e-15);
  EXPECT_EQ(zipf_expert_shares(4, 1, 7), a);
  EXPECT_EQ(zipf_expert_shares(4, 0, 7), std::vector<double>(4, 0.25));
  // Some seed of the next few puts the hottest expert elsewhere.
  bool moved = false;
  for (std::uint64_t seed = 8; seed < 16; ++seed)
    moved = moved || zipf_expert_shares(4, 1, seed) != a;
  EXPECT_TRUE(moved);
}

// Mixtral 8x7B cut to 2 layers, attention TP 2 x DP 2 and EP 4 on one node of 4 H100s.
const std::string kJob =
    "type: inference\nmodel: {preset: mixtral-8x7b, layers: 2}\ntp: 2\nattention_dp: 2\nep: 4\n"
    "requests: {prompt: 128, output: 4, concurrency: 8, count: 8}\nbatching: {max_batch: 8}\n";

const Topology& one_node() {
  static const Topology t = testing::ndr_h100_nodes(1, 4);
  return t;
}

std::string with(const std::string& keys) {
  return kJob + keys;
}

// Weights per GPU with EPLB's 4 replicas: 3 whole experts a GPU, not 2. Per layer the attention
// and router over tp 2 (41,975,808 B) and 3 experts of 176,160,768 weights x 2 B; the embedding
// and output layer (32,000 x 4,096 x 2 B each) over tp 2: 262,144,000 B.
TEST(ExpertLoad, RedundantExpertsCostTheirWeights) {
  const auto comm = std::make_shared<FixedComm>();
  InferenceStepModel none(one_node(), testing::inference_config(kJob), comm);
  InferenceStepModel four(one_node(), testing::inference_config(with("redundant_experts: 4\n")),
                          comm);
  EXPECT_DOUBLE_EQ(none.weight_bytes_per_gpu(),
                   2 * (41'975'808.0 + 2 * 352'321'536.0) + 262'144'000.0);
  EXPECT_DOUBLE_EQ(four.weight_bytes_per_gpu(),
                   2 * (41'975'808.0 + 3 * 352'321'536.0) + 262'144'000.0);
}

// Uniform popularity in place is the uniform routing model: the same step, the same exchange.
// Skew makes the busiest GPU wait longer and sends it more; EPLB's replicas take some back.
TEST(ExpertLoad, SkewSlowsTheStepAndReplicasRecoverPart) {
  const std::vector<std::uint64_t> prompts = {2048, 2048};
  const auto prefill = [&](const std::string& yaml, std::vector<double>* load = nullptr) {
    const auto comm = std::make_shared<FixedComm>();
    InferenceStepModel m(one_node(), testing::inference_config(yaml), comm);
    const StepCost s = m.prefill(prompts);
    if (load) *load = comm->last.load;
    return s;
  };
  std::vector<double> load;
  const StepCost base = prefill(kJob, &load);
  EXPECT_TRUE(load.empty());
  const StepCost zero = prefill(with("expert_skew: 0\n"));
  EXPECT_EQ(zero.seconds, base.seconds);
  EXPECT_EQ(zero.flops, base.flops);
  const StepCost skewed = prefill(with("expert_skew: 1.2\nseed: 3\n"), &load);
  EXPECT_EQ(load.size(), 4u);
  EXPECT_GT(skewed.compute, base.compute);
  EXPECT_GT(*std::max_element(load.begin(), load.end()), 1.0);
  const StepCost balanced = prefill(with("expert_skew: 1.2\nseed: 3\nredundant_experts: 4\n"));
  EXPECT_LT(balanced.flops, skewed.flops);
  // The same seed gives the same step; the figure is a function of the job alone.
  EXPECT_EQ(prefill(with("expert_skew: 1.2\nseed: 3\n")).seconds, skewed.seconds);
}

TEST(ExpertLoad, BadValuesAreOneLineErrorsAtTheirField) {
  const auto error_of = [](const std::string& yaml) -> std::string {
    try {
      testing::inference_config(yaml);
    } catch (const InputError& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_NE(error_of(with("expert_skew: -1\n")).find("s.yaml:"), std::string::npos);
  EXPECT_NE(error_of(with("expert_skew: -1\n")).find("expert_skew"), std::string::npos);
  // 8 experts + 3 replicas do not fill 4 GPUs evenly.
  EXPECT_NE(error_of(with("redundant_experts: 3\n")).find("redundant_experts"), std::string::npos);
  // Exponent 3 over 8 experts gives the hottest 1 / (1 + 1/8 + 1/27 + ...) = 0.83 of the slots,
  // above 1 / top_k = 0.5.
  EXPECT_NE(error_of(with("expert_skew: 3\n")).find("above 1 / top_k"), std::string::npos);
  EXPECT_NE(error_of(with("expert_placement: random\n")).find("expert_placement"),
            std::string::npos);
  EXPECT_NE(error_of(with("redundant_experts: 4\nexpert_placement: contiguous\n"))
                .find("redundant_experts"),
            std::string::npos);
  std::string no_ep = kJob;
  no_ep.replace(no_ep.find("ep: 4"), 5, "ep: 1");
  EXPECT_NE(error_of(no_ep + "expert_skew: 0.5\n").find("needs ep > 1"), std::string::npos);
  for (const std::string& e :
       {error_of(with("expert_skew: -1\n")), error_of(with("redundant_experts: 3\n"))})
    EXPECT_EQ(e.find('\n'), std::string::npos) << e;
}

}  // namespace
}  // namespace lockstep
