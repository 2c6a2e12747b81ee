// The "why" section's sentences from hand-made results, and readable durations.
#include "lockstep/report/why.hpp"

#include <gtest/gtest.h>

#include <string>

#include "lockstep/topology/builder.hpp"
#include "lockstep/topology/presets.hpp"
#include "lockstep/workload/model.hpp"
#include "lockstep/workload/noise.hpp"

namespace lockstep::report {
namespace {

Variant trained(const std::string& name, double dp_us) {
  Variant v;
  v.name = name;
  v.inventory.gpus = 256;
  v.inventory.nodes = 32;
  Training t;
  t.parallel.tp = 8;
  t.breakdown = {{"compute", 15e6}, {"exposed_tp", 3e6}, {"pipeline_bubble", 1.9e6}};
  if (dp_us > 0) t.breakdown.push_back({"exposed_dp", dp_us});
  t.iteration_time_us = 19.9e6 + dp_us;
  v.training = t;
  return v;
}

TEST(ReadableTime, ThreeSignificantDigitsInTheUnitThatFits) {
  EXPECT_EQ(readable_time_us(41'645'670), "41.6 s");
  EXPECT_EQ(readable_time_us(3e6), "3.00 s");
  EXPECT_EQ(readable_time_us(100'000), "100 ms");
  EXPECT_EQ(readable_time_us(87'914.4), "87.9 ms");
  EXPECT_EQ(readable_time_us(12.54), "12.5 us");
  EXPECT_EQ(readable_time_us(-2500), "-2.50 ms");
}

// 20 s = 15 + 3 + 1.9 + 0.1 s; compute 15 / 20 = 75.0%, TP 15.0%, bubble 9.5%, DP 0.5%.
TEST(Explain, WhereTheStepGoesAndTheDominantPart) {
  RunResults results;
  results.variants.push_back(trained("fabric=ib", 100'000));
  explain(results);
  const Variant& v = results.variants[0];
  ASSERT_GE(v.why.size(), 2u);
  EXPECT_EQ(v.why[0],
            "Of the 20.0 s step (noise-free): compute 75.0% (15.0 s), exposed TP communication "
            "15.0% (3.00 s), pipeline bubble 9.5% (1.90 s), exposed DP communication 0.5% "
            "(100 ms). Compute dominates.");
  // TP 8 divides the 256 / 32 = 8 GPUs of a node: its traffic stays inside.
  EXPECT_EQ(v.why[1],
            "TP traffic (groups of 8) stays on the scale-up links inside each 8-GPU node; the "
            "scale-out fabric carries the rest, whose exposed part is 0.5% of the step.");
}

// tcp: DP 0.6 s instead of 0.1 s: 20.5 / 20 = 2.5% slower, all of it DP (+500 ms). roce: 10 us
// more DP, 5e-7 of the step: equal within 0.1%, with the fabric's peak load 0.4% from its heat
// map.
TEST(Explain, ComparesEachVariantWithTheFastest) {
  RunResults results;
  results.variants.push_back(trained("fabric=tcp", 600'000));
  results.variants.push_back(trained("fabric=ib", 100'000));
  results.variants.push_back(trained("fabric=roce", 100'010));
  LinkHeatmap h;
  h.bucket_us = 1e5;
  h.links = {"nic0 (node 0, #0) -> leaf0"};
  h.utilisation = {{0.001, 0.004, 0.0}};
  results.variants[2].heatmap = h;
  explain(results);
  EXPECT_EQ(results.variants[0].why.back(),
            "fabric=tcp is 2.5% slower than fabric=ib (+500 ms): exposed DP communication "
            "+500 ms.");
  EXPECT_EQ(results.variants[1].why.size(), 2u);  // the fastest: nothing to compare with
  EXPECT_EQ(results.variants[2].why[1],
            "TP traffic (groups of 8) stays on the scale-up links inside each 8-GPU node; the "
            "scale-out fabric carries the rest, whose exposed part is 0.5% of the step; the "
            "busiest link (nic0 (node 0, #0) -> leaf0) peaks at 0.4% of its line rate "
            "(averaged over 100 ms intervals).");
  EXPECT_EQ(results.variants[2].why.back(),
            "fabric=roce equals fabric=ib within 0.1% (+10.0 us) because the traffic that "
            "crosses the scale-out fabric (exposed PP / DP / EP / CP communication) is only 0.5% "
            "of the step and never loads a link above 0.4% of its line rate.");
}

// 19.9 / 20 = -0.5%, 26 / 20 = +30.0%; a case without a time says why.
TEST(Explain, SensitivityLine) {
  RunResults results;
  results.variants.push_back(trained("base", 100'000));
  Variant& v = results.variants[0];
  v.sensitivity_baseline_us = 20e6;
  v.sensitivity = {
      {"network_2x", "2x faster scale-out network", 19.9e6, ""},
      {"straggler_1.5x", "GPU 0 1.5x slower", 26e6, ""},
      {"failed_spine", "one spine switch failed", std::nullopt, "the fabric has no spine tier"}};
  explain(results);
  EXPECT_EQ(v.why.back(),
            "What if (re-run on the analytical engine, noise-free, baseline 20.0 s): 2x faster "
            "scale-out network: 19.9 s (-0.5%); GPU 0 1.5x slower: 26.0 s (+30.0%); one spine "
            "switch failed: not run (the fabric has no spine tier).");
}

// TP 16 on 8-GPU nodes crosses the fabric: the sentence says so instead.
TEST(Explain, TensorParallelAcrossNodes) {
  RunResults results;
  results.variants.push_back(trained("base", 100'000));
  results.variants[0].training->parallel.tp = 16;
  explain(results);
  EXPECT_EQ(results.variants[0].why[1],
            "TP groups of 16 span nodes of 8 GPUs, so TP traffic crosses the scale-out fabric "
            "too.");
}

// The what-if cases on a real cluster: two HGX H100 nodes on NDR, Llama 3 8B cut to 2 layers,
// TP 8 inside each node and DP 2 across the fabric. By construction: rank 0 1.5x slower
// stretches its replica's compute by half, and the other replica waits for its gradients, so
// the step grows by half the compute (within 5%: the gradient all-reduce's overlap with the
// backward pass changes); a 2x faster fabric can save at most the exposed DP and PP
// communication; the baseline is the noise-free step on the analytical engine.
TEST(Sensitivity, MeasuredOnARealCluster) {
  PresetRequest request;
  request.fabric = "ib-ndr";
  request.nodes = 2;
  const Topology topo = *build_topology(rail_optimized_args(resolve_preset(request))).graph;
  TrainConfig c;
  c.model = model_preset("llama3-8b");
  c.model.layers = 2;
  c.par.tp = 8;
  c.par.dp = 2;
  c.global_batch = 4;
  c.micro_batch = 1;
  c.seq = 2048;
  c.engine = "analytical";
  c.trials = 4;
  c.jitter = {parse_jitter("lognormal:0.05", "jitter")};
  Variant v;
  run_sensitivity(topo, c, {}, v);
  TrainConfig quiet = c;
  quiet.jitter.clear();
  quiet.trials = 1;
  const TrainResult base = simulate_training(topo, quiet);
  ASSERT_TRUE(v.sensitivity_baseline_us.has_value());
  EXPECT_DOUBLE_EQ(*v.sensitivity_baseline_us, base.iteration.microseconds());
  ASSERT_EQ(v.sensitivity.size(), 3u);
  const double t = base.iteration.microseconds();
  const double network = base.breakdown.dp.microseconds() + base.breakdown.pp.microseconds();
  ASSERT_TRUE(v.sensitivity[0].iteration_time_us.has_value());
  EXPECT_LE(*v.sensitivity[0].iteration_time_us, t);
  EXPECT_GE(*v.sensitivity[0].iteration_time_us, t - network - 1e-6);
  ASSERT_TRUE(v.sensitivity[1].iteration_time_us.has_value());
  const double compute = base.breakdown.compute.microseconds();
  EXPECT_NEAR(*v.sensitivity[1].iteration_time_us - t, 0.5 * compute, 0.05 * compute);
  bool spine = false;
  for (const Device& d : topo.devices())
    spine = spine || (d.kind == DeviceKind::Switch && d.tier == 1);
  EXPECT_EQ(v.sensitivity[2].iteration_time_us.has_value(), spine) << v.sensitivity[2].note;
  if (!spine) {
    EXPECT_EQ(v.sensitivity[2].note, "the fabric has no spine tier");
  }
}

}  // namespace
}  // namespace lockstep::report
