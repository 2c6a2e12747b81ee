#include "lockstep/workload/model.hpp"

#include <fmt/format.h>

#include <functional>
#include <map>

#include "lockstep/config/arg_node.hpp"
#include "lockstep/core/error.hpp"

namespace lockstep {
namespace {

ModelSpec llama(std::string name, std::uint32_t layers, std::uint64_t hidden, std::uint64_t ffn,
                std::uint32_t heads) {
  ModelSpec m;
  m.name = std::move(name);
  m.layers = layers;
  m.hidden = hidden;
  m.ffn = ffn;
  m.heads = heads;
  m.kv_heads = 8;
  m.vocab = 128256;
  m.seq = 8192;
  return m;
}

// Published architectures. Llama 3: "The Llama 3 Herd of Models", Dubey et al. 2024
// (arXiv:2407.21783), Table 3, and the Hugging Face config.json of meta-llama/Meta-Llama-3.1-*
// (vocab 128256, 8 KV heads, sequence 8192 in pre-training).
const std::map<std::string, std::function<ModelSpec()>>& presets() {
  static const std::map<std::string, std::function<ModelSpec()>> table = {
      {"llama3-8b", [] { return llama("llama3-8b", 32, 4096, 14336, 32); }},
      {"llama3-70b", [] { return llama("llama3-70b", 80, 8192, 28672, 64); }},
      {"llama3-405b", [] { return llama("llama3-405b", 126, 16384, 53248, 128); }},
      // GPT-3 175B: Brown et al. 2020 (arXiv:2005.14165) Table 2.1: 96 layers, d_model 12288,
      // 96 heads of 128, d_ff = 4 d_model, context 2048; GPT-2 BPE vocabulary of 50257, tied
      // input/output embeddings, GELU MLP.
      {"gpt3-175b",
       [] {
         ModelSpec m;
         m.name = "gpt3-175b";
         m.layers = 96;
         m.hidden = 12288;
         m.ffn = 4 * 12288;
         m.heads = 96;
         m.kv_heads = 96;
         m.vocab = 50257;
         m.seq = 2048;
         m.gated_mlp = false;
         m.tied_embeddings = true;
         return m;
       }},
      // Mixtral 8x7B: Jiang et al. 2024 (arXiv:2401.04088) Table 1: 32 layers, dim 4096,
      // hidden_dim 14336, 32 heads, 8 KV heads, vocab 32000, 8 experts, top-2, context 32768.
      {"mixtral-8x7b",
       [] {
         ModelSpec m;
         m.name = "mixtral-8x7b";
         m.layers = 32;
         m.hidden = 4096;
         m.ffn = 14336;
         m.heads = 32;
         m.kv_heads = 8;
         m.vocab = 32000;
         m.seq = 32768;
         m.experts = 8;
         m.top_k = 2;
         return m;
       }},
      // DeepSeek-V3: DeepSeek-AI 2024 (arXiv:2412.19437) section 4.2: 61 layers, hidden 7168,
      // 128 heads of 128, MLA with KV compression 512 and query compression 1536 (decoupled
      // RoPE 64); all but the first 3 layers MoE with 1 shared + 256 routed experts of inner
      // size 2048, 8 active; dense layers' FFN 18432 (config.json); vocab 129280; sequence
      // 4096 in pre-training. Totals: 671B parameters, 37B activated per token.
      {"deepseek-v3",
       [] {
         ModelSpec m;
         m.name = "deepseek-v3";
         m.layers = 61;
         m.hidden = 7168;
         m.ffn = 18432;
         m.heads = 128;
         m.kv_heads = 128;
         m.head_dim = 128;
         m.vocab = 129280;
         m.seq = 4096;
         m.experts = 256;
         m.top_k = 8;
         m.shared_experts = 1;
         m.expert_ffn = 2048;
         m.dense_layers = 3;
         // MLA weights: W_DQ 7168x1536, W_UQ 1536x(128x192), W_DKV 7168x(512+64),
         // W_UKV 512x(128x256), W_O (128x128)x7168.
         m.attention_params = 7168ULL * 1536 + 1536ULL * 128 * 192 + 7168ULL * 576 +
                              512ULL * 128 * 256 + 128ULL * 128 * 7168;
         return m;
       }},
  };
  return table;
}

}  // namespace

std::uint64_t ModelSpec::attention_params_per_layer() const {
  if (attention_params) return attention_params;
  return hidden * head_size() * (2ULL * heads + 2ULL * kv_heads);
}

std::uint64_t ModelSpec::dense_mlp_params() const {
  return (gated_mlp ? 3 : 2) * hidden * ffn;
}

std::uint64_t ModelSpec::expert_params() const {
  return (gated_mlp ? 3 : 2) * hidden * (expert_ffn ? expert_ffn : ffn);
}

std::uint64_t ModelSpec::layer_params(std::uint32_t layer) const {
  if (!is_moe_layer(layer)) return attention_params_per_layer() + dense_mlp_params();
  const std::uint64_t router = hidden * experts;
  return attention_params_per_layer() + router +
         (std::uint64_t{experts} + shared_experts) * expert_params();
}

std::uint64_t ModelSpec::layer_active_params(std::uint32_t layer) const {
  if (!is_moe_layer(layer)) return layer_params(layer);
  return attention_params_per_layer() + hidden * experts +
         (std::uint64_t{top_k} + shared_experts) * expert_params();
}

std::uint64_t ModelSpec::embedding_params() const {
  return (tied_embeddings ? 1 : 2) * vocab * hidden;
}

std::uint64_t ModelSpec::total_params() const {
  std::uint64_t sum = embedding_params();
  for (std::uint32_t l = 0; l < layers; ++l) sum += layer_params(l);
  return sum;
}

std::uint64_t ModelSpec::active_params() const {
  std::uint64_t sum = embedding_params();
  for (std::uint32_t l = 0; l < layers; ++l) sum += layer_active_params(l);
  return sum;
}

double ModelSpec::layer_forward_flops_per_token(std::uint32_t layer, std::uint64_t s) const {
  const double weights = 2.0 * static_cast<double>(layer_active_params(layer));
  const double attention = 4.0 * static_cast<double>(s) * heads * head_size();
  return weights + attention;
}

double ModelSpec::head_forward_flops_per_token() const {
  return 2.0 * static_cast<double>(vocab) * static_cast<double>(hidden);
}

double ModelSpec::train_flops_per_token(std::uint64_t s) const {
  double forward = head_forward_flops_per_token();
  for (std::uint32_t l = 0; l < layers; ++l) forward += layer_forward_flops_per_token(l, s);
  return 3.0 * forward;
}

void ModelSpec::validate(const std::string& field) const {
  auto need = [&](bool ok, const char* what) {
    if (!ok) throw InputError(field, fmt::format("model '{}': {}", name, what));
  };
  need(layers > 0, "layers must be positive");
  need(hidden > 0 && ffn > 0, "hidden and ffn must be positive");
  need(heads > 0 && kv_heads > 0, "heads and kv_heads must be positive");
  need(heads % kv_heads == 0, "heads must be a multiple of kv_heads");
  need(head_dim > 0 || hidden % heads == 0, "hidden must be a multiple of heads");
  need(vocab > 0 && seq > 0, "vocab and seq must be positive");
  need(!is_moe() || (top_k > 0 && top_k <= experts), "top_k must lie in 1..experts");
  need(dense_layers <= layers, "dense_layers exceeds layers");
}

std::vector<std::string> model_preset_names() {
  std::vector<std::string> names;
  for (const auto& [name, make] : presets()) names.push_back(name);
  return names;
}

ModelSpec model_preset(const std::string& name, const std::string& field) {
  auto it = presets().find(name);
  if (it == presets().end()) {
    throw InputError(field, fmt::format("unknown model '{}' (expected one of {}, or custom)", name,
                                        fmt::join(model_preset_names(), ", ")));
  }
  return it->second();
}

ModelSpec parse_model(const ArgNode& node) {
  if (node.kind() == ArgNode::Kind::Scalar) {
    try {
      return model_preset(node.text(), node.path());
    } catch (const InputError& e) {
      node.fail(e.bare_message());
    }
  }
  ModelSpec m;
  if (const ArgNode* preset = node.find("preset")) {
    try {
      m = model_preset(preset->text(), preset->path());
    } catch (const InputError& e) {
      preset->fail(e.bare_message());
    }
  }
  constexpr std::int64_t kBig = std::int64_t{1} << 40;
  m.name = node.get_string("name", m.name);
  m.layers = static_cast<std::uint32_t>(node.get_int("layers", m.layers, 1, 100000));
  m.hidden = static_cast<std::uint64_t>(
      node.get_int("hidden", static_cast<std::int64_t>(m.hidden), 1, kBig));
  m.ffn =
      static_cast<std::uint64_t>(node.get_int("ffn", static_cast<std::int64_t>(m.ffn), 1, kBig));
  m.heads = static_cast<std::uint32_t>(node.get_int("heads", m.heads, 1, 1 << 20));
  m.kv_heads = static_cast<std::uint32_t>(
      node.get_int("kv_heads", m.kv_heads ? m.kv_heads : m.heads, 1, 1 << 20));
  m.head_dim = static_cast<std::uint32_t>(node.get_int("head_dim", m.head_dim, 0, 1 << 20));
  m.vocab = static_cast<std::uint64_t>(
      node.get_int("vocab", static_cast<std::int64_t>(m.vocab), 1, kBig));
  m.seq =
      static_cast<std::uint64_t>(node.get_int("seq", static_cast<std::int64_t>(m.seq), 1, kBig));
  m.experts = static_cast<std::uint32_t>(node.get_int("experts", m.experts, 0, 1 << 20));
  m.top_k = static_cast<std::uint32_t>(node.get_int("top_k", m.top_k, 0, 1 << 20));
  m.shared_experts =
      static_cast<std::uint32_t>(node.get_int("shared_experts", m.shared_experts, 0, 1 << 10));
  m.expert_ffn = static_cast<std::uint64_t>(
      node.get_int("expert_ffn", static_cast<std::int64_t>(m.expert_ffn), 0, kBig));
  m.dense_layers =
      static_cast<std::uint32_t>(node.get_int("dense_layers", m.dense_layers, 0, 100000));
  m.gated_mlp = node.get_bool("gated_mlp", m.gated_mlp);
  m.tied_embeddings = node.get_bool("tied_embeddings", m.tied_embeddings);
  m.validate(node.path());
  return m;
}

}  // namespace lockstep
