// NCCL's per-channel tree ceiling in flow and packet runs (engine_run.cpp tree_channel_cap_GBps):
// one channel is one thread block, and NCCL's tuning model caps a tree channel's bus bandwidth
// at perChMaxTreeLL128Bws (Hopper, 4 nodes or more: 29 GB/s) whatever links it drives. Derived
// by hand on a full mesh of 8 one-GPU H100 nodes (every GPU cabled to every other at 50 GB/s),
// where the tree's edges each have their own cable.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "lockstep/nccl/sweep.hpp"
#include "lockstep/nccl/tuner.hpp"
#include "lockstep/topology/builder.hpp"
#include "lockstep/topology/presets.hpp"
#include "preset_request.hpp"

namespace lockstep {
namespace {

constexpr double kTreeLL128CapGBps = 29.0;  // tuning.cc perChMaxTreeLL128Bws, sm90, >= 4 nodes

Topology full_mesh_8() {
  ArgNode args = ArgNode::map("cluster");
  for (const auto& [k, v] : std::vector<std::pair<std::string, std::string>>{
           {"builder", "full_mesh"}, {"gpus", "8"}, {"link_bandwidth", "50GB/s"}})
    args.set(k, ArgNode::scalar(v, "cluster." + k));
  return std::move(*build_topology(args).graph);
}

double tree_us(const Topology& topo, std::uint32_t channels, const char* engine) {
  CollectiveSweep s;
  s.algo = Algorithm::Tree;
  s.proto = nccl::Proto::LL128;
  s.channels = channels;
  s.min_bytes = s.max_bytes = Bytes::mib(16);
  s.engine = engine;
  return run_collective_sweep(s, nccl_cluster(topo), &topo).at(0).time.microseconds();
}

// NCCL's launch and latency terms for the same request (its time less its bandwidth term).
double fixed_us(const Topology& topo, std::uint32_t channels) {
  TunerRequest r;
  r.bytes = Bytes::mib(16);
  r.algo = Algorithm::Tree;
  r.proto = nccl::Proto::LL128;
  r.channels = channels;
  const Prediction p = predict(nccl_cluster(topo), r);
  return (p.time - p.transfer).microseconds();
}

// Every rank's thread block on a channel moves the channel's share S / ch up (the reduction)
// and S / ch down (the broadcast, stored once per child but loaded once), 2 S / ch at 29 GB/s:
// 2 channels (one per tree) take 2 x 16,777,216 B / (2 x 29e9 B/s) = 578.52 us, 4 channels
// 289.26 us. The cables bind too: NCCL's second tree is the first shifted by one rank, so ranks
// 2 and 3 (and 6 and 7) are joined in both, each the other's child, and their cable carries one
// tree's climb and the other's descent, S / 2 each way per tree: S at 50 GB/s x NCCL's 48 / 50
// x the LL128 tree's 120 / 128 = 45 GB/s, 372.83 us, which binds the 4 channels (the model's
// tree on cables of its own, cost.cpp tree_net_GBps). Every engine takes at least the larger
// and at most that plus NCCL's latency and fill terms and 10% (the message overheads). Without
// the cap the 2-channel tree ran in 415 us on flow: the shared cable alone bound it.
TEST(TreeChannelCap, AFullMeshTreeRunsNoFasterThanItsChannelsCapsOrItsCables) {
  const Topology topo = full_mesh_8();
  const double S = 16.0 * 1024 * 1024;
  const double cable_us = S / (50 * 48.0 / 50 * 120.0 / 128 * 1e3);
  EXPECT_NEAR(cable_us, 372.83, 0.01);
  for (const std::uint32_t channels : {2u, 4u}) {
    const double bound_us = std::max(2 * S / (channels * kTreeLL128CapGBps * 1e3), cable_us);
    for (const char* engine : {"analytical", "flow", "packet"}) {
      SCOPED_TRACE(std::string(engine) + ", channels " + std::to_string(channels));
      const double us = tree_us(topo, channels, engine);
      EXPECT_GE(us, bound_us);
      EXPECT_LE(us, 1.1 * (bound_us + fixed_us(topo, channels)));
    }
  }
}

// The public file's line 19: 2 x 1 H100 over RoCE (400G), tree LL128, 2 MiB, 2 channels (one per
// tree). The model: launch 20 + base 14 + 2 x 8.5 (NCCL's network hwLat, tree LL128) + S / bus,
// bus = 48 GB/s (NCCL's search speed of a 400G NIC) x 120/128 = 45 GB/s: 2,097,152 B / 45 GB/s =
// 46.60 us, plus the fill of 18,000 B chunks (tree_chunk_test.cpp): two crossings at 48 x 0.92 /
// 2 = 22.08 GB/s (0.815 us each) less one period (2,097,152 / 59 chunks / 45 GB/s = 0.790 us),
// 0.84 us: 98.44 us. Flow caps each channel at its share, bus / 2 = 22.5 GB/s (a leaf only
// climbs, a root only descends: each sends S / 2 per channel once), so a channel's descent, S
// / 2 = 1,048,576 B, takes at least 46.60 us, cannot start before its first chunk has climbed
// (one network step latency, 8.5 us) and ends one step latency before its last chunk lands:
// flow >= 20 + 14 + 2 x 8.5 + 46.60 = 97.60 us, the model less its fill, and no more than the
// model. Without the cap a lone climb streamed at NCCL's per-channel ceiling (36.7 GB/s) while
// the other tree's first chunk waited out its step latency, and flow took 92.42 us.
TEST(TreeChannelCap, TwoOneGpuNodesPayBothStepLatenciesAsTheModel) {
  const PresetCluster preset = test::preset_of("hgx-h100", "roce-400g", 2, 1, 1);
  const BuildResult built = build_topology(rail_optimized_args(preset));
  CollectiveSweep s;
  s.algo = Algorithm::Tree;
  s.proto = nccl::Proto::LL128;
  s.min_bytes = s.max_bytes = Bytes::mib(2);
  const auto time_us = [&](const char* engine) {
    s.engine = engine;
    return run_collective_sweep(s, nccl_cluster(preset), &*built.graph).at(0).time.microseconds();
  };
  const double S = 2.0 * 1024 * 1024;
  const double stream_us = S / (48 * 120.0 / 128 * 1e3);
  const double fill_us = 2 * 18000 / (48 * 0.92 / 2 * 1e3) - S / 59 / (45 * 1e3);
  EXPECT_NEAR(stream_us, 46.60, 0.005);
  EXPECT_NEAR(fill_us, 0.84, 0.005);
  const double model_us = 20 + 14 + 2 * 8.5 + stream_us + fill_us;
  EXPECT_NEAR(time_us("analytical"), model_us, 0.01);
  const double flow_us = time_us("flow");
  EXPECT_GE(flow_us, model_us - fill_us);
  EXPECT_LE(flow_us, model_us);
}

}  // namespace
}  // namespace lockstep
