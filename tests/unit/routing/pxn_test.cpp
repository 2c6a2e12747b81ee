// NCCL's PXN (docs/routing.md "PXN"): with make_pxn_router a GPU sending to a GPU of another
// node on another rail goes over NVLink to the GPU of its node on that rail and out of its NIC,
// so the transfer stays on the destination rail's leaf; without it, it crosses the spine.
#include "lockstep/routing/pxn.hpp"

#include <gtest/gtest.h>

#include "../topology/topology_test_util.hpp"
#include "lockstep/routing/router.hpp"
#include "lockstep/topology/device_names.hpp"
#include "lockstep/topology/faults.hpp"

namespace lockstep {
namespace {

// The devices a path visits, by name: "gpu3 scale_up_switch0 gpu5 ...".
std::string visits(const Topology& t, const std::vector<DirLinkId>& hops) {
  const DeviceNames names(t);
  std::string out = names.name(t.source(hops.at(0)));
  for (const DirLinkId h : hops) out += " " + names.name(t.target(h));
  return out;
}

std::string route(const Topology& t, const char* src, const char* dst, bool pxn,
                  RoutingPolicy policy = RoutingPolicy::Ecmp) {
  const DeviceNames names(t);
  RouterOptions options;
  options.policy = policy;
  std::vector<PathShare> out;
  const auto router = pxn ? make_pxn_router(t, options) : make_router(t, options);
  router->route({names.find(src), names.find(dst), 0}, nullptr, out);
  EXPECT_EQ(out.size(), 1u);
  return visits(t, out.at(0).hops);
}

// Two HGX H100 nodes on an NDR rail fabric: leaf l joins the NICs of rail l, one spine joins the
// leaves. GPU 3 of node 0 (gpu3) to GPU 5 of node 1 (gpu13).
TEST(Pxn, ACrossRailSendGoesOverNvlinkToTheDestinationsRail) {
  const Topology t = test::hgx_h100(2);
  for (const RoutingPolicy policy : {RoutingPolicy::Ecmp, RoutingPolicy::RailAligned}) {
    EXPECT_EQ(route(t, "gpu3", "gpu13", true, policy),
              "gpu3 scale_up_switch0 gpu5 nic5 leaf5 nic13 gpu13");
    EXPECT_EQ(route(t, "gpu13", "gpu3", true, policy),
              "gpu13 scale_up_switch1 gpu11 nic11 leaf3 nic3 gpu3");
    // Without PXN the sender's own NIC, and the spine between the rails.
    EXPECT_EQ(route(t, "gpu3", "gpu13", false, policy), "gpu3 nic3 leaf3 spine0 leaf5 nic13 gpu13");
    // The same rail and the same node are left alone.
    EXPECT_EQ(route(t, "gpu3", "gpu11", true, policy), "gpu3 nic3 leaf3 nic11 gpu11");
    EXPECT_EQ(route(t, "gpu3", "gpu5", true, policy), "gpu3 scale_up_switch0 gpu5");
  }
}

TEST(Pxn, SprayedAndQueuePairRoutesRelayToo) {
  const Topology t = test::hgx_h100(2);
  const DeviceNames names(t);
  RouterOptions options;
  options.queue_pairs = 2;
  std::vector<PathShare> out;
  make_pxn_router(t, options)->route({names.find("gpu0"), names.find("gpu15"), 3}, nullptr, out);
  ASSERT_EQ(out.size(), 2u);
  for (const PathShare& p : out) {
    EXPECT_DOUBLE_EQ(p.fraction, 0.5);
    EXPECT_EQ(visits(t, p.hops), "gpu0 scale_up_switch0 gpu7 nic7 leaf7 nic15 gpu15");
  }
  options.policy = RoutingPolicy::Spray;
  options.queue_pairs = 1;
  make_pxn_router(t, options)->route({names.find("gpu0"), names.find("gpu15"), 3}, nullptr, out);
  double total = 0;
  for (const PathShare& p : out) {
    total += p.fraction;
    EXPECT_EQ(visits(t, p.hops), "gpu0 scale_up_switch0 gpu7 nic7 leaf7 nic15 gpu15");
  }
  EXPECT_DOUBLE_EQ(total, 1.0);
}

// A relay whose NIC is cut off is no relay: the sender keeps its own NIC. A sender cut off from
// its own NIC still relays by PXN to another rail (NCCL picks the receiver's rail whatever the
// sender's NIC does), and to its own rail fails over to the next GPU (docs/routing.md "NIC
// failover").
TEST(Pxn, NoRelayThroughACutOffNicAndFailoverWhereNoRelay) {
  std::vector<FaultSpec> faults = {parse_fault("failed-link:link=nic5-leaf5", "f")};
  const Topology t = apply_link_faults(test::hgx_h100(2), faults);
  EXPECT_EQ(route(t, "gpu3", "gpu13", true), "gpu3 nic3 leaf3 spine0 leaf5 nic13 gpu13");
  EXPECT_EQ(route(t, "gpu5", "gpu11", true), "gpu5 scale_up_switch0 gpu3 nic3 leaf3 nic11 gpu11");
  EXPECT_EQ(route(t, "gpu5", "gpu13", true),
            "gpu5 scale_up_switch0 gpu6 nic6 leaf6 spine0 leaf5 nic13 gpu13");
}

// PCIe-only nodes (no NVLink between the GPUs: NCCL's PATH_NVL fails) send through their own NIC.
TEST(Pxn, NoRelayWithoutNvlink) {
  const Topology t = test::preset_graph("l40s", 2);
  const DeviceNames names(t);
  std::vector<PathShare> with, without;
  const auto gpus = t.gpus();
  const std::size_t g = gpus.size() / 2;
  ASSERT_GE(g, 4u);
  // GPU 2 has a NIC of its own (L40S nodes: 4 NICs, one per pair of GPUs), but no NVLink.
  make_pxn_router(t, {})->route({gpus[0], gpus[g + 2], 0}, nullptr, with);
  make_router(t, {})->route({gpus[0], gpus[g + 2], 0}, nullptr, without);
  ASSERT_EQ(with.size(), 1u);
  ASSERT_EQ(without.size(), 1u);
  EXPECT_EQ(visits(t, with[0].hops), visits(t, without[0].hops));
}

// GB200 NVL72: a node is a 4-GPU tray and 18 trays share the rack's NVLink switches. Trays of
// one rack talk over NVLink (NCCL's P2P transport, no NIC), so no relay; to another rack the
// relay is the sender's own tray's GPU on the receiver's rail, never another tray's.
TEST(Pxn, TraysOfOneNvl72RackTalkOverNvlinkAndRelayOnlyInTheirTray) {
  const Topology t = test::preset_graph("gb200-nvl72", 20);  // racks of 18 and 2 trays
  const auto gpus = t.gpus();
  const DeviceNames names(t);
  auto path = [&](std::size_t a, std::size_t b, bool pxn) {
    std::vector<PathShare> out;
    const auto router = pxn ? make_pxn_router(t, {}) : make_router(t, {});
    router->route({gpus[a], gpus[b], 0}, nullptr, out);
    EXPECT_EQ(out.size(), 1u);
    return out.at(0).hops;
  };
  // GPU 0 of tray 0 to GPU 1 of tray 1: the rack's NVLink either way.
  EXPECT_EQ(visits(t, path(0, 5, true)), visits(t, path(0, 5, false)));
  EXPECT_EQ(path(0, 5, true).size(), 2u);
  // To GPU 1 of tray 18 (the second rack): over NVLink to GPU 1 of tray 0 (gpus[1]), its NIC.
  const std::vector<DirLinkId> relayed = path(0, 18 * 4 + 1, true);
  ASSERT_GE(relayed.size(), 3u);
  EXPECT_EQ(t.target(relayed[1]), gpus[1]);
  EXPECT_EQ(t.device(t.target(relayed[2])).kind, DeviceKind::Nic);
  EXPECT_NE(t.target(path(0, 18 * 4 + 1, false)[1]), gpus[1]);
}

}  // namespace
}  // namespace lockstep
