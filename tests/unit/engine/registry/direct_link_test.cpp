// One send on an idle link between two GPUs, no switch and no NIC, on every engine of the
// registry: latency + S / B, derived by hand, and the link counters in payload, the same on every
// engine (docs/telemetry.md "Payload and wire bytes").
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "lockstep/collective/program.hpp"
#include "lockstep/engine/registry/registry.hpp"
#include "lockstep/routing/router.hpp"
#include "lockstep/telemetry/link_counters.hpp"

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

struct Sent {
  Time makespan;
  LinkCounters counters;
  LinkReport busiest;  // the a -> b direction, as the reports show it
};

// One send of `bytes` from GPU 0 to GPU 1 on `engine`.
Sent send(const std::string& engine, const Topology& topo, std::uint64_t bytes,
          const EngineOptions& options = {}) {
  MaterializedProgramSet p(2);
  p.add(0, make_send(1, {Buffer::Input, 0, bytes}));
  p.add(1, make_recv(0, {Buffer::Output, 0, bytes}, RecvMode::Copy));
  const auto router = make_router(topo, RouterOptions{});
  EngineInput in;
  in.topology = &topo;
  in.programs = &p;
  in.placement = topo.gpus();
  in.router = router.get();
  in.options = options;
  const auto e = make_engine(engine);
  Sent r;
  r.makespan = e->run(in).makespan;
  r.counters = e->link_counters();
  const auto links = busiest_links(topo, r.counters, nullptr, 1);
  if (!links.empty()) r.busiest = links.front();
  return r;
}

Time send_time(const std::string& engine, const Topology& topo) {
  return send(engine, topo, kS).makespan;
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

// NCCL's payload rates on H100 (docs/analytical-engine.md "Link rates: one rule"): 48 of an NDR
// port's 50 GB/s over the network, 370.8 of NVLink4's 450 GB/s on the board.
constexpr double kNetwork = 0.96;
constexpr double kNvlink = 370.8 / 450;
constexpr std::uint64_t kGib = 1 << 30;
constexpr double kGibBytes = 1073741824.0;

EngineOptions nccl_efficiencies() {
  EngineOptions o;
  o.transfer_efficiency = kNvlink;
  o.network_transfer_efficiency = kNetwork;
  return o;
}

// Over the network link the payload runs at 50 GB/s x 0.96 = 48 GB/s on every engine:
// 1 us + 1,073,741,824 / 48e9 s = 1 us + 22,369,621.33 ns = 22,370,621,333 ps.
// Analytical and flow: the counter reads the 1 GiB of payload (flow within its rounding of
// payload / 0.824 x 0.824), the wire 1 GiB / 0.96 = 1,118,481,066.67 B, and the link is busy
// 22,369.62 of the 22,370.62 us: 99.9955%, never more than 100%.
// Packet: NCCL's 0.96 already covers the headers, so the engine inflates the payload by
// 0.96 x (4,096 + 26) / 4,096 = 0.96609375 only (IB's LRH 8 + BTH 12 + ICRC 4 + VCRC 2 B):
// ceil(1 GiB / 0.96609375) = 1,111,426,116 B in 271,345 packets (the last of 1,092 B), each with
// 26 B of header: 1,118,481,086 B on the wire, 22,369,621,720 ps at 20 ps a byte, 387 ps more
// than the payload at 48 GB/s (the last, short packet's header). Its payload counter reads
// 1,111,426,116 x 0.96609375 = 1 GiB + 0.25 B, summed packet by packet in doubles: 271,345
// additions each rounded by at most half an ulp below 2^30 (2^-24 B), 0.016 B at worst. The
// link is busy 22,369,621,720 ps of the 22,370,621,720 ps run.
TEST(DirectLinkCounters, OneGibOverANetworkLinkReadsThePayloadOnEveryEngine) {
  const Topology topo = pair(false);
  const double wire = kGibBytes / kNetwork;
  for (const char* engine : {"analytical", "flow"}) {
    const Sent r = send(engine, topo, kGib, nccl_efficiencies());
    EXPECT_NEAR(static_cast<double>(r.makespan.picoseconds()), 22'370'621'333.0, 2) << engine;
    EXPECT_NEAR(r.counters.bytes[0], kGibBytes, 1e-3) << engine;
    EXPECT_EQ(r.counters.bytes[1], 0.0) << engine;
    EXPECT_NEAR(r.counters.wire_bytes[0], wire, 1e-3) << engine;
    EXPECT_EQ(r.busiest.link, 0u) << engine;
    EXPECT_NEAR(r.busiest.bytes, kGibBytes, 1e-3) << engine;
    EXPECT_NEAR(r.busiest.utilisation, 22'369.621333 / 22'370.621333, 1e-9) << engine;
    EXPECT_LE(r.busiest.utilisation, 1.0) << engine;
  }
  const Sent r = send("packet", topo, kGib, nccl_efficiencies());
  EXPECT_EQ(r.makespan, Time::ps(1'000'000 + 22'369'621'720));
  EXPECT_NEAR(r.counters.bytes[0], kGibBytes + 0.254375, 0.016);
  EXPECT_EQ(r.counters.wire_bytes[0], 1'118'481'086.0);
  EXPECT_EQ(r.busiest.link, 0u);
  EXPECT_NEAR(r.busiest.utilisation, 22'369'621'720.0 / 22'370'621'720.0, 1e-12);
  EXPECT_LE(r.busiest.utilisation, 1.0);
}

// On NVLink every engine runs the payload at 0.824 of the line rate (no header on the packet
// engine's board copies): 1 us + 1 GiB / (50 GB/s x 0.824) = 1 us + 26,061,694.76 ns. Each
// counter reads the payload and the wire 1 GiB / 0.824 = 1,303,084,737.86 B (the packet engine
// its ceil, 1,303,084,738 B).
TEST(DirectLinkCounters, OneGibOverNvlinkReadsThePayloadOnEveryEngine) {
  const Topology topo = pair(true);
  const double wire = kGibBytes / kNvlink;
  for (const char* engine : {"analytical", "flow", "packet"}) {
    const Sent r = send(engine, topo, kGib, nccl_efficiencies());
    EXPECT_NEAR(r.makespan.microseconds(), 1 + 26'061.694757, 0.001) << engine;
    EXPECT_NEAR(r.counters.bytes[0], kGibBytes, 1) << engine;
    EXPECT_NEAR(r.counters.wire_bytes[0], wire, 1) << engine;
    EXPECT_LE(r.busiest.utilisation, 1.0) << engine;
    EXPECT_GT(r.busiest.utilisation, 0.9999) << engine;
  }
}

}  // namespace
}  // namespace lockstep
