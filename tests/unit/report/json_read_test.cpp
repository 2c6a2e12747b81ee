#include "lockstep/report/json_read.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "lockstep/report/json.hpp"
#include "lockstep/report/training.hpp"
#include "sample_results.hpp"

namespace lockstep::report {
namespace {

// The property `lockstep sweep` relies on: a variant read back writes the same record.
void expect_round_trip(const Variant& v) {
  const nlohmann::ordered_json written = variant_to_json(v);
  EXPECT_EQ(json_text(variant_to_json(variant_from_json(written))), json_text(written)) << v.name;
}

TEST(JsonRead, SampleVariantsRoundTrip) {
  for (const Variant& v : testing::sample_results().variants) expect_round_trip(v);
}

TEST(JsonRead, LinksNullsAndSensitivityRoundTrip) {
  Variant v = testing::sample_results().variants.at(0);
  // A packet-engine row: the busiest link with every counter, and the network totals.
  LinkReport link;
  link.link = 7;
  link.name = "node 0 nic 0 -> leaf 0";
  link.bytes = 1.5e9;
  link.utilisation = 0.75;
  link.peak_utilisation = 0.9;
  link.peak_at = Time::us(12.5);
  link.queue_p50 = 4096;
  link.queue_p99 = 65536;
  link.queue_max = 70000;
  link.first_sent = Time::us(1);
  link.last_sent = Time::us(2000.25);
  link.drops = 3;
  link.ecn_marks = 11;
  link.pauses = 2;
  link.paused = Time::ns(640);
  link.cnps = 5;
  link.retransmissions = 3;
  link.dropped_bytes = 12288;
  SweepRow row{1 << 20, 1 << 18, "float", "ring", "Simple", 10.5, 99.9, 187.3, "sum", 16, {}, {}};
  row.links = {link};
  row.network = link_totals(LinkCounters{});
  v.sweeps.push_back(Sweep{"all_reduce", "auto", "packet", {"failed-link:link=3"}, {row}});
  // A figure that was not finite is written null and reads back as NaN (null again).
  v.training->mfu = std::numeric_limits<double>::quiet_NaN();
  v.training->model_map = model_map_json(model_preset("mixtral-8x7b"));
  v.sensitivity_baseline_us = 1234.5;
  v.sensitivity = {{"network_2x", "2x faster", 1000.25, ""}, {"failed_spine", "no spine", {}, "x"}};
  expect_round_trip(v);
  const Variant back = variant_from_json(variant_to_json(v));
  EXPECT_TRUE(std::isnan(back.training->mfu));
  EXPECT_EQ(back.training->model_map["experts"], 8);
  EXPECT_EQ(back.sweeps.back().rows[0].links[0].paused, Time::ns(640));
  EXPECT_FALSE(back.sensitivity[1].iteration_time_us.has_value());
}

// The pipeline and kernel keys read back: an interleaved group size (null without interleaving,
// as in the sample), DualPipe's closed form, and non-default number formats.
TEST(JsonRead, PipelineAndKernelKeysRoundTrip) {
  Variant v = testing::sample_results().variants.at(0);
  v.training->parallel.interleave = 2;
  v.training->parallel.microbatch_group = 8;
  v.training->precision = "fp8";
  v.training->attention_kernel = "unfused";
  v.training->optimizer_moments = "bf16";
  v.training->recompute = "selective";
  v.training->recompute_modules = "core_attn,mlp";
  expect_round_trip(v);
  EXPECT_EQ(variant_from_json(variant_to_json(v)).training->parallel.microbatch_group, 8u);
  // Expert TP 1 under TP 2 (parallel folding) is written and read back; etp left unset is
  // written as the tp it stands for.
  v.training->parallel.tp = 2;
  v.training->parallel.ep = 4;
  v.training->parallel.etp = 1;
  expect_round_trip(v);
  EXPECT_EQ(variant_to_json(v)["training"]["parallel"]["etp"], 1);
  EXPECT_EQ(variant_from_json(variant_to_json(v)).training->parallel.etp, 1u);
  v.training->parallel.etp = 0;
  EXPECT_EQ(variant_to_json(v)["training"]["parallel"]["etp"], 2);
  EXPECT_EQ(variant_from_json(variant_to_json(v)).training->parallel.etp, 0u);
  v.training->parallel = {};
  v.training->parallel.pipeline = "dualpipe";
  v.training->parallel.pipeline_timing = "closed_form_on_1f1b";
  expect_round_trip(v);
  const Variant back = variant_from_json(variant_to_json(v));
  EXPECT_EQ(back.training->parallel.microbatch_group, 0u);
  EXPECT_EQ(back.training->parallel.pipeline_timing, "closed_form_on_1f1b");
  EXPECT_EQ(back.training->optimizer_moments, "bf16");
}

// The other job keys read back: efficiency "kernels" as 0, nulls as the defaults they stand for.
TEST(JsonRead, OptionsRoundTrip) {
  Variant v = testing::sample_results().variants.at(0);
  expect_round_trip(v);
  TrainingOptions& o = v.training->options;
  o.efficiency = 0;
  o.peak_tflops = 1979;
  o.tp_comm_overlap = true;
  o.tp_comm_overlap_sms = 24;
  o.overlap_dp = false;
  o.overlap_param_gather = true;
  o.grad_reduce_in_fp32 = false;
  o.bucket_bytes = 100'000'000;
  o.optimizer_step = false;
  o.clip_grad = 0;
  o.moe_imbalance = 1.25;
  o.lora_rank = 16;
  o.lora_targets = "attention";
  o.account_for_embedding_in_pipeline_split = true;
  o.account_for_loss_in_pipeline_split = true;
  o.communication_sms = 20;
  expect_round_trip(v);
  const TrainingOptions back = variant_from_json(variant_to_json(v)).training->options;
  EXPECT_EQ(back.efficiency, 0.0);
  EXPECT_EQ(back.bucket_bytes, 100'000'000u);
  EXPECT_EQ(back.lora_targets, "attention");
  EXPECT_EQ(back.communication_sms, 20u);
  EXPECT_EQ(back.tp_comm_overlap_sms, 24u);
}

TEST(JsonRead, PriceNotesRoundTrip) {
  // An HGX NVSwitch line is priced inside its GPU's price: the note travels with the line (the
  // sweep's merged report read it back as a $0 line before).
  Variant v = testing::sample_results().variants.at(0);
  InventoryLine line{"NVSwitch gen3 chip", "nvswitch", "scale-up", 4, 0, 0};
  line.price_note = "included in NVIDIA H100 SXM5 80GB";
  v.inventory.lines.push_back(line);
  expect_round_trip(v);
  EXPECT_EQ(variant_from_json(variant_to_json(v)).inventory.lines.back().price_note,
            "included in NVIDIA H100 SXM5 80GB");
}

TEST(JsonRead, ForeignRecordThrows) {
  EXPECT_THROW(variant_from_json(nlohmann::ordered_json{{"name", "x"}}), nlohmann::json::exception);
}

}  // namespace
}  // namespace lockstep::report
