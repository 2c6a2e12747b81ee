// Serving layouts whose attention and expert parts differ (docs/inference.md, "Attention and
// experts apart"): data-parallel attention groups of TP ranks, the routed experts over an EP
// group that spans nodes, checked against numbers derived by hand; bad layouts refused.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "inference_support.hpp"
#include "lockstep/core/error.hpp"
#include "lockstep/workload/inference.hpp"
#include "lockstep/workload/moe_comm.hpp"
#include "test_cluster.hpp"

namespace lockstep {
namespace {

using testing::FixedComm;

// Two nodes of 4 H100s on NDR: attention DP 4 x TP 2 fills them, EP 8 spans both.
const Topology& two_nodes_of_four() {
  static const Topology t = testing::ndr_h100_nodes(2, 4);
  return t;
}

// Mixtral 8x7B cut to 2 layers (both MoE: 8 experts of 3 x 4096 x 14336 = 176,160,768 weights,
// top 2; attention 4096 x (4096 + 2 x 1024 + 4096) = 41,943,040 and a router of 4096 x 8 =
// 32,768; 8 KV heads of 128; vocab 32,000).
const std::string kDpAttention =
    "type: inference\nmodel: {preset: mixtral-8x7b, layers: 2}\ntp: 2\nattention_dp: 4\nep: 8\n"
    "requests: {prompt: 128, output: 4, concurrency: 8, count: 8}\nbatching: {max_batch: 8}\n";

std::string error_of(const std::string& yaml) {
  try {
    testing::inference_config(yaml);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

// One decode step of 8 sequences at context 128: each of the 4 attention groups takes 2 (dealt in
// turn), so each GPU routes 2 / tp = 1 token; the EP group of 8 GPUs takes 8 tokens, 16 slots,
// one expert a GPU. Per layer, on H100 (HBM 3.35 TB/s x 0.9 achievable = 3.015 TB/s), all
// memory-bound at these sizes (the largest GEMM, the busiest expert's at most 8 slots:
// 2 x 176,160,768 x 8 FLOP at 989 x 0.8 TFLOP/s = 3.6 us against 116.9 us of reads):
//   attention side of a group: (41,943,040 + 32,768) x 2 B / tp 2 = 41,975,808 B of weights and
//     K, V of 2 sequences x 128 positions x 4 KV heads (8 / tp) x 256 x 2 B = 524,288 B;
//   the busiest expert GPU reads its one expert: 176,160,768 x 2 B = 352,321,536 B;
//   the output layer: 32,000 x 4,096 x 2 B / 2 = 131,072,000 B, once.
//   compute = (2 x (41,975,808 + 524,288 + 352,321,536) + 131,072,000) B / 3.015e12 B/s
//           = 920,715,264 / 3.015e12 = 305.38 us;
// TP: one all-reduce a layer (after attention; the MoE block's is the dispatch and combine) of a
// group's 2 tokens x 4096 x 2 B = 16 KiB in its TP pair; EP: a dispatch (3 us) and a combine
// (5 us) a layer: 16 us.
TEST(InferenceLayout, DpAttentionDecodeStepByHand) {
  const InferenceConfig c = testing::inference_config(kDpAttention);
  EXPECT_EQ(c.replica_gpus(), 8u);
  auto comm = std::make_shared<FixedComm>();
  InferenceStepModel m(two_nodes_of_four(), c, comm);
  const StepCost d = m.decode(std::vector<std::uint64_t>(8, 128));
  const double hbm = 0.9 * 3.35e12;
  EXPECT_NEAR(d.compute, 920'715'264.0 / hbm, 1e-12);
  EXPECT_NEAR(d.compute * 1e6, 305.38, 0.01);
  EXPECT_NEAR(d.tp, 2 * m.tp_all_reduce(2 * 4096 * 2), 1e-15);
  EXPECT_NEAR(d.ep, 2 * 8e-6, 1e-15);
  EXPECT_NEAR(d.seconds, d.compute + d.tp + d.ep, 1e-15);
  EXPECT_EQ(d.pp, 0);
  EXPECT_EQ(comm->last.ranks, (std::vector<std::uint32_t>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(comm->last.tokens, std::vector<std::uint64_t>(8, 1));
  EXPECT_TRUE(comm->last.decode);
  // Weights per GPU: each layer's attention and router over tp 2, its 8 experts over ep 8 (one
  // whole expert a GPU): 2 x (41,975,808 + 352,321,536) B, and the embedding and output layer
  // (32,000 x 4,096 x 2 B each) over tp 2.
  EXPECT_DOUBLE_EQ(m.weight_bytes_per_gpu(), 2 * 394'297'344.0 + 262'144'000.0);
}

// The step's exchange on the engines: DeepEP's low-latency dispatch sends each (token, expert)
// straight to the expert's GPU: 1 token x top 2 / 8 GPUs x 4096 x 2 B = 2,048 B from every GPU
// to each of the 7 others, 3 in its node over NVLink and 4 in the other through the NICs:
// NVLink 8 x 3 x 2,048 = 49,152 B, network 8 x 4 x 2,048 = 65,536 B. In FP8 (moe_fp8_dispatch)
// a token is 4096 + 4 x 4096 / 128 = 4,224 B: 1,056 B a pair, 25,344 and 33,792 B. Combine
// returns BF16 either way.
TEST(InferenceLayout, DispatchAcrossTwoNodesMovesTheHandCountedBytes) {
  for (const bool fp8 : {false, true}) {
    std::string yaml = kDpAttention;
    if (fp8) {
      yaml.replace(yaml.find("layers: 2}"), 10, "layers: 2, moe_fp8_dispatch: true}");
    }
    auto comm = std::make_shared<FixedComm>();
    InferenceStepModel m(two_nodes_of_four(), testing::inference_config(yaml), comm);
    m.decode(std::vector<std::uint64_t>(8, 128));
    const MoeExchange& x = comm->last;
    EXPECT_EQ(x.bytes_per_element, fp8 ? 1 : 2);
    MoeSpec s;
    s.tokens = x.tokens.front();
    s.hidden = static_cast<std::uint32_t>(x.hidden);
    s.topk = x.top_k;
    s.experts = x.experts;
    s.kernel = MoeKernel::LowLatency;
    s.fp8_dispatch = fp8;
    const double pair = fp8 ? 1056 : 2048;
    const CommRun d =
        run_moe_group(s, MoePhase::Dispatch, x.ranks, two_nodes_of_four(), "analytical");
    EXPECT_DOUBLE_EQ(d.nvlink_bytes, 8 * 3 * pair);
    EXPECT_DOUBLE_EQ(d.network_bytes, 8 * 4 * pair);
    const CommRun back =
        run_moe_group(s, MoePhase::Combine, x.ranks, two_nodes_of_four(), "analytical");
    EXPECT_DOUBLE_EQ(back.network_bytes, 8 * 4 * 2048.0);
    EXPECT_GT(d.time.seconds(), 0);
  }
}

// A prefill of one 128-token prompt on attention DP 2 x TP 4 (a group a node), EP 8: the prompt
// sits on group 0 (node 0), whose 4 GPUs route 128 / 4 = 32 tokens each; node 1's GPUs route
// none (SGLang's idle batch). DeepEP's normal kernel, BF16 (4,096 x 2 = 8,192 B a token), top 2
// of 8 experts, one a GPU:
//   P(node) = 1 - C(4, 2) / C(8, 2) = 22/28 = 11/14: a GPU sends its rail peer on node 1
//     32 x 11/14 x 8,192 = 205,970.3 -> 205,970 B; node 0's 4 GPUs 823,880 B through the NICs,
//     node 1's empty messages;
//   P(rank) = 1 - C(7, 2) / C(8, 2) = 1/4: 32 x 1/4 x 8,192 = 65,536 B to each of the 3 node
//     peers, from node 0's GPUs (their own tokens) and node 1's (node 0's tokens they forward):
//     8 x 3 x 65,536 = 1,572,864 B over NVLink.
// Every GPU sending 32 tokens (the busiest GPU's count, before per-GPU counts) doubles both:
// 8 x 205,970 through the NICs and 8 x 6 x 65,536 over NVLink. Combine brings BF16 outputs back
// along the same hops: the same bytes.
TEST(InferenceLayout, AnIdleAttentionGroupSendsNoTokens) {
  std::string yaml = kDpAttention;
  yaml.replace(yaml.find("tp: 2\nattention_dp: 4"), 21, "tp: 4\nattention_dp: 2");
  auto comm = std::make_shared<FixedComm>();
  InferenceStepModel m(two_nodes_of_four(), testing::inference_config(yaml), comm);
  m.prefill({128});
  const MoeExchange& x = comm->last;
  EXPECT_EQ(x.tokens, (std::vector<std::uint64_t>{32, 32, 32, 32, 0, 0, 0, 0}));
  EXPECT_FALSE(x.decode);
  MoeSpec s;
  s.tokens = 32;
  s.rank_tokens = x.tokens;
  s.hidden = 4096;
  s.topk = 2;
  s.experts = 8;
  s.kernel = MoeKernel::Normal;
  s.fp8_dispatch = false;
  const Topology& t = two_nodes_of_four();
  for (const MoePhase phase : {MoePhase::Dispatch, MoePhase::Combine}) {
    const CommRun idle = run_moe_group(s, phase, x.ranks, t, "analytical");
    EXPECT_DOUBLE_EQ(idle.network_bytes, 4 * 205'970.0);
    EXPECT_DOUBLE_EQ(idle.nvlink_bytes, 8 * 3 * 65'536.0);
    MoeSpec all = s;
    all.rank_tokens.clear();
    const CommRun busy = run_moe_group(all, phase, x.ranks, t, "analytical");
    EXPECT_DOUBLE_EQ(busy.network_bytes, 8 * 205'970.0);
    EXPECT_DOUBLE_EQ(busy.nvlink_bytes, 8 * 6 * 65'536.0);
    // No slower; the busy GPUs' messages still cross each rail and NVLink link alone, so their
    // path sets the pace either way.
    EXPECT_LE(idle.time, busy.time);
  }
  // The step on the engines (DeepEpComm) prices the exchange with these counts: faster than one
  // prompt on each group (both groups' GPUs send 32 tokens).
  InferenceStepModel engines(two_nodes_of_four(), testing::inference_config(yaml));
  const StepCost one = engines.prefill({128}), two = engines.prefill({128, 128});
  EXPECT_LT(one.ep, two.ep);
}

// Four decodes at context 128 on group 0 (a sticky assignment) against one on each group
// (dealt), attention DP 4 x TP 2: group 0 then reads 4 sequences' K and V, 4 x 128 x 4 heads x
// 256 x 2 B = 1,048,576 B a layer, against 262,144 B, and all-reduces 4 tokens x 4,096 x 2 B =
// 32 KiB, against 8 KiB; its weights, the busiest expert GPU's (4 tokens into the EP group either
// way) and the output layer's reads are the same. Its GPUs route 2 tokens each, the others none.
TEST(InferenceLayout, SequencesStayOnTheirGroup) {
  auto comm = std::make_shared<FixedComm>();
  InferenceStepModel m(two_nodes_of_four(), testing::inference_config(kDpAttention), comm);
  const std::vector<StepPiece> dealt(4, StepPiece{127, 1, true});
  const std::vector<StepPiece> sticky(4, StepPiece{127, 1, true, 0});
  const StepCost spread = m.step(dealt);
  EXPECT_EQ(comm->last.tokens, (std::vector<std::uint64_t>{1, 0, 1, 0, 1, 0, 1, 0}));
  const StepCost one = m.step(sticky);
  EXPECT_EQ(comm->last.tokens, (std::vector<std::uint64_t>{2, 2, 0, 0, 0, 0, 0, 0}));
  const double hbm = 0.9 * 3.35e12;
  EXPECT_NEAR(one.compute - spread.compute, 2 * (1'048'576.0 - 262'144.0) / hbm, 1e-12);
  EXPECT_NEAR(one.tp, 2 * m.tp_all_reduce(4 * 4096 * 2), 1e-15);
  EXPECT_NEAR(spread.tp, 2 * m.tp_all_reduce(4096 * 2), 1e-15);
}

// A request keeps the group it joined on arrival (round robin, SGLang's DP controller), attention
// DP 2 x TP 4: of a closed loop of 3, requests 0, 1, 2 join groups 0, 1, 0; request 0 prefills
// alone, 1 and 2 together, and all three finish in the same step (4 tokens each), when request 3
// arrives and joins group 1. Its last decode is the run's last exchange: its one token routed by
// group 1's first GPU (GPU 4), where dealing each step's sequences would put it on GPU 0.
TEST(InferenceLayout, ARequestKeepsTheGroupItJoined) {
  std::string yaml = kDpAttention;
  yaml.replace(yaml.find("tp: 2\nattention_dp: 4"), 21, "tp: 4\nattention_dp: 2");
  yaml.replace(yaml.find("concurrency: 8, count: 8"), 24, "concurrency: 3, count: 4");
  auto comm = std::make_shared<FixedComm>();
  const InferenceResult r = simulate_inference(two_nodes_of_four(), testing::inference_config(yaml),
                                               testing::options_with(comm, true));
  EXPECT_EQ(r.requests, 4u);
  ASSERT_EQ(r.steps.size(), 2u + 3 + 1 + 3);  // 2 prefills, 3 decodes; request 3's 1 and 3
  EXPECT_EQ(r.steps[2].batch, 3u);
  EXPECT_EQ(comm->last.tokens, (std::vector<std::uint64_t>{0, 0, 0, 0, 1, 0, 0, 0}));
}

// Attention groups of TP 2 against one TP 8 group on the same 8 GPUs, EP 8 both: a batch of 8
// decodes reads each group's attention weights once for its 2 sequences (a quarter of the TP 8
// group's all-reduce bytes), but the attention weights a GPU reads are 1/2 of a layer's, not 1/8:
// (41,975,808 - 41,975,808 / 4) B more a layer, 2 layers, and the output layer's 1/2 against 1/8.
TEST(InferenceLayout, DpAttentionReadsMoreWeightsPerGpuThanOneTpGroup) {
  std::string tp8 = kDpAttention;
  tp8.replace(tp8.find("tp: 2\nattention_dp: 4"), 21, "tp: 8\nattention_dp: 1");
  auto comm = std::make_shared<FixedComm>();
  InferenceStepModel dp(two_nodes_of_four(), testing::inference_config(kDpAttention), comm);
  InferenceStepModel one(two_nodes_of_four(), testing::inference_config(tp8), comm);
  const std::vector<std::uint64_t> batch(8, 128);
  const double hbm = 0.9 * 3.35e12;
  // The K and V each GPU reads: 2 sequences x 4 heads against 8 sequences x 1 head: equal.
  const double more = 2 * (41'975'808.0 - 41'975'808.0 / 4) + (131'072'000.0 - 32'768'000.0);
  EXPECT_NEAR(dp.decode(batch).compute - one.decode(batch).compute, more / hbm, 1e-12);
}

TEST(InferenceLayout, BadLayoutsAreRefusedAtTheirField) {
  const std::string base =
      "type: inference\nmodel: mixtral-8x7b\n"
      "requests: {prompt: 128, output: 4, rate: 1, count: 1}\n";
  // ep must divide tp x attention_dp ...
  const std::string three = error_of(base + "tp: 2\nattention_dp: 4\nep: 3\n");
  EXPECT_NE(three.find("job.ep"), std::string::npos) << three;
  EXPECT_NE(three.find("s.yaml:6:"), std::string::npos) << three;
  EXPECT_NE(three.find("does not divide the replica's tp x attention_dp = 2 x 4 = 8"),
            std::string::npos)
      << three;
  EXPECT_NE(error_of(base + "tp: 2\nattention_dp: 4\nep: 16\n").find("job.ep"), std::string::npos);
  // ... and the experts (8 of them over 16 GPUs).
  const std::string experts = error_of(base + "tp: 4\nattention_dp: 4\nep: 16\n");
  EXPECT_NE(experts.find("8 experts do not split over ep=16"), std::string::npos) << experts;
  // DP attention with pipeline stages is not modelled: refused at attention_dp.
  const std::string pp = error_of(base + "tp: 2\nattention_dp: 2\npp: 2\n");
  EXPECT_NE(pp.find("job.attention_dp"), std::string::npos) << pp;
  EXPECT_NE(error_of(base + "attention_dp: 0\n").find("job.attention_dp"), std::string::npos);
  // A dense model's attention groups are replicas: refused at attention_dp.
  const std::string dense = error_of(
      "model: llama3-8b\ntp: 2\nattention_dp: 4\nrequests: {prompt: 8, output: 8, rate: 1}\n");
  EXPECT_NE(dense.find("job.attention_dp: DP attention needs an MoE model"), std::string::npos)
      << dense;
  // tp x attention_dp x replicas must be the cluster's GPUs: 2 x 2 = 4 of 8.
  const InferenceConfig four = testing::inference_config(base + "tp: 2\nattention_dp: 2\nep: 4\n");
  const std::string gpus = testing::serve_error(two_nodes_of_four(), four);
  EXPECT_NE(gpus.find("replicas x tp x attention_dp = 1 x 2 x 2 = 4 GPUs"), std::string::npos)
      << gpus;
}

// A whole run on the layout: 8 requests, served and deterministic.
TEST(InferenceLayout, ServesRequestsOnDpAttention) {
  const InferenceConfig c = testing::inference_config(kDpAttention);
  const InferenceResult a = simulate_inference(two_nodes_of_four(), c);
  const InferenceResult b = simulate_inference(two_nodes_of_four(), c);
  EXPECT_EQ(a.requests, 8u);
  EXPECT_EQ(a.output_tokens, 32u);
  EXPECT_GT(a.tpot.p50, 0);
  EXPECT_DOUBLE_EQ(a.tpot.p50, b.tpot.p50);
  EXPECT_DOUBLE_EQ(a.makespan, b.makespan);
}

}  // namespace
}  // namespace lockstep
