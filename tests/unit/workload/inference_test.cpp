// Inference serving (docs/inference.md): the job's validation, the step model against numbers
// derived by hand from the model card and the H100 datasheet, and properties of the request
// simulation (queueing, determinism, a slow GPU).
#include "lockstep/workload/inference.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "lockstep/config/arg_node.hpp"
#include "lockstep/config/yaml_reader.hpp"
#include "lockstep/core/error.hpp"
#include "test_cluster.hpp"

namespace lockstep {
namespace {

InferenceConfig config(const std::string& yaml) {
  return parse_inference_config(parse_yaml_args(yaml, "s.yaml", "job"));
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

// Llama 3 70B at TP 8: 40,960 B of K and V per token per GPU (80 layers x 1 KV head x 256 x 2 B);
// 80 GiB x 0.9 less the weights leaves room for about 1.46 M tokens, not 512 x 4,096 = 2.1 M.
TEST(InferenceServe, RefusesABatchWhoseKvCacheDoesNotFit) {
  const InferenceConfig c = config(
      "type: inference\nmodel: llama3-70b\ntp: 8\n"
      "requests: {prompt: 4000, output: 96, rate: 1, count: 1}\n"
      "batching: {max_batch: 512}\n");
  try {
    simulate_inference(hgx(), c);
    FAIL() << "expected the KV cache refused";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("job.batching.max_batch"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("s.yaml:5:"), std::string::npos) << e.what();
  }
  InferenceStepModel m(hgx(), c);
  EXPECT_DOUBLE_EQ(m.kv_bytes_per_token_per_gpu(), 40'960);
}

TEST(InferenceServe, RefusesALayoutThatMissesTheGpus) {
  const InferenceConfig c = config(
      "type: inference\nmodel: llama3-8b\ntp: 4\n"
      "requests: {prompt: 8, output: 8, rate: 1, count: 1}\n");
  EXPECT_THROW(simulate_inference(hgx(), c), InputError);
}

}  // namespace
}  // namespace lockstep
