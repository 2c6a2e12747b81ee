// Link faults in collective runs: a degraded NIC link and a failed one (NIC failover through a
// peer GPU, docs/routing.md) on the flow and packet engines and the analytical one (the NCCL
// model priced on the faulted graph), with hand-derived times and bytes.
#include "lockstep/topology/faults.hpp"

#include <gtest/gtest.h>

#include "../topology/topology_test_util.hpp"
#include "lockstep/engine/registry/registry.hpp"
#include "lockstep/nccl/sweep.hpp"
#include "lockstep/topology/device_names.hpp"

namespace lockstep {
namespace {

constexpr double kNdr = 50e9;  // B/s: a 400 Gb/s NDR port, below the NIC's 63 GB/s PCIe link

Topology hgx(std::uint32_t nodes, const std::vector<std::string>& faults = {}) {
  const Topology t = test::hgx_h100(nodes);
  std::vector<FaultSpec> specs;
  for (const auto& f : faults) specs.push_back(parse_fault(f, "--fault"));
  return apply_link_faults(t, specs);
}

// Sum of the latencies of the links between consecutive named devices.
Time latency(const Topology& t, const std::vector<std::string>& devices) {
  const DeviceNames names(t);
  Time sum;
  for (std::size_t i = 0; i + 1 < devices.size(); ++i) {
    const DeviceId a = names.find(devices[i]), b = names.find(devices[i + 1]);
    for (const Port& p : t.ports(a))
      if (p.peer == b) {
        sum += t.link(Topology::link_of(p.out)).latency;  // parallel links: equally long
        break;
      }
  }
  return sum;
}

// Bytes a directed link from device `a` to device `b` carried.
double bytes_on(const Topology& t, const RunResult& r, const char* a, const char* b) {
  const DeviceNames names(t);
  for (const Port& p : t.ports(names.find(a)))
    if (p.peer == names.find(b)) return r.link_bytes.at(p.out);
  ADD_FAILURE() << a << " and " << b << " are not linked";
  return -1;
}

// A ring all-reduce of S over two ranks, node 0's GPU 3 and node 1's GPU 3 (both on rail 3), one
// channel, one chunk: two steps, each a message of S/2 both ways at once. Time: 2 (L + S/2 / B)
// = S / B + 2 L for the path's latency L and narrowest link B.
RunResult ring_of_two(const Topology& t, Bytes s, const std::string& engine) {
  CollectiveSpec spec;
  spec.algorithm = Algorithm::Ring;
  spec.ranks = 2;
  spec.bytes = s;
  spec.chunk = s;
  const auto programs = make_collective(spec);
  const std::vector<DeviceId> placement = {t.gpus()[3], t.gpus()[11]};
  const auto router = make_router(t, RouterOptions{});
  EngineInput in;
  in.topology = &t;
  in.programs = programs.get();
  in.placement = placement;
  in.router = router.get();
  return make_engine(engine)->run(in);
}

TEST(CollectiveFaults, ADegradedNicLinkHalvesTheRingsBandwidth) {
  const Bytes s = Bytes::mib(64);
  const std::vector<std::string> path = {"gpu3", "nic3", "leaf3", "nic11", "gpu11"};
  const Topology healthy = hgx(2);
  const Time l = latency(healthy, path);
  EXPECT_NEAR(ring_of_two(healthy, s, "flow").makespan.seconds(),
              s.as_double() / kNdr + 2 * l.seconds(), 1e-11);
  const Topology degraded = hgx(2, {"degraded-link:link=nic3-leaf3,x=0.5"});
  EXPECT_NEAR(ring_of_two(degraded, s, "flow").makespan.seconds(),
              s.as_double() / (kNdr / 2) + 2 * l.seconds(), 1e-11);
}

TEST(CollectiveFaults, AFailedNicLinkFailsOverThroughThePeersNvlinkAndNic) {
  // Rank 0's NIC link is gone: its messages go over NVLink to GPU 4 and out through GPU 4's NIC;
  // the replies come back the same way. The narrowest link is still an NDR port.
  const Bytes s = Bytes::mib(64);
  const Topology t = hgx(2, {"failed-link:link=nic3-leaf3"});
  const std::vector<std::string> pxn = {
      "gpu3", "scale_up_switch0", "gpu4", "nic4", "leaf4", "spine0", "leaf3", "nic11", "gpu11"};
  const double l = latency(t, pxn).seconds();
  for (const char* engine : {"flow", "packet"}) {
    SCOPED_TRACE(engine);
    const RunResult r = ring_of_two(t, s, engine);
    // The packet engine's links carry each 4096 B payload with InfiniBand's 26 B of headers.
    const double wire =
        std::string(engine) == "flow" ? s.as_double() : s.as_double() * (4096 + 26) / 4096;
    if (std::string(engine) == "flow") {
      EXPECT_NEAR(r.makespan.seconds(), wire / kNdr + 2 * l, 1e-11);
    } else {  // and stores and forwards them: a little slower, never faster
      EXPECT_GE(r.makespan.seconds(), wire / kNdr + 2 * l);
      EXPECT_LE(r.makespan.seconds(), 1.01 * (wire / kNdr + 2 * l));
    }
    // Two messages of S/2 each way over every link of the route, none over GPU 3's own NIC. On
    // the packet engine each way also carries the ACKs of the two messages the other way (one
    // 30 B InfiniBand RC ACK per message, over the reverse route).
    const double acks = std::string(engine) == "flow" ? 0.0 : 2 * 30.0;
    for (std::size_t i = 0; i + 1 < pxn.size(); ++i) {
      EXPECT_DOUBLE_EQ(bytes_on(t, r, pxn[i].c_str(), pxn[i + 1].c_str()), wire + acks);
      EXPECT_DOUBLE_EQ(bytes_on(t, r, pxn[i + 1].c_str(), pxn[i].c_str()), wire + acks);
    }
    EXPECT_EQ(bytes_on(t, r, "gpu3", "nic3"), 0.0);
    EXPECT_EQ(bytes_on(t, r, "nic3", "gpu3"), 0.0);
  }
}

// The rows of a ring all-reduce sweep from `min` to `max` over 2 x HGX H100 (16 ranks) on
// `engine` with `faults`, through the sweep `lockstep collective` runs.
std::vector<CollectiveRow> ring_sweep(const std::vector<std::string>& faults,
                                      const std::string& engine, Bytes min, Bytes max) {
  const PresetCluster p = resolve_preset({.system = "hgx-h100", .fabric = "ib-ndr", .nodes = 2});
  const Topology t = hgx(2);
  CollectiveSweep s;
  s.algo = Algorithm::Ring;
  s.engine = engine;
  s.min_bytes = min;
  s.max_bytes = max;
  for (const auto& f : faults) s.faults.push_back(parse_fault(f, "--fault"));
  return run_collective_sweep(s, nccl_cluster(p), &t);
}

// The time per byte of a 16-GPU ring all-reduce on `engine` (the slope between 512 MiB and
// 1 GiB, so that the fixed costs cancel).
double seconds_per_byte(const std::vector<std::string>& faults, const std::string& engine) {
  const auto rows = ring_sweep(faults, engine, Bytes::mib(512), Bytes::gib(1));
  EXPECT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows.at(0).channels, 16u);
  return (rows.at(1).time - rows.at(0).time).seconds() / Bytes::mib(512).as_double();
}

TEST(CollectiveFaults, OneSlowNicLinkSetsTheWholeRingsPace) {
  // 16 ranks, 16 channels. Each channel's ring leaves and enters each node once, so each NIC
  // carries two channels each way. A channel moves 2 (n-1)/n S / 16 across the nodes at half its
  // NIC's rate: NCCL's search speed for NDR, 48 GB/s (docs/nccl-model.md), of which each channel
  // gets 24 GB/s. Per byte of S: 30/16 / 16 / 24e9 s.
  const double healthy = 30.0 / 16 / 16 / 24e9;
  // The analytical engine (the model priced on the graph, docs/analytical-engine.md) finds the
  // same: NIC 3's link, the busiest with the others, carries two channels' 2 x 30/16 / 16 S at
  // 48 GB/s (the NDR port's 50 at NCCL's 48/50), the model's own bandwidth term.
  for (const char* engine : {"flow", "analytical"}) {
    SCOPED_TRACE(engine);
    EXPECT_NEAR(seconds_per_byte({}, engine), healthy, 1e-6 * healthy);
    // NIC 3's link at half speed: its two channels get 12 GB/s each, and the collective ends
    // with its last channel (analytical: the link, now the busiest, needs twice as long).
    EXPECT_NEAR(seconds_per_byte({"degraded-link:link=nic3-leaf3,x=0.5"}, engine), 2 * healthy,
                1e-6 * healthy);
    // NIC 3 cut off: GPU 3's two channels go through NIC 4 (failover), which carries four.
    EXPECT_NEAR(seconds_per_byte({"failed-link:link=nic3-leaf3"}, engine), 2 * healthy,
                1e-6 * healthy);
  }
}

// The time of a 256 MiB ring all-reduce over 2 x HGX H100 with `faults`.
Time ring_all_reduce(const std::vector<std::string>& faults, const std::string& engine) {
  const auto rows = ring_sweep(faults, engine, Bytes::mib(256), Bytes::mib(256));
  EXPECT_EQ(rows.size(), 1u);
  return rows.at(0).time;
}

TEST(CollectiveFaults, AStragglerHoldsTheRingBackByItsDelay) {
  // Rank 3 starts 1 ms late. Every output of an all-reduce depends on rank 3's input, and in a
  // ring every rank's step k + 1 waits for its predecessor's step k, so rank 3's first send
  // gates every chain: during the delay the others can at most send their own first step
  // (one of the 2 (n - 1) = 30 steps of each loop, nothing of rank 3's). Flow therefore ends
  // between healthy + D - healthy / 30 and healthy + D (the others lose nothing but the wait).
  const Time d = Time::ms(1);
  const std::vector<std::string> late = {"slow-gpu:rank=3,delay=1ms"};
  const Time healthy = ring_all_reduce({}, "flow");
  const Time straggler = ring_all_reduce(late, "flow");
  EXPECT_GE(straggler.seconds(), (healthy + d).seconds() - healthy.seconds() / 30);
  EXPECT_LE(straggler.seconds(), (healthy + d).seconds() * (1 + 1e-9));
  // Packet: the same lower bound (its queues may add a little on top: 6.6 us here).
  const Time packet = ring_all_reduce({}, "packet");
  EXPECT_GE(ring_all_reduce(late, "packet").seconds(),
            (packet + d).seconds() - packet.seconds() / 30);
  // The analytical engine's bound: healthy + D exactly.
  EXPECT_EQ(ring_all_reduce(late, "analytical"), ring_all_reduce({}, "analytical") + d);
  // Two stragglers on one rank add up; on two ranks the later one counts.
  EXPECT_EQ(
      ring_all_reduce({"slow-gpu:rank=3,delay=1ms", "slow-gpu:rank=3,delay=1ms"}, "analytical"),
      ring_all_reduce({}, "analytical") + d * 2);
  EXPECT_EQ(
      ring_all_reduce({"slow-gpu:rank=3,delay=1ms", "slow-gpu:rank=9,delay=500us"}, "analytical"),
      ring_all_reduce({}, "analytical") + d);
}

TEST(CollectiveFaults, AStragglerOutsideTheCommunicatorIsAnError) {
  try {
    ring_all_reduce({"slow-gpu:rank=16,delay=1ms"}, "analytical");
    FAIL() << "rank 16 of 16 accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "--fault");
    EXPECT_NE(e.bare_message().find("rank 16 does not exist (16 ranks, 0 .. 15)"),
              std::string::npos);
  }
}

TEST(CollectiveFaults, CheckSweepRefusesWhatRunWouldWithoutRunning) {
  // 2 x 8 H100: ranks 0 .. 15; a link id past the graph's and a 1 TiB message (more than an
  // H100's 80 GB) are refused by the same checks run_collective_sweep makes first.
  const PresetCluster p = resolve_preset({.system = "hgx-h100", .fabric = "ib-ndr", .nodes = 2});
  const Topology t = hgx(2);
  const NcclCluster c = nccl_cluster(p);
  auto sweep = [](const char* fault, Bytes max) {
    CollectiveSweep s;
    s.min_bytes = Bytes::kib(1);
    s.max_bytes = max;
    if (fault != nullptr) s.faults.push_back(parse_fault(fault, "--fault"));
    return s;
  };
  EXPECT_NO_THROW(check_sweep(sweep("slow-gpu:rank=15,delay=1ms", Bytes::mib(1)), c, &t));
  EXPECT_THROW(check_sweep(sweep("slow-gpu:rank=16,delay=1ms", Bytes::mib(1)), c, &t), InputError);
  const std::string link = "failed-link:link=" + std::to_string(t.links().size());
  EXPECT_THROW(check_sweep(sweep(link.c_str(), Bytes::mib(1)), c, &t), InputError);
  EXPECT_THROW(check_sweep(sweep(link.c_str(), Bytes::mib(1)), c, nullptr), InputError);
  EXPECT_THROW(check_sweep(sweep(nullptr, Bytes::gib(1024)), c, &t), InputError);
}

}  // namespace
}  // namespace lockstep
