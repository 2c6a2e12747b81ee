// Published training runs read as `lockstep train` jobs (training_row.hpp); the rules are in
// docs/training-calibration.md.
#include "lockstep/scenario/training_row.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <regex>
#include <string>

#include "lockstep/core/error.hpp"
#include "lockstep/scenario/calibration_row.hpp"
#include "lockstep/topology/catalog.hpp"
#include "lockstep/workload/model.hpp"

namespace lockstep {
namespace {

std::string lower(std::string s) {
  for (char& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}

std::string trim(const std::string& s) {
  const auto first = s.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return "";
  return s.substr(first, s.find_last_not_of(" \t\r\n") - first + 1);
}

// A number written "1,024" or "41.5%" or "736 TFLOP/s": its leading digits, commas dropped; NaN
// (not stated) when the text has no digit ("", "-", "n/a"), -1 when it does not start with one.
double number_of(const std::string& text) {
  std::string s;
  for (char ch : trim(text))
    if (ch != ',') s += ch;
  if (std::none_of(s.begin(), s.end(),
                   [](char ch) { return std::isdigit(static_cast<unsigned char>(ch)); }))
    return std::nan("");
  std::size_t used = 0;
  try {
    const double v = std::stod(s, &used);
    return v >= 0 ? v : -1;
  } catch (const std::exception&) {
    return -1;
  }
}

// A published figure: a number after "~", "about" or "approx." ("~40", "about 400") too.
double figure_of(const std::string& text) {
  static const std::regex approx(R"(^\s*(?:~|about|approx\.?|approximately|circa|ca\.)\s*)");
  return number_of(std::regex_replace(lower(text), approx, ""));
}

// A whole-number column: 0 when not stated; "16K" (GPUs) and "8k" (tokens) are 2^10 multiples, as
// those counts are; InputError naming the column otherwise.
std::uint64_t count_of(const std::string& text, const char* field) {
  double v = number_of(text);
  if (std::isnan(v)) return 0;
  static const std::regex kilo(R"(^\s*[\d.,]+\s*[kK]\b)");
  if (std::regex_search(text, kilo)) v *= 1024;
  if (v < 1 || v != std::floor(v) || v > 1e15) {
    throw InputError(field, fmt::format("'{}' is not a positive whole number", text));
  }
  return static_cast<std::uint64_t>(v);
}

// "gpt" for "gpt3", "llama3" for "llama3.1", "nemotron" for "nemotron3" and "nemotron4" (NeMo's
// tables write "Nemotron-8B" for Nemotron-3 8B and "Nemotron-340B" for Nemotron-4 340B): one
// family, one key.
std::string family_alias(std::string f) {
  static const std::map<std::string, std::string> aliases = {{"gpt3", "gpt"},
                                                             {"llama3.1", "llama3"},
                                                             {"nemotron3", "nemotron"},
                                                             {"nemotron4", "nemotron"}};
  const auto it = aliases.find(f);
  return it == aliases.end() ? f : it->second;
}

// 1000 -> "1t", 175 -> "175b", 1.5 -> "1.5b".
std::string size_text(double billions) {
  if (billions >= 1000 && std::fmod(billions, 1000) == 0)
    return fmt::format("{}t", billions / 1000);
  return fmt::format("{}b", billions);
}

std::uint32_t to_u32(std::uint64_t v, const char* field) {
  if (v > 1'000'000) throw InputError(field, fmt::format("{} is too large", v));
  return static_cast<std::uint32_t>(v);
}

}  // namespace

std::string model_key(const std::string& text) {
  std::string s = lower(text);
  for (const char* word : {"megatron", "meta", "nvidia"})
    if (const auto at = s.find(word); at != std::string::npos)
      s.erase(at, std::string(word).size());
  // The size: "175b", "1t", "8x7b", "30b-a3b", at a word start (not the "3b" of "a3b").
  static const std::regex size(
      R"((?:^|[^a-z0-9.])(\d+x)?(\d+(?:\.\d+)?)([bt])(?:[\s_-]*a(\d+(?:\.\d+)?)b)?(?![a-z0-9]))");
  std::smatch m;
  std::string family_text = s, sz;
  if (std::regex_search(s, m, size)) {
    family_text = m.prefix().str();
    const double n = std::stod(m[2].str()) * (m[3].str() == "t" ? 1000 : 1);
    sz = m[1].str() + size_text(n);
    if (m[4].matched) sz += "a" + size_text(std::stod(m[4].str()));
  }
  auto letters = [](const std::string& t) {
    std::string f;
    for (char ch : t)
      if (std::isalnum(static_cast<unsigned char>(ch)) || ch == '.') f += ch;
    while (!f.empty() && f.back() == '.') f.pop_back();
    return f;
  };
  std::string family = letters(family_text);
  if (family.empty() && !m.empty()) family = letters(m.suffix().str());  // "175B GPT-3"
  family = family_alias(family);
  return sz.empty() ? family : family + ":" + sz;
}

std::string read_row_model(const std::string& text) {
  const std::string key = model_key(text);
  const std::string family = key.substr(0, key.find(':'));
  for (const std::string& name : model_preset_names()) {
    const std::string preset = model_key(name);
    // A preset named without a size ("deepseek-v3") matches its family at any stated size.
    if (preset == key || (preset == family && preset.find(':') == std::string::npos)) return name;
  }
  throw InputError("model", fmt::format("no preset for '{}'", trim(text)));
}

RowBatch read_row_batch(const std::string& text, std::uint64_t seq) {
  const std::string s = lower(text);
  static const std::regex amount(
      R"(^\s*(\d[\d,]*(?:\.\d+)?)\s*([km])?\s*(tokens?|toks?|seqs?|sequences?|samples?)?)");
  static const std::regex mbs(R"((?:\bmbs|micro[\s_-]?batch(?:[\s_-]?size)?)\s*[=:]?\s*(\d+))");
  std::smatch m;
  if (!std::regex_search(s, m, amount)) {
    throw InputError("global_batch", fmt::format("no batch size in '{}'", trim(text)));
  }
  const double n = number_of(m[1].str());
  const std::string unit = m[3].str();
  const bool tokens_unit = !unit.empty() && unit[0] == 't';
  RowBatch b;
  std::smatch mm;
  if (std::regex_search(s, mm, mbs)) b.micro_batch = std::stoull(mm[1].str());
  // "4M tokens": 4,000,000 or 4 x 2^20, the one that makes whole sequences (Llama 3's 4M of 4,096
  // tokens is 1,024 sequences). A suffixed amount without a unit is tokens from 65,536 up ("4M");
  // "1K seqs" is 1,024 sequences (batches of sequences are powers of two, as GPU counts).
  double value = n;
  bool tokens_suffixed = false;
  if (m[2].matched) {
    const double decimal = n * (m[2].str() == "k" ? 1e3 : 1e6);
    const double binary = n * (m[2].str() == "k" ? 1024.0 : 1048576.0);
    tokens_suffixed = tokens_unit || (unit.empty() && decimal >= 65536);
    const auto whole = [&](double t) { return seq && std::fmod(t, static_cast<double>(seq)) == 0; };
    value = !tokens_suffixed || (!whole(decimal) && whole(binary)) ? binary : decimal;
  }
  if (value < 1 || value != std::floor(value)) {
    throw InputError("global_batch", fmt::format("'{}' is not a whole batch", trim(text)));
  }
  const auto v = static_cast<std::uint64_t>(value);
  const bool tokens =
      tokens_unit || tokens_suffixed || (unit.empty() && seq && v >= 65536 && v % seq == 0);
  if (!tokens) {
    b.sequences = v;
    return b;
  }
  if (seq == 0 || v % seq != 0) {
    throw InputError("global_batch",
                     fmt::format("{} tokens is not a whole number of {}-token sequences", v, seq));
  }
  b.sequences = v / seq;
  return b;
}

std::string read_row_precision(const std::string& text) {
  static const std::regex word(R"((?:^|[^a-z0-9])(?:nv|mx)?(fp8|fp4|bf16|fp16)(?![a-z0-9]))");
  const std::string s = lower(text);
  std::smatch m;
  if (!std::regex_search(s, m, word)) return "bf16";
  const std::string p = m[1].str();
  return p == "fp16" ? "bf16" : p;
}

std::string TrainingCase::command() const {
  std::string line =
      fmt::format("lockstep train --system {} --nodes {}", preset.system, preset.nodes);
  if (preset.gpus_per_node) line += fmt::format(" --gpus-per-node {}", preset.gpus_per_node);
  for (const auto& [key, value] : job) {
    std::string flag = key;
    for (char& ch : flag)
      if (ch == '_') ch = '-';
    line += fmt::format(" --{} {}", flag, value);
  }
  return line;
}

TrainingCase training_case(const TrainingRow& row, PublishedFigure figure) {
  TrainingCase c;
  c.model_text = trim(row.model);
  const std::string model_name = read_row_model(row.model);
  const ModelSpec model = model_preset(model_name);
  RowSystem system;
  try {
    system = read_row_system(row.gpu);
  } catch (const InputError&) {
    throw InputError("gpu", fmt::format("no system preset for '{}'", trim(row.gpu)));
  }
  const SystemPreset& sys = system_preset(system.preset, "gpu");
  const GpuSpec& gpu = gpu_spec(sys.gpu, "gpu");

  // Parallel degrees; 0 is "not stated".
  std::uint64_t tp = count_of(row.tp, "tp"), pp = count_of(row.pp, "pp"),
                dp = count_of(row.dp, "dp");
  const std::uint64_t cp = std::max<std::uint64_t>(count_of(row.cp, "cp"), 1);
  const std::uint64_t ep = std::max<std::uint64_t>(count_of(row.ep, "ep"), 1);
  const std::uint64_t vp = std::max<std::uint64_t>(count_of(row.vp, "vp"), 1);
  std::uint64_t gpus = count_of(row.gpus, "gpus");
  if (gpus == 0) {
    // "GPU count = TP*PP": the product, when every degree is stated.
    for (auto [v, field] : {std::pair{tp, "tp"}, {pp, "pp"}, {dp, "dp"}})
      if (v == 0) throw InputError(field, "not stated, nor the GPU count (gpus)");
    gpus = tp * pp * dp * cp;
  } else if (dp == 0) {
    for (auto [v, field] : {std::pair{tp, "tp"}, {pp, "pp"}})
      if (v == 0) throw InputError(field, "not stated, nor dp");
    if (gpus % (tp * pp * cp) != 0) {
      throw InputError("gpus", fmt::format("{} GPUs is not a multiple of tp x pp x cp = {}", gpus,
                                           tp * pp * cp));
    }
    dp = gpus / (tp * pp * cp);
  } else if (tp == 0 || pp == 0) {
    // A degree left out is the one that makes up the GPU count: 1 when the others already do.
    const std::uint64_t known = dp * cp * (tp ? tp : 1) * (pp ? pp : 1);
    if (tp == 0 && pp == 0 && gpus != known) {
      throw InputError("tp", "not stated, nor pp, and gpus is not dp x cp");
    }
    if (gpus % known != 0) {
      throw InputError("gpus", fmt::format("{} GPUs is not a multiple of {}", gpus, known));
    }
    if (tp == 0 && pp == 0) {
      tp = pp = 1;
    } else {
      (tp == 0 ? tp : pp) = gpus / known;
    }
  }
  if (tp * pp * dp * cp != gpus) {
    throw InputError("gpus", fmt::format("tp x pp x dp x cp = {} x {} x {} x {} is not {} GPUs", tp,
                                         pp, dp, cp, gpus));
  }
  c.gpus = to_u32(gpus, "gpus");

  c.preset.system = system.preset;
  const std::uint32_t per_node = sys.gpus_per_node;
  if (c.gpus < per_node) {
    c.preset.gpus_per_node = c.gpus;
  } else if (c.gpus % per_node != 0) {
    throw InputError("gpus", fmt::format("{} GPUs is not whole {}-GPU nodes of {}", c.gpus,
                                         per_node, system.preset));
  }
  c.preset.nodes = std::max<std::uint32_t>(c.gpus / per_node, 1);

  const std::uint64_t seq = count_of(row.seq_len, "seq_len");
  const std::uint64_t seq_used = seq ? seq : model.seq;
  if (trim(row.global_batch).empty()) throw InputError("global_batch", "not stated");
  const RowBatch batch = read_row_batch(row.global_batch, seq_used);

  auto add = [&](const char* key, const std::string& value) { c.job.emplace_back(key, value); };
  add("model", model_name);
  add("tp", std::to_string(tp));
  add("pp", std::to_string(pp));
  add("dp", std::to_string(dp));
  if (cp > 1) add("cp", std::to_string(cp));
  if (ep > 1) add("ep", std::to_string(ep));
  if (const std::uint64_t etp = count_of(row.etp, "etp"); etp > 0) add("etp", std::to_string(etp));
  if (vp > 1) add("interleave", std::to_string(vp));
  add("global_batch", std::to_string(batch.sequences));
  add("micro_batch", std::to_string(batch.micro_batch ? batch.micro_batch : 1));
  add("seq", std::to_string(seq_used));
  // Megatron's distributed optimizer (NeMo's default) shards the optimizer state: ZeRO-1.
  add("zero", "1");
  const std::string notes = lower(row.notes);
  if (notes.find("full recompute") != std::string::npos ||
      notes.find("full activation recomputation") != std::string::npos) {
    add("recompute", "true");
  } else if (notes.find("selective recompute") != std::string::npos ||
             notes.find("selective activation recomputation") != std::string::npos) {
    add("recompute", "selective");
  }
  // Megatron-Core's names of the modules a run recomputed ("recompute_modules=layernorm+
  // mla_up_proj": DeepSeek-V3's RMSNorm and MLA up-projections, its section 3.2.3).
  static const std::regex modules(R"(recompute_modules\s*=\s*([a-z_]+(?:\+[a-z_]+)*))");
  std::smatch listed;
  if (std::regex_search(notes, listed, modules)) {
    std::string list = listed[1].str();
    std::replace(list.begin(), list.end(), '+', ',');
    add("recompute_modules", list);
  }
  // LoRA fine-tuning ("LoRA rank 16", "lora_rank=32"): the adapters' rank, and the matrices
  // they sit beside when the notes name them ("lora_targets=attention_mlp": NeMo 2.0's default
  // LoRA adapts linear_qkv, linear_proj, linear_fc1 and linear_fc2; MLPerf's Llama 2 70B
  // reference the attention projections alone, lockstep's default).
  static const std::regex lora(R"(\blora(?:[\s_-]*rank|\s+r)\s*[=:]?\s*([0-9]+))");
  if (std::smatch rank; std::regex_search(notes, rank, lora)) add("lora_rank", rank[1].str());
  static const std::regex lora_targets(R"(lora_targets\s*=\s*(attention_mlp|attention)\b)");
  if (std::smatch targets; std::regex_search(notes, targets, lora_targets))
    add("lora_targets", targets[1].str());
  // DeepSeek-V3's DualPipe and its AdamW moments in BF16 (arXiv:2412.19437, sections 3.2.1 and
  // 3.3.3), named in the notes of a run that used them.
  // A run that names its attention as unfused (Megatron-LM before FlashAttention).
  if (notes.find("unfused attention") != std::string::npos) add("attention_kernel", "unfused");
  // "no DualPipe" / "without DualPipe" (Megatron-Bridge's DeepSeek-V3 recipes run interleaved
  // 1F1B) names the schedule to say it was not used.
  static const std::regex no_dualpipe(R"((?:^|[^a-z])(?:no|not|without)\s+dualpipe)");
  if (notes.find("dualpipe") != std::string::npos && !std::regex_search(notes, no_dualpipe))
    add("pipeline", "dualpipe");
  // The SMs a run's communication kernels held ("communication_sms=20": DeepSeek-V3's).
  static const std::regex sms(R"(communication_sms\s*=\s*([0-9]+))");
  if (std::smatch held; std::regex_search(notes, held, sms))
    add("communication_sms", held[1].str());
  static const std::regex moments(R"(bf16 (adamw |adam |optimizer )?moments|moments\s*=\s*bf16)");
  if (std::regex_search(notes, moments)) add("optimizer", "moments=bf16");
  // NVIDIA NeMo's performance recipes reduce gradients in BF16 (NeMo 1.x: optim.grad_sync_dtype
  // bf16 -> Megatron-Core's grad_reduce_in_fp32 false; NeMo 2.0's scripts/performance set
  // plugins.grad_reduce_in_fp32 = False): a BF16 gradient buffer (docs/training-calibration.md).
  if (lower(row.source).find("nemo") != std::string::npos) add("grad_reduce_in_fp32", "false");
  const std::string precision = read_row_precision(
      row.precision.empty() ? row.source + " " + row.gpu + " " + row.notes : row.precision);
  if (precision != "bf16") add("precision", precision);
  // BF16 runs: the kernel model (docs/kernel-model.md), whose BF16 GEMM rates are measured
  // (Bekman's sustained A100 / H100 figures) and follow the GEMM's shape; one fraction of 0.5
  // caps MFU at 50% where Megatron's A100 runs published 51-56%. FP8 / FP4 runs keep 0.5: the
  // kernel model's FP8 side has no sustained measurement at training shapes and runs 25% fast.
  else
    add("efficiency", "kernels");
  // "A100-40GB": a smaller memory than the catalog's part.
  static const std::regex hbm(R"((\d+)\s*gb\b)");
  std::smatch m;
  const std::string g = lower(row.gpu);
  if (std::regex_search(g, m, hbm) &&
      Bytes::gib(std::stoull(m[1].str())).count() != gpu.hbm.count()) {
    add("hbm", m[1].str() + "GiB");
  }

  // The published figure, as MFU of the dense BF16 peak.
  const double peak_tflops = gpu.bf16_dense_flops / 1e12;
  const double mfu = figure_of(row.mfu_pct), tflops = figure_of(row.tflops_per_gpu);
  const double tps = figure_of(row.tokens_per_s_per_gpu), step = figure_of(row.step_time_s);
  const double flops_per_token = model.train_flops_per_token(seq_used);
  if (mfu > 0 && mfu <= 100) {
    // A percentage below 1 is no training run's MFU: the column holds a fraction ("0.41").
    c.published_mfu = mfu < 1 ? mfu : mfu / 100;
    c.mfu_basis = "mfu_pct";
  } else if (tflops > 0) {
    c.published_mfu = tflops / peak_tflops;
    c.mfu_basis = fmt::format("{:g} TFLOP/s / {:g} BF16 dense", tflops, peak_tflops);
  } else if (tps > 0) {
    c.published_mfu = tps * flops_per_token / gpu.bf16_dense_flops;
    c.mfu_basis = fmt::format("{:g} tok/s x {:.3g} GFLOP/tok / {:g} TFLOP/s", tps,
                              flops_per_token / 1e9, peak_tflops);
  } else if (step > 0) {
    const double tokens = static_cast<double>(batch.sequences * seq_used);
    c.published_mfu = tokens * flops_per_token / (step * gpus * gpu.bf16_dense_flops);
    c.mfu_basis = fmt::format("{:g} s/step x {:.3g} GFLOP/tok / {:g} TFLOP/s", step,
                              flops_per_token / 1e9, peak_tflops);
  } else if (figure == PublishedFigure::Required) {
    throw InputError("mfu_pct", "no MFU, TFLOP/s per GPU, tokens/s per GPU or step time");
  }
  return c;
}

std::string supplement_row(TrainingRow& row, const std::vector<TrainingRow>& supplement) {
  const std::string key = model_key(row.model);
  for (const TrainingRow& s : supplement) {
    const std::string cite = trim(s.source);
    if (cite.empty() || row.source.find(cite) == std::string::npos || model_key(s.model) != key)
      continue;
    for (auto member : {&TrainingRow::gpus, &TrainingRow::tp, &TrainingRow::pp, &TrainingRow::dp,
                        &TrainingRow::cp, &TrainingRow::ep, &TrainingRow::vp, &TrainingRow::seq_len,
                        &TrainingRow::global_batch})
      if (trim(row.*member).empty()) row.*member = s.*member;
    if (!trim(s.notes).empty()) row.notes += (trim(row.notes).empty() ? "" : "; ") + s.notes;
    return cite;
  }
  return "";
}

bool has_training_columns(const std::vector<std::string>& header) {
  auto has = [&](const char* name) {
    for (const std::string& h : header)
      if (lower(trim(h)) == name) return true;
    return false;
  };
  return has("model") && has("gpu") &&
         (has("mfu_pct") || has("tflops_per_gpu") || has("tokens_per_s_per_gpu") ||
          has("step_time_s"));
}

std::vector<TrainingRow> read_training_csv(std::istream& in, const std::string& name) {
  std::string line;
  if (!std::getline(in, line)) throw InputError("csv", name + ": empty file");
  const std::vector<std::string> header = split_csv_line(line);
  if (!has_training_columns(header)) {
    throw InputError("csv", name +
                                ": not a training table (needs model, gpu and mfu_pct, "
                                "tflops_per_gpu, tokens_per_s_per_gpu or step_time_s)");
  }
  // Column name -> member; "global_batch_tokens_or_seqs" and other "global_batch..." columns.
  const std::map<std::string, std::string TrainingRow::*> members = {
      {"source", &TrainingRow::source},
      {"model", &TrainingRow::model},
      {"params_b", &TrainingRow::params_B},
      {"gpu", &TrainingRow::gpu},
      {"gpus", &TrainingRow::gpus},
      {"tp", &TrainingRow::tp},
      {"pp", &TrainingRow::pp},
      {"dp", &TrainingRow::dp},
      {"cp", &TrainingRow::cp},
      {"ep", &TrainingRow::ep},
      {"etp", &TrainingRow::etp},
      {"vp", &TrainingRow::vp},
      {"seq_len", &TrainingRow::seq_len},
      {"tflops_per_gpu", &TrainingRow::tflops_per_gpu},
      {"mfu_pct", &TrainingRow::mfu_pct},
      {"step_time_s", &TrainingRow::step_time_s},
      {"tokens_per_s_per_gpu", &TrainingRow::tokens_per_s_per_gpu},
      {"precision", &TrainingRow::precision},
      {"notes", &TrainingRow::notes}};
  std::vector<std::string TrainingRow::*> columns;
  for (const std::string& h : header) {
    const std::string key = lower(trim(h));
    const auto it = members.find(key);
    columns.push_back(it != members.end()                 ? it->second
                      : key.rfind("global_batch", 0) == 0 ? &TrainingRow::global_batch
                                                          : nullptr);
  }
  std::vector<TrainingRow> rows;
  while (std::getline(in, line)) {
    if (trim(line).empty()) continue;
    const std::vector<std::string> cells = split_csv_line(line);
    // ",,,,": a spreadsheet's empty line, not a row.
    if (std::all_of(cells.begin(), cells.end(),
                    [](const std::string& c) { return trim(c).empty(); }))
      continue;
    TrainingRow r;
    for (std::size_t i = 0; i < cells.size() && i < columns.size(); ++i)
      if (columns[i]) r.*columns[i] = cells[i];
    rows.push_back(std::move(r));
  }
  return rows;
}

}  // namespace lockstep
