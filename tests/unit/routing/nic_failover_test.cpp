// NIC failover, PXN-style (docs/routing.md): a GPU whose NIC link failed reaches other nodes over
// NVLink through the next GPU of its node and that GPU's NIC.
#include <gtest/gtest.h>

#include "../topology/topology_test_util.hpp"
#include "lockstep/routing/router.hpp"
#include "lockstep/topology/device_names.hpp"
#include "lockstep/topology/faults.hpp"

namespace lockstep {
namespace {

// Two HGX H100 nodes on an NDR rail fabric (8 leaves, one spine) with the given links failed.
Topology faulted_hgx(const std::vector<std::string>& failed) {
  const Topology t = test::hgx_h100(2);
  std::vector<FaultSpec> faults;
  for (const auto& link : failed) faults.push_back(parse_fault("failed-link:link=" + link, "f"));
  return apply_link_faults(t, faults);
}

// The devices a path visits, by name: "gpu3 scale_up_switch0 gpu4 ...".
std::string visits(const Topology& t, const std::vector<DirLinkId>& hops) {
  const DeviceNames names(t);
  std::string out = names.name(t.source(hops.at(0)));
  for (const DirLinkId h : hops) out += " " + names.name(t.target(h));
  return out;
}

std::string route(const Topology& t, const char* src, const char* dst, RoutingPolicy policy) {
  const DeviceNames names(t);
  RouterOptions options;
  options.policy = policy;
  std::vector<PathShare> out;
  make_router(t, options)->route({names.find(src), names.find(dst), 0}, nullptr, out);
  EXPECT_EQ(out.size(), 1u);
  return visits(t, out.at(0).hops);
}

TEST(NicFailover, ACutOffGpuUsesTheNextGpusNicBothWays) {
  const Topology t = faulted_hgx({"nic3-leaf3"});
  for (const RoutingPolicy policy : {RoutingPolicy::Ecmp, RoutingPolicy::RailAligned}) {
    // Rank 3 to its rail peer on node 1: NVLink to GPU 4, GPU 4's NIC and leaf, over the spine
    // to leaf 3, in at node 1's NIC 3.
    EXPECT_EQ(route(t, "gpu3", "gpu11", policy),
              "gpu3 scale_up_switch0 gpu4 nic4 leaf4 spine0 leaf3 nic11 gpu11");
    EXPECT_EQ(route(t, "gpu11", "gpu3", policy),
              "gpu11 nic11 leaf3 spine0 leaf4 nic4 gpu4 scale_up_switch0 gpu3");
    // Inside the node nothing changes; nor for the other GPUs.
    EXPECT_EQ(route(t, "gpu3", "gpu5", policy), "gpu3 scale_up_switch0 gpu5");
    EXPECT_EQ(route(t, "gpu2", "gpu10", policy), "gpu2 nic2 leaf2 nic10 gpu10");
  }
}

TEST(NicFailover, SprayAndQueuePairsFailOverToo) {
  const Topology t = faulted_hgx({"nic3-leaf3"});
  const DeviceNames names(t);
  RouterOptions options;
  options.policy = RoutingPolicy::Spray;
  std::vector<PathShare> out;
  make_router(t, options)->route({names.find("gpu3"), names.find("gpu11"), 7}, nullptr, out);
  // Each leaf has two uplinks to the one spine: 2 x 2 paths through the same devices.
  ASSERT_EQ(out.size(), 4u);
  for (const PathShare& p : out) {
    EXPECT_DOUBLE_EQ(p.fraction, 0.25);
    EXPECT_EQ(visits(t, p.hops), "gpu3 scale_up_switch0 gpu4 nic4 leaf4 spine0 leaf3 nic11 gpu11");
  }
  options.policy = RoutingPolicy::Ecmp;
  options.queue_pairs = 2;
  make_router(t, options)->route({names.find("gpu11"), names.find("gpu3"), 7}, nullptr, out);
  ASSERT_EQ(out.size(), 2u);
  for (const PathShare& p : out) {
    EXPECT_DOUBLE_EQ(p.fraction, 0.5);
    EXPECT_EQ(visits(t, p.hops), "gpu11 nic11 leaf3 spine0 leaf4 nic4 gpu4 scale_up_switch0 gpu3");
  }
}

TEST(NicFailover, TheRelayIsTheNextGpuThatReachesTheNetworkWrappingAround) {
  // GPU 7's NIC cut: GPU 0 relays. GPUs 3 and 4 both cut: GPU 5 relays for both.
  EXPECT_EQ(route(faulted_hgx({"nic7-leaf7"}), "gpu7", "gpu15", RoutingPolicy::Ecmp),
            "gpu7 scale_up_switch0 gpu0 nic0 leaf0 spine0 leaf7 nic15 gpu15");
  const Topology two = faulted_hgx({"nic3-leaf3", "nic4-leaf4"});
  EXPECT_EQ(route(two, "gpu3", "gpu8", RoutingPolicy::Ecmp),
            "gpu3 scale_up_switch0 gpu5 nic5 leaf5 spine0 leaf0 nic8 gpu8");
  EXPECT_EQ(route(two, "gpu4", "gpu8", RoutingPolicy::Ecmp),
            "gpu4 scale_up_switch0 gpu5 nic5 leaf5 spine0 leaf0 nic8 gpu8");
  // Both ends cut off (node 0's GPU 3, node 1's GPU 3): a relay on each side.
  EXPECT_EQ(route(faulted_hgx({"nic3-leaf3", "nic11-leaf3"}), "gpu3", "gpu11",
                  RoutingPolicy::RailAligned),
            "gpu3 scale_up_switch0 gpu4 nic4 leaf4 nic12 gpu12 scale_up_switch1 gpu11");
}

TEST(NicFailover, AFailedPcieLinkToTheNicFailsOverLikeAFailedNicLink) {
  const Topology t = faulted_hgx({"gpu3-nic3"});
  EXPECT_EQ(route(t, "gpu3", "gpu11", RoutingPolicy::Ecmp),
            "gpu3 scale_up_switch0 gpu4 nic4 leaf4 spine0 leaf3 nic11 gpu11");
}

}  // namespace
}  // namespace lockstep
