// NCCL's per-channel tree ceiling in flow and packet runs (engine_run.cpp tree_channel_cap_GBps):
// one channel is one thread block, and NCCL's tuning model caps a tree channel's bus bandwidth
// at perChMaxTreeLL128Bws (Hopper, 4 nodes or more: 29 GB/s) whatever links it drives. Derived
// by hand on a full mesh of 8 one-GPU H100 nodes (every GPU cabled to every other at 50 GB/s),
// where the tree's edges each have their own cable and nothing else would bind.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "lockstep/nccl/sweep.hpp"
#include "lockstep/nccl/tuner.hpp"
#include "lockstep/topology/builder.hpp"

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
// 289.26 us. Flow and packet take at least that and at most that plus NCCL's latency terms and
// 10% (the pipeline's fill and the message overheads). Without the cap the 2-channel tree ran in
// 415 us on flow: each of its edges had a 50 GB/s cable of its own.
TEST(TreeChannelCap, AFullMeshTreeRunsNoFasterThanItsChannelsCaps) {
  const Topology topo = full_mesh_8();
  const double S = 16.0 * 1024 * 1024;
  for (const std::uint32_t channels : {2u, 4u}) {
    const double bound_us = 2 * S / (channels * kTreeLL128CapGBps * 1e3);
    for (const char* engine : {"flow", "packet"}) {
      SCOPED_TRACE(std::string(engine) + ", channels " + std::to_string(channels));
      const double us = tree_us(topo, channels, engine);
      EXPECT_GE(us, bound_us);
      EXPECT_LE(us, 1.1 * (bound_us + fixed_us(topo, channels)));
    }
  }
}

}  // namespace
}  // namespace lockstep
