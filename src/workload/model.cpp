#include "lockstep/workload/model.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <map>
#include <sstream>

#include "lockstep/config/arg_node.hpp"
#include "lockstep/core/error.hpp"

namespace lockstep {
namespace {

// A decoder of `layers` blocks; the remaining fields keep ModelSpec's defaults (SwiGLU MLP,
// untied embeddings, multi-head attention unless kv_heads says otherwise).
ModelSpec dense(std::string name, std::uint32_t layers, std::uint64_t hidden, std::uint64_t ffn,
                std::uint32_t heads, std::uint32_t kv_heads, std::uint64_t vocab,
                std::uint64_t seq) {
  ModelSpec m;
  m.name = std::move(name);
  m.layers = layers;
  m.hidden = hidden;
  m.ffn = ffn;
  m.heads = heads;
  m.kv_heads = kv_heads;
  m.vocab = vocab;
  m.seq = seq;
  return m;
}

// GPT-style: GELU MLP of 4 x hidden (2 matrices), multi-head attention, embeddings tied with the
// output layer (GPT-3; Megatron-LM and NeMo share them by default).
ModelSpec gpt(std::string name, std::uint32_t layers, std::uint64_t hidden, std::uint32_t heads,
              std::uint64_t vocab) {
  ModelSpec m = dense(std::move(name), layers, hidden, 4 * hidden, heads, heads, vocab, 2048);
  m.gated_mlp = false;
  m.tied_embeddings = true;
  m.dropout = true;  // Megatron-LM's GPT defaults, hidden and attention dropout 0.1
  return m;
}

ModelSpec moe(ModelSpec m, std::uint32_t experts, std::uint32_t top_k, std::uint64_t expert_ffn) {
  m.experts = experts;
  m.top_k = top_k;
  m.expert_ffn = expert_ffn;
  return m;
}

// Llama 3 and 3.1 share one architecture per size (3.1 only extends the context after
// pre-training): "The Llama 3 Herd of Models", Dubey et al. 2024 (arXiv:2407.21783), Table 3,
// and config.json of meta-llama/Llama-3.1-{8B,70B,405B}: vocab 128256, 8 KV heads, sequence 8192
// in pre-training.
ModelSpec llama3(std::string name, std::uint32_t layers, std::uint64_t hidden, std::uint64_t ffn,
                 std::uint32_t heads) {
  return dense(std::move(name), layers, hidden, ffn, heads, 8, 128256, 8192);
}

// Megatron-LM's GPT family: Narayanan et al. 2021 (arXiv:2104.04473), Table 1 (heads, hidden,
// layers; vocab 51200, sequence 2048), and Korthikanti et al. 2022 (arXiv:2205.05198), Table 3,
// for the 22B model of Megatron-LM's README (64 heads, hidden 6144, 48 layers).
ModelSpec megatron(std::string name, std::uint32_t layers, std::uint64_t hidden,
                   std::uint32_t heads) {
  return gpt(std::move(name), layers, hidden, heads, 51200);
}

// Nemotron-4: squared-ReLU MLP of 4 x hidden (2 matrices), GQA with 8 KV heads, vocab 256000,
// no dropout ("dropout rate of zero", Parmar et al. 2024, section 2),
// untied embeddings, sequence 4096.
ModelSpec nemotron4(std::string name, std::uint32_t layers, std::uint64_t hidden,
                    std::uint32_t heads) {
  ModelSpec m = dense(std::move(name), layers, hidden, 4 * hidden, heads, 8, 256000, 4096);
  m.gated_mlp = false;
  return m;
}

// Qwen3 MoE (config.json of Qwen/Qwen3-30B-A3B and Qwen/Qwen3-235B-A22B; Qwen3 Technical
// Report, arXiv:2505.09388, Table 2): 128 experts, 8 active, no shared expert, every layer MoE,
// 4 KV heads of 128, vocab 151936, untied; pre-training stages 1-2 at 4096 tokens.
ModelSpec qwen3(std::string name, std::uint32_t layers, std::uint64_t hidden, std::uint32_t heads,
                std::uint64_t expert_ffn) {
  ModelSpec m = moe(dense(std::move(name), layers, hidden, expert_ffn, heads, 4, 151936, 4096), 128,
                    8, expert_ffn);
  m.head_dim = 128;
  return m;
}

// GPT-OSS (OpenAI, "gpt-oss-120b & gpt-oss-20b Model Card", arXiv:2508.10925, and config.json of
// openai/gpt-oss-{20b,120b}): hidden 2880, 64 query heads and 8 KV heads of 64, SwiGLU experts
// of 2880, top-4, vocab 201088 (o200k_harmony), untied; attention alternates a 128-token band
// with full attention (layer_types: sliding first). Biases and attention sinks (~0.1% of the
// weights) are left out.
ModelSpec gpt_oss(std::string name, std::uint32_t layers, std::uint32_t experts) {
  ModelSpec m =
      moe(dense(std::move(name), layers, 2880, 2880, 64, 8, 201088, 4096), experts, 4, 2880);
  m.head_dim = 64;
  m.sliding_window = 128;
  m.global_every = 2;
  return m;
}

// DeepSeek-V3's layout, shared by Kimi K2 (config.json model_type deepseek_v3): hidden 7168,
// MLA with query rank 1536, KV rank 512, heads of 128 + 64 rotary, values of 128; routed experts
// of 2048 with one shared expert, 8 active; dense layers' FFN 18432; sequence 4096.
ModelSpec deepseek(std::string name, std::uint32_t heads, std::uint32_t experts,
                   std::uint32_t dense_layers, std::uint64_t vocab) {
  ModelSpec m =
      moe(dense(std::move(name), 61, 7168, 18432, heads, heads, vocab, 4096), experts, 8, 2048);
  m.head_dim = 128;
  m.q_lora_rank = 1536;
  m.kv_lora_rank = 512;
  m.qk_rope_head_dim = 64;
  m.v_head_dim = 128;
  m.shared_experts = 1;
  m.dense_layers = dense_layers;
  return m;
}

const std::map<std::string, std::function<ModelSpec()>>& presets() {
  static const std::map<std::string, std::function<ModelSpec()>> table = {
      // Llama 2: Touvron et al. 2023 (arXiv:2307.09288), and config.json of
      // meta-llama/Llama-2-{7b,13b,70b}-hf: vocab 32000, sequence 4096, GQA (8 KV heads) only
      // in 70B.
      {"llama2-7b", [] { return dense("llama2-7b", 32, 4096, 11008, 32, 32, 32000, 4096); }},
      {"llama2-13b", [] { return dense("llama2-13b", 40, 5120, 13824, 40, 40, 32000, 4096); }},
      {"llama2-70b", [] { return dense("llama2-70b", 80, 8192, 28672, 64, 8, 32000, 4096); }},
      {"llama3-8b", [] { return llama3("llama3-8b", 32, 4096, 14336, 32); }},
      {"llama3-70b", [] { return llama3("llama3-70b", 80, 8192, 28672, 64); }},
      {"llama3-405b", [] { return llama3("llama3-405b", 126, 16384, 53248, 128); }},
      {"llama3.1-8b", [] { return llama3("llama3.1-8b", 32, 4096, 14336, 32); }},
      {"llama3.1-70b", [] { return llama3("llama3.1-70b", 80, 8192, 28672, 64); }},
      {"llama3.1-405b", [] { return llama3("llama3.1-405b", 126, 16384, 53248, 128); }},
      // GPT-3 175B: Brown et al. 2020 (arXiv:2005.14165) Table 2.1: 96 layers, d_model 12288,
      // 96 heads of 128, d_ff = 4 d_model, context 2048; GPT-2 BPE vocabulary of 50257.
      {"gpt3-175b", [] { return gpt("gpt3-175b", 96, 12288, 96, 50257); }},
      // NeMo's GPT-3 5B and 20B (NeMo 2 GPTConfig5B / GPTConfig20B, the sizes of NeMo's
      // performance tables): 24 layers x 4096 x 32 heads; 44 layers x 6144 x 48 heads.
      {"gpt3-5b", [] { return gpt("gpt3-5b", 24, 4096, 32, 50257); }},
      {"gpt3-20b", [] { return gpt("gpt3-20b", 44, 6144, 48, 50257); }},
      {"megatron-gpt-1.7b", [] { return megatron("megatron-gpt-1.7b", 24, 2304, 24); }},
      {"megatron-gpt-3.6b", [] { return megatron("megatron-gpt-3.6b", 30, 3072, 32); }},
      {"megatron-gpt-7.5b", [] { return megatron("megatron-gpt-7.5b", 36, 4096, 32); }},
      {"megatron-gpt-18b", [] { return megatron("megatron-gpt-18b", 40, 6144, 48); }},
      {"megatron-gpt-22b", [] { return megatron("megatron-gpt-22b", 48, 6144, 64); }},
      {"megatron-gpt-39b", [] { return megatron("megatron-gpt-39b", 48, 8192, 64); }},
      {"megatron-gpt-76b", [] { return megatron("megatron-gpt-76b", 60, 10240, 80); }},
      {"megatron-gpt-145b", [] { return megatron("megatron-gpt-145b", 80, 12288, 96); }},
      {"megatron-gpt-310b", [] { return megatron("megatron-gpt-310b", 96, 16384, 128); }},
      {"megatron-gpt-530b", [] { return megatron("megatron-gpt-530b", 105, 20480, 128); }},
      {"megatron-gpt-1t", [] { return megatron("megatron-gpt-1t", 128, 25600, 160); }},
      // Nemotron-4 15B: Parmar et al. 2024 (arXiv:2402.16819), Table 1: 32 layers, hidden 6144,
      // 48 heads. Nemotron-4 340B: NVIDIA 2024 (arXiv:2406.11704), Table 1, and config of
      // nvidia/Nemotron-4-340B-Base: 96 layers, hidden 18432, 96 heads.
      {"nemotron4-15b", [] { return nemotron4("nemotron4-15b", 32, 6144, 48); }},
      // Nemotron-3 8B and NeMo's "Nemotron 22B" (NeMo 2 Nemotron3Config8B / Nemotron3Config22B,
      // the models of NeMo's performance tables): Nemotron-4's layout with multi-head attention
      // (no query groups); 32 layers x 4096 x 32 heads, 40 layers x 6144 x 48 heads. Their
      // names round: 8.5B and 21.3B parameters with the untied 256000-token vocabulary.
      {"nemotron3-8b",
       [] {
         ModelSpec m = nemotron4("nemotron3-8b", 32, 4096, 32);
         m.kv_heads = 32;
         return m;
       }},
      {"nemotron3-22b",
       [] {
         ModelSpec m = nemotron4("nemotron3-22b", 40, 6144, 48);
         m.kv_heads = 48;
         return m;
       }},
      {"nemotron4-340b", [] { return nemotron4("nemotron4-340b", 96, 18432, 96); }},
      // Mixtral 8x7B: Jiang et al. 2024 (arXiv:2401.04088) Table 1: 32 layers, dim 4096,
      // hidden_dim 14336, 32 heads, 8 KV heads, vocab 32000, 8 experts, top-2, context 32768.
      {"mixtral-8x7b",
       [] { return moe(dense("mixtral-8x7b", 32, 4096, 14336, 32, 8, 32000, 32768), 8, 2, 0); }},
      // Mixtral 8x22B: config.json of mistralai/Mixtral-8x22B-v0.1: 56 layers, hidden 6144,
      // intermediate 16384, 48 heads, 8 KV heads, vocab 32768, context 65536; 8 experts, top-2.
      {"mixtral-8x22b",
       [] { return moe(dense("mixtral-8x22b", 56, 6144, 16384, 48, 8, 32768, 65536), 8, 2, 0); }},
      {"qwen3-30b-a3b", [] { return qwen3("qwen3-30b-a3b", 48, 2048, 32, 768); }},
      {"qwen3-235b-a22b", [] { return qwen3("qwen3-235b-a22b", 94, 4096, 64, 1536); }},
      {"gpt-oss-20b", [] { return gpt_oss("gpt-oss-20b", 24, 32); }},
      {"gpt-oss-120b", [] { return gpt_oss("gpt-oss-120b", 36, 128); }},
      // DeepSeek-V3: DeepSeek-AI 2024 (arXiv:2412.19437) section 4.2: 61 layers, 128 heads,
      // 256 routed experts, first 3 layers dense, vocab 129280. Totals: 671B parameters, 37B
      // activated per token, without the one multi-token-prediction module it trains with
      // (section 2.2; depth D = 1 in section 4.2; config.json
      // num_nextn_predict_layers 1), counted apart (mtp_layers).
      {"deepseek-v3",
       [] {
         ModelSpec m = deepseek("deepseek-v3", 128, 256, 3, 129280);
         m.mtp_layers = 1;
         // Node-limited routing to 4 nodes (section 2.1.2), FP8 dispatch (section 3.3.3).
         m.moe_max_nodes = 4;
         m.moe_fp8_dispatch = true;
         return m;
       }},
      // Kimi K2: Kimi Team 2025 (arXiv:2507.20534), Table 2 against DeepSeek-V3, and config.json
      // of moonshotai/Kimi-K2-Base: 64 heads, 384 experts, first layer dense, vocab 163840.
      // Totals: 1.04T parameters, 32.6B activated.
      {"kimi-k2", [] { return deepseek("kimi-k2", 64, 384, 1, 163840); }},
  };
  return table;
}

}  // namespace

std::uint64_t ModelSpec::attention_params_per_layer() const {
  if (attention_params) return attention_params;
  if (is_mla()) {
    // DeepSeek-V2 (arXiv:2405.04434) section 2.1: W_DQ (hidden x q_rank) and W_UQ
    // (q_rank x heads x qk), or W_Q (hidden x heads x qk) without a query rank; W_DKV with the
    // shared rotary key (hidden x (kv_rank + rope)); W_UK, W_UV (kv_rank x heads x (nope + v));
    // W_O (heads x v x hidden).
    const std::uint64_t q_out = std::uint64_t{heads} * qk_head_size();
    const std::uint64_t q =
        q_lora_rank ? hidden * q_lora_rank + q_lora_rank * q_out : hidden * q_out;
    const std::uint64_t kv = hidden * (kv_lora_rank + qk_rope_head_dim) +
                             kv_lora_rank * heads * (head_size() + v_head_size());
    return q + kv + std::uint64_t{heads} * v_head_size() * hidden;
  }
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

std::uint64_t ModelSpec::attention_span(std::uint32_t layer, std::uint64_t s) const {
  const bool global = global_every > 0 && (layer + 1) % global_every == 0;
  return sliding_window > 0 && !global ? std::min(s, sliding_window) : s;
}

double ModelSpec::attention_score_flops_per_token(std::uint32_t layer, std::uint64_t s) const {
  return 2.0 * static_cast<double>(attention_span(layer, s)) * heads *
         static_cast<double>(qk_head_size() + v_head_size());
}

double ModelSpec::layer_forward_flops_per_token(std::uint32_t layer, std::uint64_t s) const {
  const double weights = 2.0 * static_cast<double>(layer_active_params(layer));
  return weights + attention_score_flops_per_token(layer, s);
}

double ModelSpec::head_forward_flops_per_token() const {
  return 2.0 * static_cast<double>(vocab) * static_cast<double>(hidden);
}

double ModelSpec::mtp_forward_flops_per_token(std::uint64_t s) const {
  if (mtp_layers == 0) return 0;
  const double h = static_cast<double>(hidden);
  const double module = layer_forward_flops_per_token(layers - 1, s) + 2.0 * 2.0 * h * h +
                        head_forward_flops_per_token();
  return mtp_layers * module;
}

double ModelSpec::train_flops_per_token(std::uint64_t s) const {
  double forward = head_forward_flops_per_token() + mtp_forward_flops_per_token(s);
  for (std::uint32_t l = 0; l < layers; ++l) forward += layer_forward_flops_per_token(l, s);
  return 3.0 * forward;
}

ModelSpec::Inconsistency ModelSpec::inconsistency() const {
  const std::pair<bool, Inconsistency> rules[] = {
      {layers > 0, {"layers", "layers must be positive"}},
      {hidden > 0 && ffn > 0, {hidden > 0 ? "ffn" : "hidden", "hidden and ffn must be positive"}},
      {heads > 0 && kv_heads > 0,
       {heads > 0 ? "kv_heads" : "heads", "heads and kv_heads must be positive"}},
      // (The rules are evaluated together: no division by a zero the rule above refuses.)
      {kv_heads == 0 || heads % kv_heads == 0,
       {"kv_heads", "heads must be a multiple of kv_heads"}},
      {head_dim > 0 || heads == 0 || hidden % heads == 0,
       {"heads", "hidden must be a multiple of heads"}},
      {vocab > 0 && seq > 0, {vocab > 0 ? "seq" : "vocab", "vocab and seq must be positive"}},
      {!is_moe() || (top_k > 0 && top_k <= experts), {"top_k", "top_k must lie in 1..experts"}},
      {dense_layers <= layers, {"dense_layers", "dense_layers exceeds layers"}},
      {is_moe() || (top_k == 0 && shared_experts == 0 && expert_ffn == 0),
       {top_k            ? "top_k"
        : shared_experts ? "shared_experts"
                         : "expert_ffn",
        "top_k, shared_experts and expert_ffn need experts"}},
      {is_mla() || (q_lora_rank == 0 && qk_rope_head_dim == 0),
       {q_lora_rank ? "q_lora_rank" : "qk_rope_head_dim",
        "q_lora_rank and qk_rope_head_dim need kv_lora_rank (multi-head latent attention)"}},
      {global_every == 0 || sliding_window > 0,
       {"global_every", "global_every needs sliding_window"}},
  };
  for (const auto& [ok, why] : rules) {
    if (!ok) return why;
  }
  return {};
}

void ModelSpec::validate(const std::string& field) const {
  const Inconsistency bad = inconsistency();
  if (bad.key) throw InputError(field, fmt::format("model '{}': {}", name, bad.what));
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

const std::vector<std::string>& model_keys() {
  static const std::vector<std::string> keys = [] {
    std::istringstream text(
        "preset name "  // where to start from, what to call it
        "layers hidden ffn heads kv_heads head_dim vocab seq gated_mlp tied_embeddings dropout "
        "experts top_k shared_experts expert_ffn dense_layers "  // mixtures of experts
        "q_lora_rank kv_lora_rank qk_rope_head_dim v_head_dim "  // latent attention
        "attention_params sliding_window global_every "
        "num_nextn_predict_layers "         // multi-token prediction
        "moe_max_nodes moe_fp8_dispatch");  // DeepSeek-V3's expert all-to-all
    std::vector<std::string> out;
    for (std::string key; text >> key;) out.push_back(key);
    return out;
  }();
  return keys;
}

namespace {

// The largest model lockstep accepts, in parameters: a thousand times the largest published one
// (Kimi K2, 1.04e12). Its byte counts (18 bytes per parameter with mixed-precision Adam, Megatron
// keeping two copies of the embedding table) stay far below 2^64, so no size derived from the
// model's dimensions wraps around.
constexpr long double kMaxParams = 1e15L;

// The parameter count of ModelSpec::total_params in long double, where no product of dimensions
// bounded as parse_model_map bounds them (2^40, 2^20) can overflow (2^40 x 2^41 x 2^20 x 2^20 x
// 2^20 stays within long double's range). An upper bound: every MoE layer counted with its
// experts, the embedding twice.
long double wide_params(const ModelSpec& m) {
  using W = long double;
  const W h = static_cast<W>(m.hidden), heads = m.heads, kv = m.kv_heads;
  const W head = static_cast<W>(m.head_dim ? m.head_dim : m.hidden / m.heads);
  const W qk = head + m.qk_rope_head_dim, v = m.v_head_dim ? m.v_head_dim : head;
  W attention = static_cast<W>(m.attention_params);
  if (attention == 0 && m.is_mla()) {
    const W q_rank = static_cast<W>(m.q_lora_rank), kv_rank = static_cast<W>(m.kv_lora_rank);
    attention = (q_rank > 0 ? h * q_rank + q_rank * heads * qk : h * heads * qk) +
                h * (kv_rank + m.qk_rope_head_dim) + kv_rank * heads * (head + v) + heads * v * h;
  } else if (attention == 0) {
    attention = h * head * (2 * heads + 2 * kv);
  }
  const W mlp = 3 * h * std::max(m.ffn, m.expert_ffn);
  const W experts = static_cast<W>(m.experts) + m.shared_experts;
  const W layer = attention + mlp + h * m.experts + experts * mlp;
  return 2 * static_cast<W>(m.vocab) * h + static_cast<W>(m.layers) * layer;
}

// Refuses a model whose parameter count passes kMaxParams at the field that makes it so: the
// largest of the dimensions the map gives (the others are a preset's or the defaults, which fit).
void check_model_size(const ArgNode& node, const ModelSpec& m) {
  const long double params = wide_params(m);
  if (params <= kMaxParams) return;
  const ArgNode* blame = nullptr;
  std::int64_t largest = 0;
  for (const char* key : {"hidden", "ffn", "expert_ffn", "vocab", "q_lora_rank", "kv_lora_rank",
                          "attention_params", "layers", "heads", "kv_heads", "head_dim",
                          "v_head_dim", "qk_rope_head_dim", "experts", "shared_experts"}) {
    const ArgNode* n = node.find(key);
    if (n == nullptr) continue;
    const std::int64_t value = n->as_int(0, INT64_MAX);
    if (blame == nullptr || value > largest) {
      blame = n;
      largest = value;
    }
  }
  const std::string why = fmt::format(
      "model '{}' would hold {:.3g} parameters, over lockstep's limit of {:.0e} (a thousand "
      "times the largest published model)",
      m.name, static_cast<double>(params), static_cast<double>(kMaxParams));
  (blame ? blame : &node)->fail(why);
}

ModelSpec parse_model_map(const ArgNode& node) {
  const auto& accepted = model_keys();
  for (const auto& key : node.keys()) {
    if (std::find(accepted.begin(), accepted.end(), key) == accepted.end()) {
      node.at(key).fail(
          fmt::format("unknown model key '{}' (accepted: {})", key, fmt::join(accepted, ", ")));
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
  auto u64 = [&](const char* key, std::uint64_t& field, std::int64_t min) {
    field =
        static_cast<std::uint64_t>(node.get_int(key, static_cast<std::int64_t>(field), min, kBig));
  };
  auto u32 = [&](const char* key, std::uint32_t& field, std::int64_t min) {
    field = static_cast<std::uint32_t>(node.get_int(key, field, min, 1 << 20));
  };
  m.name = node.get_string("name", m.name);
  u32("layers", m.layers, 1);
  u64("hidden", m.hidden, 1);
  u64("ffn", m.ffn, 1);
  // Multi-head attention (a custom model, or a preset without query groups) stays so when only
  // the head count changes.
  const bool mha = m.kv_heads == 0 || m.kv_heads == m.heads;
  u32("heads", m.heads, 1);
  if (mha) m.kv_heads = m.heads;
  u32("kv_heads", m.kv_heads, 1);
  u32("head_dim", m.head_dim, 0);
  u64("vocab", m.vocab, 1);
  u64("seq", m.seq, 1);
  m.gated_mlp = node.get_bool("gated_mlp", m.gated_mlp);
  m.tied_embeddings = node.get_bool("tied_embeddings", m.tied_embeddings);
  m.dropout = node.get_bool("dropout", m.dropout);
  u32("experts", m.experts, 0);
  u32("top_k", m.top_k, 0);
  u32("shared_experts", m.shared_experts, 0);
  u64("expert_ffn", m.expert_ffn, 0);
  u32("dense_layers", m.dense_layers, 0);
  u64("q_lora_rank", m.q_lora_rank, 0);
  u64("kv_lora_rank", m.kv_lora_rank, 0);
  u32("qk_rope_head_dim", m.qk_rope_head_dim, 0);
  u32("v_head_dim", m.v_head_dim, 0);
  u64("attention_params", m.attention_params, 0);
  u64("sliding_window", m.sliding_window, 0);
  u32("global_every", m.global_every, 0);
  u32("num_nextn_predict_layers", m.mtp_layers, 0);
  u32("moe_max_nodes", m.moe_max_nodes, 0);
  m.moe_fp8_dispatch = node.get_bool("moe_fp8_dispatch", m.moe_fp8_dispatch);
  // An inconsistency is reported at the key it names when the map gives it, else at the map.
  if (const ModelSpec::Inconsistency bad = m.inconsistency(); bad.key) {
    const ArgNode* key = node.find(bad.key);
    (key ? key : &node)->fail(fmt::format("model '{}': {}", m.name, bad.what));
  }
  check_model_size(node, m);
  return m;
}

}  // namespace

// The CLI's "--model preset=llama3-8b,layers=8" as the map a scenario file would give; errors
// name the flag and key (--model.layers).
ArgNode key_value_map(const ArgNode& node) {
  ArgNode map = ArgNode::map(node.path(), node.where());
  std::string_view rest = node.text();
  while (!rest.empty()) {
    const auto comma = rest.find(',');
    const std::string_view item = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
    const auto eq = item.find('=');
    if (eq == std::string_view::npos || eq == 0) {
      node.fail(fmt::format("'{}': expected key=value in '{}'", item, node.text()));
    }
    const std::string key(item.substr(0, eq));
    map.set(key, ArgNode::scalar(std::string(item.substr(eq + 1)), node.path() + "." + key,
                                 node.where()));
  }
  return map;
}

ModelSpec parse_model(const ArgNode& node) {
  if (node.kind() == ArgNode::Kind::Map) return parse_model_map(node);
  if (node.kind() != ArgNode::Kind::Scalar) node.fail("expected a preset name or a map");
  if (node.text().find('=') != std::string::npos) return parse_model_map(key_value_map(node));
  try {
    return model_preset(node.text(), node.path());
  } catch (const InputError& e) {
    node.fail(e.bare_message());
  }
}

}  // namespace lockstep
