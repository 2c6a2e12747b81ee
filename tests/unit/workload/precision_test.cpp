// precision: fp8 / fp4 weight GEMMs at the datasheet's dense peak, the attention core and the
// output layer at BF16, MFU against the BF16 peak. Times derived by hand from test_cluster.hpp's
// tiny model: per token, weight GEMMs 2 x 12 Mi = 24 Mi FLOPs, attention core
// 4 x 1024 x 8 x 128 = 4 Mi, head 28 Mi; 1024 tokens per micro-batch.
#include <gtest/gtest.h>

#include "lockstep/config/arg_node.hpp"
#include "lockstep/core/error.hpp"
#include "lockstep/topology/builder.hpp"
#include "lockstep/topology/catalog.hpp"
#include "lockstep/workload/step_plan.hpp"
#include "lockstep/workload/train_config.hpp"
#include "lockstep/workload/training.hpp"
#include "test_cluster.hpp"

namespace lockstep {
namespace {

using testing::reference_options;
using testing::star_cluster;
using testing::tiny_config;

constexpr double kMi = 1024.0 * 1024.0;

TEST(Precision, DatasheetDensePeaks) {
  // H100 SXM: FP8 3,958 TFLOPS with sparsity = 1,979 dense; A100 has no FP8 tensor cores;
  // B200: FP4 144 PFLOPS sparse per 8 GPUs = 9 PF dense per GPU.
  EXPECT_DOUBLE_EQ(gpu_spec("h100").fp8_dense_flops, 1979e12);
  EXPECT_DOUBLE_EQ(gpu_spec("h100").fp4_dense_flops, 0);
  EXPECT_DOUBLE_EQ(gpu_spec("a100").fp8_dense_flops, 0);
  EXPECT_DOUBLE_EQ(gpu_spec("b200").fp4_dense_flops, 9e15);
  EXPECT_DOUBLE_EQ(gpu_spec("mi300x").fp8_dense_flops, 2614.9e12);
}

TEST(Precision, Fp8LayerForwardOnH100RunsTheGemmsAtTheFp8Peak) {
  // efficiency 0.5. BF16: (24 + 4) Mi x 1024 / (989e12 x 0.5) = 60.80 us. FP8: the 24 Mi GEMM
  // FLOPs per token at 1979e12 x 0.5, the 4 Mi attention core still at 989e12 x 0.5.
  TrainConfig c = tiny_config(1, 1, 1, 1);
  c.efficiency = 0.5;
  const StepPlan bf16 = make_step_plan(c, 989e12);
  const StepPlan fp8 = make_step_plan(c, 989e12, 1979e12);
  const double gemm = 24 * kMi * 1024, core = 4 * kMi * 1024;
  EXPECT_NEAR(bf16.forward[0].seconds(), (gemm + core) / (989e12 * 0.5), 1e-12);
  EXPECT_NEAR(fp8.forward[0].seconds(), gemm / (1979e12 * 0.5) + core / (989e12 * 0.5), 1e-12);
  EXPECT_NEAR(fp8.backward[0].seconds(), 2 * fp8.forward[0].seconds(), 1e-12);
  // The output layer stays BF16: 28 Mi x 1024 / (989e12 x 0.5) in both.
  EXPECT_NEAR(fp8.head_forward.seconds(), 28 * kMi * 1024 / (989e12 * 0.5), 1e-12);
  EXPECT_EQ(fp8.head_forward, bf16.head_forward);
  EXPECT_DOUBLE_EQ(fp8.model_flops_per_iteration, bf16.model_flops_per_iteration);
}

TEST(Precision, MfuStaysAgainstTheBf16Peak) {
  // One H100, tiny model at a BF16 rate of 28 Gi FLOP per ms: layer F 1 ms, B 2 ms, head the
  // same, 9 ms in BF16 (MFU 100%). FP8 (peak_tflops override keeps H100's 1979 / 989 ratio):
  // layer F = 24/28 x 989/1979 + 4/28 ms; iteration 2 x 3 x F + 3 ms; MFU = 9 ms / iteration.
  TrainConfig c = tiny_config(1, 1, 1, 1);
  c.precision = Precision::Fp8;
  const TrainResult r = simulate_training(star_cluster(1, 1), c,
                                          reference_options(Time::zero(), Bandwidth::gbps(400)));
  const double f = 24.0 / 28 * 989 / 1979 + 4.0 / 28;
  const double t = 6 * f + 3;  // ms
  EXPECT_NEAR(r.iteration.seconds(), t * 1e-3, 1e-9);
  EXPECT_NEAR(r.mfu, 9 / t, 1e-6);
}

Topology one_a100() {
  TopologyBuilder b("one");
  ClusterTraits traits;
  traits.gpu = "a100";
  traits.gpus_per_node = 1;
  b.set_traits(traits);
  Device d;
  d.kind = DeviceKind::Gpu;
  b.add_device(d);
  return std::move(b).build();
}

TEST(Precision, AFormatTheGpuLacksIsAnErrorNamingPrecisionAndTheGpu) {
  TrainConfig c = tiny_config(1, 1, 1, 1);
  c.precision = Precision::Fp8;
  c.precision_field = "job.precision";
  try {
    simulate_training(one_a100(), c, reference_options(Time::zero(), Bandwidth::gbps(400)));
    FAIL() << "fp8 on an A100 ran";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("job.precision"), std::string::npos) << what;
    EXPECT_NE(what.find("a100"), std::string::npos) << what;
    EXPECT_NE(what.find("fp8"), std::string::npos) << what;
  }
  c.precision = Precision::Fp4;  // H100: FP8 but no FP4
  EXPECT_THROW(simulate_training(star_cluster(1, 1), c,
                                 reference_options(Time::zero(), Bandwidth::gbps(400))),
               InputError);
}

TEST(Precision, ParsesTheJobKey) {
  auto job = [](const char* precision) {
    ArgNode m = ArgNode::map("job", {"s.yaml", 3, 1});
    m.set("model", ArgNode::scalar("llama3-8b", "job.model", {"s.yaml", 4, 3}));
    m.set("global_batch", ArgNode::scalar("8", "job.global_batch", {"s.yaml", 5, 3}));
    if (precision)
      m.set("precision", ArgNode::scalar(precision, "job.precision", {"s.yaml", 6, 3}));
    return m;
  };
  EXPECT_EQ(parse_train_config(job(nullptr)).precision, Precision::Bf16);
  EXPECT_EQ(parse_train_config(job("fp8")).precision, Precision::Fp8);
  EXPECT_EQ(parse_train_config(job("fp4")).precision, Precision::Fp4);
  try {
    parse_train_config(job("fp16"));
    FAIL() << "fp16 accepted";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("job.precision"), std::string::npos) << what;
    EXPECT_NE(what.find("s.yaml:6:3"), std::string::npos) << what;
  }
}

}  // namespace
}  // namespace lockstep
