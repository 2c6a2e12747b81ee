// The training step's record: the one object results.json and `lockstep train --format json`
// print, built from a hand-made TrainResult, and the text summary's figures.
#include "lockstep/report/training.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "lockstep/config/json_reader.hpp"
#include "lockstep/report/json.hpp"
#include "lockstep/workload/model.hpp"

namespace lockstep::report {
namespace {

// A 2 ms step on 8 GPUs: 1.5 ms compute + 0.5 ms exposed DP; four noisy trials of 2.1-2.4 ms.
TrainConfig config() {
  TrainConfig c;
  c.par.tp = 2;
  c.par.dp = 4;
  c.par.zero = ZeroStage::Optimizer;
  c.global_batch = 64;
  c.micro_batch = 2;  // 64 / (2 x 4) = 8 micro-batches per replica
  c.seq = 4096;       // 64 x 4096 = 262,144 tokens
  c.trials = 4;
  c.seed = 9;
  return c;
}

TrainResult result() {
  TrainResult r;
  r.model = "llama3-8b";
  r.engine = "analytical";
  r.expansion = "full";
  r.gpus = 8;
  r.tokens_per_iteration = 262144;
  r.iteration = Time::ms(2);
  r.breakdown.compute = Time::us(1500);
  r.breakdown.dp = Time::us(500);
  r.breakdown.straggler = Time::us(100);
  r.mfu = 0.4;
  r.tokens_per_second = 262144 / 2e-3;
  r.memory.weights = Bytes::gib(2);
  r.memory.gradients = Bytes::gib(2);
  r.memory.optimizer = Bytes::gib(3);
  r.memory.activations = Bytes::gib(1);
  r.hbm = Bytes::gib(80);
  r.trials = 4;
  r.trial_times = {Time::us(2300), Time::us(2100), Time::us(2400), Time::us(2200)};
  r.p50 = Time::us(2200);
  r.p99 = r.max = Time::us(2400);
  r.mean = Time::us(2250);
  r.waste_gpu_seconds = 8 * 100e-6;  // straggler wait x GPUs
  r.warnings = {"a warning"};
  return r;
}

std::vector<std::string> keys_of(const nlohmann::ordered_json& j) {
  std::vector<std::string> keys;
  for (const auto& [key, value] : j.items()) keys.push_back(key);
  return keys;
}

TEST(TrainingRecord, TimesInMicrosecondsAndSlicesThatAddUp) {
  const Training t = training_record(result(), config());
  EXPECT_DOUBLE_EQ(t.iteration_time_us, 2000.0);
  ASSERT_EQ(t.breakdown.size(), 2u);  // zero slices are left out
  EXPECT_EQ(t.breakdown[0].name, "compute");
  EXPECT_DOUBLE_EQ(t.breakdown[0].time_us, 1500.0);
  EXPECT_EQ(t.breakdown[1].name, "exposed_dp");
  EXPECT_DOUBLE_EQ(t.breakdown[1].time_us, 500.0);
  EXPECT_EQ(t.parallelism, "TP2 PP1 DP4 ZeRO-1");
  ASSERT_TRUE(t.jitter.has_value());
  EXPECT_EQ(t.jitter->iteration_time_us, (std::vector<double>{2100, 2200, 2300, 2400}));
  EXPECT_DOUBLE_EQ(t.jitter->straggler_wait_us, 100.0);
  EXPECT_EQ(t.jitter->seed, 9u);
  EXPECT_EQ(t.batch.micro_batches, 8u);
  EXPECT_EQ(t.memory.total_bytes, 8ull << 30);  // 2 + 2 + 3 + 1 GiB
}

TEST(TrainingRecord, JsonKeysAndNumbers) {
  const nlohmann::ordered_json j = training_to_json(training_record(result(), config()));
  EXPECT_EQ(keys_of(j), (std::vector<std::string>{"model",
                                                  "model_map",
                                                  "parallelism",
                                                  "gpus",
                                                  "iteration_time_us",
                                                  "breakdown",
                                                  "mfu",
                                                  "tokens_per_s",
                                                  "gpu_hours_per_step",
                                                  "cost_per_step_usd",
                                                  "cost_per_trillion_tokens_usd",
                                                  "jitter",
                                                  "engine",
                                                  "expansion",
                                                  "parallel",
                                                  "precision",
                                                  "attention_kernel",
                                                  "optimizer_moments",
                                                  "recompute",
                                                  "recompute_modules",
                                                  "options",
                                                  "batch",
                                                  "memory_per_gpu",
                                                  "gpu_hours_per_trillion_tokens",
                                                  "warnings",
                                                  "slow_gpus",
                                                  "lockstep_waste"}));
  EXPECT_EQ(j["iteration_time_us"], 2000.0);
  EXPECT_EQ(j["breakdown"][0]["time_us"], 1500.0);
  EXPECT_EQ(
      keys_of(j["jitter"]),
      (std::vector<std::string>{"trials", "p50_us", "p99_us", "max_us", "mean_us",
                                "lockstep_waste_gpu_s", "lockstep_waste_usd",
                                "lockstep_waste_fraction", "lockstep_waste_per_trillion_tokens_usd",
                                "straggler_wait_us", "seed", "iteration_time_us"}));
  EXPECT_EQ(j["jitter"]["p99_us"], 2400.0);
  EXPECT_EQ(j["jitter"]["mean_us"], 2250.0);
  EXPECT_EQ(j["jitter"]["straggler_wait_us"], 100.0);
  EXPECT_EQ(j["parallel"]["tp"], 2);
  EXPECT_EQ(j["parallel"]["zero_stage"], 1);
  EXPECT_EQ(j["parallel"]["sequence_parallel"], true);
  EXPECT_EQ(keys_of(j["batch"]),
            (std::vector<std::string>{"global_batch", "micro_batch", "micro_batches",
                                      "sequence_length", "tokens_per_iteration"}));
  EXPECT_EQ(j["batch"]["tokens_per_iteration"], 262144);
  EXPECT_EQ(keys_of(j["memory_per_gpu"]),
            (std::vector<std::string>{"weights_bytes", "gradients_bytes", "optimizer_bytes",
                                      "activations_bytes", "total_bytes", "hbm_bytes"}));
  EXPECT_EQ(j["memory_per_gpu"]["total_bytes"], 8589934592ull);
  EXPECT_EQ(j["memory_per_gpu"]["hbm_bytes"], 85899345920ull);
  EXPECT_EQ(j["warnings"], nlohmann::ordered_json::array({"a warning"}));
}

// A slow GPU at node 1 GPU 3 of a TP 2 DP 4 job on 4-GPU nodes: rank 1 x 4 + 3 = 7, TP rank
// 7 % 2 = 1, replica 7 / 2 = 3, stage 0. Its waste per day with one trial (no jitter object):
// 8 x 100 us = 8e-4 GPU-s per 2.25 ms step; 86,400 s / 2.25 ms = 38.4e6 steps a day, so
// 8e-4 x 38.4e6 / 3600 = 8.5333 GPU-hours and, at $2/GPU-hour, $17.067 a day.
TEST(TrainingRecord, SlowGpuPlacementAndWastePerDayWithOneTrial) {
  TrainResult r = result();
  r.trials = 1;
  r.trial_times = {r.mean};
  r.slow_gpus.push_back({"slow-gpu:node=1,gpu=3,x=1.5", 1.5, 7, 1, 3, 0, 3, 1});
  const double steps_per_day = 86'400 / 2.25e-3;
  r.waste_gpu_hours_per_day = r.waste_gpu_seconds / 3600 * steps_per_day;
  r.waste_cost_per_day_usd = r.waste_gpu_hours_per_day * 2;
  const nlohmann::ordered_json j = training_to_json(training_record(r, config()));
  EXPECT_TRUE(j["jitter"].is_null());
  ASSERT_EQ(j["slow_gpus"].size(), 1u);
  const auto& g = j["slow_gpus"][0];
  EXPECT_EQ(keys_of(g), (std::vector<std::string>{"fault", "factor", "rank", "node", "gpu", "stage",
                                                  "replica", "tp_rank"}));
  EXPECT_EQ(g["fault"], "slow-gpu:node=1,gpu=3,x=1.5");
  EXPECT_EQ(g["factor"], 1.5);
  EXPECT_EQ(g["rank"], 7);
  EXPECT_EQ(g["node"], 1);
  EXPECT_EQ(g["gpu"], 3);
  EXPECT_EQ(g["stage"], 0);
  EXPECT_EQ(g["replica"], 3);
  EXPECT_EQ(g["tp_rank"], 1);
  const auto& w = j["lockstep_waste"];
  EXPECT_EQ(keys_of(w), (std::vector<std::string>{"gpu_s_per_step", "usd_per_step", "fraction",
                                                  "usd_per_trillion_tokens", "gpu_hours_per_day",
                                                  "usd_per_day"}));
  EXPECT_DOUBLE_EQ(w["gpu_s_per_step"].get<double>(), 8e-4);
  EXPECT_NEAR(w["gpu_hours_per_day"].get<double>(), 8.5333, 1e-4);
  EXPECT_NEAR(w["usd_per_day"].get<double>(), 17.067, 1e-3);
}

TEST(TrainingRecord, OneTrialHasNoJitter) {
  TrainResult r = result();
  r.trials = 1;
  r.trial_times = {r.iteration};
  EXPECT_TRUE(training_to_json(training_record(r, config()))["jitter"].is_null());
}

TEST(TrainingRecord, ResultsJsonHoldsTheSameObject) {
  RunResults results;
  results.variants.push_back({});
  results.variants[0].training = training_record(result(), config());
  EXPECT_EQ(results_to_json(results)["variants"][0]["training"],
            training_to_json(training_record(result(), config())));
}

// The model as it ran, as the `model:` map a scenario would give: every key the map accepts
// but `preset`, in model_keys()' order, with the preset's values and the job's overrides.
TEST(TrainingRecord, ModelMapNamesEveryArchitecturalKey) {
  TrainConfig c = config();
  c.model = model_preset("deepseek-v3");
  c.model.layers = 13;  // a job's override of the preset
  const nlohmann::ordered_json j = training_to_json(training_record(result(), c));
  std::vector<std::string> keys = model_keys();
  keys.erase(keys.begin());  // "preset": the map gives the values themselves
  EXPECT_EQ(keys_of(j["model_map"]), keys);
  const nlohmann::ordered_json& m = j["model_map"];
  // DeepSeek-V3 (arXiv:2412.19437 section 4.2, config.json): 61 layers (13 here), hidden 7168,
  // 128 MLA heads of 128 + 64 rotary, q rank 1536, kv rank 512, 256 routed experts of 2048 and
  // one shared, top-8, the first 3 layers dense, one MTP module, M = 4 nodes, FP8 dispatch.
  EXPECT_EQ(m["name"], "deepseek-v3");
  EXPECT_EQ(m["layers"], 13);
  EXPECT_EQ(m["hidden"], 7168);
  EXPECT_EQ(m["heads"], 128);
  EXPECT_EQ(m["head_dim"], 128);
  EXPECT_EQ(m["qk_rope_head_dim"], 64);
  EXPECT_EQ(m["q_lora_rank"], 1536);
  EXPECT_EQ(m["kv_lora_rank"], 512);
  EXPECT_EQ(m["experts"], 256);
  EXPECT_EQ(m["shared_experts"], 1);
  EXPECT_EQ(m["expert_ffn"], 2048);
  EXPECT_EQ(m["top_k"], 8);
  EXPECT_EQ(m["dense_layers"], 3);
  EXPECT_EQ(m["vocab"], 129280);
  EXPECT_EQ(m["num_nextn_predict_layers"], 1);
  EXPECT_EQ(m["moe_max_nodes"], 4);
  EXPECT_EQ(m["moe_fp8_dispatch"], true);
  EXPECT_EQ(m["tied_embeddings"], false);
}

// The map is a `model:` map: given back to the parser it makes the same model, for every preset.
TEST(TrainingRecord, ModelMapParsesBackToTheSameModel) {
  for (const std::string& name : model_preset_names()) {
    const nlohmann::ordered_json j = model_map_json(model_preset(name));
    const ArgNode node = parse_json_args(j.dump(), "results.json", "model");
    EXPECT_EQ(model_map_json(parse_model(node)), j) << name;
  }
}

// The interleaved schedule's N in every output: pp 4 x interleave 2 with N = 8 micro-batches per
// group; N left out runs as Megatron-Core's default pp = 4; without interleaving there is no group.
TEST(TrainingRecord, InterleavedGroupSizeInEveryOutput) {
  TrainConfig c = config();
  c.par.pp = 4;
  c.par.interleave = 2;
  c.par.microbatch_group = 8;
  const Training t = training_record(result(), c);
  EXPECT_EQ(t.parallelism, "TP2 PP4 VP2 N8 DP4 ZeRO-1");
  const nlohmann::ordered_json par = training_to_json(t)["parallel"];
  EXPECT_EQ(par["interleave"], 2);
  EXPECT_EQ(par["microbatch_group_size_per_vp_stage"], 8);
  EXPECT_EQ(par["pipeline"], "1f1b");
  EXPECT_EQ(par["pipeline_timing"], "simulated");
  EXPECT_NE(format_training_text(result(), c)
                .find("pp 4 (interleaved, 2 chunks per stage, 8 micro-batches per group)"),
            std::string::npos);
  c.par.microbatch_group = 0;
  EXPECT_EQ(training_record(result(), c).parallelism, "TP2 PP4 VP2 N4 DP4 ZeRO-1");
  const auto group = [](const TrainConfig& with) {
    return training_to_json(
        training_record(result(), with))["parallel"]["microbatch_group_size_per_vp_stage"];
  };
  EXPECT_EQ(group(c), 4);
  EXPECT_TRUE(group(config()).is_null());
}

// DualPipe, BF16 moments, the unfused attention core and FP8 GEMMs are named in the record, and
// the record says DualPipe's figures are simulated (its schedule runs as programs).
TEST(TrainingRecord, DualPipeAndKernelKeysInEveryOutput) {
  TrainConfig c = config();
  c.par.pp = 4;
  c.pipeline = PipelineSchedule::DualPipe;
  c.bf16_moments = true;
  c.unfused_attention = true;
  c.precision = Precision::Fp8;
  const Training t = training_record(result(), c);
  EXPECT_EQ(t.parallelism, "TP2 PP4 DualPipe DP4 ZeRO-1");
  const nlohmann::ordered_json j = training_to_json(t);
  EXPECT_EQ(j["parallel"]["pipeline"], "dualpipe");
  EXPECT_EQ(j["parallel"]["pipeline_timing"], "simulated");
  EXPECT_TRUE(j["parallel"]["microbatch_group_size_per_vp_stage"].is_null());
  EXPECT_EQ(j["precision"], "fp8");
  EXPECT_EQ(j["attention_kernel"], "unfused");
  EXPECT_EQ(j["optimizer_moments"], "bf16");
  const std::string text = format_training_text(result(), c);
  EXPECT_NE(text.find(", pipeline dualpipe\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("closed form"), std::string::npos) << text;
  EXPECT_NE(text.find("kernels            fp8 weight GEMMs, unfused attention, optimizer moments "
                      "bf16\n"),
            std::string::npos)
      << text;
  // The defaults, as a job without these keys runs.
  const nlohmann::ordered_json d = training_to_json(training_record(result(), config()));
  EXPECT_EQ(d["precision"], "bf16");
  EXPECT_EQ(d["attention_kernel"], "flash");
  EXPECT_EQ(d["optimizer_moments"], "fp32");
  EXPECT_EQ(d["recompute"], "none");
  EXPECT_TRUE(d["recompute_modules"].is_null());
}

// Selective recomputation names its modules in Megatron-Core's words; full has none to name.
TEST(TrainingRecord, RecomputeAndItsModules) {
  TrainConfig c = config();
  c.recompute = Recompute::Selective;
  c.recompute_modules = kRecomputeCoreAttn | kRecomputeLayernorm;
  nlohmann::ordered_json j = training_to_json(training_record(result(), c));
  EXPECT_EQ(j["recompute"], "selective");
  EXPECT_EQ(j["recompute_modules"], "core_attn,layernorm");
  c.recompute = Recompute::Full;
  j = training_to_json(training_record(result(), c));
  EXPECT_EQ(j["recompute"], "full");
  EXPECT_TRUE(j["recompute_modules"].is_null());
}

// The other job keys that change the result, by their job names: the defaults as a job without
// them runs (null where the default is not a value), then each one set.
TEST(TrainingRecord, OtherJobKeysInEveryOutput) {
  const nlohmann::ordered_json d = training_to_json(training_record(result(), config()))["options"];
  EXPECT_EQ(keys_of(d), (std::vector<std::string>{
                            "efficiency", "peak_tflops", "tp_comm_overlap", "tp_comm_overlap_sms",
                            "overlap_dp", "overlap_param_gather", "grad_reduce_in_fp32",
                            "bucket_bytes", "optimizer_step", "clip_grad", "moe_imbalance",
                            "lora_rank", "lora_targets", "account_for_embedding_in_pipeline_split",
                            "account_for_loss_in_pipeline_split", "communication_sms"}));
  EXPECT_EQ(d["efficiency"], 0.5);
  EXPECT_TRUE(d["peak_tflops"].is_null());
  EXPECT_TRUE(d["tp_comm_overlap_sms"].is_null());  // without tp_comm_overlap
  EXPECT_EQ(d["overlap_dp"], true);
  EXPECT_EQ(d["grad_reduce_in_fp32"], true);
  EXPECT_TRUE(d["bucket_bytes"].is_null());
  EXPECT_EQ(d["clip_grad"], 1.0);
  EXPECT_EQ(d["lora_rank"], 0);
  EXPECT_TRUE(d["lora_targets"].is_null());
  EXPECT_NE(format_training_text(result(), config())
                .find("options            efficiency 0.5, tp_comm_overlap off, overlap_dp on, "
                      "overlap_param_gather off, grad_reduce_in_fp32 on, bucket default, "
                      "optimizer_step on, clip_grad 1\n"),
            std::string::npos)
      << format_training_text(result(), config());
  TrainConfig c = config();
  c.efficiency = 0;  // `efficiency: kernels`
  c.peak_flops = 1979e12;
  c.tp_comm_overlap = true;
  c.overlap_dp = false;
  c.overlap_param_gather = true;
  c.grad_reduce_in_fp32 = false;
  c.bucket = Bytes(100'000'000);
  c.optimizer_step = false;
  c.clip_grad = 0;
  c.moe_imbalance = 1.25;
  c.lora_rank = 16;
  c.lora_mlp = true;
  c.embedding_in_pipeline_split = true;
  c.loss_in_pipeline_split = true;
  c.communication_sms = 20;
  const nlohmann::ordered_json o = training_to_json(training_record(result(), c))["options"];
  EXPECT_EQ(o["efficiency"], "kernels");
  EXPECT_EQ(o["peak_tflops"], 1979.0);
  EXPECT_EQ(o["tp_comm_overlap"], true);
  EXPECT_EQ(o["tp_comm_overlap_sms"], 16);  // Transformer Engine's default
  EXPECT_EQ(o["overlap_dp"], false);
  EXPECT_EQ(o["overlap_param_gather"], true);
  EXPECT_EQ(o["grad_reduce_in_fp32"], false);
  EXPECT_EQ(o["bucket_bytes"], 100'000'000);
  EXPECT_EQ(o["optimizer_step"], false);
  EXPECT_EQ(o["clip_grad"], 0.0);
  EXPECT_EQ(o["moe_imbalance"], 1.25);
  EXPECT_EQ(o["lora_rank"], 16);
  EXPECT_EQ(o["lora_targets"], "attention_mlp");
  EXPECT_EQ(o["account_for_embedding_in_pipeline_split"], true);
  EXPECT_EQ(o["account_for_loss_in_pipeline_split"], true);
  EXPECT_EQ(o["communication_sms"], 20);
  const std::string text = format_training_text(result(), c);
  EXPECT_NE(
      text.find("options            efficiency kernels, peak_tflops 1979, tp_comm_overlap "
                "on (16 SMs), overlap_dp off, overlap_param_gather on, grad_reduce_in_fp32 off, "
                "bucket 100000000 B, optimizer_step off, clip_grad 0, moe_imbalance 1.25, "
                "lora_rank 16 on attention_mlp, embedding in pipeline split, loss in "
                "pipeline split, communication_sms 20\n"),
      std::string::npos)
      << text;
}

TEST(TrainingText, IterationAndBreakdownInMilliseconds) {
  const std::string text = format_training_text(result(), config());
  EXPECT_NE(text.find("iteration time     2.000 ms (noise-free)\n"), std::string::npos) << text;
  // 1.5 of 2 ms = 75.0 %.
  EXPECT_NE(text.find("  compute                1.500 ms   75.0%\n"), std::string::npos) << text;
  EXPECT_NE(text.find("trials             4 (seed 9)"), std::string::npos) << text;
  EXPECT_NE(text.find("warning: a warning\n"), std::string::npos) << text;
}

// Four trials: the nearest-rank p99 is the ceil(0.99 x 4) = 4th of 4, the maximum, so the text
// prints no p99 and names the maximum (2.4 ms) as the slowest of 4.
TEST(TrainingText, FewTrialsNameTheMaximumNotAP99) {
  const std::string text = format_training_text(result(), config());
  EXPECT_NE(text.find("iteration p99      - (4 trials: a p99 needs at least 100"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("iteration max      2.400 ms (the slowest of 4 trials)\n"), std::string::npos)
      << text;
}

// 100 trials: the p99 is the 99th of 100, no longer the maximum, and is printed.
TEST(TrainingText, HundredTrialsPrintTheP99) {
  TrainResult r = result();
  r.trials = 100;
  r.p99 = Time::us(2350);
  const std::string text = format_training_text(r, config());
  EXPECT_NE(text.find("iteration p99      2.350 ms\n"), std::string::npos) << text;
}

// A 41.6 s step prints in seconds; memory in GiB, the unit of HBM sizes: 8 GiB of 80 GiB.
TEST(TrainingText, SecondsAndGiB) {
  TrainResult r = result();
  r.iteration = Time::us(41'645'670);
  const std::string text = format_training_text(r, config());
  EXPECT_NE(text.find("iteration time     41.646 s (noise-free)\n"), std::string::npos) << text;
  EXPECT_NE(text.find("memory per GPU     8.0 GiB of 80.0 GiB (weights 2.0 GiB"), std::string::npos)
      << text;
}

}  // namespace
}  // namespace lockstep::report
