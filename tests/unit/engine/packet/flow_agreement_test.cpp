// The packet engine agrees with the flow engine where physics says it must: uncontended
// transfers, and an all-reduce on an uncongested fabric. The flow engine has no packet headers,
// so it is run with a protocol efficiency of payload / (payload + header): a transfer of S bytes
// then occupies its links exactly as S plus the per-packet headers do in the packet engine.
#include <gtest/gtest.h>

#include "fixtures.hpp"
#include "lockstep/collective/collective.hpp"
#include "lockstep/engine/flow/flow_engine.hpp"
#include "lockstep/engine/packet/packet_engine.hpp"
#include "lockstep/routing/router.hpp"
#include "lockstep/topology/builder.hpp"
#include "lockstep/topology/presets.hpp"

namespace lockstep {
namespace {

struct Both {
  Time flow, packet;
};

Both run_both(const Topology& topo, const ProgramSet& programs, const Router& router) {
  const PacketConfig cfg = packet_config_for_fabric("infiniband");
  EngineInput in;
  in.topology = &topo;
  in.programs = &programs;
  in.router = &router;
  in.placement = topo.gpus();
  Both out;
  out.packet = make_packet_engine(cfg)->run(in).makespan;
  in.options.transfer_efficiency = static_cast<double>(cfg.payload.count()) /
                                   static_cast<double>(cfg.payload.count() + cfg.header.count());
  out.flow = make_flow_engine()->run(in).makespan;
  return out;
}

// 64 MiB (16,384 full packets) between two hosts on one switch: both engines give
// 200 ns + 64 MiB x 4122/4096 / 50 GB/s = 1,351,081 ns; the packet engine exactly, the flow
// engine up to its rounding.
TEST(PacketFlowAgreement, UncontendedTransfer) {
  const Topology topo = packet_test::star(2, Bandwidth::gbps(400), Time::ns(100));
  const auto programs = packet_test::transfers(2, {{0, 1, 64ull << 20}});
  packet_test::TinyRouter router(topo, RoutingPolicy::Ecmp);
  const Both t = run_both(topo, programs, router);
  EXPECT_EQ(t.packet, Time::ps(200'000 + (64ll << 20) / 4096 * 4122 * 20));
  EXPECT_NEAR(t.packet.seconds() / t.flow.seconds(), 1.0, 0.01);
}

// Ring all-reduce of 1 MiB over 8 HGX-H100 nodes x 8 GPUs on rail-optimised NDR InfiniBand:
// every ring step moves one block per GPU over its own NVLink or rail, so nothing is shared and
// the engines agree within 5% (what remains is packet pipelining per step, which the flow
// engine's fluid transfers do not have).
TEST(PacketFlowAgreement, AllReduceOnEightNodes) {
  const PresetCluster p = resolve_preset({.system = "hgx-h100", .fabric = "ib-ndr", .nodes = 8});
  const BuildResult built = build_topology(rail_optimized_args(p));
  ASSERT_TRUE(built.graph.has_value());
  const Topology& topo = *built.graph;
  ASSERT_EQ(topo.gpus().size(), 64u);
  CollectiveSpec spec;
  spec.op = CollectiveOp::AllReduce;
  spec.algorithm = Algorithm::Ring;
  spec.ranks = 64;
  spec.bytes = Bytes::mib(1);
  spec.ranks_per_node = 8;
  const auto programs = make_collective(spec);
  const auto router = make_router(topo, RouterOptions{});
  const Both t = run_both(topo, *programs, *router);
  EXPECT_NEAR(t.packet.seconds() / t.flow.seconds(), 1.0, 0.05)
      << "packet " << to_string(t.packet) << " flow " << to_string(t.flow);
}

}  // namespace
}  // namespace lockstep
