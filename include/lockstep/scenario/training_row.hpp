#pragma once
// One row of a table of published training runs (../shared/calibration/training_public.csv:
// source, model, params_B, gpu, gpus, tp, pp, dp, cp, ep, vp, seq_len,
// global_batch_tokens_or_seqs, tflops_per_gpu, mfu_pct, step_time_s, tokens_per_s_per_gpu, notes)
// read as the `lockstep train` job it describes: the model preset its name names, the system
// preset of its GPU, the parallel degrees, the batch, and the published MFU. The free text is read
// by rule, never per row (docs/training-calibration.md lists the rules); bench_training runs the
// jobs and compares.
//
//   TrainingCase c = training_case(row);  // model "GPT3-175B", gpu "H100-SXM (DGX H100)", ...
//   // c.job: model gpt3-175b, tp 4, pp 8, dp 4, interleave 6, global_batch 256, precision fp8...
#include <cstdint>
#include <istream>
#include <string>
#include <utility>
#include <vector>

#include "lockstep/topology/presets.hpp"

namespace lockstep {

/// The columns of one row as text (empty when the file lacks the column or leaves it blank).
struct TrainingRow {
  std::string source, model, params_B, gpu, gpus, tp, pp, dp, cp, ep, etp, vp, seq_len,
      global_batch, tflops_per_gpu, mfu_pct, step_time_s, tokens_per_s_per_gpu, notes;
  std::string precision;  // a column other tables may have; else read from source, gpu, notes
};

/// True when the header has the columns of a training table: model, gpu, and one of mfu_pct,
/// tflops_per_gpu, tokens_per_s_per_gpu, step_time_s.
bool has_training_columns(const std::vector<std::string>& header);
/// Every data line of such a CSV with a cell that is not blank; InputError("csv") when the header
/// lacks the columns.
std::vector<TrainingRow> read_training_csv(std::istream& in, const std::string& name);

/// The model preset a model name names: "GPT3-175B", "GPT 175B", "Llama 3.1 405B" and
/// "LLAMA3-70B" match gpt3-175b, llama3-405b, llama3-70b (model_key below); InputError("model",
/// "no preset for ...") when none does.
std::string read_row_model(const std::string& text);
/// A model name reduced to family and size, so that the spellings of one model compare equal:
/// lower case, "megatron" and punctuation dropped, the families GPT / GPT-3, Llama 3 / 3.1 and
/// Nemotron / Nemotron-4 merged, 1000B written 1T: "GPT3-175B" and "GPT 175B" -> "gpt:175b",
/// "Mixtral 8x7B" -> "mixtral:8x7b", "Qwen3-30B-A3B" -> "qwen3:30ba3b", "DeepSeek-V3" ->
/// "deepseekv3".
std::string model_key(const std::string& text);

/// The global batch column in sequences, and the micro-batch it states ("2048 seqs (MBS 4)",
/// "4M tokens", "1,024", "16777216 tokens (MBS 1)"); a bare number is sequences unless it is at
/// least 65,536 and a multiple of `seq` (then tokens), "4M" without a unit is tokens.
/// InputError("global_batch") when unread.
struct RowBatch {
  std::uint64_t sequences = 0;
  std::uint64_t micro_batch = 0;  // 0: not stated
};
RowBatch read_row_batch(const std::string& text, std::uint64_t seq);

/// The precision the run used as the text states it: "fp8", "fp4" (FP4, NVFP4, MXFP4), else
/// "bf16" (BF16, FP16 or nothing said). The first such word of `text` wins.
std::string read_row_precision(const std::string& text);

/// Fills the cells `row` leaves blank (gpus, tp, pp, dp, cp, ep, vp, seq_len, global_batch) from
/// the first `supplement` row that describes the same run: the same model (model_key) and the
/// supplement's source, a citation such as "arXiv:2205.05198", found in the row's source. The
/// supplement's notes are appended to the row's. Returns that supplement row's source, or ""
/// when none matched (the row is left as it was). bench_training's supplement holds the
/// configurations a table cites but does not print (docs/training-calibration.md).
std::string supplement_row(TrainingRow& row, const std::vector<TrainingRow>& supplement);

/// A row as `lockstep train` runs it.
struct TrainingCase {
  PresetRequest preset;  // the GPU's system preset, nodes and GPUs per node
  std::uint32_t gpus = 0;
  // The job as `lockstep train` keys (its flags without "--", scenario job: keys), in order.
  // Features a row states that lockstep may lack are keys too (precision fp8, cp 2): the job's
  // parser then refuses them by name, and the row is "not expressible" for that reason.
  std::vector<std::pair<std::string, std::string>> job;
  double published_mfu = 0;     // fraction of the GPU's dense BF16 peak; 0: none stated
  std::string mfu_basis;        // how published_mfu was obtained from the row ("": none)
  std::string model_text;       // the row's model column, for the report
  std::string command() const;  // the equivalent `lockstep train ...` line
};

/// Whether a row must state a published figure (MFU, TFLOP/s, tokens/s or step time): required
/// to compare MFU; optional for a table of configurations that checks what lockstep expresses and
/// how fast (bench_training --speed), where published_mfu stays 0 when none is stated.
enum class PublishedFigure : std::uint8_t { Required, Optional };

/// Reads the row; InputError naming the column ("model", "gpu", "tp", "gpus", "global_batch",
/// "mfu_pct", ...) when it cannot be read or names something no preset expresses.
TrainingCase training_case(const TrainingRow& row,
                           PublishedFigure figure = PublishedFigure::Required);

}  // namespace lockstep
