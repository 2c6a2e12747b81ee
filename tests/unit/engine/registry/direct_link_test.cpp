// One send on an idle link between two GPUs, no switch and no NIC, on every engine of the
// registry with its defaults: latency + S / B, derived by hand.
#include <gtest/gtest.h>

#include <cstdint>

#include "lockstep/collective/program.hpp"
#include "lockstep/engine/registry/registry.hpp"
#include "lockstep/routing/router.hpp"

namespace lockstep {
namespace {

const Bandwidth kB = Bandwidth::gBps(50);  // 20 ps per byte
const Time kL = Time::us(1);
constexpr std::uint64_t kS = 1 << 20;  // 256 packets of 4096 B on the packet engine

// GPU 0 and GPU 1 joined by one link: on the board of one server (NVLink, xGMI), or a cable
// between two one-GPU servers (a torus, a full mesh).
Topology pair(bool on_board) {
  TopologyBuilder b("pair");
  const DeviceId a = b.add_device(Device{DeviceKind::Gpu, 0, 0, 0, 0});
  const DeviceId c = b.add_device(Device{DeviceKind::Gpu, 0, on_board ? 0u : 1u, 0, 0});
  b.add_link(Link{a, c, kB, kL, on_board ? LinkMedium::NvLink : LinkMedium::CopperDac,
                  on_board ? 0.0 : 1.0});
  return std::move(b).build();
}

Time send_time(const std::string& engine, const Topology& topo) {
  MaterializedProgramSet p(2);
  p.add(0, make_send(1, {Buffer::Input, 0, kS}));
  p.add(1, make_recv(0, {Buffer::Output, 0, kS}, RecvMode::Copy));
  const auto router = make_router(topo, RouterOptions{});
  EngineInput in;
  in.topology = &topo;
  in.programs = &p;
  in.placement = topo.gpus();
  in.router = router.get();
  return make_engine(engine)->run(in).makespan;
}

// 1 us + 1,048,576 B x 20 ps = 21,971,520 ps on every engine. On the cable the packet engine's
// InfiniBand packets (the topology's default fabric) carry 26 B of header each: 256 x 26 B x 20
// ps = 133,120 ps more; on the board they are GPU copies and carry none.
TEST(DirectLink, OneSendTakesLatencyPlusSizeOverBandwidthOnEveryEngine) {
  const Time exact = Time::ps(1'000'000 + 20'971'520);
  for (const bool on_board : {true, false}) {
    const Topology topo = pair(on_board);
    EXPECT_EQ(send_time("analytical", topo), exact) << on_board;
    EXPECT_EQ(send_time("flow", topo), exact) << on_board;
    EXPECT_EQ(send_time("packet", topo), on_board ? exact : exact + Time::ps(133'120)) << on_board;
  }
}

}  // namespace
}  // namespace lockstep
