// Every system preset on two nodes, as `lockstep collective --system S --nodes 2 --engine E`
// runs it, on the three engines: each runs, and at 1 GiB all-reduce (bandwidth-bound, NCCL's
// choice of algorithm) flow agrees with the NCCL model within the zoo's 10% (zoo_test.cpp),
// (DGX A100's tree with a bound of its own, derived below). Packet runs at 16 MiB (at
// 1 GiB it takes seconds per preset); its agreement is the zoo's business.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "lockstep/nccl/sweep.hpp"
#include "lockstep/topology/builder.hpp"
#include "lockstep/topology/presets.hpp"

namespace lockstep {
namespace {

CollectiveRow run(const std::string& system, const char* engine, Bytes bytes) {
  const PresetCluster preset = resolve_preset({.system = system, .nodes = 2});
  const BuildResult built = build_topology(rail_optimized_args(preset));
  CollectiveSweep s;
  s.min_bytes = s.max_bytes = bytes;
  s.engine = engine;
  return run_collective_sweep(s, nccl_cluster(preset), &*built.graph).at(0);
}

// DGX A100's tree (NCCL's choice at 1 GiB on 2 nodes, LL128, 16 channels): flow caps each tree
// channel at its share of the model's bus (nccl/engine_run.cpp tree_channel_share_GBps), 2 x
// 112.5 / 16 = 14.0625 GB/s (bus: NVLink's 240 GB/s x 120/128 / 2 for a chain GPU's climb and
// descent, under the NICs' 192 x 120/128), and the model's time is 9,676.43 us. The model's
// LL128 fill has NVLink forward lines as they land; the tree program forwards each 576,000 B
// chunk (614,400 x 15/16) whole at every one of the chain's 2 (8 - 1) = 14 NVLink stages, so
// flow's first chunk takes at most 14 x 576,000 B / 14.0625 GB/s = 573.44 us more: flow within
// 9,676.43 + 573.44 = 10,249.87 us, 0.944 of the model's bus bandwidth (10,139.6 us, 0.954).
constexpr double kDgxA100ModelUs = 9676.43;
constexpr double kDgxA100ChunkStoreAndForwardUs = 14 * 576000 / 14.0625e3;

TEST(PresetEngines, EverySystemRunsOnTwoNodesOnEveryEngine) {
  for (const SystemPreset& system : system_presets()) {
    const std::string& name = system.name;
    const CollectiveRow model = run(name, "analytical", Bytes::gib(1));
    const CollectiveRow flow = run(name, "flow", Bytes::gib(1));
    ASSERT_GT(model.busbw_GBps, 0) << name;
    EXPECT_EQ(flow.algorithm, model.algorithm) << name;
    EXPECT_NEAR(flow.busbw_GBps / model.busbw_GBps, 1.0, 0.10) << name << " " << model.algorithm;
    if (name == "dgx-a100") {
      EXPECT_NEAR(kDgxA100ChunkStoreAndForwardUs, 573.44, 0.005);
      EXPECT_NEAR(model.time.microseconds(), kDgxA100ModelUs, 0.005);
      EXPECT_LE(flow.time.microseconds(), kDgxA100ModelUs + kDgxA100ChunkStoreAndForwardUs);
    }
    const CollectiveRow packet = run(name, "packet", Bytes::mib(16));
    EXPECT_GT(packet.time, Time::zero()) << name;
    EXPECT_EQ(packet.algorithm, run(name, "analytical", Bytes::mib(16)).algorithm) << name;
  }
}

}  // namespace
}  // namespace lockstep
