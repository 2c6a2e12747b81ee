// Routing on the rail-optimised fabric the topology layer builds for HGX-H100 on NDR.
#include <gtest/gtest.h>

#include "lockstep/routing/router.hpp"
#include "lockstep/topology/builder.hpp"
#include "lockstep/topology/presets.hpp"

namespace lockstep {
namespace {

Topology hgx_cluster(std::uint32_t nodes) {
  PresetRequest request;
  request.system = "hgx-h100";
  request.fabric = "ib-ndr";
  request.nodes = nodes;
  return std::move(*build_topology(rail_optimized_args(resolve_preset(request))).graph);
}

// The first NIC a path crosses, or kNone.
DeviceId first_nic(const Topology& t, const std::vector<DirLinkId>& hops) {
  for (const DirLinkId h : hops)
    if (t.device(t.target(h)).kind == DeviceKind::Nic) return t.target(h);
  return kNone;
}

TEST(RailFabric, InterNodeTrafficLeavesThroughTheSourceRailsNic) {
  const Topology t = hgx_cluster(4);
  RouterOptions opt;
  opt.policy = RoutingPolicy::RailAligned;
  auto router = make_router(t, opt);
  const auto gpus = t.gpus();  // node-major, 8 per node
  std::vector<PathShare> out;
  for (std::uint32_t src_local = 0; src_local < 8; ++src_local) {
    const DeviceId src = gpus[src_local];                // node 0
    const DeviceId dst = gpus[8 + (src_local + 3) % 8];  // node 1, another rail
    router->route({src, dst, 0}, nullptr, out);
    ASSERT_EQ(out.size(), 1u);
    const DeviceId nic = first_nic(t, out[0].hops);
    ASSERT_NE(nic, kNone);
    EXPECT_EQ(t.device(nic).node, 0u);
    EXPECT_EQ(t.device(nic).local_index, src_local);
    EXPECT_EQ(t.target(out[0].hops.back()), dst);
  }
  // Inside a node the scale-up fabric carries the traffic: no NIC on the path.
  router->route({gpus[0], gpus[5], 0}, nullptr, out);
  EXPECT_EQ(first_nic(t, out[0].hops), kNone);
  bool via_scale_up = false;
  for (const DirLinkId h : out[0].hops)
    via_scale_up = via_scale_up || t.device(t.target(h)).kind == DeviceKind::ScaleUpSwitch;
  EXPECT_TRUE(via_scale_up);
}

}  // namespace
}  // namespace lockstep
