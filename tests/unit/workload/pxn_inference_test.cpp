// NCCL's PXN inside a serving step (docs/inference.md "PXN"; InferenceConfig::pxn, the scenario's
// `collectives.pxn`, `lockstep serve --pxn`): the pipeline hop is NCCL's send / recv, which
// relays over NVLink to the receiver's rail with PXN and leaves by the sender's own NIC without.
// The TP all-reduce is a ring or a tree that NCCL prices without relays either way.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "../nccl/two_rail_nodes.hpp"
#include "counting_engine.hpp"
#include "inference_support.hpp"
#include "lockstep/workload/inference.hpp"
#include "test_cluster.hpp"

namespace lockstep {
namespace {

using testing::gpu_nvlink;
using testing::nic_to_leaf;
using testing::spine_cable;

// Bytes per directed link of one decode step of one sequence.
std::vector<double> decode_bytes(const Topology& topo, bool pxn) {
  // A Llama-3-like model whose 48 heads split over TP 12 (hidden 6,144 = 48 x 128), 2 layers,
  // one on each of 2 stages: a replica of 12 x 2 = 24 GPUs, 3 HGX H100 nodes. Dense: no MoE
  // exchange; the analytical engine prices the TP all-reduce by NCCL's model, so the engine runs
  // only the pipeline hop.
  InferenceConfig c = testing::inference_config(
      "type: inference\n"
      "model: {preset: llama3-8b, layers: 2, hidden: 6144, heads: 48, kv_heads: 12}\n"
      "tp: 12\npp: 2\n"
      "requests: {prompt: 100, output: 10, concurrency: 1, count: 1}\n");
  c.pxn = pxn;
  auto bytes = std::make_shared<std::vector<double>>();
  InferenceStepModel model(topo, c, nullptr, testing::counting_engines(bytes));
  bytes->clear();
  model.decode({100});
  bytes->resize(topo.num_directed_links(), 0.0);
  return *bytes;
}

// The hop runs from stage 0's first GPU, GPU 0 (node 0, local 0), to stage 1's, GPU 12 (node 1,
// local 4): one token's hidden state, 6,144 x 2 B = 12,288 B, at the runner's transfer
// efficiency 1 (bytes on the wire as sent).
//   With PXN: GPU 0 -> NVSwitch -> GPU 4 of node 0 (its relay, on the receiver's rail) -> NIC
//   (0, 4) -> rail leaf 4 -> NIC (1, 4) -> GPU 12: GPU 0's NVLink and NIC (0, 4) carry 12,288 B,
//   NIC (0, 0) and the switch-to-switch cables nothing.
//   Without: GPU 0 -> NIC (0, 0) -> rail leaf 0 -> a spine -> rail leaf 4 -> NIC (1, 4) -> GPU
//   12: NIC (0, 0) carries 12,288 B, and two switch-to-switch cables (leaf 0 up, down to leaf
//   4) do: 24,576 B on them together; GPU 0's NVLink and NIC (0, 4) nothing.
TEST(PxnInference, PipelineHopBetweenRailsStaysOnTheReceiversRailOnlyWithPxn) {
  const Topology topo = testing::ndr_h100_nodes(3, 8);
  const std::vector<double> on = decode_bytes(topo, true);
  const std::vector<double> off = decode_bytes(topo, false);
  const double hop = 6144.0 * 2;
  double spine_on = 0, spine_off = 0;
  int checked = 0;  // the three links named above, each found once
  for (DirLinkId d = 0; d < topo.num_directed_links(); ++d) {
    if (spine_cable(topo, d)) {
      spine_on += on[d];
      spine_off += off[d];
    }
    const Device& from = topo.device(topo.source(d));
    const bool first_node = from.node == 0;
    if (nic_to_leaf(topo, d) && first_node && from.local_index == 0) {
      EXPECT_DOUBLE_EQ(on[d], 0.0);
      EXPECT_DOUBLE_EQ(off[d], hop);
      ++checked;
    }
    if (nic_to_leaf(topo, d) && first_node && from.local_index == 4) {
      EXPECT_DOUBLE_EQ(on[d], hop);
      EXPECT_DOUBLE_EQ(off[d], 0.0);
      ++checked;
    }
    if (gpu_nvlink(topo, d) && topo.source(d) == topo.gpus()[0]) {
      EXPECT_DOUBLE_EQ(on[d], hop);
      EXPECT_DOUBLE_EQ(off[d], 0.0);
      ++checked;
    }
  }
  EXPECT_EQ(checked, 3);
  EXPECT_DOUBLE_EQ(spine_on, 0.0);
  EXPECT_DOUBLE_EQ(spine_off, 2 * hop);
}

}  // namespace
}  // namespace lockstep
