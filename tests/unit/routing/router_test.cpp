// Routing tests on small hand-built graphs whose shortest paths can be listed by hand.
#include "lockstep/routing/router.hpp"

#include <gtest/gtest.h>

#include <set>

#include "lockstep/core/error.hpp"
#include "lockstep/routing/gpu_transit.hpp"

namespace lockstep {
namespace {

Device gpu(std::uint32_t node, std::uint32_t local) {
  return Device{DeviceKind::Gpu, 0, node, 0, local};
}
Device nic(std::uint32_t node, std::uint32_t local) {
  return Device{DeviceKind::Nic, 0, node, 0, local};
}
Device sw(std::uint8_t tier) {
  return Device{DeviceKind::Switch, tier, kNone, 0, 0};
}
Link link(DeviceId a, DeviceId b) {
  return Link{a, b, Bandwidth::gBps(50), Time::ns(100)};
}

// Checks that `hops` is a connected walk from src to dst.
void expect_path(const Topology& t, const std::vector<DirLinkId>& hops, DeviceId src,
                 DeviceId dst) {
  ASSERT_FALSE(hops.empty());
  EXPECT_EQ(t.source(hops.front()), src);
  for (std::size_t i = 1; i < hops.size(); ++i) EXPECT_EQ(t.source(hops[i]), t.target(hops[i - 1]));
  EXPECT_EQ(t.target(hops.back()), dst);
}

// Two leaves, `spines` spines, two GPUs under each leaf: GPUs 0,1 on leaf A, 2,3 on leaf B.
struct LeafSpine {
  Topology topo;
  std::vector<DeviceId> gpus, spines;
  DeviceId leaf_a = 0, leaf_b = 0;
};
LeafSpine leaf_spine(int spines) {
  TopologyBuilder b("leaf_spine");
  LeafSpine ls;
  for (std::uint32_t i = 0; i < 4; ++i) ls.gpus.push_back(b.add_device(gpu(i, 0)));
  ls.leaf_a = b.add_device(sw(0));
  ls.leaf_b = b.add_device(sw(0));
  for (int s = 0; s < spines; ++s) ls.spines.push_back(b.add_device(sw(1)));
  b.add_link(link(ls.gpus[0], ls.leaf_a));
  b.add_link(link(ls.gpus[1], ls.leaf_a));
  b.add_link(link(ls.gpus[2], ls.leaf_b));
  b.add_link(link(ls.gpus[3], ls.leaf_b));
  for (DeviceId s : ls.spines) {
    b.add_link(link(ls.leaf_a, s));
    b.add_link(link(ls.leaf_b, s));
  }
  ls.topo = std::move(b).build();
  return ls;
}

TEST(Router, EcmpPathIsShortestDeterministicAndSpreadsOverSpines) {
  auto ls = leaf_spine(4);
  auto router = make_router(ls.topo, {});
  std::vector<PathShare> out, again;
  std::set<DeviceId> spines_used;
  for (std::uint64_t label = 0; label < 64; ++label) {
    router->route({ls.gpus[0], ls.gpus[2], label}, nullptr, out);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_DOUBLE_EQ(out[0].fraction, 1.0);
    // gpu -> leaf A -> spine -> leaf B -> gpu: 4 hops.
    ASSERT_EQ(out[0].hops.size(), 4u);
    expect_path(ls.topo, out[0].hops, ls.gpus[0], ls.gpus[2]);
    spines_used.insert(ls.topo.target(out[0].hops[1]));
    router->route({ls.gpus[0], ls.gpus[2], label}, nullptr, again);
    EXPECT_EQ(again[0].hops, out[0].hops);
  }
  // 64 labels over 4 spines: missing one spine entirely has probability 4 * (3/4)^64 < 1e-7
  // for a good hash, so all four must appear.
  EXPECT_EQ(spines_used.size(), 4u);
  // Same leaf: gpu -> leaf -> gpu, never through a spine.
  router->route({ls.gpus[0], ls.gpus[1], 0}, nullptr, out);
  EXPECT_EQ(out[0].hops.size(), 2u);
}

// The router keeps the distance fields towards its last destinations (up to 64) and grows them
// as queries need. A route must not depend on which are kept or how far they have grown:
// queries cycling through 96 destinations on 6 leaves x 4 spines, each pair with two labels,
// give exactly the paths of a router that has seen no other query.
// Two routes of two switch hops from leaf A to leaf D: over B (a 500 ns cable, then a 150 ns
// one) or over C (500 ns, then 500 ns): a dragonfly's local-global against global-global. Equal
// hop counts, so both are shortest; the tie goes to the least latency (650 against 1,000 ns), for
// every flow label and policy (spraying too), as a dragonfly's minimal routing crosses one global
// link (docs/routing.md).
TEST(Router, EqualHopCountsGoToTheLeastLatency) {
  TopologyBuilder b("two_ways");
  const DeviceId s = b.add_device(gpu(0, 0)), d = b.add_device(gpu(1, 0));
  const DeviceId a = b.add_device(sw(0)), via_b = b.add_device(sw(0)), via_c = b.add_device(sw(0)),
                 leaf_d = b.add_device(sw(0));
  const auto cable = [](DeviceId x, DeviceId y, std::int64_t ns) {
    return Link{x, y, Bandwidth::gBps(50), Time::ns(ns)};
  };
  b.add_link(cable(s, a, 10));
  b.add_link(cable(d, leaf_d, 10));
  b.add_link(cable(a, via_c, 500));  // added first: port order does not decide
  b.add_link(cable(a, via_b, 500));
  b.add_link(cable(via_c, leaf_d, 500));
  b.add_link(cable(via_b, leaf_d, 150));
  const Topology t = std::move(b).build();
  for (const RoutingPolicy policy : {RoutingPolicy::Ecmp, RoutingPolicy::Spray}) {
    RouterOptions opt;
    opt.policy = policy;
    auto router = make_router(t, opt);
    for (std::uint64_t label = 0; label < 32; ++label) {
      std::vector<PathShare> out;
      router->route({s, d, label}, nullptr, out);
      ASSERT_EQ(out.size(), 1u);
      ASSERT_EQ(out[0].hops.size(), 4u);
      EXPECT_EQ(t.target(out[0].hops[1]), via_b) << label;
      EXPECT_DOUBLE_EQ(out[0].fraction, 1.0);
    }
  }
}

TEST(Router, RoutesDoNotDependOnEarlierQueries) {
  TopologyBuilder b("many_leaves");
  std::vector<DeviceId> gpus, leaves, spines;
  for (int l = 0; l < 6; ++l) leaves.push_back(b.add_device(sw(0)));
  for (int s = 0; s < 4; ++s) spines.push_back(b.add_device(sw(1)));
  for (std::uint32_t i = 0; i < 96; ++i) {
    gpus.push_back(b.add_device(gpu(i, 0)));
    b.add_link(link(gpus.back(), leaves[i % 6]));
  }
  for (DeviceId l : leaves)
    for (DeviceId s : spines) b.add_link(link(l, s));
  const Topology t = std::move(b).build();
  auto shared = make_router(t, {});
  std::vector<PathShare> out, fresh;
  for (std::uint32_t step = 0; step < 3 * 96; ++step) {
    const DeviceId src = gpus[(step * 37) % 96], dst = gpus[step % 96];
    if (src == dst) continue;
    for (std::uint64_t label = 0; label < 2; ++label) {
      shared->route({src, dst, label}, nullptr, out);
      make_router(t, {})->route({src, dst, label}, nullptr, fresh);
      ASSERT_EQ(out.size(), 1u);
      ASSERT_EQ(fresh.size(), 1u);
      EXPECT_EQ(out[0].hops, fresh[0].hops) << src << " -> " << dst;
      expect_path(t, out[0].hops, src, dst);
    }
  }
}

TEST(Router, HashSeedChangesChoicesButNotValidity) {
  auto ls = leaf_spine(8);
  auto a = make_router(ls.topo, {RoutingPolicy::Ecmp, 1, 1});
  auto b = make_router(ls.topo, {RoutingPolicy::Ecmp, 1, 2});
  std::vector<PathShare> pa, pb;
  int differ = 0;
  for (std::uint64_t label = 0; label < 32; ++label) {
    a->route({ls.gpus[1], ls.gpus[3], label}, nullptr, pa);
    b->route({ls.gpus[1], ls.gpus[3], label}, nullptr, pb);
    expect_path(ls.topo, pb[0].hops, ls.gpus[1], ls.gpus[3]);
    differ += pa[0].hops != pb[0].hops;
  }
  EXPECT_GT(differ, 0);
}

TEST(Router, QueuePairsSplitAConnectionIntoEqualFlows) {
  auto ls = leaf_spine(4);
  auto router = make_router(ls.topo, {RoutingPolicy::Ecmp, 4, 0});
  std::vector<PathShare> out;
  router->route({ls.gpus[0], ls.gpus[3], 7}, nullptr, out);
  ASSERT_EQ(out.size(), 4u);
  for (const auto& s : out) {
    EXPECT_DOUBLE_EQ(s.fraction, 0.25);
    expect_path(ls.topo, s.hops, ls.gpus[0], ls.gpus[3]);
  }
}

TEST(Router, SprayUsesEverySpineEvenlyAndRespectsTheCap) {
  auto ls = leaf_spine(4);
  RouterOptions opt;
  opt.policy = RoutingPolicy::Spray;
  auto router = make_router(ls.topo, opt);
  std::vector<PathShare> out;
  router->route({ls.gpus[0], ls.gpus[2], 0}, nullptr, out);
  ASSERT_EQ(out.size(), 4u);
  std::set<DeviceId> spines;
  double total = 0;
  for (const auto& s : out) {
    EXPECT_DOUBLE_EQ(s.fraction, 0.25);
    spines.insert(ls.topo.target(s.hops[1]));
    total += s.fraction;
  }
  EXPECT_EQ(spines.size(), 4u);
  EXPECT_DOUBLE_EQ(total, 1.0);

  opt.max_spray_paths = 2;
  auto capped = make_router(ls.topo, opt);
  capped->route({ls.gpus[0], ls.gpus[2], 0}, nullptr, out);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_NE(out[0].hops[1], out[1].hops[1]);
  EXPECT_DOUBLE_EQ(out[0].fraction + out[1].fraction, 1.0);
}

struct FixedLoad : LinkLoadView {
  std::vector<double> loads;
  double load(DirLinkId l) const override { return loads[l]; }
};

TEST(Router, AdaptivePicksTheLeastLoadedUplink) {
  auto ls = leaf_spine(4);
  RouterOptions opt;
  opt.policy = RoutingPolicy::Adaptive;
  auto router = make_router(ls.topo, opt);
  FixedLoad view;
  view.loads.assign(ls.topo.num_directed_links(), 5.0);
  // Make the uplink leaf A -> spine 2 the only idle one.
  DirLinkId idle = kNone;
  for (const Port& p : ls.topo.ports(ls.leaf_a))
    if (p.peer == ls.spines[2]) idle = p.out;
  view.loads[idle] = 0.0;
  std::vector<PathShare> out;
  for (std::uint64_t label = 0; label < 8; ++label) {
    router->route({ls.gpus[0], ls.gpus[2], label}, &view, out);
    EXPECT_EQ(out[0].hops[1], idle);
  }
}

// Two HGX-like nodes with two GPUs each. A PCIe switch (Host) joins each node's GPUs and NICs,
// so a GPU can reach either NIC in two hops; NIC r of both nodes hangs off rail leaf r; one
// spine joins the rail leaves.
TEST(Router, RailAlignedLeavesThroughTheSourceGpusRailAndStaysOnNvlinkInside) {
  TopologyBuilder b("rails");
  DeviceId g[2][2], n[2][2], pcie[2], nvs[2];
  for (std::uint32_t node = 0; node < 2; ++node) {
    for (std::uint32_t r = 0; r < 2; ++r) g[node][r] = b.add_device(gpu(node, r));
    for (std::uint32_t r = 0; r < 2; ++r) n[node][r] = b.add_device(nic(node, r));
    pcie[node] = b.add_device(Device{DeviceKind::Host, 0, node, 0, 0});
    nvs[node] = b.add_device(Device{DeviceKind::ScaleUpSwitch, 0, node, 0, 0});
  }
  const DeviceId leaf0 = b.add_device(sw(0)), leaf1 = b.add_device(sw(0)),
                 spine = b.add_device(sw(1));
  for (int node = 0; node < 2; ++node) {
    for (int r = 0; r < 2; ++r) {
      b.add_link(Link{g[node][r], nvs[node], Bandwidth::gBps(450), Time::ns(100)});  // NVLink
      b.add_link(link(g[node][r], pcie[node]));
      b.add_link(link(n[node][r], pcie[node]));
    }
    b.add_link(link(n[node][0], leaf0));
    b.add_link(link(n[node][1], leaf1));
  }
  b.add_link(link(leaf0, spine));
  b.add_link(link(leaf1, spine));
  const Topology t = std::move(b).build();
  RouterOptions opt;
  opt.policy = RoutingPolicy::RailAligned;
  auto rail = make_router(t, opt);
  auto ecmp = make_router(t, {});
  std::vector<PathShare> out;

  // GPU 0 of node 0 to GPU 1 of node 1: two shortest paths of 6 hops, one per rail:
  // gpu -> pcie -> nic r -> leaf r -> nic r' -> pcie' -> gpu'. ECMP uses both NICs across labels;
  // rail-aligned always leaves through NIC 0, the source GPU's rail.
  std::set<DeviceId> ecmp_nics;
  for (std::uint64_t label = 0; label < 32; ++label) {
    ecmp->route({g[0][0], g[1][1], label}, nullptr, out);
    ASSERT_EQ(out[0].hops.size(), 6u);
    ecmp_nics.insert(t.target(out[0].hops[1]));
    rail->route({g[0][0], g[1][1], label}, nullptr, out);
    expect_path(t, out[0].hops, g[0][0], g[1][1]);
    ASSERT_EQ(out[0].hops.size(), 6u);
    EXPECT_EQ(t.target(out[0].hops[1]), n[0][0]);
    EXPECT_EQ(t.target(out[0].hops[2]), leaf0);
  }
  EXPECT_EQ(ecmp_nics.size(), 2u);
  // Inside a node: over the scale-up switch, 2 hops (as short as the PCIe switch, but wider).
  rail->route({g[0][0], g[0][1], 0}, nullptr, out);
  ASSERT_EQ(out[0].hops.size(), 2u);
  EXPECT_EQ(t.target(out[0].hops[0]), nvs[0]);
}

// A 3 x 3 torus of GPUs, x links added before y links (as a torus builder does).
DeviceId torus_id(int x, int y) {
  return static_cast<DeviceId>(y * 3 + x);
}
Topology torus3x3() {
  TopologyBuilder b("torus");
  for (int i = 0; i < 9; ++i) b.add_device(gpu(static_cast<std::uint32_t>(i), 0));
  for (int y = 0; y < 3; ++y)
    for (int x = 0; x < 3; ++x) b.add_link(link(torus_id(x, y), torus_id((x + 1) % 3, y)));
  for (int y = 0; y < 3; ++y)
    for (int x = 0; x < 3; ++x) b.add_link(link(torus_id(x, y), torus_id(x, (y + 1) % 3)));
  return std::move(b).build();
}

TEST(Router, DimensionOrderCorrectsXBeforeYOnATorus) {
  const auto id = torus_id;
  const Topology t = torus3x3();
  RouterOptions opt;
  opt.policy = RoutingPolicy::DimensionOrder;
  auto dor = make_router(t, opt);
  std::vector<PathShare> out;
  for (std::uint64_t label = 0; label < 4; ++label) {
    dor->route({id(0, 0), id(1, 1), label}, nullptr, out);
    ASSERT_EQ(out[0].hops.size(), 2u);  // GPUs relay for GPUs on a torus
    EXPECT_EQ(t.target(out[0].hops[0]), id(1, 0));
    EXPECT_EQ(t.target(out[0].hops[1]), id(1, 1));
  }
  // Wrap-around is shorter: (0,0) -> (2,0) is one hop backwards in x.
  dor->route({id(0, 0), id(2, 2), 0}, nullptr, out);
  ASSERT_EQ(out[0].hops.size(), 2u);
  EXPECT_EQ(t.target(out[0].hops[0]), id(2, 0));
}

// ECMP hashes where switches choose; GPUs forwarding for GPUs route dimension by dimension, as
// a torus chip does, so no label or seed takes (0,0) -> (0,1) -> (1,1). (Hashing sent flows
// y-first at random, and two flows of a ring could then share a cable.)
TEST(Router, EcmpFollowsDimensionOrderWhereGpusForward) {
  const Topology t = torus3x3();
  std::vector<PathShare> out;
  for (std::uint64_t seed = 0; seed < 8; ++seed) {
    auto ecmp = make_router(t, {RoutingPolicy::Ecmp, 1, seed});
    for (std::uint64_t label = 0; label < 8; ++label) {
      ecmp->route({torus_id(0, 0), torus_id(1, 1), label}, nullptr, out);
      ASSERT_EQ(out[0].hops.size(), 2u);
      EXPECT_EQ(t.target(out[0].hops[0]), torus_id(1, 0)) << seed << " " << label;
    }
  }
}

// Devices 0 - 1 - 2 in a row.
Topology in_a_row(const Device& first, const Device& middle, const Device& last) {
  TopologyBuilder b("row");
  const DeviceId x = b.add_device(first), y = b.add_device(middle), z = b.add_device(last);
  b.add_link(link(x, y));
  b.add_link(link(y, z));
  return std::move(b).build();
}

TEST(Router, GpusDoNotRelayNicTraffic) {
  // nic0 - gpu - nic1 is the only connection: no path, because a GPU relays only GPU traffic.
  const Topology t = in_a_row(nic(0, 0), gpu(0, 0), nic(0, 1));
  const DeviceId n0 = 0, g = 1, n1 = 2;
  auto router = make_router(t, {});
  std::vector<PathShare> out;
  EXPECT_THROW(router->route({n0, n1, 0}, nullptr, out), InputError);
  router->route({n0, g, 0}, nullptr, out);
  EXPECT_EQ(out[0].hops.size(), 1u);
}

// A DGX-1's corner in small: GPUs a and c have no NVLink between them, b is linked to both, and
// each of a and c sits behind its own PCIe switch on its own CPU (the CPUs joined by QPI). With
// GPU transit (NCCL's PATH_NVB) a -> c relays through b: 2 hops. Without it (NCCL_NVB_DISABLE=1)
// no GPU forwards, so the only way is the host's tree: a -> switch -> CPU 0 -> CPU 1 -> switch
// -> c, 5 hops, every policy alike; GPUs joined only through GPUs then have no path at all.
TEST(Router, WithoutGpuTransitGpusMeetOverTheHostTree) {
  TopologyBuilder b("nvb");
  const DeviceId a = b.add_device(gpu(0, 0)), mid = b.add_device(gpu(0, 1)),
                 c = b.add_device(gpu(0, 2));
  const DeviceId cpu0 = b.add_device(Device{DeviceKind::Host, 0, 0, 0, 0});
  const DeviceId cpu1 = b.add_device(Device{DeviceKind::Host, 0, 0, 0, 1});
  const DeviceId sw0 = b.add_device(Device{DeviceKind::Host, 0, 0, 0, 2});
  const DeviceId sw1 = b.add_device(Device{DeviceKind::Host, 0, 0, 0, 3});
  b.add_link(link(a, mid));
  b.add_link(link(mid, c));
  for (const auto& [x, y] : {std::pair{a, sw0}, {c, sw1}, {sw0, cpu0}, {sw1, cpu1}, {cpu0, cpu1}})
    b.add_link(link(x, y));
  const Topology t = std::move(b).build();
  std::vector<PathShare> out;
  make_router(t, {})->route({a, c, 0}, nullptr, out);
  ASSERT_EQ(out.size(), 1u);
  ASSERT_EQ(out[0].hops.size(), 2u);
  EXPECT_EQ(t.target(out[0].hops[0]), mid);
  for (const RoutingPolicy policy : {RoutingPolicy::Ecmp, RoutingPolicy::Spray}) {
    const auto router = make_router_without_gpu_transit(t, {policy, 1, 0});
    router->route({a, c, 7}, nullptr, out);
    ASSERT_EQ(out.size(), 1u);
    const std::vector<DeviceId> want = {sw0, cpu0, cpu1, sw1, c};
    ASSERT_EQ(out[0].hops.size(), want.size());
    expect_path(t, out[0].hops, a, c);
    for (std::size_t i = 0; i < want.size(); ++i) EXPECT_EQ(t.target(out[0].hops[i]), want[i]);
    router->route({a, mid, 0}, nullptr, out);  // a direct NVLink is still a path's only hop
    EXPECT_EQ(out[0].hops.size(), 1u);
  }
  const Topology only_gpus = in_a_row(gpu(0, 0), gpu(0, 1), gpu(0, 2));
  EXPECT_THROW(make_router_without_gpu_transit(only_gpus, {})->route({0, 2, 0}, nullptr, out),
               InputError);
}

TEST(Router, BadInputsAreInputErrors) {
  auto ls = leaf_spine(2);
  EXPECT_THROW(make_router(ls.topo, {RoutingPolicy::Ecmp, 0, 0}), InputError);
  auto router = make_router(ls.topo, {});
  std::vector<PathShare> out;
  EXPECT_THROW(router->route({0, 999, 0}, nullptr, out), InputError);
  router->route({2, 2, 0}, nullptr, out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(out[0].hops.empty());
  EXPECT_EQ(parse_routing_policy("rail_aligned"), RoutingPolicy::RailAligned);
  EXPECT_STREQ(to_string(RoutingPolicy::DimensionOrder), "dimension_order");
  EXPECT_THROW(parse_routing_policy("random"), InputError);
}

}  // namespace
}  // namespace lockstep
