// parse_train_config: the one validation path for CLI flags and scenario `job:` sections.
#include <gtest/gtest.h>

#include "job_node.hpp"
#include "lockstep/config/arg_node.hpp"
#include "lockstep/core/error.hpp"
#include "lockstep/workload/train_config.hpp"

namespace lockstep {
namespace {

ArgNode job(const testing::JobKeys& keys) {
  return testing::job_node(keys);
}

std::string error_of(const ArgNode& node) {
  return testing::train_config_error(node);
}

TEST(TrainConfig, ReadsTheIssueExample) {
  const TrainConfig c = parse_train_config(job({{"model", "llama3-70b"},
                                                {"tp", "8"},
                                                {"pp", "4"},
                                                {"dp", "8"},
                                                {"global_batch", "1024"},
                                                {"seq", "8192"},
                                                {"zero", "1"},
                                                {"trials", "100"},
                                                {"gpu_hour_usd", "2.5"}}));
  EXPECT_EQ(c.model.layers, 80u);
  EXPECT_EQ(c.par.world(), 256u);
  EXPECT_EQ(c.par.zero, ZeroStage::Optimizer);
  // 1024 sequences over 8 replicas of micro-batch 1: 128 micro-batches per replica.
  EXPECT_EQ(c.micro_batches(), 128u);
  EXPECT_EQ(c.tokens_per_iteration(), 1024u * 8192u);
  EXPECT_EQ(c.trials, 100u);
}

TEST(TrainConfig, ErrorsNameTheFieldAndItsPlace) {
  EXPECT_NE(error_of(job({{"model", "llama3-70b"}, {"global_batch", "1024"}, {"tp", "3"}}))
                .find("job.tp"),
            std::string::npos);  // 64 heads do not split over 3
  EXPECT_NE(
      error_of(job({{"model", "llama3-70b"}, {"global_batch", "10"}, {"dp", "4"}})).find("s.yaml:"),
      std::string::npos);
  EXPECT_NE(error_of(job({{"model", "llama3-70b"}, {"global_batch", "8"}, {"tpp", "2"}}))
                .find("unknown key 'tpp'"),
            std::string::npos);
  EXPECT_NE(
      error_of(job({{"model", "llama3-70b"}, {"global_batch", "8"}, {"ep", "2"}})).find("MoE"),
      std::string::npos);
  EXPECT_NE(error_of(job({{"model", "gpt5"}, {"global_batch", "8"}})).find("unknown model"),
            std::string::npos);
  EXPECT_NE(error_of(job({{"model", "llama3-8b"}, {"global_batch", "8"}, {"jitter", "gauss:3"}}))
                .find("job.jitter"),
            std::string::npos);
}

TEST(TrainConfig, TraceDetail) {
  EXPECT_FALSE(parse_train_config(job({{"model", "llama3-8b"}, {"global_batch", "8"}})).trace_ops);
  EXPECT_TRUE(parse_train_config(
                  job({{"model", "llama3-8b"}, {"global_batch", "8"}, {"trace_detail", "op"}}))
                  .trace_ops);
  // A wrong value names the key, its place and the choices.
  const std::string e =
      error_of(job({{"model", "llama3-8b"}, {"global_batch", "8"}, {"trace_detail", "ops"}}));
  EXPECT_NE(e.find("job.trace_detail"), std::string::npos) << e;
  EXPECT_NE(e.find("s.yaml:6:3"), std::string::npos) << e;  // the third key, from line 4
  EXPECT_NE(e.find("layer"), std::string::npos) << e;
}

TEST(TrainConfig, NoiseSpecs) {
  const JitterSpec n = parse_jitter("normal:5%", "jitter");
  EXPECT_EQ(n.kind, JitterSpec::Kind::Normal);
  EXPECT_DOUBLE_EQ(n.sigma, 0.05);
  const JitterSpec s = parse_jitter("straggler:p=0.01,x=1.5", "jitter");
  EXPECT_DOUBLE_EQ(s.probability, 0.01);
  EXPECT_DOUBLE_EQ(s.slowdown, 1.5);
  EXPECT_EQ(parse_fault("failed-link:link=12", "faults").link, 12u);
  EXPECT_THROW(parse_jitter("straggler:p=2", "jitter"), InputError);
  EXPECT_THROW(parse_jitter("normal:", "jitter"), InputError);
  EXPECT_THROW(parse_fault("slow-gpu:rank=-1", "faults"), InputError);
  EXPECT_THROW(parse_fault("degraded-link:link=3,x=0", "faults"), InputError);
}

TEST(TrainConfig, StragglerDrawsAreMonotoneInP) {
  // One uniform per rank whatever p is: at a higher p the same seed slows a superset of ranks.
  const ComputeNoise low({parse_jitter("straggler:p=0.1,x=2", "j")}, {});
  const ComputeNoise high({parse_jitter("straggler:p=0.4,x=2", "j")}, {});
  Rng a(42), b(42);
  const auto fa = low.draw_rank_factors(1000, a);
  const auto fb = high.draw_rank_factors(1000, b);
  int slow_low = 0, slow_high = 0;
  for (std::size_t r = 0; r < fa.size(); ++r) {
    EXPECT_LE(fa[r], fb[r]);
    slow_low += fa[r] > 1;
    slow_high += fb[r] > 1;
  }
  EXPECT_NEAR(slow_low, 100, 40);
  EXPECT_NEAR(slow_high, 400, 60);
}

TEST(TrainConfig, RankLists) {
  EXPECT_EQ(parse_rank_list("0-3,8", "trace_ranks"), (std::vector<std::uint32_t>{0, 1, 2, 3, 8}));
  EXPECT_THROW(parse_rank_list("3-1", "trace_ranks"), InputError);
  EXPECT_THROW(parse_rank_list("a", "trace_ranks"), InputError);
  // The largest rank is one rank, not a loop that wraps (found by tests/fuzz).
  EXPECT_EQ(parse_rank_list("4294967295", "trace_ranks"),
            (std::vector<std::uint32_t>{4294967295U}));
  // At most 2^20 ranks in all: two ranges of 524,288 fit, a third rank does not.
  EXPECT_EQ(parse_rank_list("0-524287,1000000-1524287", "trace_ranks").size(), 1U << 20);
  EXPECT_THROW(parse_rank_list("0-524287,1000000-1524287,7", "trace_ranks"), InputError);
  EXPECT_THROW(parse_rank_list("0-1000000,0-1000000", "trace_ranks"), InputError);
}

TEST(TrainConfig, ZeroHbmIsRefusedNotReadAsTheCatalogs) {
  // hbm 0 used to mean "the catalog's", so `hbm: 0GB` silently ran with 80 GB.
  EXPECT_EQ(error_of(job({{"model", "llama3-8b"}, {"global_batch", "8"}, {"hbm", "0GB"}})),
            "s.yaml:6:3: job.hbm: '0GB' is zero");
  EXPECT_EQ(
      parse_train_config(job({{"model", "llama3-8b"}, {"global_batch", "8"}, {"hbm", "1GB"}})).hbm,
      Bytes(1'000'000'000));
}

TEST(TrainConfig, TheDegreeProductIsCheckedAtDp) {
  // check_topology reports tp x cp x pp x dp vs the GPU count at the dp key (line 5 here), or
  // at the job map when dp is left out.
  const TrainConfig with_dp =
      parse_train_config(job({{"model", "llama3-8b"}, {"global_batch", "8"}, {"dp", "4"}}));
  EXPECT_EQ(with_dp.world_field, "job.dp");
  EXPECT_EQ(with_dp.world_where.str(), "s.yaml:6:3");
  const TrainConfig without =
      parse_train_config(job({{"model", "llama3-8b"}, {"global_batch", "8"}}));
  EXPECT_EQ(without.world_field, "job");
  EXPECT_EQ(without.world_where.str(), "s.yaml:3:1");
}

TEST(TrainConfig, TpCommOverlapNeedsSequenceParallelism) {
  // Megatron-LM refuses --tp-comm-overlap without --sequence-parallel (arguments.py).
  EXPECT_EQ(error_of(job({{"model", "llama3-8b"},
                          {"tp", "2"},
                          {"global_batch", "8"},
                          {"sequence_parallel", "false"},
                          {"tp_comm_overlap", "true"}})),
            "s.yaml:8:3: job.tp_comm_overlap: needs sequence_parallel: true (Megatron-LM overlaps "
            "the sequence-parallel all-gather and reduce-scatter only)");
  const TrainConfig c = parse_train_config(job({{"model", "llama3-8b"}, {"global_batch", "8"}}));
  EXPECT_FALSE(c.tp_comm_overlap);
  EXPECT_EQ(c.tp_comm_overlap_sms, 16u);  // Transformer Engine's userbuffers default
  EXPECT_FALSE(c.overlap_param_gather);
  EXPECT_TRUE(c.optimizer_step);
  // The SMs of overlapped reduce-scatters mean nothing without the overlap.
  EXPECT_EQ(
      error_of(job({{"model", "llama3-8b"}, {"global_batch", "8"}, {"tp_comm_overlap_sms", "20"}})),
      "s.yaml:6:3: job.tp_comm_overlap_sms: needs tp_comm_overlap: true");
  EXPECT_EQ(parse_train_config(job({{"model", "llama3-8b"},
                                    {"global_batch", "8"},
                                    {"tp_comm_overlap", "true"},
                                    {"tp_comm_overlap_sms", "20"}}))
                .tp_comm_overlap_sms,
            20u);
}
TEST(TrainConfig, RecomputeModulesAreMegatronCoresNamesWithSelective) {
  const TrainConfig c = parse_train_config(job({{"model", "deepseek-v3"},
                                                {"global_batch", "8"},
                                                {"recompute_modules", "layernorm, mla_up_proj"}}));
  EXPECT_EQ(c.recompute, Recompute::Selective);  // the list implies Megatron's granularity
  EXPECT_EQ(c.recompute_modules, kRecomputeLayernorm | kRecomputeMlaUpProj);
  EXPECT_TRUE(c.recomputes(kRecomputeMlaUpProj));
  EXPECT_FALSE(c.recomputes(kRecomputeCoreAttn));
  EXPECT_EQ(recompute_module_names(c.recompute_modules), "layernorm,mla_up_proj");
  // Selective without a list is Megatron-Core's default, ["core_attn"].
  const TrainConfig d = parse_train_config(
      job({{"model", "llama3-8b"}, {"global_batch", "8"}, {"recompute", "selective"}}));
  EXPECT_EQ(d.recompute_modules, kRecomputeCoreAttn);
  EXPECT_EQ(error_of(job({{"model", "llama3-8b"},
                          {"global_batch", "8"},
                          {"recompute_modules", "layernorm,mlp_act"}})),
            "s.yaml:6:3: job.recompute_modules: unknown module 'mlp_act' (expected core_attn, "
            "mlp, moe, moe_act, layernorm, mla_up_proj or shared_experts)");
  EXPECT_EQ(error_of(job({{"model", "llama3-8b"},
                          {"global_batch", "8"},
                          {"recompute", "full"},
                          {"recompute_modules", "mlp"}})),
            "s.yaml:7:3: job.recompute_modules: needs recompute: selective (recompute is full)");
}

TEST(TrainConfig, LoraNeedsARankAndASingleEfficiency) {
  const TrainConfig c = parse_train_config(job({{"model", "llama2-70b"},
                                                {"global_batch", "8"},
                                                {"lora_rank", "16"},
                                                {"lora_targets", "attention_mlp"}}));
  EXPECT_EQ(c.lora_rank, 16u);
  EXPECT_TRUE(c.lora_mlp);
  EXPECT_EQ(error_of(job(
                {{"model", "llama2-70b"}, {"global_batch", "8"}, {"lora_targets", "attention"}})),
            "s.yaml:6:3: job.lora_targets: needs lora_rank (the adapters' rank, e.g. 16)");
  EXPECT_NE(error_of(job({{"model", "llama2-70b"},
                          {"global_batch", "8"},
                          {"efficiency", "kernels"},
                          {"lora_rank", "16"}}))
                .find("job.lora_rank: needs a single efficiency"),
            std::string::npos);
}

}  // namespace
}  // namespace lockstep
