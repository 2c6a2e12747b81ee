#pragma once
// Transformer model descriptions for training-step simulation: the architecture numbers that
// decide parameter counts, FLOPs and activation sizes. Presets carry the published figures of
// their model cards and papers (cited in model.cpp); `custom` models give the same fields.
#include <cstdint>
#include <string>
#include <vector>

namespace lockstep {

class ArgNode;

struct ModelSpec {
  std::string name = "custom";
  std::uint32_t layers = 0;
  std::uint64_t hidden = 0;  // d_model
  std::uint64_t ffn = 0;     // MLP inner size of dense layers
  std::uint32_t heads = 0;
  std::uint32_t kv_heads = 0;  // grouped-query attention; == heads for multi-head attention
  std::uint32_t head_dim = 0;  // 0: hidden / heads
  std::uint64_t vocab = 0;
  std::uint64_t seq = 0;  // default training sequence length
  bool gated_mlp = true;  // SwiGLU (3 matrices) vs GELU MLP (2 matrices)
  bool tied_embeddings = false;
  // Dropout after attention and the MLP (Megatron-LM's GPT: hidden_dropout 0.1): the backward
  // keeps each mask, 1 byte per element. Llama, Nemotron-4, Mixtral and most recent families
  // train without it.
  bool dropout = false;
  // Mixture of experts: 0 experts means a dense model.
  std::uint32_t experts = 0;
  std::uint32_t top_k = 0;
  std::uint32_t shared_experts = 0;  // always-active experts (DeepSeek)
  std::uint64_t expert_ffn = 0;      // inner size of one expert (0: ffn)
  std::uint32_t dense_layers = 0;    // leading layers that stay dense in an MoE model
  // Multi-head latent attention (DeepSeek-V2/V3, Kimi K2), on when kv_lora_rank > 0, named as in
  // their config.json: queries and keys/values pass through low-rank projections; head_dim is
  // then the query/key part without rotary embedding (qk_nope_head_dim).
  std::uint64_t q_lora_rank = 0;  // 0: queries projected directly from hidden
  std::uint64_t kv_lora_rank = 0;
  std::uint32_t qk_rope_head_dim = 0;  // decoupled rotary part of each query/key head
  std::uint32_t v_head_dim = 0;        // 0: head_size()
  // Attention parameters per layer when given; 0 means the MLA formula above, else the GQA one
  // hidden * head_dim * (2 * heads + 2 * kv_heads).
  std::uint64_t attention_params = 0;
  // Sliding-window attention: layers attend to at most `sliding_window` earlier tokens (0: all),
  // except every `global_every`-th layer (1-based; 0: none) that attends to the whole sequence.
  // GPT-OSS alternates (window 128, every 2nd layer global); Mistral 7B slides in every layer.
  std::uint64_t sliding_window = 0;
  std::uint32_t global_every = 0;
  // Multi-token prediction (DeepSeek-V3, arXiv:2412.19437 section 2.2; config.json's
  // num_nextn_predict_layers): D sequential modules after the last layer, each a projection M
  // (2 hidden x hidden, of the last layer's output and the next token's embedding), one more
  // transformer block of the last layer's kind and the output head shared with the main model.
  // Trained with the model (the "main" totals leave them out, as the report's 671B does).
  std::uint32_t mtp_layers = 0;
  // Expert all-to-all as DeepSeek-V3 trained (arXiv:2412.19437): node-limited routing sends a
  // token to at most moe_max_nodes nodes (section 2.1.2, M = 4; config.json topk_group 4 of
  // n_group 8), crossing the network once per node and forwarded there over NVLink (section
  // 3.2.2, DeepEP's normal kernels); moe_fp8_dispatch sends dispatch activations in FP8, the
  // combine in BF16 (section 3.3.3). Either one prices EP in both expansions with DeepEP's
  // normal kernels (docs/moe-dispatch.md) instead of NCCL's all-to-all of all top-k copies.
  std::uint32_t moe_max_nodes = 0;  // 0: unrestricted
  bool moe_fp8_dispatch = false;
  bool deepep_training() const { return moe_max_nodes > 0 || moe_fp8_dispatch; }

  bool is_moe() const { return experts > 0; }
  std::uint64_t head_size() const { return head_dim ? head_dim : hidden / heads; }
  std::uint64_t qk_head_size() const { return head_size() + qk_rope_head_dim; }
  std::uint64_t v_head_size() const { return v_head_dim ? v_head_dim : head_size(); }
  bool is_mla() const { return kv_lora_rank > 0; }
  /// Tokens one query of `layer` attends to at sequence length `seq` (the window, if it slides).
  std::uint64_t attention_span(std::uint32_t layer, std::uint64_t seq) const;
  bool is_moe_layer(std::uint32_t layer) const { return is_moe() && layer >= dense_layers; }

  // Parameter counts (elements, not bytes).
  std::uint64_t attention_params_per_layer() const;
  std::uint64_t dense_mlp_params() const;                        // one dense MLP block
  std::uint64_t expert_params() const;                           // one routed expert
  std::uint64_t layer_params(std::uint32_t layer) const;         // everything stored
  std::uint64_t layer_active_params(std::uint32_t layer) const;  // used per token
  std::uint64_t embedding_params() const;  // input embedding (+ output head unless tied)
  std::uint64_t total_params() const;
  std::uint64_t active_params() const;

  /// Forward FLOPs per token of the attention score and value products of one layer:
  /// 2 * span * heads * (qk_head_size + v_head_size), i.e. 4 * seq * heads * head_dim for
  /// ordinary attention (PaLM's accounting, Chowdhery et al. 2022, appendix B, without the
  /// causal halving), with span = attention_span(layer, seq).
  double attention_score_flops_per_token(std::uint32_t layer, std::uint64_t seq) const;
  /// Training FLOPs per token of one layer, forward only, at sequence length `seq`: 2 per
  /// active weight plus attention_score_flops_per_token.
  double layer_forward_flops_per_token(std::uint32_t layer, std::uint64_t seq) const;
  /// Forward FLOPs per token of the output head (2 * vocab * hidden).
  double head_forward_flops_per_token() const;
  /// Forward FLOPs per token of the multi-token-prediction modules (0 without): per module its
  /// block (a layer like the last), the projection 2 x 2h x h and the shared head 2 vocab h.
  double mtp_forward_flops_per_token(std::uint64_t seq) const;
  /// Forward+backward FLOPs per token of the whole model (3x forward) with its MTP modules, the
  /// MFU numerator.
  double train_flops_per_token(std::uint64_t seq) const;

  /// The first size that is zero or inconsistent with another: the key to blame (nullptr when
  /// none) and why.
  struct Inconsistency {
    const char* key = nullptr;
    const char* what = "";
  };
  Inconsistency inconsistency() const;
  /// Throws InputError naming `field` if a size is zero or inconsistent.
  void validate(const std::string& field) const;
};

/// Names of the presets, for --help and error messages.
std::vector<std::string> model_preset_names();
/// A preset by name; InputError naming `field` for unknown names.
ModelSpec model_preset(const std::string& name, const std::string& field = "model");
/// The keys a `model:` map accepts: `preset`, `name` and every architectural field above.
const std::vector<std::string>& model_keys();
/// A model from a scenario node: a preset name (scalar), a map with `preset:` and/or any of
/// model_keys(), or the CLI's one-line form of that map ("preset=llama3-8b,layers=8"). Unknown
/// keys are refused at their location, listing model_keys().
ModelSpec parse_model(const ArgNode& node);

/// The CLI's "key=value,key=value" text of a flag (`--model preset=llama3-8b,layers=8`,
/// `--optimizer moments=bf16`) as the map a scenario file would give; errors name the flag and
/// key (--model.layers).
ArgNode key_value_map(const ArgNode& node);

}  // namespace lockstep
