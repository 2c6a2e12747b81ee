// Inference serving across pools, stages and experts (docs/inference.md): a decode pool's
// preemption sends a sequence back to the prefill pool, pipeline stages overlap micro-batches,
// and an FP8 dispatch halves the tokens' bytes; the schedules and step times derived by hand.
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>

#include "inference_support.hpp"
#include "lockstep/collective/moe.hpp"
#include "lockstep/workload/inference.hpp"
#include "test_cluster.hpp"

namespace lockstep {
namespace {

using testing::FixedComm;
using testing::inference_config;

const Topology& one_hgx() {
  static const Topology t = testing::ndr_h100_nodes(1, 8);
  return t;
}
const Topology& two_hgx() {
  static const Topology t = testing::ndr_h100_nodes(2, 8);
  return t;
}
// Llama 3 8B at TP 4 x PP 2 on one_hgx(), with these requests and batching.
InferenceConfig two_stages(const std::string& rest) {
  return inference_config("type: inference\nmodel: llama3-8b\ntp: 4\npp: 2\n" + rest);
}

// Disaggregated Llama 3 8B, TP 8 prefill and decode replicas on 2 HGX H100, a decode cache of
// 2,050 tokens: 128 blocks of 16. Two requests of 1,000 + 100 tokens (closed loop of 2, so both
// arrive at 0). The prefill replica takes A alone (its step started before B arrived), then B;
// each KV cache takes 1 ms (FixedComm). A decodes alone until B's cache lands, then both, A
// ahead by d tokens. At A's 1,025th context token (65 blocks) beside B's at most 1,024 (64),
// 129 > 128: B, the newest, is evicted. The decode replica cannot prefill: B goes back to the
// prefill replica (idle), which recomputes its prompt and the 25 - d tokens it generated
// (emitting its next), and its cache of 1,025 - d tokens goes over again (1 ms). A holds 65+
// blocks from then on and B 64 or 65, so B waits until A finishes, then decodes to its 100th.
TEST(InferenceDisaggregated, AFullDecodeCacheSendsTheNewestBackToThePrefillPool) {
  const Topology& two = two_hgx();
  const InferenceConfig c = inference_config(
      "type: inference\nmodel: llama3-8b\ntp: 8\n"
      "requests: {prompt: 1000, output: 100, concurrency: 2, count: 2}\n"
      "batching: {max_batch: 2, kv_cache_tokens: 2050}\n"
      "disaggregated: {prefill_gpus: 8, decode_gpus: 8}\n");
  auto comm = std::make_shared<FixedComm>();
  const InferenceOptions o = testing::options_with(comm, true);
  const InferenceResult r = simulate_inference(two, c, o);
  InferenceStepModel m(two, c, comm);
  auto blocks = [](std::uint64_t tokens) { return (tokens + 15) / 16; };

  const double pre = m.prefill({1000}).seconds, kv = 1e-3;
  double t = pre + kv;  // A's cache lands
  std::uint64_t ga = 1, gb = 1;
  while (t < 2 * pre + kv) t += m.decode({1000 + ga++}).seconds;
  while (blocks(1000 + ga) + blocks(1000 + gb) <= 128)
    t += m.decode({1000 + ga++, 1000 + gb++}).seconds;
  EXPECT_EQ(ga, 25u);  // A's 1,025th token needs a 65th block
  ASSERT_LT(gb, ga);
  const double evicted = t;
  const double recompute = m.prefill({1000 + gb}).seconds;
  const double back = evicted + recompute + kv;
  for (; ga < 100; ++ga) t += m.decode({1000 + ga}).seconds;
  const double a_done = t;
  ASSERT_LT(back, a_done);  // B's cache waits for A's blocks to free
  for (std::uint64_t g = gb + 1; g < 100; ++g) t += m.decode({1000 + g}).seconds;

  EXPECT_EQ(r.preemptions, 1u);
  EXPECT_EQ(comm->transfers, 3u);
  EXPECT_EQ(comm->kv_bytes, (1000 + gb) * 131'072u);  // the last: B's prompt and its tokens
  ASSERT_EQ(r.timings.size(), 2u);
  EXPECT_NEAR(r.timings[1].first_token, 2 * pre, 1e-12);  // its first token, kept
  EXPECT_NEAR(r.timings[0].finish, a_done, 1e-9);
  EXPECT_NEAR(r.timings[1].finish, t, 1e-9);
  // The prefill replica (replica 0) ran A, B, and B's recompute from the eviction on.
  std::vector<StepRecord> prefills;
  for (const StepRecord& s : r.steps)
    if (s.replica == 0) prefills.push_back(s);
  ASSERT_EQ(prefills.size(), 3u);
  EXPECT_EQ(prefills[2].tokens, 1000 + gb);
  EXPECT_NEAR(prefills[2].start, evicted, 1e-9);
  EXPECT_NEAR(prefills[2].end - prefills[2].start, recompute, 1e-15);

  // 138 blocks hold both to the end (2 x ceil(1,099 / 16) = 2 x 69): no eviction, and B ends
  // the d steps it trails A by later.
  InferenceConfig roomy = c;
  roomy.kv_cache_tokens = 138 * 16;
  const InferenceResult q = simulate_inference(two, roomy, o);
  EXPECT_EQ(q.preemptions, 0u);
  EXPECT_LT(q.timings[1].finish, r.timings[1].finish);
}

// Llama 3 8B at TP 4 x PP 2 on one HGX H100: 16 layers a stage. A decode token at context 1,024
// reads per layer and GPU 218,103,808 weights x 2 B / 4 = 109,051,904 B and 1,024 tokens x 2 KV
// heads x 256 x 2 B = 1,048,576 B of cache, at 0.9 x 3.35 TB/s (the GEMMs' 109 MFLOP at 791
// TFLOP/s take 0.14 us: memory-bound), plus two all-reduces of 8 KiB; the last stage also reads
// the output layer, 128,256 x 4,096 x 2 B / 4 = 262,668,288 B. Between the stages one send of
// 8 KiB, h. One sequence: one micro-batch, stage 0 then the send then stage 1, t0 + h + t1 (each
// stage idles while the other works). Two: two micro-batches in flight, the busier stage (the
// last) working on one while stage 0 works on the other: 2 x (t1 + h), each stage's GPUs also
// held by the send; 2 tokens in 2 x (t1 + h) against 1 in t0 + h + t1.
TEST(InferencePipeline, TwoStagesOverlapTwoMicroBatches) {
  InferenceStepModel m(one_hgx(), two_stages("requests: {prompt: 1024, output: 2, rate: 1}\n"));
  const double hbm = 0.9 * 3.35e12, ar = m.tp_all_reduce(4096 * 2);
  const double t0 = 16 * (109'051'904.0 + 1'048'576.0) / hbm + 32 * ar;
  const double t1 = t0 + 262'668'288.0 / hbm;
  const StepCost one = m.decode({1024});
  const double h = one.pp;
  EXPECT_GT(h, 0);
  EXPECT_LT(h, 10e-6);  // 8 KiB over NVLink: microseconds
  EXPECT_NEAR(one.seconds, t0 + h + t1, 1e-9);
  const StepCost both = m.decode({1024, 1024});
  EXPECT_NEAR(both.seconds, 2 * (t1 + h), 1e-9);
  EXPECT_LT(both.seconds, 2 * one.seconds);
  // The parts still sum to the step.
  EXPECT_NEAR(both.compute + both.tp + both.ep + both.pp, both.seconds, 1e-15);
  // Three sequences: micro-batches of 2 and 1, never faster than two.
  EXPECT_GT(m.decode({1024, 1024, 1024}).seconds, both.seconds);
}

// Chunked prefill with pipeline stages runs (vLLM's virtual engines each schedule their own
// step): a step of one prompt chunk and one decode token is two micro-batches, so it lasts no
// longer than the two passes one after the other and at least the chunk's own pass.
TEST(InferencePipeline, ChunkedPrefillSharesTheStages) {
  const InferenceConfig c = two_stages(
      "requests: {prompt: 3000, output: 16, concurrency: 4, count: 8}\n"
      "batching: {max_batch: 4, policy: chunked}\n");
  InferenceStepModel m(one_hgx(), c);
  const double chunk = m.step({{0, 512, false}}).seconds;
  const double token = m.step({{1023, 1, true}}).seconds;
  const double mixed = m.step({{0, 512, false}, {1023, 1, true}}).seconds;
  EXPECT_GE(mixed, chunk);
  EXPECT_LT(mixed, chunk + token);
  const InferenceResult r = simulate_inference(one_hgx(), c);
  EXPECT_EQ(r.requests, 8u);
  EXPECT_GT(r.tpot.p50, 0);
}

// Mixtral 8x7B (hidden 4,096, top 2 of 8) at TP 8 = EP 8, a decode batch of 16: 2 tokens a rank.
// With the model's moe_fp8_dispatch the step dispatches FP8 (DeepEP's low-latency default: 1 B
// an element and a 4-byte scale per 128: 4,096 + 4 x 32 = 4,224 B a token against 8,192 in
// BF16) and combines BF16 (8,192 B either way). A rank sends each other GPU T x K / R = 2 x 2 / 8
// = 0.5 tokens on average: 2,112 B against 4,096.
TEST(InferenceExperts, Fp8DispatchSendsOneByteAnElementAndItsScales) {
  const Topology& hgx = one_hgx();
  const std::string job =
      "tp: 8\nep: 8\nrequests: {prompt: 512, output: 8, rate: 1, count: 1}\n"
      "batching: {max_batch: 16}\ntype: inference\n";
  const InferenceConfig bf16 = inference_config(job + "model: mixtral-8x7b\n");
  const InferenceConfig fp8 =
      inference_config(job + "model: {preset: mixtral-8x7b, moe_fp8_dispatch: true}\n");
  const std::vector<std::uint64_t> batch(16, 512);
  auto comm = std::make_shared<FixedComm>();
  InferenceStepModel(hgx, bf16, comm).decode(batch);
  EXPECT_EQ(comm->last.bytes_per_element, 2);
  InferenceStepModel(hgx, fp8, comm).decode(batch);
  EXPECT_EQ(comm->last.bytes_per_element, 1);

  MoeSpec s;
  s.tokens = comm->last.tokens.front();
  s.hidden = 4096;
  s.topk = 2;
  s.experts = 8;
  s.kernel = MoeKernel::LowLatency;
  EXPECT_EQ(s.tokens, 2u);
  EXPECT_EQ(moe_token_bytes(s, MoePhase::Dispatch), 4224u);
  EXPECT_EQ(moe_traffic(s, MoePhase::Dispatch).nvlink_message, 2112u);
  EXPECT_EQ(moe_token_bytes(s, MoePhase::Combine), 8192u);
  s.fp8_dispatch = false;
  EXPECT_EQ(moe_token_bytes(s, MoePhase::Dispatch), 8192u);
  EXPECT_EQ(moe_traffic(s, MoePhase::Dispatch).nvlink_message, 4096u);
  // On the engines (DeepEpComm): the FP8 dispatch is faster, the rest of the step the same.
  const StepCost b = InferenceStepModel(hgx, bf16).decode(batch);
  const StepCost f = InferenceStepModel(hgx, fp8).decode(batch);
  EXPECT_LT(f.ep, b.ep);
  EXPECT_DOUBLE_EQ(f.compute, b.compute);
}

}  // namespace
}  // namespace lockstep
