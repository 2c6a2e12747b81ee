// The flow engine options the NCCL glue uses to reproduce NCCL's per-medium model
// (docs/nccl-model.md "Flow runs"): a network efficiency of its own, an extra latency for
// messages that cross the network, and the per-message overhead charged as latency. Times are
// derived by hand on a two-GPU path GPU - NIC - switch - NIC - GPU.
#include <gtest/gtest.h>

#include <cstdint>

#include "lockstep/collective/program.hpp"
#include "lockstep/core/error.hpp"
#include "lockstep/engine/registry/registry.hpp"
#include "lockstep/routing/router.hpp"
#include "lockstep/topology/graph.hpp"

namespace lockstep {
namespace {

constexpr double kPcie = 100e9;    // GPU-NIC link, bytes/s per direction
constexpr double kNetwork = 50e9;  // NIC-switch link
const Time kHop = Time::us(0.5);   // every link's latency: the path has 4, 2 us
constexpr std::uint64_t kBytes = 1'000'000;

// Two nodes of one GPU each, joined through their NICs by one switch.
Topology two_nodes(double pcie = kPcie) {
  TopologyBuilder b("two_nodes");
  const DeviceId sw = b.add_device(Device{DeviceKind::Switch, 0, kNone, 0, 0});
  for (std::uint32_t node = 0; node < 2; ++node) {
    const DeviceId g = b.add_device(Device{DeviceKind::Gpu, 0, node, 0, 0});
    const DeviceId nic = b.add_device(Device{DeviceKind::Nic, 0, node, 0, 0});
    b.add_link(Link{g, nic, Bandwidth::bytes_per_second(pcie), kHop, LinkMedium::Pcie});
    b.add_link(Link{nic, sw, Bandwidth::bytes_per_second(kNetwork), kHop, LinkMedium::Optical});
  }
  return std::move(b).build();
}

// `messages` sends of kBytes from rank 0 to rank 1 on one connection.
MaterializedProgramSet messages(std::uint32_t count) {
  MaterializedProgramSet p(2);
  for (std::uint32_t i = 0; i < count; ++i) {
    p.add(0, make_send(1, {Buffer::Input, i * kBytes, kBytes}));
    p.add(1, make_recv(0, {Buffer::Output, i * kBytes, kBytes}, RecvMode::Copy));
  }
  p.set_buffers(0, BufferSizes{count * kBytes, count * kBytes, 0, false});
  p.set_buffers(1, BufferSizes{count * kBytes, count * kBytes, 0, false});
  return p;
}

double run_us(const EngineOptions& options, std::uint32_t count = 1, double pcie = kPcie) {
  const Topology topo = two_nodes(pcie);
  const MaterializedProgramSet programs = messages(count);
  const auto router = make_router(topo, RouterOptions{});
  EngineInput in;
  in.topology = &topo;
  in.programs = &programs;
  in.placement = topo.gpus();
  in.router = router.get();
  in.options = options;
  return make_engine("flow")->run(in).makespan.microseconds();
}

TEST(FlowMediumOptions, DefaultsKeepOneEfficiencyEverywhere) {
  // Efficiency 0.5 on every link: wire bytes 2 MB, bottleneck the 50 GB/s NIC-switch link:
  // 2 us + 2e6 / 50e9 s = 2 + 40 = 42 us.
  EngineOptions o;
  o.transfer_efficiency = 0.5;
  EXPECT_NEAR(run_us(o), 42.0, 1e-6);
}

TEST(FlowMediumOptions, NetworkLinksUseTheirOwnEfficiency) {
  // Network links at 0.8 of 50 GB/s = 40 GB/s of payload, 2 us + 1e6 / 40e9 s = 27 us.
  EngineOptions o;
  o.transfer_efficiency = 0.5;
  o.network_transfer_efficiency = 0.8;
  EXPECT_NEAR(run_us(o), 27.0, 1e-6);
  // The GPU's PCIe link to its NIC is part of the network path (NCCL's network speed is the
  // GPU-to-wire path's): it runs at the network's efficiency, not at transfer_efficiency. At
  // 1.0 the NIC's 50 GB/s bounds, 2 + 20 us (transfer efficiency 0.4 would make PCIe 40 GB/s).
  o.transfer_efficiency = 0.4;
  o.network_transfer_efficiency = 1.0;
  EXPECT_NEAR(run_us(o), 22.0, 1e-6);
  // A PCIe link slower than the NIC (40 GB/s, e.g. an 800G NIC behind Gen5 x16 is 100 vs 63)
  // bounds at the network efficiency: 0.8 x 40 = 32 GB/s, 2 + 31.25 us.
  o.transfer_efficiency = 0.5;
  o.network_transfer_efficiency = 0.8;
  EXPECT_NEAR(run_us(o, 1, 40e9), 33.25, 1e-6);
}

TEST(FlowMediumOptions, NetworkMessagesPayTheExtraLatencyOnce) {
  // 2 us of links + 3 us extra + 1e6 / 50e9 s = 20 us: 25 us.
  EngineOptions o;
  o.network_message_latency = Time::us(3);
  EXPECT_NEAR(run_us(o), 25.0, 1e-6);
}

TEST(FlowMediumOptions, OverheadAsLatencyOverlapsConsecutiveMessages) {
  // Three messages of 20 us streaming each, overhead 5 us. Serialised (default): each pays
  // 5 + 20 before the next starts, the last is delivered 2 us later: 3 x 25 + 2 = 77 us.
  // As latency: the bytes stream back to back (60 us) and the last message arrives 2 + 5 us
  // later: 67 us.
  EngineOptions o;
  o.per_message_overhead = Time::us(5);
  EXPECT_NEAR(run_us(o, 3), 77.0, 1e-6);
  o.overhead_as_latency = true;
  EXPECT_NEAR(run_us(o, 3), 67.0, 1e-6);
}

TEST(FlowMediumOptions, RejectsBadValues) {
  EngineOptions o;
  o.network_transfer_efficiency = 1.5;
  EXPECT_THROW(run_us(o), InputError);
  o.network_transfer_efficiency = 0;
  o.network_message_latency = Time::us(-1);
  EXPECT_THROW(run_us(o), InputError);
}

}  // namespace
}  // namespace lockstep
