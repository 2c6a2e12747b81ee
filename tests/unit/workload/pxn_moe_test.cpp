// DeepEP's exchanges against NCCL's PXN (docs/training.md "DeepEP and PXN"): the normal kernels
// cross the network between rail peers and forward over NVLink (DeepSeek-V3 report, section
// 3.2.2), so a PXN router relays nothing of theirs; the low-latency kernels send every message
// by the sender's own NIC, so cross-rail ones climb to the spine.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "../nccl/two_rail_nodes.hpp"
#include "lockstep/collective/moe.hpp"
#include "lockstep/engine/registry/registry.hpp"
#include "lockstep/routing/pxn.hpp"
#include "lockstep/routing/router.hpp"

namespace lockstep {
namespace {

using testing::gpu_nvlink;
using testing::nic_to_leaf;
using testing::spine_cable;
using testing::TwoRailNodes;

// EP 16 over the two nodes: 16 experts (one a GPU, 8 a node), top-2, 120 tokens a rank of
// H = 128 in FP8 (128 + 4 x 1 = 132 B a token).
//   P(other node) = 1 - C(8, 2) / C(16, 2) = 1 - 28/120: 92 of the 120 tokens cross;
//   P(a given GPU) = 1 - C(15, 2) / C(16, 2) = 1 - 105/120: 15 tokens reach it;
//   low latency: T K / R = 120 x 2 / 16 = 15 messages to every other GPU.
MoeSpec ep16(MoeKernel kernel) {
  MoeSpec s;
  s.tokens = 120;
  s.hidden = 128;
  s.topk = 2;
  s.experts = 16;
  s.ranks = 16;
  s.ranks_per_node = 8;
  s.kernel = kernel;
  return s;
}

std::vector<double> link_bytes(const TwoRailNodes& f, const MoeSpec& s, bool pxn) {
  const auto programs = make_moe_programs(s, MoePhase::Dispatch);
  const auto router = pxn ? make_pxn_router(f.topo(), fabric_routing(f.topo()))
                          : make_router(f.topo(), fabric_routing(f.topo()));
  EngineInput in;
  in.topology = &f.topo();
  in.programs = programs.get();
  in.placement = f.topo().gpus();
  in.router = router.get();
  return make_engine("flow")->run(in).link_bytes;
}

// Normal dispatch: GPU (n, l) sends its 92 tokens for the other node once, to GPU (n', l), by
// NIC (n, l): 92 x 132 = 12,144 B a NIC, and no spine byte. Over NVLink it sends each of its 7
// node peers its own 15 tokens for them and forwards the 15 that GPU (n', l) sent for them:
// 7 x 2 x 15 x 132 = 27,720 B out of every GPU. The same with and without PXN's relays: no send
// of DeepEP's joins two rails.
TEST(PxnMoe, NormalDispatchStaysOnTheRailsWithOrWithoutPxn) {
  const TwoRailNodes f;
  const Topology& t = f.topo();
  const std::vector<double> plain = link_bytes(f, ep16(MoeKernel::Normal), false);
  const std::vector<double> relayed = link_bytes(f, ep16(MoeKernel::Normal), true);
  EXPECT_EQ(plain, relayed);
  std::size_t nics = 0, gpus = 0;
  for (DirLinkId d = 0; d < t.num_directed_links(); ++d) {
    if (nic_to_leaf(t, d)) {
      ++nics;
      EXPECT_DOUBLE_EQ(plain[d], 92.0 * 132) << d;
    }
    if (spine_cable(t, d)) {
      EXPECT_EQ(plain[d], 0.0) << d;
    }
    if (gpu_nvlink(t, d)) {
      ++gpus;
      EXPECT_DOUBLE_EQ(plain[d], 7.0 * 2 * 15 * 132) << d;
    }
  }
  EXPECT_EQ(nics, 16u);
  EXPECT_EQ(gpus, 16u);
}

// Low-latency dispatch, as DeepEP sends it (RDMA straight to the expert's GPU from the sender's
// own NIC; moe_comm's run_programs routes it with make_router): NIC (n, l) carries 8 x 15 x 132
// = 15,840 B, 7 eighths of it for other rails, so leaf l's spine cable carries that share of both
// nodes' GPU l: 2 x 7 x 15 x 132 = 27,720 B each way. NVLink: 7 x 15 x 132 = 13,860 B a GPU.
TEST(PxnMoe, LowLatencyDispatchLeavesByTheSendersNic) {
  const TwoRailNodes f;
  const Topology& t = f.topo();
  const std::vector<double> b = link_bytes(f, ep16(MoeKernel::LowLatency), false);
  for (DirLinkId d = 0; d < t.num_directed_links(); ++d) {
    if (nic_to_leaf(t, d)) {
      EXPECT_DOUBLE_EQ(b[d], 8.0 * 15 * 132) << d;
    } else if (spine_cable(t, d)) {
      EXPECT_DOUBLE_EQ(b[d], 2.0 * 7 * 15 * 132) << d;
    } else if (gpu_nvlink(t, d)) {
      EXPECT_DOUBLE_EQ(b[d], 7.0 * 15 * 132) << d;
    }
  }
}

}  // namespace
}  // namespace lockstep
