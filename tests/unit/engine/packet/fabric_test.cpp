// Fabric models under incast: lossless fabrics never drop, lossy ones drop and recover, and every
// byte arrives exactly once; PFC pauses, ECN marks, DCQCN, trimming and determinism.
#include <gtest/gtest.h>

#include "fixtures.hpp"
#include "lockstep/core/error.hpp"
#include "lockstep/engine/packet/packet_engine.hpp"

namespace lockstep {
namespace {

using packet_test::Outcome;
using packet_test::simulate;

const Bandwidth k400G = Bandwidth::gbps(400);

// N senders to host N on one switch.
struct Incast {
  Topology topo;
  MaterializedProgramSet programs;
  std::uint64_t total;
};

Incast incast(Rank senders, std::uint64_t bytes) {
  std::vector<packet_test::Transfer> list;
  for (Rank s = 0; s < senders; ++s) list.push_back({s, senders, bytes});
  return {packet_test::star(senders + 1, k400G, Time::ns(100)),
          packet_test::transfers(senders + 1, list), senders * bytes};
}

void expect_all_delivered_once(const Outcome& r, const Incast& in, std::size_t flows) {
  EXPECT_EQ(r.stats.payload_bytes_delivered, in.total);
  ASSERT_EQ(r.stats.flows.size(), flows);
  std::uint64_t sum = 0;
  for (std::size_t i = 0; i < flows; ++i) sum += r.stats.flows.bytes(i);
  EXPECT_EQ(sum, in.total);
}

TEST(PacketFabric, LossyEthernetIncastDropsAndStillDeliversEverything) {
  const Incast in = incast(8, 512 << 10);
  PacketConfig cfg = packet_config_for_fabric("ethernet");
  cfg.switch_buffer = Bytes(256 << 10);
  cfg.switch_latency = Time::zero();
  const Outcome r = simulate(in.topo, in.programs, cfg);
  EXPECT_GT(r.stats.drops, 0u);
  EXPECT_GT(r.stats.retransmissions, 0u);
  expect_all_delivered_once(r, in, 8);
  // Lower bound: the receiver's link must carry every payload byte plus headers once.
  const double floor = static_cast<double>(in.total) / k400G.bytes_per_second();
  EXPECT_GT(r.result.makespan.seconds(), floor);
}

TEST(PacketFabric, RoceIncastPausesInsteadOfDropping) {
  const Incast in = incast(4, 1 << 20);
  PacketConfig cfg = packet_config_for_fabric("roce");
  cfg.switch_buffer = Bytes(256 << 10);
  cfg.switch_latency = Time::zero();
  const Outcome r = simulate(in.topo, in.programs, cfg);
  EXPECT_EQ(r.stats.drops, 0u);
  EXPECT_GT(r.stats.pfc_pauses, 0u);
  EXPECT_GT(r.stats.ecn_marks, 0u);
  EXPECT_GT(r.stats.cnps, 0u);
  EXPECT_EQ(r.stats.pfc_pauses, r.stats.pfc_resumes);  // every pause was lifted
  expect_all_delivered_once(r, in, 4);
  Time paused;
  for (Time t : r.stats.links.paused) paused += t;
  EXPECT_GT(paused, Time::zero());
}

TEST(PacketFabric, UltraEthernetTrimsInsteadOfDropping) {
  const Incast in = incast(8, 512 << 10);
  PacketConfig cfg = packet_config_for_fabric("ultra_ethernet");
  cfg.switch_buffer = Bytes(256 << 10);
  cfg.switch_latency = Time::zero();
  cfg.trimming = true;
  const Outcome r = simulate(in.topo, in.programs, cfg, RoutingPolicy::Spray);
  EXPECT_EQ(r.stats.drops, 0u);
  EXPECT_GT(r.stats.trims, 0u);
  EXPECT_GT(r.stats.retransmissions, 0u);
  expect_all_delivered_once(r, in, 8);
}

TEST(PacketFabric, UltraEthernetWithoutTrimmingRecoversFromDrops) {
  const Incast in = incast(8, 512 << 10);
  PacketConfig cfg = packet_config_for_fabric("ultra_ethernet");
  cfg.trimming = false;
  cfg.switch_buffer = Bytes(64 << 10);
  cfg.switch_latency = Time::zero();
  const Outcome r = simulate(in.topo, in.programs, cfg, RoutingPolicy::Spray);
  EXPECT_GT(r.stats.drops, 0u);
  expect_all_delivered_once(r, in, 8);
}

TEST(PacketFabric, SameSeedSameOutput) {
  const Incast in = incast(6, 256 << 10);
  PacketConfig cfg = packet_config_for_fabric("roce");
  cfg.switch_buffer = Bytes(256 << 10);
  const Outcome a = simulate(in.topo, in.programs, cfg, RoutingPolicy::Ecmp, 7);
  const Outcome b = simulate(in.topo, in.programs, cfg, RoutingPolicy::Ecmp, 7);
  EXPECT_EQ(a.result.makespan, b.result.makespan);
  EXPECT_EQ(a.stats.ecn_marks, b.stats.ecn_marks);
  EXPECT_EQ(a.stats.events, b.stats.events);
  ASSERT_EQ(a.stats.flows.size(), b.stats.flows.size());
  for (std::size_t i = 0; i < a.stats.flows.size(); ++i)
    EXPECT_EQ(a.stats.flows.end(i), b.stats.flows.end(i));
  EXPECT_EQ(a.result.link_bytes, b.result.link_bytes);
}

// Every directed link carries exactly the wire bytes of the packets that crossed it: on a
// lossless star each byte crosses two links, so the sum is 2 x (payload + headers), plus each
// message's one ACK of 30 B (IB RC, one per message) over the two links back.
TEST(PacketFabric, LinkBytesCountEveryWireByteOnce) {
  const Incast in = incast(3, 100'000);  // 25 packets: 24 x 4096 + 1696
  const Outcome r = simulate(in.topo, in.programs, packet_config_for_fabric("infiniband"));
  double sum = 0;
  for (double b : r.result.link_bytes) sum += b;
  EXPECT_DOUBLE_EQ(sum, 2.0 * 3 * (100'000 + 25 * 26 + 30));
}

TEST(PacketFabric, FlowCompletionPercentiles) {
  const Incast in = incast(4, 256 << 10);
  const Outcome r = simulate(in.topo, in.programs, packet_config_for_fabric("infiniband"));
  ASSERT_EQ(r.stats.flows.size(), 4u);
  // The last flow to finish defines the makespan; the median is no later than it.
  EXPECT_EQ(r.stats.flows.completion_percentile(1.0), r.result.makespan);
  EXPECT_LE(r.stats.flows.completion_percentile(0.5), r.result.makespan);
}

// Link series: bytes per sample period. The receiver's link of an IB incast is busy from 200 ns
// to the end, so its 10 us samples are full (utilisation 1) except the first and the last.
TEST(PacketFabric, LinkSeriesShowTheBottleneckBusy) {
  const Incast in = incast(4, 1 << 20);
  packet_test::TinyRouter router(in.topo, RoutingPolicy::Ecmp);
  PacketEngine engine(packet_config_for_fabric("infiniband"));
  EngineInput input;
  input.topology = &in.topo;
  input.programs = &in.programs;
  input.router = &router;
  input.options.record_link_series = true;
  input.options.link_sample_period = Time::us(10);
  const RunResult r = engine.run(input);
  ASSERT_FALSE(r.link_series.empty());
  const LinkSeries& busiest = r.link_series.front();
  EXPECT_EQ(in.topo.target(busiest.link), 4u);  // the switch-to-receiver link
  ASSERT_GE(busiest.utilisation.size(), 8u);    // 4 MiB at 50 GB/s is 84 us
  for (std::size_t i = 1; i + 1 < busiest.utilisation.size(); ++i)
    EXPECT_NEAR(busiest.utilisation[i], 1.0, 1e-3) << "sample " << i;
  EXPECT_GT(engine.stats().links.peak_queue[busiest.link], 0.0);
}

// The registry's default packet engine takes its fabric model from the topology.
TEST(PacketFabric, DefaultEngineFollowsTheTopologysFabric) {
  Incast in = incast(4, 256 << 10);
  TopologyBuilder b("roce_star");
  for (DeviceId d = 0; d < in.topo.num_devices(); ++d) b.add_device(in.topo.device(d));
  for (LinkId l = 0; l < in.topo.num_links(); ++l) b.add_link(in.topo.link(l));
  ClusterTraits traits;
  traits.fabric = "roce";
  b.set_traits(traits);
  const Topology topo = std::move(b).build();
  packet_test::TinyRouter router(topo, RoutingPolicy::Ecmp);
  auto engine = make_packet_engine();
  EngineInput input;
  input.topology = &topo;
  input.programs = &in.programs;
  input.router = &router;
  engine->run(input);
  EXPECT_EQ(static_cast<const PacketEngine&>(*engine).config().flow_control, FlowControl::Pfc);
  EXPECT_EQ(packet_stats(*engine).payload_bytes_delivered, in.total);
}

// NetReduce is priced by formula in the packet engine (2 x link latency + bytes / bandwidth from
// the moment the last member of a round joins, a member's rounds streaming one after another over
// its link). Rank 0 posts two rounds at t = 0, rank 1 joins both after 100 us: both rounds start
// at 100 us; the first ends at 100 us + 4096 B / 50 GB/s + 200 ns = 100.28192 us, the second
// streams after it, 81.92 ns later: 100.36384 us. Mixing rounds would finish rank 0 at
// 0.36384 us; giving each round the whole link (before) at 100.28192 us.
TEST(PacketFabric, NetReduceRoundsMatchInProgramOrderPerMember) {
  const Topology topo = packet_test::star(2, k400G, Time::ns(100));
  MaterializedProgramSet p(2);
  const auto g = p.add_group({0, 1});
  const BufferRange in{Buffer::Input, 0, 4096}, out{Buffer::Output, 0, 4096};
  p.add(0, make_net_reduce(g, in, out));
  p.add(0, make_net_reduce(g, in, out));
  const OpIndex wait = p.add(1, make_compute(Time::us(100)));
  Op after_wait = make_net_reduce(g, in, out);
  after_wait.num_deps = 1;
  after_wait.deps[0] = wait;
  p.add(1, after_wait);
  p.add(1, after_wait);
  const Outcome o = simulate(topo, p, packet_config_for_fabric("infiniband"));
  const Time expected = Time::us(100) + Time::ns(200) + transfer_time(Bytes(4096), k400G) * 2;
  EXPECT_EQ(expected, Time::ps(100'363'840));
  EXPECT_EQ(o.result.rank_finish[0], expected);
  EXPECT_EQ(o.result.rank_finish[1], expected);
}

TEST(PacketFabric, UnmatchedSendIsAnInputError) {
  const Topology topo = packet_test::star(2, k400G, Time::ns(100));
  MaterializedProgramSet p(2);
  p.add(0, make_send(1, {Buffer::Input, 0, 4096}));
  EXPECT_THROW(simulate(topo, p, packet_config_for_fabric("infiniband")), InputError);
}

}  // namespace
}  // namespace lockstep
