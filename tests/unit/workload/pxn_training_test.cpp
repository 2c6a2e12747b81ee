// NCCL's PXN inside a training step (docs/training.md "DeepEP and PXN"; scenario key
// `collectives.pxn`): the expert all-to-all of a MoE model without DeepEP's keys is NCCL's
// alltoall, whose sends between nodes relay over NVLink to the receiver's rail with PXN and leave
// by the sender's own NIC without it; the step's rings pair their NICs rail by rail either way.
#include <gtest/gtest.h>

#include <memory>
#include <string_view>
#include <vector>

#include "../nccl/two_rail_nodes.hpp"
#include "lockstep/engine/registry/registry.hpp"
#include "lockstep/workload/training.hpp"
#include "test_cluster.hpp"

namespace lockstep {
namespace {

using testing::gpu_nvlink;
using testing::nic_to_leaf;
using testing::spine_cable;
using testing::TwoRailNodes;

// The flow engine, with the bytes every directed link carried summed over its runs.
class CountingEngine final : public Engine {
 public:
  explicit CountingEngine(std::shared_ptr<std::vector<double>> bytes)
      : inner_(make_engine("flow")), bytes_(std::move(bytes)) {}
  std::string_view name() const override { return inner_->name(); }
  RunResult run(const EngineInput& in) override {
    RunResult r = inner_->run(in);
    bytes_->resize(r.link_bytes.size(), 0.0);
    for (std::size_t d = 0; d < r.link_bytes.size(); ++d) (*bytes_)[d] += r.link_bytes[d];
    return r;
  }

 private:
  std::unique_ptr<Engine> inner_;
  std::shared_ptr<std::vector<double>> bytes_;
};

struct Step {
  TrainResult result;
  std::vector<double> bytes;  // per directed link, the step's engine runs together
};

// tiny_config's two layers made MoE: 16 experts (one a GPU) of inner size 4096, top 2, over
// EP 16 = DP 16 on the two nodes, one micro-batch of 1024 tokens a rank; the gradients reduce
// after the backward pass, so the all-to-alls have the NICs to themselves.
Step step(const Topology& topo, bool pxn, Expansion expansion) {
  TrainConfig c = testing::tiny_config(1, 1, 16, 16);
  c.model.experts = 16;
  c.model.top_k = 2;
  c.model.expert_ffn = 4096;
  c.par.ep = 16;
  c.overlap_dp = false;
  c.engine = "flow";
  c.expansion = expansion;
  c.pxn = pxn;
  Step s;
  auto bytes = std::make_shared<std::vector<double>>();
  SimulateOptions o;
  o.engines = [bytes](std::string_view) { return std::make_unique<CountingEngine>(bytes); };
  s.result = simulate_training(topo, c, o);
  s.bytes = *bytes;
  return s;
}

// Each all-to-all moves S = 1024 tokens x 1024 x 2 B x top 2 = 4 MiB a rank, a block of
// A = S / 16 = 262,144 B to each peer (NCCL's 48 GB/s a NIC; the full expansion's programs
// carry bytes / 0.96 over the 50 GB/s cables instead, the same time). A step has 8: dispatch and
// combine in each layer's forward pass, and their gradients in its backward pass.
//   With PXN NIC (n, k) carries the blocks of node n's 8 GPUs for GPU (n', k): 8 A, and no
//   spine cable carries any; GPU (n, l) moves its 7 blocks for node n' GPUs off its rail over
//   NVLink to their relays, beside its 7 blocks for its own node.
//   Without PXN GPU (n, l) sends its 8 blocks for node n' by its own NIC (8 A again), 7 of them
//   to other rails: up leaf l's one cable to the spine, with the other node's GPU l's 7: 14 A
//   a cable each way, and 7 A less out of every GPU's NVLink.
// The spine binds instead of the NIC: each all-to-all takes 6 A / 48 GB/s = 32.768 us longer,
// 8 x 32.768 = 262.144 us a step, in the step's EP time and its iteration.
TEST(PxnTraining, ExpertAllToAllStaysOnTheRailsOnlyWithPxn) {
  const TwoRailNodes f;
  const Topology& t = f.topo();
  const Step on = step(t, true, Expansion::Full);
  const Step off = step(t, false, Expansion::Full);
  ASSERT_EQ(on.result.expansion, "full");
  double spine = 0;  // one cable's, each one's
  for (DirLinkId d = 0; d < t.num_directed_links() && spine == 0; ++d)
    if (spine_cable(t, d)) spine = off.bytes[d];
  std::size_t cables = 0, nics = 0, gpus = 0;
  for (DirLinkId d = 0; d < t.num_directed_links(); ++d) {
    if (spine_cable(t, d)) {
      ++cables;
      EXPECT_EQ(on.bytes[d], 0.0) << d;
      EXPECT_NEAR(off.bytes[d], spine, 1e-6 * spine) << d;
    }
    if (nic_to_leaf(t, d)) {
      ++nics;
      EXPECT_NEAR(off.bytes[d], on.bytes[d], 1e-6 * on.bytes[d]) << d;
    }
    if (gpu_nvlink(t, d)) {
      ++gpus;
      EXPECT_NEAR(on.bytes[d] - off.bytes[d], spine / 2, 1e-6 * spine) << d;
    }
  }
  EXPECT_EQ(cables, 16u);
  EXPECT_EQ(nics, 16u);
  EXPECT_EQ(gpus, 16u);
  // 8 all-to-alls x 14 A, A = 4 MiB / 0.96 / 16 rounded up to whole BF16 elements of 16 ranks:
  // ceil(4,194,304 / 0.96 / 32) x 32 / 16 = 273,068 B.
  EXPECT_NEAR(spine, 8 * 14 * 273'068.0, 1.0);
  const double slower_us = 8 * 6 * 262'144 / 48e9 * 1e6;  // 262.144
  EXPECT_NEAR((off.result.breakdown.ep - on.result.breakdown.ep).microseconds(), slower_us, 5.0);
  EXPECT_NEAR((off.result.iteration - on.result.iteration).microseconds(), slower_us, 5.0);
}

// The reduced expansion times the all-to-all through NcclGroups (as `lockstep collective`):
// the same 262.144 us.
TEST(PxnTraining, ReducedExpansionTimesTheAllToAllWithAndWithoutPxn) {
  const TwoRailNodes f;
  const Step on = step(f.topo(), true, Expansion::Reduced);
  const Step off = step(f.topo(), false, Expansion::Reduced);
  ASSERT_EQ(on.result.expansion, "reduced");
  const double slower_us = 8 * 6 * 262'144 / 48e9 * 1e6;
  EXPECT_NEAR((off.result.breakdown.ep - on.result.breakdown.ep).microseconds(), slower_us, 5.0);
}

}  // namespace
}  // namespace lockstep
