// The `model:` map: every architectural field readable, a preset with overrides, the CLI's
// one-line form, and unknown keys refused where they stand.
#include <gtest/gtest.h>

#include "lockstep/config/arg_node.hpp"
#include "lockstep/config/yaml_reader.hpp"
#include "lockstep/core/error.hpp"
#include "lockstep/workload/model.hpp"

namespace lockstep {
namespace {

ModelSpec parse(const std::string& yaml) {
  return parse_model(parse_yaml_args(yaml, "m.yaml", "model"));
}

std::string error_of(const std::string& yaml) {
  try {
    parse(yaml);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

TEST(ModelParse, EveryFieldIsRead) {
  const ModelSpec m = parse(
      "name: tiny\nlayers: 6\nhidden: 512\nffn: 1024\nheads: 8\nkv_heads: 2\nhead_dim: 80\n"
      "vocab: 1000\nseq: 256\ngated_mlp: false\ntied_embeddings: true\ndropout: true\nexperts: 16\n"
      "top_k: 4\n"
      "shared_experts: 2\nexpert_ffn: 384\ndense_layers: 1\nq_lora_rank: 96\nkv_lora_rank: 64\n"
      "qk_rope_head_dim: 16\nv_head_dim: 48\nattention_params: 12345\nsliding_window: 32\n"
      "global_every: 3\n");
  EXPECT_EQ(m.name, "tiny");
  EXPECT_EQ(m.layers, 6U);
  EXPECT_EQ(m.hidden, 512U);
  EXPECT_EQ(m.ffn, 1024U);
  EXPECT_EQ(m.heads, 8U);
  EXPECT_EQ(m.kv_heads, 2U);
  EXPECT_EQ(m.head_dim, 80U);
  EXPECT_EQ(m.vocab, 1000U);
  EXPECT_EQ(m.seq, 256U);
  EXPECT_FALSE(m.gated_mlp);
  EXPECT_TRUE(m.tied_embeddings);
  EXPECT_TRUE(m.dropout);
  EXPECT_EQ(m.experts, 16U);
  EXPECT_EQ(m.top_k, 4U);
  EXPECT_EQ(m.shared_experts, 2U);
  EXPECT_EQ(m.expert_ffn, 384U);
  EXPECT_EQ(m.dense_layers, 1U);
  EXPECT_EQ(m.q_lora_rank, 96U);
  EXPECT_EQ(m.kv_lora_rank, 64U);
  EXPECT_EQ(m.qk_rope_head_dim, 16U);
  EXPECT_EQ(m.v_head_dim, 48U);
  EXPECT_EQ(m.attention_params, 12345U);
  EXPECT_EQ(m.sliding_window, 32U);
  EXPECT_EQ(m.global_every, 3U);
  // Layers 3 and 6 (1-based) attend to everything, the others to 32 tokens.
  EXPECT_EQ(m.attention_span(1, 256), 32U);
  EXPECT_EQ(m.attention_span(2, 256), 256U);
}

TEST(ModelParse, MlaDimsGiveTheAttentionWeights) {
  // 2 heads, hidden 64, nope 16 + rope 8, values 16, q rank 32, kv rank 24:
  // W_DQ 64x32 = 2048; W_UQ 32 x 2 x 24 = 1536; W_DKV 64 x (24 + 8) = 2048;
  // W_UKV 24 x 2 x (16 + 16) = 1536; W_O 2 x 16 x 64 = 2048: 9216.
  const std::string dims =
      "layers: 1\nhidden: 64\nffn: 128\nheads: 2\nhead_dim: 16\nvocab: 10\nseq: 8\n"
      "kv_lora_rank: 24\nqk_rope_head_dim: 8\nv_head_dim: 16\n";
  EXPECT_EQ(parse(dims + "q_lora_rank: 32\n").attention_params_per_layer(), 9216U);
  // Without a query rank W_Q is 64 x 2 x 24 = 3072 in place of 2048 + 1536.
  EXPECT_EQ(parse(dims).attention_params_per_layer(), 9216U - 3584U + 3072U);
}

TEST(ModelParse, PresetWithOverrides) {
  const ModelSpec m = parse("preset: llama3-70b\nlayers: 2\nseq: 4096\n");
  EXPECT_EQ(m.name, "llama3-70b");
  EXPECT_EQ(m.layers, 2U);
  EXPECT_EQ(m.seq, 4096U);
  EXPECT_EQ(m.hidden, 8192U);  // the rest is the preset's
  EXPECT_EQ(m.kv_heads, 8U);
  EXPECT_EQ(m.vocab, 128256U);
  // Two layers of 855,638,016 plus 2 x 128256 x 8192 = 2,101,346,304.
  EXPECT_EQ(m.total_params(), 3'812'622'336ULL);
}

TEST(ModelParse, MultiHeadAttentionFollowsTheHeadCount) {
  // GPT-3 has 96 KV heads for 96 heads: 64 heads make 64 KV heads, not a 96-group error.
  EXPECT_EQ(parse("preset: gpt3-175b\nheads: 64\n").kv_heads, 64U);
  // Llama 3 70B's 8 query groups stay 8.
  EXPECT_EQ(parse("preset: llama3-70b\nheads: 32\n").kv_heads, 8U);
}

TEST(ModelParse, UnknownKeyIsRefusedWithItsLocationAndTheAcceptedKeys) {
  const std::string what = error_of("preset: llama3-8b\nlayerz: 2\n");
  EXPECT_NE(what.find("m.yaml:2:9"), std::string::npos) << what;
  EXPECT_NE(what.find("model.layerz"), std::string::npos) << what;
  EXPECT_NE(what.find("unknown model key 'layerz' (accepted: preset, name, layers,"),
            std::string::npos)
      << what;
  EXPECT_NE(what.find("global_every, num_nextn_predict_layers, moe_max_nodes, moe_fp8_dispatch)"),
            std::string::npos)
      << what;
}

TEST(ModelParse, CliTextIsTheSameMap) {
  const ModelSpec m =
      parse_model(ArgNode::scalar("preset=mixtral-8x7b,layers=4,top_k=1", "--model"));
  EXPECT_EQ(m.layers, 4U);
  EXPECT_EQ(m.top_k, 1U);
  EXPECT_EQ(m.experts, 8U);
  EXPECT_THROW(parse_model(ArgNode::scalar("preset=llama3-8b,layerz=2", "--model")), InputError);
  EXPECT_THROW(parse_model(ArgNode::scalar("preset=llama3-8b,layers", "--model")), InputError);
}

TEST(ModelParse, InconsistentFieldsAreRefused) {
  EXPECT_NE(error_of("preset: llama3-8b\ntop_k: 2\n").find("need experts"), std::string::npos);
  EXPECT_NE(error_of("preset: llama3-8b\nglobal_every: 2\n").find("needs sliding_window"),
            std::string::npos);
  EXPECT_NE(error_of("preset: llama3-8b\nq_lora_rank: 64\n").find("need kv_lora_rank"),
            std::string::npos);
  EXPECT_NE(error_of("preset: nosuch\n").find("m.yaml:1:9"), std::string::npos);
}

TEST(ModelParse, HiddenOfATrillionIsRefusedAtHiddenNotWrapped) {
  // 2 layers x hidden 1e12: the embedding alone, 2 x 128256 x 1e12 = 2.6e17 parameters, passes
  // 1e15 (it wrapped around 2^64 to "weights 0.0 GB" before).
  const std::string what = error_of("preset: llama3-8b\nlayers: 2\nhidden: 1000000000000\n");
  EXPECT_NE(what.find("m.yaml:3:9: model.hidden: model 'llama3-8b' would hold"), std::string::npos)
      << what;
  EXPECT_NE(what.find("over lockstep's limit of 1e+15"), std::string::npos) << what;
}

TEST(ModelParse, EveryFieldAtItsLargestValueIsRefusedOrCountedWithoutWrapping) {
  // Each field at the largest value its reader takes (2^40 for 64-bit sizes, 2^20 for counts),
  // the others a preset's: either refused at that field, or read with the parameter count equal
  // to the same sum in long double (nothing wrapped). The MoE and MLA fields start from
  // DeepSeek-V3 so that they take part in the counts.
  struct Case {
    const char* preset;
    const char* field;
    const char* value;
  };
  const Case cases[] = {
      {"llama3-8b", "layers", "1048576"},
      {"llama3-8b", "hidden", "1099511627776"},
      {"llama3-8b", "ffn", "1099511627776"},
      {"llama3-8b", "heads", "1048576"},
      {"llama3-8b", "head_dim", "1048576"},
      {"llama3-8b", "vocab", "1099511627776"},
      {"llama3-8b", "seq", "1099511627776"},
      {"llama3-8b", "attention_params", "1099511627776"},
      {"llama3-8b", "sliding_window", "1099511627776"},
      {"deepseek-v3", "experts", "1048576"},
      {"deepseek-v3", "shared_experts", "1048576"},
      {"deepseek-v3", "expert_ffn", "1099511627776"},
      {"deepseek-v3", "q_lora_rank", "1099511627776"},
      {"deepseek-v3", "kv_lora_rank", "1099511627776"},
      {"deepseek-v3", "qk_rope_head_dim", "1048576"},
      {"deepseek-v3", "v_head_dim", "1048576"},
  };
  for (const Case& c : cases) {
    const std::string yaml =
        std::string("preset: ") + c.preset + "\n" + c.field + ": " + c.value + "\n";
    SCOPED_TRACE(yaml);
    try {
      const ModelSpec m = parse(yaml);
      // Accepted: the 64-bit count is exact (below 1e15, far from 2^64).
      const long double total = static_cast<long double>(m.total_params());
      EXPECT_LE(total, 1e15L);
      EXPECT_GE(m.total_params(), m.active_params());
      EXPECT_GE(m.total_params(), m.embedding_params());
    } catch (const InputError& e) {
      const std::string what = e.what();
      EXPECT_NE(
          what.find(std::string("m.yaml:2:") + std::to_string(std::string(c.field).size() + 3) +
                    ": model." + c.field + ":"),
          std::string::npos)
          << what;
    }
  }
  // Those that multiply into every layer's weights cannot be accepted at their maximum.
  for (const char* field : {"hidden", "ffn", "vocab"}) {
    EXPECT_NE(error_of(std::string("preset: llama3-8b\n") + field + ": 1099511627776\n")
                  .find("would hold"),
              std::string::npos)
        << field;
  }
}

}  // namespace
}  // namespace lockstep
