// Every system preset on two nodes, as `lockstep collective --system S --nodes 2 --engine E`
// runs it, on the three engines: each runs, and at 1 GiB all-reduce (bandwidth-bound, NCCL's
// choice of algorithm) flow agrees with the NCCL model within the zoo's 10% (zoo_test.cpp),
// except where the two differ by design, named below with the reason. Packet runs at 16 MiB (at
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

// DGX A100's tree (NCCL's choice at 1 GiB on 2 nodes, LL128): the flow glue caps each tree
// channel at NCCL's per-channel tree maximum as the model bounds it (nccl/engine_run.cpp
// tree_channel_cap_GBps; tuning.cc perChMaxTreeLL128Bws, 20 GB/s on Ampere), but not at its
// share of the model's rate as it caps ring channels, so a channel whose links have room runs
// above that share: 8,589.18 us against the model's 9,676.43 (0.954 of the model with the
// share cap too, docs/nccl-model.md "Flow runs").
bool model_caps_tree_channels(const std::string& system) {
  return system == "dgx-a100";
}

TEST(PresetEngines, EverySystemRunsOnTwoNodesOnEveryEngine) {
  for (const SystemPreset& system : system_presets()) {
    const std::string& name = system.name;
    const CollectiveRow model = run(name, "analytical", Bytes::gib(1));
    const CollectiveRow flow = run(name, "flow", Bytes::gib(1));
    ASSERT_GT(model.busbw_GBps, 0) << name;
    EXPECT_EQ(flow.algorithm, model.algorithm) << name;
    if (model_caps_tree_channels(name)) {
      EXPECT_GT(flow.busbw_GBps / model.busbw_GBps, 1.1) << name;
    } else {
      EXPECT_NEAR(flow.busbw_GBps / model.busbw_GBps, 1.0, 0.10) << name << " " << model.algorithm;
    }
    const CollectiveRow packet = run(name, "packet", Bytes::mib(16));
    EXPECT_GT(packet.time, Time::zero()) << name;
    EXPECT_EQ(packet.algorithm, run(name, "analytical", Bytes::mib(16)).algorithm) << name;
  }
}

}  // namespace
}  // namespace lockstep
