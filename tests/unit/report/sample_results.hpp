#pragma once
// A small hand-made RunResults shared by the report tests: two variants, one with a sweep, a
// training step with jitter and a heat map, the other with only an inventory.
#include "lockstep/report/results.hpp"

namespace lockstep::report::testing {

inline RunResults sample_results() {
  RunResults r;
  r.title = "Test <run> & \"quotes\"";
  r.scenario_path = "scenarios/test.yaml";
  r.scenario_text = "version: 1\nname: test </script> <!-- x -->\n";
  r.lockstep_version = "0.1.0";
  r.seed = 7;
  r.variant_keys = {"fabric"};

  Variant ib;
  ib.name = "fabric=ib-ndr";
  ib.substitutions = {{"fabric", "ib-ndr"}};
  ib.inventory.design = "rail_optimized 32 nodes";
  ib.inventory.gpus = 256;
  ib.inventory.nodes = 32;
  ib.inventory.nics = 256;
  ib.inventory.tiers = {{"leaf", 8, 512, 0, 1.0}, {"spine", 4, 256, 0, 1.0}};
  // 8 leaves at $25,000 and 5 W... + 256 cables at $100: cost 200,000 + 25,600 = 225,600.
  ib.inventory.lines = {{"QM9700", "switch", "leaf", 8, 5.0, 25000.0},
                        {"cable, with a comma", "cable", "", 256, 0.0, 100.0}};
  ib.inventory.cost_usd = 225600;
  ib.inventory.power_w = 40;
  ib.inventory.injection_per_gpu = Bandwidth::gbps(400);  // 50 GB/s
  ib.inventory.max_one_way_latency = Time::us(2.5);
  Sweep sweep{"all_reduce", "auto", "analytical", {}};
  sweep.rows.push_back({1024, 256, "float", "ring", "ll", 20.0, 0.0512, 0.1});
  sweep.rows.push_back({1 << 30, (1 << 30) / 4, "float", "ring", "simple", 5000.0, 214.7, 400.5});
  ib.sweeps.push_back(sweep);
  Training t;
  t.model = "llama3-70b";
  t.parallelism = "TP8 PP4 DP8";
  t.gpus = 256;
  t.iteration_time_us = 1e6;
  t.breakdown = {{"compute", 8e5}, {"exposed_dp", 2e5}};
  t.mfu = 0.4;
  t.tokens_per_s = 1000;
  JitterStats j;
  j.trials = 4;
  j.iteration_time_us = {1.0e6, 1.1e6, 1.2e6, 1.3e6};
  j.p50_us = 1.1e6;
  j.p99_us = 1.3e6;
  t.jitter = j;
  ib.training = t;
  ib.heatmap = LinkHeatmap{10.0, "training step", {"leaf0->spine0"}, {{0.25, 1.0}}};
  r.variants.push_back(ib);

  Variant tcp;
  tcp.name = "fabric=tcp";
  tcp.substitutions = {{"fabric", "tcp"}};
  tcp.inventory.gpus = 256;
  tcp.notes.push_back("no sweep");
  r.variants.push_back(tcp);
  return r;
}

}  // namespace lockstep::report::testing
