// Parameter counts of the presets against their published totals, derived layer by layer.
#include "lockstep/workload/model.hpp"

#include <gtest/gtest.h>

#include "lockstep/config/arg_node.hpp"
#include "lockstep/core/error.hpp"
#include "lockstep/workload/step_plan.hpp"

namespace lockstep {
namespace {

TEST(Model, Llama3_8bHas8_03BillionParameters) {
  // Attention 4096 x 128 x (2x32 + 2x8) = 41,943,040; SwiGLU 3 x 4096 x 14336 = 176,160,768;
  // 32 layers of 218,103,808 = 6,979,321,856; embedding + head 2 x 128256 x 4096 = 1,050,673,152.
  EXPECT_EQ(model_preset("llama3-8b").total_params(), 8'029'995'008ULL);
}

TEST(Model, Llama3_70bHas70_6BillionParameters) {
  // Attention 8192 x 128 x (128 + 16) = 150,994,944; MLP 3 x 8192 x 28672 = 704,643,072;
  // 80 x 855,638,016 = 68,451,041,280; embeddings 2 x 128256 x 8192 = 2,101,346,304.
  EXPECT_EQ(model_preset("llama3-70b").total_params(), 70'552'387'584ULL);
}

TEST(Model, Llama3_405bHas405_8BillionParameters) {
  // Attention 16384 x 128 x (256 + 16) = 570,425,344; MLP 3 x 16384 x 53248 = 2,617,245,696;
  // 126 x 3,187,671,040 = 401,646,551,040; embeddings 2 x 128256 x 16384 = 4,202,692,608.
  EXPECT_EQ(model_preset("llama3-405b").total_params(), 405'849'243'648ULL);
}

TEST(Model, Gpt3Has175BillionParameters) {
  // 4h^2 + 8h^2 = 12 x 12288^2 = 1,811,939,328 per layer x 96, plus one tied 50257 x 12288 table.
  EXPECT_EQ(model_preset("gpt3-175b").total_params(), 174'563'733'504ULL);
}

TEST(Model, MixtralTotalAndActiveParameters) {
  // Per layer: attention 41,943,040 + router 4096 x 8 + 8 experts x 176,160,768; active: 2 of 8.
  const ModelSpec m = model_preset("mixtral-8x7b");
  EXPECT_EQ(m.total_params(), 46'702'526'464ULL);
  EXPECT_EQ(m.active_params(), 12'879'659'008ULL);
}

TEST(Model, DeepSeekV3Has671BTotal37BActive) {
  const ModelSpec m = model_preset("deepseek-v3");
  EXPECT_NEAR(static_cast<double>(m.total_params()), 671e9, 671e9 * 0.01);
  EXPECT_NEAR(static_cast<double>(m.active_params()), 37e9, 37e9 * 0.02);
}

// DeepSeek-V3's multi-token-prediction module (arXiv:2412.19437 section 2.2, depth 1), forward
// FLOPs per token at seq 4096: its block, a MoE layer like the last, 2 x active weights = 2 x
// (MLA 187,105,280 + router 1,835,008 + 9 experts x 44,040,192) = 1,170,604,032, plus the core
// 2 x 4096 x 128 x (192 + 128) = 335,544,320; the projection 2 x 2h x h = 4 x 7168^2 =
// 205,520,896; the shared head 2 x 7168 x 129,280 = 1,853,358,080: 3,565,027,328 in all. The
// training count takes it 3 times over the model's; the 671B total leaves the module out.
TEST(Model, DeepSeekV3MtpModuleFlops) {
  ModelSpec m = model_preset("deepseek-v3");
  EXPECT_EQ(m.mtp_layers, 1u);
  EXPECT_DOUBLE_EQ(m.mtp_forward_flops_per_token(4096), 3'565'027'328.0);
  const double with = m.train_flops_per_token(4096);
  m.mtp_layers = 0;
  EXPECT_DOUBLE_EQ(m.mtp_forward_flops_per_token(4096), 0.0);
  EXPECT_NEAR(with - m.train_flops_per_token(4096), 3 * 3'565'027'328.0, 1e-3);
  EXPECT_EQ(model_preset("kimi-k2").mtp_layers, 0u);
}

TEST(Model, SeventyBillionParametersHave140GBOfBf16Gradients) {
  // The seed: "for a 70B parameter model, that's ~140GB of data". With tp = pp = 1 every rank
  // holds all gradients at 2 bytes each: 2 x 70,552,387,584 = 141,104,775,168 bytes.
  TrainConfig c;
  c.model = model_preset("llama3-70b");
  c.par.dp = 8;
  c.global_batch = 8;
  const StepPlan plan = make_step_plan(c, 989e12);
  std::uint64_t grads = 0;
  for (Bytes b : plan.layer_grad_bytes) grads += b.count();
  EXPECT_EQ(grads, 141'104'775'168ULL);
  std::uint64_t bucketed = 0;
  for (const auto& b : plan.buckets[0]) bucketed += b.bytes.count();
  EXPECT_EQ(bucketed, grads);  // buckets partition the gradients
}

TEST(Model, TrainingFlopsAreSixTimesActiveParametersPlusAttention) {
  // 6N + 12 x layers x heads x head_dim x seq (PaLM appendix B) for llama3-8b at seq 8192,
  // where N leaves out the input embedding (a table lookup, no FLOPs) but keeps the output head.
  const ModelSpec m = model_preset("llama3-8b");
  const double n = static_cast<double>(m.active_params() - 128256ULL * 4096);
  const double expected = 6.0 * n + 12.0 * 32 * 4096 * 8192;
  EXPECT_DOUBLE_EQ(m.train_flops_per_token(8192), expected);
}

TEST(Model, UnknownPresetAndBadCustomModelAreInputErrors) {
  EXPECT_THROW(model_preset("llama9"), InputError);
  ArgNode node = ArgNode::map("job.model");
  node.set("layers", ArgNode::scalar("4", "job.model.layers"));
  node.set("hidden", ArgNode::scalar("1000", "job.model.hidden"));
  node.set("ffn", ArgNode::scalar("4000", "job.model.ffn"));
  node.set("heads", ArgNode::scalar("3", "job.model.heads"));
  node.set("vocab", ArgNode::scalar("100", "job.model.vocab"));
  node.set("seq", ArgNode::scalar("128", "job.model.seq"));
  try {
    parse_model(node);
    FAIL() << "1000 is not a multiple of 3 heads";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("multiple of heads"), std::string::npos);
  }
}

}  // namespace
}  // namespace lockstep
