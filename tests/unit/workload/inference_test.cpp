// Inference serving (docs/inference.md): the job's validation, the step model against numbers
// derived by hand from the model card and the H100 datasheet, and properties of the request
// simulation (queueing, determinism, a slow GPU).
#include "lockstep/workload/inference.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>

#include "inference_support.hpp"
#include "lockstep/core/error.hpp"
#include "test_cluster.hpp"

namespace lockstep {
namespace {

using testing::FixedComm;

InferenceConfig config(const std::string& yaml) {
  return testing::inference_config(yaml);
}

std::string error_of(const std::string& yaml) {
  try {
    config(yaml);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

const Topology& hgx() {
  static const Topology t = testing::ndr_h100_nodes(1, 8);
  return t;
}

const char* kLlama8b =
    "type: inference\nmodel: llama3-8b\ntp: 8\n"
    "requests: {prompt: 1024, output: 2, concurrency: 1, count: 1}\n"
    "batching: {max_batch: 1}\n";

TEST(InferenceConfig, ReadsTheJob) {
  const InferenceConfig c = config(
      "type: inference\nmodel: llama3-70b\ntp: 8\nreplicas: 2\nprecision: fp8\n"
      "requests: {prompt: uniform:100-300, output: 128, rate: 4.5, count: 50}\n"
      "batching: {max_batch: 32, policy: static}\n");
  EXPECT_EQ(c.model.layers, 80u);
  EXPECT_EQ(c.gpus(), 16u);
  EXPECT_EQ(c.prompt.lo, 100u);
  EXPECT_EQ(c.prompt.hi, 300u);
  EXPECT_DOUBLE_EQ(c.prompt.mean(), 200);
  EXPECT_DOUBLE_EQ(c.rate, 4.5);
  EXPECT_EQ(c.policy, BatchPolicy::Static);
  EXPECT_EQ(c.precision, Precision::Fp8);
}

TEST(InferenceConfig, ErrorsNameTheFieldAndItsPlace) {
  // An unknown key inside requests: at its line and column.
  EXPECT_NE(error_of("model: llama3-8b\nrequests: {prompt: 8, output: 8, rate: 1, burst: 2}\n")
                .find("s.yaml:2:"),
            std::string::npos);
  EXPECT_NE(error_of("model: llama3-8b\nrequests: {prompt: 8, output: 8, rate: 1, burst: 2}\n")
                .find("burst"),
            std::string::npos);
  // Both arrival models, or neither.
  EXPECT_NE(error_of("model: llama3-8b\nrequests: {prompt: 8, output: 8, rate: 1, "
                     "concurrency: 2}\n")
                .find("job.requests.rate"),
            std::string::npos);
  EXPECT_NE(error_of("model: llama3-8b\nrequests: {prompt: 0, output: 8, rate: 1}\n")
                .find("job.requests.prompt"),
            std::string::npos);
  EXPECT_NE(error_of("model: llama3-8b\nrequests: {prompt: uniform:9-3, output: 8, rate: 1}\n")
                .find("HI is below LO"),
            std::string::npos);
  EXPECT_NE(error_of("model: llama3-8b\ntp: 3\nrequests: {prompt: 8, output: 8, rate: 1}\n")
                .find("job.tp"),
            std::string::npos);
  EXPECT_NE(error_of("model: llama3-8b\nep: 2\nrequests: {prompt: 8, output: 8, rate: 1}\n")
                .find("needs an MoE model"),
            std::string::npos);
  EXPECT_NE(error_of("model: llama3-8b\nbatching: {policy: greedy}\n"
                     "requests: {prompt: 8, output: 8, rate: 1}\n")
                .find("job.batching.policy"),
            std::string::npos);
  EXPECT_NE(error_of("model: llama3-8b\nbatching: {kv_cache_tokens: 0}\n"
                     "requests: {prompt: 8, output: 8, rate: 1}\n")
                .find("s.yaml:2:29: job.batching.kv_cache_tokens"),
            std::string::npos);
  // Several partial prefills only with chunked prefill.
  EXPECT_NE(error_of("model: llama3-8b\nbatching: {max_partial_prefills: 2}\n"
                     "requests: {prompt: 8, output: 8, rate: 1}\n")
                .find("s.yaml:2:34: job.batching.max_partial_prefills"),
            std::string::npos);
  // Pipeline stages: at least one layer each (vLLM's get_pp_indices splits 32 layers over 3
  // stages as 11 + 11 + 10, so pp need not divide them), at least one stage.
  EXPECT_NE(error_of("model: llama3-8b\npp: 33\nrequests: {prompt: 8, output: 8, rate: 1}\n")
                .find("s.yaml:2:5: job.pp: 32 layers cannot fill pp=33 stages"),
            std::string::npos);
  EXPECT_NE(error_of("model: llama3-8b\npp: -2\nrequests: {prompt: 8, output: 8, rate: 1}\n")
                .find("s.yaml:2:5: job.pp"),
            std::string::npos);
  EXPECT_EQ(config("model: llama3-8b\npp: 2\nbatching: {policy: chunked}\n"
                   "requests: {prompt: 8, output: 8, rate: 1}\n")
                .pp,
            2u);
  // Chunked prefill's budget defaults to vLLM's 2,048 tokens a step.
  const InferenceConfig chunked = config(
      "model: llama3-8b\nbatching: {policy: chunked}\nrequests: {prompt: 8, output: 8, rate: 1}\n");
  EXPECT_EQ(chunked.policy, BatchPolicy::Chunked);
  EXPECT_EQ(chunked.max_prefill_tokens, 2048u);
}

// Llama 3 8B (Meta's model card: 32 layers, hidden 4096, MLP 14336, 32 heads, 8 KV heads of
// 128, vocabulary 128,256) at TP 8 on H100 SXM (989 TFLOP/s BF16 dense, 3.35 TB/s HBM3; the
// catalog's achievable fractions 0.8 of the GEMM peak and 0.9 of HBM):
//   a layer: attention 4096 x 128 x (2 x 32 + 2 x 8) = 41,943,040 + MLP 3 x 4096 x 14336 =
//   176,160,768 = 218,103,808 weights, 2 B each, 1/8 per GPU = 54,525,952 B, read at
//   0.9 x 3.35e12 = 3.015e12 B/s: 18.0849 us (the GEMM FLOPs, 2 x 218,103,808 / 8 at 791 TFLOP/s,
//   take 0.069 us: memory-bound);
//   K and V of 1,024 tokens: ceil(8 / 8) head x (128 + 128) x 2 B = 512 B per token, 524,288 B:
//   0.17389 us;
//   the output layer: 128,256 x 4096 x 2 B / 8 = 131,334,144 B: 43.5602 us.
//   32 x (18.0849 + 0.17389) + 43.5602 = 627.84 us of kernels per token,
// plus 2 all-reduces per layer of 1 token x 4096 x 2 B = 8 KiB: NCCL's ring LL over 8 GPUs on
// NVLink, latency 6.6 + 2 x 7 x 0.6 = 15.0 us (tuning.cc's baseLat and hwLat), plus its bytes.
TEST(InferenceStep, DenseDecodeAtBatchOneIsWeightsOverHbmPlusAllReduces) {
  const InferenceConfig c = config(kLlama8b);
  InferenceStepModel m(hgx(), c);
  const double hbm = 0.9 * 3.35e12;
  const double layer = 218'103'808.0 * 2 / 8 / hbm + 524'288.0 / hbm;
  const double head = 128'256.0 * 4096 * 2 / 8 / hbm;
  const StepCost d = m.decode({1024});
  EXPECT_NEAR(d.compute, 32 * layer + head, 1e-12);
  EXPECT_NEAR(d.compute * 1e6, 627.84, 0.01);
  const double ar = m.tp_all_reduce(8192);
  EXPECT_GE(ar * 1e6, 15.0);
  EXPECT_LT(ar * 1e6, 15.2);  // 8 KiB at LL's half of NVLink: well under 0.2 us
  EXPECT_NEAR(d.tp, 64 * ar, 1e-12);
  EXPECT_NEAR(d.seconds, d.compute + d.tp, 1e-12);
  EXPECT_EQ(d.ep, 0);
  EXPECT_EQ(d.pp, 0);
}

// The model keeps its own copy of the config: one built from a config since changed (tp 8 -> 1,
// Llama 3 8B -> 70B) and destroyed prices as one built from the original (a reference would read
// the change, then freed memory).
TEST(InferenceStep, OutlivesTheConfigItWasBuiltFrom) {
  auto c = std::make_unique<InferenceConfig>(config(kLlama8b));
  InferenceStepModel m(hgx(), *c);
  c->tp = 1;
  c->model = config("model: llama3-70b\nrequests: {prompt: 8, output: 8, rate: 1}\n").model;
  c.reset();
  const InferenceConfig fresh = config(kLlama8b);
  InferenceStepModel expect(hgx(), fresh);
  const StepCost a = m.decode({1024}), b = expect.decode({1024});
  EXPECT_EQ(a.seconds, b.seconds);
  EXPECT_EQ(a.compute, b.compute);
  EXPECT_EQ(a.tp, b.tp);
  EXPECT_GT(a.tp, 0);  // still TP 8's all-reduces
  EXPECT_EQ(m.prefill({1024}).seconds, expect.prefill({1024}).seconds);
}

// 64 KiB, a decode batch of 8 sequences of Llama 3 8B (8 x 4096 x 2 B): NCCL's ring LL costs
// 15 us of latency, NVLS (NVLink SHARP) 0 + 25 us (hwLat[NVLink][NVLS][Simple]) whatever the
// size, so NCCL's tuner picks the ring; both are priced.
TEST(InferenceStep, DecodeAllReduceOnNvlsAndRing) {
  const InferenceConfig c = config(kLlama8b);
  InferenceStepModel m(hgx(), c);
  const AllReducePrice p = m.price_all_reduce(65536);
  double ring = 0, nvls = 0;
  for (const auto& [name, s] : p.algorithms) {
    if (name.rfind("ring/", 0) == 0) ring = s;
    if (name.rfind("netreduce/", 0) == 0) nvls = s;
  }
  ASSERT_GT(ring, 0);
  ASSERT_GT(nvls, 0);
  EXPECT_GE(ring * 1e6, 15.0);
  EXPECT_GE(nvls * 1e6, 25.0);
  EXPECT_LT(ring, nvls);
  EXPECT_EQ(p.picked.rfind("ring/", 0), 0u) << p.picked;
  EXPECT_DOUBLE_EQ(p.seconds, m.tp_all_reduce(65536));
}

// One request alone: its first token comes out of its prefill step, the second one decode step
// later (context 1,025).
TEST(InferenceServe, OneRequestsTtftIsItsPrefill) {
  const InferenceConfig c = config(kLlama8b);
  const InferenceResult r = simulate_inference(hgx(), c);
  InferenceStepModel m(hgx(), c);
  EXPECT_DOUBLE_EQ(r.ttft.p50, m.prefill({1024}).seconds);
  EXPECT_DOUBLE_EQ(r.tpot.p50, m.decode({1025}).seconds);
  EXPECT_DOUBLE_EQ(r.e2e.p50, r.ttft.p50 + r.tpot.p50);
  EXPECT_EQ(r.output_tokens, 2u);
  // Prefill of 1,024 tokens is compute-bound: 2 x 218,103,808 x 1024 / 8 FLOPs per layer at
  // 0.8 x 989e12 = 70.58 us, 32 layers 2.2586 ms, more than the weights' 18 us read.
  EXPECT_GT(r.ttft.p50, 32 * 2 * 218'103'808.0 * 1024 / 8 / (0.8 * 989e12));
}

std::string load(double rate, int count) {
  return fmt::format(
      "type: inference\nmodel: llama3-8b\ntp: 8\n"
      "requests: {{prompt: uniform:200-600, output: uniform:20-60, rate: {}, count: {}}}\n"
      "batching: {{max_batch: 8}}\n",
      rate, count);
}

// Above capacity the queue grows without bound: twice the requests wait about twice as long.
// Below it, latency does not depend on how many requests come.
TEST(InferenceServe, LatencyGrowsAboveCapacity) {
  const InferenceResult over100 = simulate_inference(hgx(), config(load(1000, 100)));
  const InferenceResult over200 = simulate_inference(hgx(), config(load(1000, 200)));
  EXPECT_GT(over200.e2e.p50, 1.5 * over100.e2e.p50);
  EXPECT_GT(over200.ttft.p99, 1.5 * over100.ttft.p99);
  const InferenceResult under100 = simulate_inference(hgx(), config(load(2, 100)));
  const InferenceResult under200 = simulate_inference(hgx(), config(load(2, 200)));
  EXPECT_LT(under200.e2e.p50, 1.2 * under100.e2e.p50);
  EXPECT_LT(under100.e2e.p50, over100.e2e.p50);
  // Saturated, the decode batch is full.
  EXPECT_EQ(over200.mean_decode_batch, 8u);
}

// vLLM's token budget: prompts of 1,024 tokens go two to a prefill step of 2,048. Static batching
// starts a batch only when the last one has finished: between two prefill steps the batch
// decodes its longest output (60 tokens at most) and nothing else joins.
TEST(InferenceServe, PrefillBudgetAndStaticBatches) {
  InferenceConfig c = config(
      "type: inference\nmodel: llama3-8b\ntp: 8\n"
      "requests: {prompt: 1024, output: uniform:20-60, rate: 100, count: 40}\n"
      "batching: {max_batch: 8, max_prefill_tokens: 2048}\n");
  InferenceOptions o;
  o.record_steps = true;
  const InferenceResult r = simulate_inference(hgx(), c, o);
  std::uint64_t most = 0;
  for (const StepRecord& s : r.steps)
    if (s.prefill) most = std::max(most, s.tokens);
  EXPECT_EQ(most, 2048u);
  c.policy = BatchPolicy::Static;
  const InferenceResult st = simulate_inference(hgx(), c, o);
  std::uint32_t batch = 0, decodes = 0;
  for (const StepRecord& s : st.steps) {
    if (s.prefill) {
      EXPECT_TRUE(batch == 0 || decodes >= 19) << decodes;  // the last batch ran to its end
      batch = s.batch;
      decodes = 0;
    } else {
      EXPECT_LE(s.batch, batch);  // nobody joins a static batch
      ++decodes;
    }
  }
  EXPECT_GT(st.e2e.p50, r.e2e.p50);  // waiting for a whole batch to drain costs latency
}

TEST(InferenceServe, DeterministicWithTheSeed) {
  const InferenceConfig c = config(load(20, 60));
  const InferenceResult a = simulate_inference(hgx(), c);
  const InferenceResult b = simulate_inference(hgx(), c);
  ASSERT_EQ(a.timings.size(), b.timings.size());
  for (std::size_t i = 0; i < a.timings.size(); ++i) {
    EXPECT_EQ(a.timings[i].finish, b.timings[i].finish);
    EXPECT_EQ(a.timings[i].prompt, b.timings[i].prompt);
  }
  InferenceConfig other = c;
  other.seed = 2;
  EXPECT_NE(simulate_inference(hgx(), other).e2e.mean, a.e2e.mean);
}

// A GPU at half speed in the TP group: every step waits for it at each all-reduce, so its
// kernels take twice as long and the all-reduces do not change.
TEST(InferenceServe, SlowGpuSlowsEveryStepOfItsReplica) {
  InferenceConfig c = config(std::string(kLlama8b) + "faults: ['slow-gpu:rank=3,x=2']\n");
  const InferenceResult r = simulate_inference(hgx(), c);
  InferenceStepModel m(hgx(), c);
  const StepCost pre = m.prefill({1024}), dec = m.decode({1025});
  EXPECT_NEAR(r.ttft.p50, 2 * pre.compute + pre.tp, 1e-12);
  EXPECT_NEAR(r.tpot.p50, 2 * dec.compute + dec.tp, 1e-12);
}

// Llama 3 70B at TP 8 on H100 (80 GiB): 40,960 B of K and V per token per GPU (80 layers x 1 KV
// head x 256 x 2 B). vLLM's cache: 0.9 x 85,899,345,920 B = 77,309,411,328 B, less the weights
// (80 x 855,638,016 x 2 B / 8 + 2 x 128,256 x 8192 x 2 B / 8 = 17,638,096,896 B) and the
// profiling pass's peak (8,192 tokens x (8,192 + 3 x 28,672 / 8) x 2 B = 310,378,496 B, plus
// 512 x 128,256 x 4 B of FP32 logits = 262,668,288 B): 59,098,267,648 B, in vLLM's blocks of 16
// tokens (655,360 B) 90,176 whole blocks (90,176.8), 1,442,816 tokens. 512 sequences of 4,096
// tokens would take 2.1 M: vLLM preempts (below), so the job runs; one sequence longer than the
// cache is refused at the field that sized it: 4,000 tokens are 250 blocks, 4,000 + 96 take 256.
TEST(InferenceServe, KvCacheIsHbmLessWeightsAndActivations) {
  const std::string job =
      "type: inference\nmodel: llama3-70b\ntp: 8\n"
      "requests: {prompt: 4000, output: 96, rate: 1, count: 1}\n"
      "batching: {max_batch: 512";
  const InferenceConfig c = config(job + "}\n");
  InferenceStepModel m(hgx(), c);
  EXPECT_DOUBLE_EQ(m.kv_bytes_per_token_per_gpu(), 40'960);
  EXPECT_DOUBLE_EQ(m.weight_bytes_per_gpu(), 17'638'096'896.0);
  EXPECT_DOUBLE_EQ(m.activation_bytes_per_gpu(), 310'378'496.0 + 262'668'288.0);
  const InferenceResult r = simulate_inference(hgx(), c);
  EXPECT_EQ(r.kv_token_capacity, 1'442'816u);
  EXPECT_EQ(r.preemptions, 0u);
  // A sequence longer than the cache is refused at the field.
  const std::string small = testing::serve_error(hgx(), config(job + ", kv_cache_tokens: 4000}\n"));
  EXPECT_NE(small.find("s.yaml:5:45: job.batching.kv_cache_tokens"), std::string::npos) << small;
}

// Chunked prefill (Sarathi-Serve; vLLM's chunked prefill) with a budget of 2,048 tokens a step,
// decode tokens included, two Llama 3 8B requests of 5,000 + 3 tokens arriving together (the
// first starts a step alone):
//   1: A[0, 2048)   2: A[2048, 4096)   3: A[4096, 5000) -> A's first token, B[0, 1144)
//   4: A decodes (context 5,001), B[1144, 3191)   5: A decodes (5,002: done), B[3191, 5000) -> B's
//   first token   6, 7: B decodes (5,001, 5,002).
// Seven steps; A's TTFT is steps 1-3, B's steps 1-5; A finishes after step 5, B after step 7.
TEST(InferenceServe, ChunkedPrefillSharesStepsWithDecodes) {
  const InferenceConfig c = config(
      "type: inference\nmodel: llama3-8b\ntp: 8\n"
      "requests: {prompt: 5000, output: 3, concurrency: 2, count: 2}\n"
      "batching: {max_batch: 4, max_prefill_tokens: 2048, policy: chunked}\n");
  InferenceOptions o;
  o.record_steps = true;
  const InferenceResult r = simulate_inference(hgx(), c, o);
  InferenceStepModel m(hgx(), c);
  const double s[] = {m.step({{0, 2048, false}}).seconds,
                      m.step({{2048, 2048, false}}).seconds,
                      m.step({{4096, 904, true}, {0, 1144, false}}).seconds,
                      m.step({{5000, 1, true}, {1144, 2047, false}}).seconds,
                      m.step({{5001, 1, true}, {3191, 1809, true}}).seconds,
                      m.step({{5000, 1, true}}).seconds,
                      m.step({{5001, 1, true}}).seconds};
  ASSERT_EQ(r.steps.size(), 7u);
  for (std::size_t i = 0; i < 7; ++i) EXPECT_NEAR(r.steps[i].end - r.steps[i].start, s[i], 1e-15);
  EXPECT_EQ(r.steps[3].tokens, 2048u);
  EXPECT_EQ(r.steps[4].tokens, 1810u);
  ASSERT_EQ(r.timings.size(), 2u);
  EXPECT_NEAR(r.timings[0].first_token, s[0] + s[1] + s[2], 1e-9);
  EXPECT_NEAR(r.timings[1].first_token, s[0] + s[1] + s[2] + s[3] + s[4], 1e-9);
  EXPECT_NEAR(r.timings[0].finish, s[0] + s[1] + s[2] + s[3] + s[4], 1e-9);
  EXPECT_NEAR(r.timings[1].finish, s[0] + s[1] + s[2] + s[3] + s[4] + s[5] + s[6], 1e-9);
  // A chunk attends its cached prefix: the third chunk's 904 queries see 4,097..5,000 positions,
  // more attention than a fresh prompt of 904 tokens.
  EXPECT_GT(m.step({{4096, 904, true}}).flops, m.step({{0, 904, true}}).flops);
}

// Several partial prefills (vLLM's max_num_partial_prefills: 2) with a budget of 256 tokens, three
// Llama 3 8B requests of 300 + 2 tokens arriving together (the first starts a step alone); S of
// the waiting prompts share a step, each chunk at most 256 / S:
//   1: A[0, 256) (S = 1)   2 (S = 2, 128 each): A[256, 300) -> A's first token, B[0, 128),
//   C[0, 84) (the budget's last 84)   3: A decodes (context 301: done), B[128, 256), C[84, 211)
//   (127 left)   4: B[256, 300), C[211, 300) -> both first tokens   5: B, C decode.
// A prompt with more than 4% of the 8,192-token context (327 tokens) left to prefill is long, one
// at a time: two of 1,000 tokens: 1-3: A[0, 768) in chunks of 256, B waiting (not sharing A's
// steps: one long at a time); 4: A has 232 left, short: S = 2, A[768, 896), B[0, 128);
// 5: A[896, 1000) -> its first token, B[128, 256) (232 tokens); 6: A decodes (done), B[256, 511)
// (the budget's 255 left); 7: B[511, 767); 8: B[767, 1000) -> its first token; 9: B decodes.
TEST(InferenceServe, SeveralPartialPrefillsSplitTheBudget) {
  const std::string job =
      "type: inference\nmodel: llama3-8b\ntp: 8\n"
      "batching: {max_batch: 4, max_prefill_tokens: 256, policy: chunked, "
      "max_partial_prefills: 2}\n";
  InferenceOptions o;
  o.record_steps = true;
  const InferenceConfig c =
      config(job + "requests: {prompt: 300, output: 2, concurrency: 3, count: 3}\n");
  EXPECT_EQ(c.max_partial_prefills, 2u);
  const InferenceResult r = simulate_inference(hgx(), c, o);
  InferenceStepModel m(hgx(), c);
  const double s[] = {m.step({{0, 256, false}}).seconds,
                      m.step({{256, 44, true}, {0, 128, false}, {0, 84, false}}).seconds,
                      m.step({{300, 1, true}, {128, 128, false}, {84, 127, false}}).seconds,
                      m.step({{256, 44, true}, {211, 89, true}}).seconds,
                      m.step({{300, 1, true}, {300, 1, true}}).seconds};
  ASSERT_EQ(r.steps.size(), 5u);
  const std::uint64_t tokens[] = {256, 256, 256, 133, 2};
  for (std::size_t i = 0; i < 5; ++i) {
    EXPECT_NEAR(r.steps[i].end - r.steps[i].start, s[i], 1e-15) << i;
    EXPECT_EQ(r.steps[i].tokens, tokens[i]) << i;
  }
  ASSERT_EQ(r.timings.size(), 3u);
  EXPECT_NEAR(r.timings[0].first_token, s[0] + s[1], 1e-9);
  EXPECT_NEAR(r.timings[0].finish, s[0] + s[1] + s[2], 1e-9);
  EXPECT_NEAR(r.timings[1].first_token, s[0] + s[1] + s[2] + s[3], 1e-9);
  EXPECT_NEAR(r.timings[2].first_token, s[0] + s[1] + s[2] + s[3], 1e-9);
  EXPECT_NEAR(r.timings[2].finish, s[0] + s[1] + s[2] + s[3] + s[4], 1e-9);

  const InferenceResult l = simulate_inference(
      hgx(), config(job + "requests: {prompt: 1000, output: 2, concurrency: 2, count: 2}\n"), o);
  ASSERT_EQ(l.steps.size(), 9u);
  const std::uint64_t long_tokens[] = {256, 256, 256, 256, 232, 256, 256, 233, 1};
  const std::uint32_t long_batch[] = {1, 1, 1, 2, 2, 2, 1, 1, 1};
  for (std::size_t i = 0; i < 9; ++i) {
    EXPECT_EQ(l.steps[i].tokens, long_tokens[i]) << i;
    EXPECT_EQ(l.steps[i].batch, long_batch[i]) << i;
  }
  EXPECT_NEAR(l.steps[3].end - l.steps[3].start,
              m.step({{768, 128, false}, {0, 128, false}}).seconds, 1e-15);
}

// vLLM's recompute preemption with a cache of 2,050 tokens (kv_cache_tokens, vLLM's
// num_gpu_blocks_override): 128 whole blocks of 16 tokens. Two Llama 3 8B requests of 1,000 + 100
// tokens: A is prefilled alone (it arrived first), then B (63 + 63 blocks <= 128). Both decode
// while 2 x ceil((1,000 + g) / 16) <= 128, g = 1..24 generated (context 1,024: 64 blocks each);
// at g = 25 (65 + 65 = 130 blocks) the newest, B, is evicted: counted in tokens (2,050) it would
// stay one step more. A decodes alone (contexts 1,025..1,099) to its 100th token; B cannot come
// back before (A holds 1,024+ tokens, 64 blocks, B needs ceil(1,025 / 16) = 65), then is
// prefilled again over its 1,025 tokens (emitting its 26th) and decodes contexts 1,026..1,099.
TEST(InferenceServe, AFullKvCachePreemptsTheNewestSequence) {
  const InferenceConfig c = config(
      "type: inference\nmodel: llama3-8b\ntp: 8\n"
      "requests: {prompt: 1000, output: 100, concurrency: 2, count: 2}\n"
      "batching: {max_batch: 2, kv_cache_tokens: 2050}\n");
  const InferenceResult r = simulate_inference(hgx(), c);
  InferenceStepModel m(hgx(), c);
  EXPECT_EQ(r.preemptions, 1u);
  EXPECT_EQ(r.kv_token_capacity, 2048u);
  const double pre = m.prefill({1000}).seconds;
  double a = 2 * pre;
  for (std::uint64_t g = 1; g <= 24; ++g) a += m.decode({1000 + g, 1000 + g}).seconds;
  for (std::uint64_t g = 25; g <= 99; ++g) a += m.decode({1000 + g}).seconds;
  double b = a + m.prefill({1025}).seconds;
  for (std::uint64_t g = 26; g <= 99; ++g) b += m.decode({1000 + g}).seconds;
  ASSERT_EQ(r.timings.size(), 2u);
  EXPECT_NEAR(r.timings[0].first_token, pre, 1e-12);
  EXPECT_NEAR(r.timings[1].first_token, 2 * pre, 1e-12);  // its first token, kept
  EXPECT_NEAR(r.timings[0].finish, a, 1e-9);
  EXPECT_NEAR(r.timings[1].finish, b, 1e-9);
  // With 138 blocks (2 x ceil(1,099 / 16) = 2 x 69) nobody is evicted and B finishes with A;
  // 2,200 tokens would be 137 blocks, one short.
  InferenceConfig roomy = c;
  roomy.kv_cache_tokens = 2200;
  EXPECT_EQ(simulate_inference(hgx(), roomy).preemptions, 1u);
  roomy.kv_cache_tokens = 138 * 16;
  const InferenceResult q = simulate_inference(hgx(), roomy);
  EXPECT_EQ(q.preemptions, 0u);
  EXPECT_NEAR(q.timings[1].finish, q.timings[0].finish, 1e-12);
  EXPECT_LT(q.timings[1].finish, r.timings[1].finish);
}

TEST(InferenceServe, RefusesALayoutThatMissesTheGpus) {
  const InferenceConfig c = config(
      "type: inference\nmodel: llama3-8b\ntp: 4\n"
      "requests: {prompt: 8, output: 8, rate: 1, count: 1}\n");
  EXPECT_THROW(simulate_inference(hgx(), c), InputError);
}

// Mixtral 8x7B (32 layers, all MoE, 8 experts, top 2) at TP 8 = EP 8, a decode batch of 16:
// each layer one attention all-reduce, one dispatch (3 us) and one combine (5 us): 32 x 8 us.
TEST(InferenceStep, ExpertParallelLayersCallDispatchAndCombine) {
  const InferenceConfig c = config(
      "type: inference\nmodel: mixtral-8x7b\ntp: 8\nep: 8\n"
      "requests: {prompt: 512, output: 8, rate: 1, count: 1}\nbatching: {max_batch: 16}\n");
  auto comm = std::make_shared<FixedComm>();
  InferenceStepModel m(hgx(), c, comm);
  const StepCost d = m.decode(std::vector<std::uint64_t>(16, 512));
  EXPECT_NEAR(d.ep, 32 * 8e-6, 1e-12);
  EXPECT_NEAR(d.tp, 32 * m.tp_all_reduce(16 * 4096 * 2), 1e-12);
  EXPECT_EQ(comm->last.tokens, std::vector<std::uint64_t>(8, 2));  // 16 tokens over 8 ranks
  EXPECT_EQ(comm->last.top_k, 2u);
  EXPECT_EQ(comm->last.ranks.size(), 8u);
}

// Disaggregated Llama 3 8B on 2 servers (8 + 8 GPUs, TP 8): one request's KV cache is
// 32 layers x 8 KV heads x (128 + 128) x 2 B = 131,072 B per token, x 1,024 = 128 MiB, sent over
// 8 GPU pairs; its second token comes one transfer (1 ms here) and one decode step after the first.
TEST(InferenceServe, DisaggregatedRequestWaitsForItsKvCache) {
  static const Topology two = testing::ndr_h100_nodes(2, 8);
  const InferenceConfig c = config(
      "type: inference\nmodel: llama3-8b\ntp: 8\n"
      "requests: {prompt: 1024, output: 2, concurrency: 1, count: 1}\n"
      "disaggregated: {prefill_gpus: 8, decode_gpus: 8}\n");
  auto comm = std::make_shared<FixedComm>();
  const InferenceResult r = simulate_inference(two, c, testing::options_with(comm, false));
  InferenceStepModel m(two, c, comm);
  EXPECT_EQ(comm->kv_bytes, 134'217'728u);
  EXPECT_EQ(comm->pairs, 8u);
  EXPECT_DOUBLE_EQ(r.ttft.p50, m.prefill({1024}).seconds);
  EXPECT_NEAR(r.e2e.p50, r.ttft.p50 + 1e-3 + m.decode({1025}).seconds, 1e-12);
}

// The busiest of R ranks when N token-slots fall uniformly over them: E[max] of the multinomial,
// here by enumerating every split of 16 slots (8 tokens x top 2) over 4 ranks:
// sum of 16! / (a! b! c! d!) / 4^16 x max(a, b, c, d) = 6.13901448...
TEST(ExpectedMaxLoad, MultinomialMaximumByEnumeration) {
  double expect = 0, total = 0;
  auto fact = [](int n) { return std::tgamma(n + 1.0); };
  for (int a = 0; a <= 16; ++a)
    for (int b = 0; a + b <= 16; ++b)
      for (int c = 0; a + b + c <= 16; ++c) {
        const int d = 16 - a - b - c;
        const double p = fact(16) / (fact(a) * fact(b) * fact(c) * fact(d)) / std::pow(4.0, 16);
        total += p;
        expect += p * std::max({a, b, c, d});
      }
  EXPECT_NEAR(total, 1, 1e-12);
  EXPECT_NEAR(expect, 6.139014482498169, 1e-12);
  EXPECT_NEAR(expected_max_load(16, 4), expect, 1e-9);
  EXPECT_DOUBLE_EQ(expected_max_load(16, 1), 16);  // one rank takes everything
  EXPECT_NEAR(expected_max_load(1, 8), 1, 1e-12);  // one slot: its rank has 1
  // Two slots on two ranks: both on one with probability 1/2: E[max] = 1.5.
  EXPECT_NEAR(expected_max_load(2, 2), 1.5, 1e-12);
  // The Gaussian limit takes over above 256 slots, continuing the exact values.
  EXPECT_NEAR(expected_max_load(257, 8) / expected_max_load(256, 8), 257.0 / 256, 0.01);
}

// Top-k picks distinct experts: with E = 4 experts on R = 4 ranks (one each) and k = 2, one
// expert's load over T tokens is Binomial(T, k / E = 1/2) (each token picks it at most once).
//   T = 1: two ranks hold 1 slot, two 0: the busiest holds exactly 1 (the independent draws
//   put both slots on one rank 1/4 of the time: 1.25).
//   T = 2: the busiest holds 2 unless the second token picks the first one's complement
//   (1 of the 6 pairs): 2 x 5/6 + 1 x 1/6 = 11/6.
//   T = 3: 3 if some expert is in all three (P = 1/8 each, Binomial(3, 1/2) = 3; two at once
//   means all three tokens pick the same pair, (1/6)^3), by inclusion-exclusion
//   4/8 - 6/216 = 17/36; else 2 (6 slots over 4 ranks): 2 + 17/36 = 2.4722.
// E = 4, k = 2 on R = 2 ranks of 2 experts, T = 1: both slots on one rank 2 of 6 pairs: E[max]
// = 2 x 1/3 + 1 x 2/3 = 4/3, and that rank's slots reach 2 experts (tied 1-1: 1): 4/3 too.
// k = E: every token visits every expert, every rank takes T x E / R slots.
// The sampler's error at these sizes: the max's spread (under 1 slot) / sqrt(2^18 / slots trials).
TEST(ExpectedBusiestRank, TopKPicksDistinctExperts) {
  const BusiestRank one = expected_busiest_rank(1, 2, 4, 4);
  EXPECT_DOUBLE_EQ(one.slots, 1);
  EXPECT_DOUBLE_EQ(one.experts, 1);
  EXPECT_NEAR(expected_busiest_rank(2, 2, 4, 4).slots, 11.0 / 6, 0.01);
  EXPECT_NEAR(expected_busiest_rank(3, 2, 4, 4).slots, 2 + 17.0 / 36, 0.01);
  const BusiestRank two = expected_busiest_rank(1, 2, 4, 2);
  EXPECT_NEAR(two.slots, 4.0 / 3, 0.01);
  EXPECT_NEAR(two.experts, 4.0 / 3, 0.01);
  EXPECT_DOUBLE_EQ(expected_busiest_rank(5, 4, 4, 2).slots, 10);
  // Independent draws overcount: T = 1 gives 1.25 there.
  EXPECT_NEAR(expected_max_load(2, 4), 1.25, 1e-12);
  // With k = 1 nothing is drawn twice: the sampler meets the exact multinomial maximum.
  EXPECT_NEAR(expected_busiest_rank(16, 1, 8, 4).slots, expected_max_load(16, 4), 0.02);
  // One rank: every slot, and the experts reached, 1 - (1 - k/E)^T of each: 8 tokens, top 2 of
  // 8: 8 x (1 - (3/4)^8) = 7.19966.
  const BusiestRank all = expected_busiest_rank(8, 2, 8, 1);
  EXPECT_DOUBLE_EQ(all.slots, 16);
  EXPECT_NEAR(all.experts, 8 * (1 - std::pow(0.75, 8)), 1e-12);
  // The Gaussian limit above 256 slots continues the sampled values (the spread shrunk by
  // (E - k) / (E - 1)), and stays below the independent draws' figure.
  const double below = expected_busiest_rank(128, 2, 8, 4).slots;
  const double above = expected_busiest_rank(129, 2, 8, 4).slots;
  EXPECT_NEAR(above / below, 129.0 / 128, 0.01);
  EXPECT_LT(above, expected_max_load(258, 4));
  // 8 tokens, top 2 of 8 experts on 4 ranks: 5.953 (docs/inference.md, by convolution over the
  // 28^8 choices), below the independent draws' 6.139.
  EXPECT_NEAR(expected_busiest_rank(8, 2, 8, 4).slots, 5.953, 0.02);
}

// Mixtral 8x7B (8 experts of 3 x 4096 x 14336 = 176,160,768 weights, top 2) at TP 4, a decode
// batch of 8. Experts split over the TP ranks (ep 1), a rank reads 1/4 of each expert hit: a
// token misses an expert with probability 6/8, so 8 x (1 - (3/4)^8) = 7.1997 of them are hit.
// Experts whole on EP 4 ranks (2 each): the busiest rank reads the experts its slots reach (B,
// above: about 1.97). Both memory-bound (the GEMMs: 2 x 176 M x 6 slots at 791 TFLOP/s = 2.7
// us), so per layer the step grows by 176,160,768 x 2 B x (B - 7.1997 / 4) / 3.015e12.
TEST(InferenceStep, ExpertParallelStepWaitsForTheBusiestRank) {
  const std::string job =
      "type: inference\nmodel: mixtral-8x7b\ntp: 4\n"
      "requests: {prompt: 512, output: 8, rate: 1, count: 1}\nbatching: {max_batch: 16}\n";
  auto comm = std::make_shared<FixedComm>();
  const InferenceConfig split = config(job), whole = config(job + "ep: 4\n");
  InferenceStepModel tp(hgx(), split, comm);
  InferenceStepModel ep(hgx(), whole, comm);
  const std::vector<std::uint64_t> batch(8, 512);
  const BusiestRank b = expected_busiest_rank(8, 2, 8, 4);
  EXPECT_GT(b.experts, 1.9);
  EXPECT_LE(b.experts, 2);
  const double ex = 176'160'768.0 * 2;
  const double hit_tp = 8 * (1 - std::pow(6.0 / 8, 8));
  const double per_layer = ex * (b.experts - hit_tp / 4) / (0.9 * 3.35e12);
  EXPECT_NEAR(ep.decode(batch).compute - tp.decode(batch).compute, 32 * per_layer, 1e-12);
  EXPECT_GT(per_layer, 0);  // the busiest rank reads more than the average one
}

}  // namespace
}  // namespace lockstep
