// Engines by name, and the agreement of the analytical and flow engines where nothing contends.
#include "lockstep/engine/registry/registry.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "lockstep/collective/collective.hpp"
#include "lockstep/core/error.hpp"

namespace lockstep {
namespace {

TEST(EngineRegistry, MakesEveryEngineByName) {
  for (const std::string& name : engine_names()) EXPECT_EQ(make_engine(name)->name(), name);
  EXPECT_EQ(engine_names().front(), "analytical");
}

TEST(EngineRegistry, UnknownNameListsTheKnownOnes) {
  try {
    make_engine("quantum");
    FAIL() << "unknown engine accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "engine");
    const std::string m = e.what();
    for (const char* n : {"analytical", "flow", "packet"})
      EXPECT_NE(m.find(n), std::string::npos) << m;
  }
}

Topology star(std::uint32_t n, Bandwidth bw, Time latency) {
  TopologyBuilder b("star");
  const DeviceId sw = b.add_device(Device{DeviceKind::ScaleUpSwitch, 0, 0, 0, 0});
  for (std::uint32_t i = 0; i < n; ++i) {
    const DeviceId g = b.add_device(Device{DeviceKind::Gpu, 0, 0, 0, i});
    b.add_link(Link{g, sw, bw, latency, LinkMedium::NvLink});
  }
  return std::move(b).build();
}

TEST(EngineAgreement, AnalyticalAndFlowAgreeWithoutContention) {
  // A one-channel ring over a non-blocking switch: every link direction carries one transfer
  // at a time, so the flow engine's fair sharing never bites and both engines must tell the
  // same time: 2(n-1) steps of overhead + path latency + S / (n B eff)
  //   = 14 x (1 us + 1 us + 8 MiB / (400 GB/s x 0.92)) = 14 x 24.795 us = 347.1 us.
  const Topology topo = star(8, Bandwidth::gBps(400), Time::us(0.5));
  CollectiveSpec spec;
  spec.ranks = 8;
  spec.bytes = Bytes::mib(64);
  const auto programs = make_collective(spec);
  const auto router = make_router(topo, RouterOptions{});
  EngineInput in;
  in.topology = &topo;
  in.programs = programs.get();
  in.placement = topo.gpus();
  in.router = router.get();
  in.options.per_message_overhead = Time::us(1);
  in.options.transfer_efficiency = 0.92;
  const Time a = make_engine("analytical")->run(in).makespan;
  const Time f = make_engine("flow")->run(in).makespan;
  EXPECT_NEAR(a.microseconds(), 14 * (2 + 8388608 / (400e9 * 0.92) * 1e6), 1e-3);
  EXPECT_NEAR(f.seconds() / a.seconds(), 1.0, 0.01)
      << a.microseconds() << " vs " << f.microseconds();
}

}  // namespace
}  // namespace lockstep
