// Every preset's parameter count against the total (and, for mixtures of experts, the active
// count) its authors published. Counts leave out norms, biases and position embeddings
// (< 0.1%); the per-layer figures in the comments are derived by hand from model.cpp's fields.
#include <gtest/gtest.h>

#include <algorithm>

#include "lockstep/core/error.hpp"
#include "lockstep/workload/model.hpp"

namespace lockstep {
namespace {

struct Published {
  const char* name;
  double total;   // parameters
  double active;  // per token; 0 for a dense model
  double tolerance;
  const char* source;
};

// Sources (Nemotron-3 8B and NeMo's 22B have no published count, only names that round: their
// rows check the hand count): Llama 2 paper (arXiv:2307.09288) Table 1 and the Hugging Face model
// cards (6.74B / 13.0B / 69.0B with norms); Llama 3 (arXiv:2407.21783) 8.03B / 70.6B / 405.9B;
// GPT-3 (arXiv:2005.14165) 175.0B; NeMo's GPT-3 5B and 20B by their names; Megatron GPT
// (arXiv:2104.04473 Table 1, formula 12lh^2(1 + 13/12h + (V+s)/12lh): 1.65B for the row printed
// "1.7") and 22B (arXiv:2205.05198 Table 3); Nemotron-4 15B (arXiv:2402.16819: 3.2B embedding +
// 12.5B non-embedding) and 340B (arXiv:2406.11704: 9.4B + 331.6B); Mixtral 8x7B (arXiv:2401.04088:
// 47B / 13B) and 8x22B (Mistral AI's release: 141B / 39B); Qwen3 (arXiv:2505.09388 Table 2:
// 30.5B / 3.3B and 235B / 22B); GPT-OSS (model card, arXiv:2508.10925 Table 1: 116.83B / 5.13B
// and 20.91B / 3.61B, active counting the unembedding but not the embedding); DeepSeek-V3
// (arXiv:2412.19437: 671B / 37B); Kimi K2 (arXiv:2507.20534 Table 2: 1.04T / 32.6B).
const Published kPublished[] = {
    {"llama2-7b", 6.74e9, 0, 0.01, "Llama 2 model card"},
    {"llama2-13b", 13.0e9, 0, 0.01, "Llama 2 model card"},
    {"llama2-70b", 69.0e9, 0, 0.01, "Llama 2 model card"},
    {"llama3-8b", 8.03e9, 0, 0.01, "Llama 3 model card"},
    {"llama3.1-8b", 8.03e9, 0, 0.01, "Llama 3.1 model card"},
    {"llama3-70b", 70.6e9, 0, 0.01, "Llama 3 model card"},
    {"llama3.1-70b", 70.6e9, 0, 0.01, "Llama 3.1 model card"},
    {"llama3-405b", 405.9e9, 0, 0.01, "Llama 3.1 model card"},
    {"llama3.1-405b", 405.9e9, 0, 0.01, "Llama 3.1 model card"},
    {"gpt3-5b", 5e9, 0, 0.01, "NeMo GPT-3 5B"},
    {"gpt3-20b", 20e9, 0, 0.015, "NeMo GPT-3 20B"},
    {"gpt3-175b", 175.0e9, 0, 0.01, "GPT-3 Table 2.1"},
    {"megatron-gpt-1.7b", 1.65e9, 0, 0.01, "arXiv:2104.04473 Table 1 (formula)"},
    {"megatron-gpt-3.6b", 3.6e9, 0, 0.015, "arXiv:2104.04473 Table 1"},
    {"megatron-gpt-7.5b", 7.5e9, 0, 0.01, "arXiv:2104.04473 Table 1"},
    {"megatron-gpt-18b", 18.4e9, 0, 0.01, "arXiv:2104.04473 Table 1"},
    {"megatron-gpt-22b", 22e9, 0, 0.01, "arXiv:2205.05198 Table 3"},
    {"megatron-gpt-39b", 39.1e9, 0, 0.01, "arXiv:2104.04473 Table 1"},
    {"megatron-gpt-76b", 76.1e9, 0, 0.01, "arXiv:2104.04473 Table 1"},
    {"megatron-gpt-145b", 145.6e9, 0, 0.01, "arXiv:2104.04473 Table 1"},
    {"megatron-gpt-310b", 310.1e9, 0, 0.01, "arXiv:2104.04473 Table 1"},
    {"megatron-gpt-530b", 529.6e9, 0, 0.01, "arXiv:2104.04473 Table 1"},
    {"megatron-gpt-1t", 1008.0e9, 0, 0.01, "arXiv:2104.04473 Table 1"},
    {"nemotron4-15b", 15.7e9, 0, 0.01, "Nemotron-4 15B report"},
    {"nemotron3-8b", 8.54e9, 0, 0.01, "no published count: 32 x 201,326,592 + 2 x 256000 x 4096"},
    {"nemotron3-22b", 21.27e9, 0, 0.01, "no published count: 40 x 452,984,832 + 2 x 256000 x 6144"},
    {"nemotron4-340b", 341.0e9, 0, 0.01, "Nemotron-4 340B report"},
    {"mixtral-8x7b", 46.7e9, 12.9e9, 0.01, "Mixtral paper"},
    {"mixtral-8x22b", 141e9, 39e9, 0.01, "Mistral AI release"},
    {"qwen3-30b-a3b", 30.5e9, 3.3e9, 0.02, "Qwen3 report"},
    {"qwen3-235b-a22b", 235e9, 22e9, 0.01, "Qwen3 report"},
    {"gpt-oss-20b", 20.91e9, 3.61e9, 0.01, "gpt-oss model card"},
    {"gpt-oss-120b", 116.83e9, 5.13e9, 0.01, "gpt-oss model card"},
    {"deepseek-v3", 671e9, 37e9, 0.015, "DeepSeek-V3 report"},
    {"kimi-k2", 1.04e12, 32.6e9, 0.015, "Kimi K2 report"},
};

TEST(ModelPresets, EveryPresetMatchesItsPublishedSize) {
  for (const Published& p : kPublished) {
    SCOPED_TRACE(p.name);
    const ModelSpec m = model_preset(p.name);
    m.validate("model");
    EXPECT_NEAR(static_cast<double>(m.total_params()), p.total, p.total * p.tolerance) << p.source;
    if (p.active == 0) {
      EXPECT_FALSE(m.is_moe());
      continue;
    }
    // GPT-OSS's card counts the unembedding but not the embedding (a table lookup).
    const bool card_drops_embedding = std::string(p.name).rfind("gpt-oss", 0) == 0;
    const double active = static_cast<double>(m.active_params()) -
                          (card_drops_embedding ? static_cast<double>(m.vocab * m.hidden) : 0.0);
    EXPECT_NEAR(active, p.active, p.active * p.tolerance) << p.source;
  }
}

TEST(ModelPresets, EveryPresetIsTested) {
  for (const std::string& name : model_preset_names()) {
    EXPECT_TRUE(std::any_of(std::begin(kPublished), std::end(kPublished),
                            [&](const Published& p) { return name == p.name; }))
        << name << " has no published size in kPublished";
  }
}

TEST(ModelPresets, Llama2ExactCounts) {
  // 7B: attention 4 x 4096^2 = 67,108,864 + SwiGLU 3 x 4096 x 11008 = 135,266,304, x 32 layers
  // = 6,476,005,376; embedding + head 2 x 32000 x 4096 = 262,144,000.
  EXPECT_EQ(model_preset("llama2-7b").total_params(), 6'738'149'376ULL);
  // 70B: GQA attention 8192 x 128 x (128 + 16) = 150,994,944 + 704,643,072, x 80
  // = 68,451,041,280; 2 x 32000 x 8192 = 524,288,000.
  EXPECT_EQ(model_preset("llama2-70b").total_params(), 68'975'329'280ULL);
}

TEST(ModelPresets, Nemotron4_340bHas331_6BNonEmbeddingParameters) {
  // Heads of 18432 / 96 = 192: attention 18432 x 192 x (192 + 16) = 736,100,352; squared-ReLU
  // MLP 2 x 18432 x 73728 = 2,717,908,992; x 96 layers = 331,584,897,024 (the report's 331.6B).
  const ModelSpec m = model_preset("nemotron4-340b");
  EXPECT_EQ(m.total_params() - m.embedding_params(), 331'584'897'024ULL);
  EXPECT_EQ(m.embedding_params(), 2ULL * 256000 * 18432);  // 9.4B, untied
}

TEST(ModelPresets, Qwen3_30bA3bCounts) {
  // Attention 2048 x 128 x (2 x 32 + 2 x 4) = 18,874,368; router 2048 x 128 = 262,144; expert
  // 3 x 2048 x 768 = 4,718,592. Layer: 18,874,368 + 262,144 + 128 x 4,718,592 = 623,116,288,
  // x 48 = 29,909,581,824; embeddings 2 x 151936 x 2048 = 622,329,856. Active: 8 experts,
  // 56,885,248 x 48 = 2,730,491,904 + 622,329,856.
  const ModelSpec m = model_preset("qwen3-30b-a3b");
  EXPECT_EQ(m.total_params(), 30'531'911'680ULL);
  EXPECT_EQ(m.active_params(), 3'352'821'760ULL);
}

TEST(ModelPresets, KimiK2MlaWeights) {
  // MLA with 64 heads: W_DQ 7168 x 1536 = 11,010,048; W_UQ 1536 x 64 x 192 = 18,874,368;
  // W_DKV 7168 x 576 = 4,128,768; W_UKV 512 x 64 x 256 = 8,388,608; W_O 64 x 128 x 7168
  // = 58,720,256: 101,122,048.
  EXPECT_EQ(model_preset("kimi-k2").attention_params_per_layer(), 101'122'048ULL);
  // DeepSeek-V3's, with 128 heads, as the preset gave it explicitly before.
  EXPECT_EQ(model_preset("deepseek-v3").attention_params_per_layer(),
            7168ULL * 1536 + 1536ULL * 128 * 192 + 7168ULL * 576 + 512ULL * 128 * 256 +
                128ULL * 128 * 7168);
}

TEST(ModelPresets, SlidingWindowLayersAttendToTheWindowOnly) {
  // gpt-oss: layer 0 slides (window 128), layer 1 is global. At seq 4096, per token: 2 x span x
  // 64 heads x (64 + 64): 2,097,152 on layer 0, 67,108,864 on layer 1.
  const ModelSpec m = model_preset("gpt-oss-120b");
  EXPECT_EQ(m.attention_span(0, 4096), 128U);
  EXPECT_EQ(m.attention_span(1, 4096), 4096U);
  EXPECT_EQ(m.attention_span(0, 100), 100U);  // a sequence shorter than the window
  EXPECT_DOUBLE_EQ(m.attention_score_flops_per_token(0, 4096), 2'097'152.0);
  EXPECT_DOUBLE_EQ(m.attention_score_flops_per_token(1, 4096), 67'108'864.0);
}

TEST(ModelPresets, MlaScoresUseTheRotaryPartAndValueWidth) {
  // DeepSeek-V3: queries/keys of 128 + 64, values of 128: 2 x 4096 x 128 x (192 + 128)
  // = 335,544,320 per token at seq 4096 (ordinary attention of 128-wide heads: 268,435,456).
  EXPECT_DOUBLE_EQ(model_preset("deepseek-v3").attention_score_flops_per_token(5, 4096),
                   335'544'320.0);
}

TEST(ModelPresets, UnknownNameListsEveryPreset) {
  try {
    model_preset("llama9");
    FAIL() << "llama9 is no preset";
  } catch (const InputError& e) {
    const std::string what = e.what();
    for (const std::string& name : model_preset_names()) {
      EXPECT_NE(what.find(name), std::string::npos) << name;
    }
  }
}

}  // namespace
}  // namespace lockstep
