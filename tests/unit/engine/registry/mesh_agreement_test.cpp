// Mesh rings on an AMD MI300X node (xGMI: every GPU pair has its own link, no switch): the flow
// engine, whose ring channels now use all 7 links of a GPU, agrees with the NCCL model
// (docs/nccl-model.md "Mesh rings"; correctness: tests/unit/engine/functional/ring_mesh_test.cpp).
#include <gtest/gtest.h>

#include "lockstep/engine/collective_sweep.hpp"
#include "lockstep/topology/builder.hpp"
#include "lockstep/topology/presets.hpp"

namespace lockstep {
namespace {

double busbw(CollectiveOp op, const char* engine) {
  PresetRequest req;
  req.system = "mi300x";
  req.fabric = "roce-400g";
  const PresetCluster preset = resolve_preset(req);
  const BuildResult built = build_topology(rail_optimized_args(preset));
  CollectiveSweep s;
  s.op = op;
  s.algo = TunerAlgo::Ring;
  s.min_bytes = s.max_bytes = Bytes::mib(64);
  s.engine = engine;
  return run_collective_sweep(s, nccl_cluster(preset), &*built.graph).at(0).busbw_GBps;
}

// Before mesh rings every channel used the same single link per GPU (64 GB/s), so flow gave
// ~61 GB/s busbw against the model's ~298; with the channels spread over the 7 links and those
// links scaled so their sum is NCCL's intra-node rate, both engines move the same bytes at the
// same aggregate rate with no contention, so they must agree within 1%.
TEST(MeshRings, FlowAgreesWithModelOnOneMi300xNode) {
  for (const CollectiveOp op : {CollectiveOp::AllReduce, CollectiveOp::AllGather}) {
    const double model = busbw(op, "analytical"), flow = busbw(op, "flow");
    EXPECT_GT(model, 100.0);  // far above one xGMI link, so a single-link ring cannot pass
    EXPECT_NEAR(flow / model, 1.0, 0.01) << to_string(op);
  }
}

}  // namespace
}  // namespace lockstep
