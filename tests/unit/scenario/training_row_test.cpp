// Published training runs read as `lockstep train` jobs: every text of
// ../shared/calibration/training_public.csv as written there, plus spellings other tables use.
#include "lockstep/scenario/training_row.hpp"

#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "../core/error_of.hpp"

namespace lockstep {
namespace {

std::string job_value(const TrainingCase& c, const std::string& key) {
  for (const auto& [k, v] : c.job)
    if (k == key) return v;
  return "(absent)";
}

TEST(TrainingRow, ModelNamesOfTheFileReduceToFamilyAndSize) {
  const std::pair<const char*, const char*> cases[] = {
      {"GPT 22B", "gpt:22b"},
      {"GPT 175B", "gpt:175b"},
      {"GPT 530B", "gpt:530b"},
      {"GPT 1000B", "gpt:1t"},
      {"GPT3-5B", "gpt:5b"},
      {"GPT3-20B", "gpt:20b"},
      {"GPT3-175B", "gpt:175b"},
      {"LLAMA2-7B", "llama2:7b"},
      {"LLAMA2-13B", "llama2:13b"},
      {"LLAMA2-70B", "llama2:70b"},
      {"Nemotron-8B", "nemotron:8b"},
      {"Nemotron-22B", "nemotron:22b"},
      {"Nemotron-340B", "nemotron:340b"},
      {"LLAMA3-8B", "llama3:8b"},
      {"LLAMA3-70B", "llama3:70b"},
      // Other tables' spellings, and the preset names themselves.
      {"Llama 3.1 405B", "llama3:405b"},
      {"Meta Llama 3 70B", "llama3:70b"},
      {"Megatron GPT 1T", "gpt:1t"},
      {"Nemotron-4 340B", "nemotron:340b"},
      {"Mixtral 8x7B", "mixtral:8x7b"},
      {"Qwen3-30B-A3B", "qwen3:30ba3b"},
      {"DeepSeek-V3", "deepseekv3"},
      {"175B GPT-3", "gpt:175b"},
      {"Kimi K2", "kimik2"},
      {"GPT-OSS 120B", "gptoss:120b"},
      {"Nemotron-4-340B", "nemotron:340b"},
      {"gpt3-175b", "gpt:175b"},
      {"llama3-405b", "llama3:405b"},
      {"mixtral-8x7b", "mixtral:8x7b"}};
  for (const auto& [text, key] : cases) EXPECT_EQ(model_key(text), key) << text;
}

TEST(TrainingRow, ModelNamesFindTheirPresetOrSaySoByName) {
  EXPECT_EQ(read_row_model("GPT 175B"), "gpt3-175b");
  EXPECT_EQ(read_row_model("GPT3-175B"), "gpt3-175b");
  EXPECT_EQ(read_row_model("LLAMA3-8B"), "llama3-8b");
  EXPECT_EQ(read_row_model("LLAMA3-70B"), "llama3-70b");
  EXPECT_EQ(read_row_model("Llama 3.1 405B"), "llama3-405b");
  EXPECT_EQ(read_row_model("DeepSeek-V3 671B"), "deepseek-v3");  // a size the preset omits
  // Not the 8x7B for the 8x22B, nor Llama 3 for Llama 2.
  EXPECT_EQ(read_row_model("Mixtral 8x22B"), "mixtral-8x22b");
  EXPECT_EQ(read_row_model("LLAMA2-70B"), "llama2-70b");
  // NeMo's tables: "Nemotron-8B" is Nemotron-3 8B, "Nemotron-340B" Nemotron-4 340B; Megatron-LM's
  // "GPT 22B" its 22B GPT (arXiv:2205.05198).
  EXPECT_EQ(read_row_model("Nemotron-8B"), "nemotron3-8b");
  EXPECT_EQ(read_row_model("Nemotron-340B"), "nemotron4-340b");
  EXPECT_EQ(read_row_model("GPT 22B"), "megatron-gpt-22b");
  EXPECT_EQ(error_of([] { read_row_model("Grok-1 314B"); }), "model: no preset for 'Grok-1 314B'");
  EXPECT_EQ(field_of([] { read_row_model("Falcon 180B"); }), "model");
}

TEST(TrainingRow, BatchTextsGiveSequencesAndMicroBatch) {
  struct Case {
    const char* text;
    std::uint64_t seq, sequences, micro;
  };
  const Case cases[] = {
      {"2048 seqs (MBS 4)", 2048, 2048, 4},
      {"256 seqs (MBS 2)", 2048, 256, 2},
      {"256 seqs (MBS 1)", 2048, 256, 1},
      {"2048 seqs (MBS 2)", 2048, 2048, 2},
      {"128 seqs (MBS 1)", 4096, 128, 1},
      {"32 seqs (MBS 1)", 4096, 32, 1},
      {"1,024", 4096, 1024, 0},      // bare and small: sequences
      {"4194304", 4096, 1024, 0},    // bare, >= 65,536 and whole sequences: tokens
      {"4M tokens", 4096, 1024, 0},  // 4 x 2^20 (4,000,000 is not whole sequences)
      {"16M tokens", 8192, 2048, 0},
      {"2M tokens", 1000, 2000, 0},  // decimal is whole
      {"16,777,216 tokens; micro-batch 2", 8192, 2048, 2},
      {"1536 sequences, mbs=1", 2048, 1536, 1},
      {"4M", 4096, 1024, 0},        // suffixed, no unit, >= 65,536: tokens
      {"1K seqs", 4096, 1024, 0}};  // sequences in 2^10
  for (const Case& c : cases) {
    const RowBatch b = read_row_batch(c.text, c.seq);
    EXPECT_EQ(b.sequences, c.sequences) << c.text;
    EXPECT_EQ(b.micro_batch, c.micro) << c.text;
  }
  EXPECT_EQ(field_of([] { read_row_batch("1000 tokens", 4096); }), "global_batch");
  EXPECT_EQ(field_of([] { read_row_batch("n/a", 4096); }), "global_batch");
}

TEST(TrainingRow, PrecisionIsTheFirstOneNamed) {
  EXPECT_EQ(read_row_precision("NVIDIA/NeMo docs/source/performance/performance_summary.md "
                               "@070a0bb (NeMo 24.07 container, DGX-H100, FP8)"),
            "fp8");
  EXPECT_EQ(read_row_precision("quoted MFU 41.5% / HFU 43.7%; benchmark runs with data-parallel "
                               "size 1 (GPU count = TP*PP, not stated in README)"),
            "bf16");
  EXPECT_EQ(read_row_precision("B200, NVFP4 recipe"), "fp4");
  EXPECT_EQ(read_row_precision("BF16 (FP8 runs in the next table)"), "bf16");
  EXPECT_EQ(read_row_precision("mixed precision fp16"), "bf16");
}

TrainingRow nemo_175b_row() {
  TrainingRow r;
  r.source =
      "NVIDIA/NeMo docs/source/performance/performance_summary.md @070a0bb (NeMo 24.07 "
      "container, DGX-H100, FP8)";
  r.model = "GPT3-175B";
  r.gpu = "H100-SXM (DGX H100)";
  r.gpus = "128";
  r.tp = "4";
  r.pp = "8";
  r.dp = "4";
  r.cp = "1";
  r.vp = "6";
  r.seq_len = "2048";
  r.global_batch = "256 seqs (MBS 1)";
  r.tflops_per_gpu = "782";
  r.step_time_s = "5.64";
  r.tokens_per_s_per_gpu = "726";
  return r;
}

TEST(TrainingRow, NemoRowIsItsJobWithTflopsOverTheBf16Peak) {
  const TrainingCase c = training_case(nemo_175b_row());
  EXPECT_EQ(c.preset.system, "hgx-h100");
  EXPECT_EQ(c.preset.nodes, 16u);  // 128 GPUs / 8
  EXPECT_EQ(c.gpus, 128u);
  EXPECT_EQ(c.command(),
            "lockstep train --system hgx-h100 --nodes 16 --model gpt3-175b --tp 4 --pp 8 --dp 4 "
            "--interleave 6 --global-batch 256 --micro-batch 1 --seq 2048 --zero 1 "
            "--grad-reduce-in-fp32 false --precision fp8");
  EXPECT_NEAR(c.published_mfu, 782.0 / 989, 1e-12);  // H100 SXM: 989 TFLOP/s dense BF16
  EXPECT_EQ(c.mfu_basis, "782 TFLOP/s / 989 BF16 dense");
}

TEST(TrainingRow, TokensPerSecondAndStepTimeUseTrainsFlopsPerToken) {
  // GPT-3 175B at 2,048 tokens: 3 x (96 x (24 h^2 + 4 s h) + 2 V h), h 12288, V 50257
  // = 1,076,373,430,272 FLOP per token.
  TrainingRow r = nemo_175b_row();
  r.tflops_per_gpu.clear();
  EXPECT_NEAR(training_case(r).published_mfu, 726 * 1076373430272.0 / 989e12, 1e-9);  // 0.79014
  r.tokens_per_s_per_gpu.clear();
  // 256 x 2048 tokens in 5.64 s on 128 GPUs.
  EXPECT_NEAR(training_case(r).published_mfu, 524288 * 1076373430272.0 / (5.64 * 128 * 989e12),
              1e-9);  // 0.79040
  r.step_time_s.clear();
  EXPECT_EQ(field_of([&] { training_case(r); }), "mfu_pct");
}

TEST(TrainingRow, MegatronRowsStateMfuButNotTpAndPp) {
  TrainingRow r;
  r.model = "GPT 175B";
  r.gpu = "A100-80GB";
  r.dp = "1";
  r.seq_len = "2048";
  r.mfu_pct = "51.4";
  r.notes =
      "quoted MFU 51.4% / HFU 52.8%; benchmark runs with data-parallel size 1 (GPU count = "
      "TP*PP, not stated in README)";
  EXPECT_EQ(field_of([&] { training_case(r); }), "tp");
  r.tp = "8";
  r.pp = "8";
  EXPECT_EQ(field_of([&] { training_case(r); }), "global_batch");
  r.global_batch = "64";
  const TrainingCase c = training_case(r);
  EXPECT_EQ(c.gpus, 64u);  // tp x pp x dp
  EXPECT_EQ(c.preset.system, "dgx-a100");
  EXPECT_EQ(c.preset.nodes, 8u);
  EXPECT_DOUBLE_EQ(c.published_mfu, 0.514);
  r.mfu_pct = "~51.4%";
  EXPECT_DOUBLE_EQ(training_case(r).published_mfu, 0.514);
  r.mfu_pct = "0.514";  // a fraction, not 0.514 %
  EXPECT_DOUBLE_EQ(training_case(r).published_mfu, 0.514);
  r.mfu_pct = "51.4";
  EXPECT_EQ(c.mfu_basis, "mfu_pct");
  EXPECT_EQ(job_value(c, "precision"), "(absent)");  // BF16
  // Not a NeMo row: Megatron-LM's FP32 gradient buffer (the default).
  EXPECT_EQ(job_value(c, "grad_reduce_in_fp32"), "(absent)");
  EXPECT_EQ(job_value(c, "hbm"), "(absent)");  // the catalog's A100 has 80 GB
  r.gpu = "A100-40GB";
  EXPECT_EQ(job_value(training_case(r), "hbm"), "40GiB");
}

TEST(TrainingRow, SupplementFillsTheBlankCellsOfTheRunItCites) {
  // The Megatron-LM README row as training_public.csv writes it, and bench_training's supplement
  // row for it (Korthikanti et al. 2022, Table 3: 1T on 512 GPUs, TP 8, PP 64, batch 512).
  TrainingRow r;
  r.source = "NVIDIA/Megatron-LM README.md (MFU/HFU table citing arXiv:2205.05198)";
  r.model = "GPT 1000B";
  r.gpu = "A100-80GB";
  r.dp = "1";
  r.seq_len = "2048";
  r.mfu_pct = "56.3";
  r.notes = "quoted MFU 56.3%";
  TrainingRow other;  // cites another paper: never used
  other.source = "arXiv:2104.04473";
  other.model = "GPT 1T";
  other.tp = "2";
  TrainingRow s;
  s.source = "arXiv:2205.05198";
  s.model = "GPT 1T";  // the same model as "GPT 1000B"
  s.gpus = "512";
  s.tp = "8";
  s.pp = "64";
  s.dp = "2";  // the row's own dp 1 wins
  s.global_batch = "512 seqs (MBS 1)";
  s.notes = "selective recompute";
  TrainingRow unmatched = r;
  unmatched.model = "GPT 530B";
  EXPECT_EQ(supplement_row(unmatched, {other, s}), "");
  EXPECT_TRUE(unmatched.tp.empty());
  EXPECT_EQ(field_of([&] { training_case(r); }), "tp");
  EXPECT_EQ(supplement_row(r, {other, s}), "arXiv:2205.05198");
  EXPECT_EQ(r.notes, "quoted MFU 56.3%; selective recompute");
  const TrainingCase c = training_case(r);
  EXPECT_EQ(c.gpus, 512u);  // 8 x 64 x 1
  EXPECT_EQ(c.preset.nodes, 64u);
  EXPECT_EQ(job_value(c, "model"), "megatron-gpt-1t");
  EXPECT_EQ(job_value(c, "dp"), "1");
  EXPECT_EQ(job_value(c, "global_batch"), "512");
  EXPECT_EQ(job_value(c, "recompute"), "selective");
  EXPECT_DOUBLE_EQ(c.published_mfu, 0.563);
}

TEST(TrainingRow, GpuCountAndDegreesFillEachOther) {
  TrainingRow r = nemo_175b_row();
  r.dp.clear();  // 128 / (4 x 8)
  EXPECT_EQ(job_value(training_case(r), "dp"), "4");
  r = nemo_175b_row();
  r.gpus.clear();  // 4 x 8 x 4
  EXPECT_EQ(training_case(r).gpus, 128u);
  r = nemo_175b_row();
  r.tp.clear();
  r.pp.clear();
  r.gpus = "4";  // dp 4 alone makes the count: tp = pp = 1, one node of 4 GPUs
  const TrainingCase c = training_case(r);
  EXPECT_EQ(job_value(c, "tp"), "1");
  EXPECT_EQ(c.preset.gpus_per_node, 4u);
  EXPECT_EQ(c.preset.nodes, 1u);
  r = nemo_175b_row();
  r.pp.clear();  // 128 / (4 x 4)
  EXPECT_EQ(job_value(training_case(r), "pp"), "8");
  r = nemo_175b_row();
  r.gpus = "96";
  EXPECT_EQ(field_of([&] { training_case(r); }), "gpus");  // 4 x 8 x 4 is 128
  r.gpus = "12";
  r.tp = "1";
  r.pp = "1";
  r.dp = "12";
  EXPECT_EQ(field_of([&] { training_case(r); }), "gpus");  // not whole 8-GPU nodes
  r = nemo_175b_row();
  r.gpus = "16K";  // 16,384 (Llama 3's "16K H100")
  r.dp = "512";
  r.seq_len = "8k";
  EXPECT_EQ(training_case(r).gpus, 16384u);
  EXPECT_EQ(job_value(training_case(r), "seq"), "8192");
  r = nemo_175b_row();
  r.dp = "-";  // not stated: 128 / (4 x 8)
  EXPECT_EQ(job_value(training_case(r), "dp"), "4");
  r.gpu = "TPU v5p";
  EXPECT_EQ(field_of([&] { training_case(r); }), "gpu");
  r = nemo_175b_row();
  r.precision = "BF16";  // the column wins over the source's "FP8"
  EXPECT_EQ(job_value(training_case(r), "precision"), "(absent)");
  r = nemo_175b_row();
  r.tp = "~4";  // a number after other text is not read as one
  EXPECT_EQ(field_of([&] { training_case(r); }), "tp");
}

TEST(TrainingRow, ContextParallelRowKeepsCpAsAJobKey) {
  TrainingRow r = nemo_175b_row();
  r.model = "LLAMA3-70B";
  r.gpus = "64";
  r.tp = "4";
  r.pp = "4";
  r.dp = "2";
  r.cp = "2";
  r.vp = "5";
  r.seq_len = "8192";
  r.global_batch = "128 seqs (MBS 1)";
  const TrainingCase c = training_case(r);
  EXPECT_EQ(job_value(c, "cp"), "2");
  EXPECT_EQ(job_value(c, "model"), "llama3-70b");
  EXPECT_EQ(job_value(c, "interleave"), "5");
  EXPECT_EQ(c.preset.nodes, 8u);
}

TEST(TrainingRow, RecomputeModulesInTheNotesBecomeTheJobsList) {
  TrainingRow r = nemo_175b_row();
  r.notes = "RMSNorm and MLA up-projections recomputed (recompute_modules=layernorm+mla_up_proj)";
  EXPECT_EQ(job_value(training_case(r), "recompute_modules"), "layernorm,mla_up_proj");
  r.notes = "recompute of the norms";
  EXPECT_EQ(job_value(training_case(r), "recompute_modules"), "(absent)");
}

TEST(TrainingRow, Bf16RowsRunTheKernelModelFp8RowsOneEfficiency) {
  TrainingRow r = nemo_175b_row();  // FP8 in its source
  EXPECT_EQ(job_value(training_case(r), "precision"), "fp8");
  EXPECT_EQ(job_value(training_case(r), "efficiency"), "(absent)");
  r.source = "NVIDIA/NeMo performance summary (DGX-H100, BF16)";
  EXPECT_EQ(job_value(training_case(r), "precision"), "(absent)");
  EXPECT_EQ(job_value(training_case(r), "efficiency"), "kernels");
}

TEST(TrainingRow, DualPipeAndBf16MomentsFromTheNotes) {
  TrainingRow r = nemo_175b_row();
  r.notes = "DualPipe, BF16 AdamW moments; MTP not modelled";
  EXPECT_EQ(job_value(training_case(r), "pipeline"), "dualpipe");
  EXPECT_EQ(job_value(training_case(r), "optimizer"), "moments=bf16");
  r.notes = "selective recompute; unfused attention (before FlashAttention)";
  EXPECT_EQ(job_value(training_case(r), "attention_kernel"), "unfused");
  r.notes = "1F1B, FP32 moments";
  EXPECT_EQ(job_value(training_case(r), "pipeline"), "(absent)");
  // Named to say it was not used: Megatron-Bridge's DeepSeek-V3 rows run interleaved 1F1B.
  for (const char* text : {"MXFP8; 1F1B interleaved, no DualPipe", "without DualPipe"}) {
    r.notes = text;
    EXPECT_EQ(job_value(training_case(r), "pipeline"), "(absent)") << text;
  }
  EXPECT_EQ(job_value(training_case(r), "optimizer"), "(absent)");
}

TEST(TrainingRow, CommunicationSmsFromTheNotes) {
  TrainingRow r = nemo_175b_row();
  r.notes = "DualPipe, 20 of 132 SMs for the all-to-all (communication_sms=20)";
  EXPECT_EQ(job_value(training_case(r), "communication_sms"), "20");
  r.notes = "DualPipe, 20 SMs for communication";
  EXPECT_EQ(job_value(training_case(r), "communication_sms"), "(absent)");
}

TEST(TrainingRow, LoraRankAndTargetsFromTheNotes) {
  TrainingRow r = nemo_175b_row();
  r.notes = "Llama 2 70B LoRA benchmark: LoRA rank 16 on the attention projections";
  EXPECT_EQ(job_value(training_case(r), "lora_rank"), "16");
  EXPECT_EQ(job_value(training_case(r), "lora_targets"), "(absent)");  // attention: the default
  r.notes = "LoRA rank 32, lora_targets=attention_mlp (NeMo 2.0's default LoRA)";
  EXPECT_EQ(job_value(training_case(r), "lora_rank"), "32");
  EXPECT_EQ(job_value(training_case(r), "lora_targets"), "attention_mlp");
  r.notes = "lora_rank=8";
  EXPECT_EQ(job_value(training_case(r), "lora_rank"), "8");
  r.notes = "SFT (full fine-tuning), no LoRA";  // names LoRA, states no rank: full training
  EXPECT_EQ(job_value(training_case(r), "lora_rank"), "(absent)");
}

TEST(TrainingRow, AConfigurationWithoutAFigureReadsWhenTheFigureIsOptional) {
  // A row of bench/data/training_configs.csv that states the configuration alone: refused where
  // MFU is compared, read with published_mfu 0 where only expressibility and speed are measured.
  TrainingRow r = nemo_175b_row();
  r.tflops_per_gpu.clear();
  r.tokens_per_s_per_gpu.clear();
  r.step_time_s.clear();
  EXPECT_EQ(field_of([&] { training_case(r); }), "mfu_pct");
  const TrainingCase c = training_case(r, PublishedFigure::Optional);
  EXPECT_EQ(c.published_mfu, 0);
  EXPECT_EQ(c.mfu_basis, "");
  EXPECT_EQ(job_value(c, "tp"), "4");
  EXPECT_EQ(c.gpus, 128u);
  // A stated figure still counts: 782 TFLOP/s over the H100's 989 dense BF16 TFLOP/s.
  r.tflops_per_gpu = "782";
  EXPECT_NEAR(training_case(r, PublishedFigure::Optional).published_mfu, 782.0 / 989, 1e-12);
}

TEST(TrainingRow, CsvWithTheFilesHeaderReadsEveryColumn) {
  std::istringstream in(
      "source,model,params_B,gpu,gpus,tp,pp,dp,cp,ep,vp,seq_len,global_batch_tokens_or_seqs,"
      "tflops_per_gpu,mfu_pct,step_time_s,tokens_per_s_per_gpu,notes\n"
      "\"NeMo (DGX-H100, FP8)\",LLAMA2-7B,7,H100-SXM (DGX H100),8,1,1,8,1,,1,4096,128 seqs (MBS "
      "1),776,,3.89,16847,\"quoted tokens/s/GPU, derived step\"\n\n, ,,\n");
  const std::vector<TrainingRow> rows = read_training_csv(in, "t.csv");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].source, "NeMo (DGX-H100, FP8)");
  EXPECT_EQ(rows[0].model, "LLAMA2-7B");
  EXPECT_EQ(rows[0].global_batch, "128 seqs (MBS 1)");
  EXPECT_EQ(rows[0].tokens_per_s_per_gpu, "16847");
  EXPECT_EQ(rows[0].notes, "quoted tokens/s/GPU, derived step");
  EXPECT_EQ(rows[0].ep, "");
  std::istringstream nccl("system,gpus,nodes,interconnect,collective,bytes,time_us\n");
  EXPECT_EQ(field_of([&] { read_training_csv(nccl, "n.csv"); }), "csv");
}

}  // namespace
}  // namespace lockstep
