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
  // Mixture of experts: 0 experts means a dense model.
  std::uint32_t experts = 0;
  std::uint32_t top_k = 0;
  std::uint32_t shared_experts = 0;  // always-active experts (DeepSeek)
  std::uint64_t expert_ffn = 0;      // inner size of one expert (0: ffn)
  std::uint32_t dense_layers = 0;    // leading layers that stay dense in an MoE model
  // Attention parameters per layer when they do not follow the GQA formula (DeepSeek's MLA);
  // 0 means hidden * head_dim * (2 * heads + 2 * kv_heads).
  std::uint64_t attention_params = 0;

  bool is_moe() const { return experts > 0; }
  std::uint64_t head_size() const { return head_dim ? head_dim : hidden / heads; }
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

  /// Training FLOPs per token of one layer, forward only, at sequence length `seq`: 2 per
  /// active weight plus the attention score and value products 4 * seq * heads * head_dim
  /// (PaLM's accounting, Chowdhery et al. 2022, appendix B, without the causal halving).
  double layer_forward_flops_per_token(std::uint32_t layer, std::uint64_t seq) const;
  /// Forward FLOPs per token of the output head (2 * vocab * hidden).
  double head_forward_flops_per_token() const;
  /// Forward+backward FLOPs per token of the whole model (3x forward), the MFU numerator.
  double train_flops_per_token(std::uint64_t seq) const;

  /// Throws InputError naming `field` if a size is zero or inconsistent.
  void validate(const std::string& field) const;
};

/// Names of the presets, for --help and error messages.
std::vector<std::string> model_preset_names();
/// A preset by name; InputError naming `field` for unknown names.
ModelSpec model_preset(const std::string& name, const std::string& field = "model");
/// A model from a scenario node: either a preset name (scalar) or a map with `preset:` and/or
/// the custom fields (layers, hidden, ffn, heads, kv_heads, head_dim, vocab, seq, experts,
/// top_k, shared_experts, expert_ffn, dense_layers, gated_mlp, tied_embeddings).
ModelSpec parse_model(const ArgNode& node);

}  // namespace lockstep
