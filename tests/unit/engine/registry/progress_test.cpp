// Engines report how far one run has got (Engine::set_progress) every kProgressPoll turns of
// their event loop, and only when a hook is set; the run's answer is the same either way.
#include <gtest/gtest.h>

#include <vector>

#include "lockstep/engine/registry/registry.hpp"

namespace lockstep {
namespace {

struct Recorder final : ProgressHook {
  std::vector<double> seen;
  void fraction(double done) override { seen.push_back(done); }
};

// One GPU running a chain of `ops` compute ops of 1 us, each waiting for the one before.
struct Chain {
  Topology topo;
  MaterializedProgramSet programs{1};
  std::unique_ptr<Router> router;
  EngineInput in;
  explicit Chain(OpIndex ops) {
    TopologyBuilder b("one gpu");
    const DeviceId sw = b.add_device(Device{DeviceKind::ScaleUpSwitch, 0, 0, 0, 0});
    const DeviceId g = b.add_device(Device{DeviceKind::Gpu, 0, 0, 0, 0});
    b.add_link(Link{g, sw, Bandwidth::gBps(100), Time::us(0.5), LinkMedium::NvLink});
    topo = std::move(b).build();
    for (OpIndex i = 0; i < ops; ++i) {
      Op op = make_compute(Time::us(1));
      if (i > 0) op.add_dep(i - 1);
      programs.add(0, op);
    }
    router = make_router(topo, RouterOptions{});
    in.topology = &topo;
    in.programs = &programs;
    in.placement = topo.gpus();
    in.router = router.get();
  }
};

TEST(EngineProgress, ChainReportsItsOpsDoneEveryPollAndTheSameMakespan) {
  // 10,000 ops, one finishing per event-loop turn (flow: per instant; packet: per event). At
  // the k-th turn the k-1 ops before it are done: reports at turns 4,096 and 8,192 read
  // 4,095 / 10,000 and 8,191 / 10,000; the makespan is 10,000 x 1 us = 10 ms with or without.
  for (const char* name : {"flow", "packet"}) {
    Chain chain(10'000);
    const auto engine = make_engine(name);
    const Time quiet = engine->run(chain.in).makespan;
    Recorder heard;
    engine->set_progress(&heard);
    const Time reported = engine->run(chain.in).makespan;
    EXPECT_EQ(quiet, Time::ms(10)) << name;
    EXPECT_EQ(reported, quiet) << name;
    ASSERT_EQ(heard.seen.size(), 2u) << name;
    EXPECT_DOUBLE_EQ(heard.seen[0], 0.4095) << name;
    EXPECT_DOUBLE_EQ(heard.seen[1], 0.8191) << name;
    engine->set_progress(nullptr);
    heard.seen.clear();
    engine->run(chain.in);
    EXPECT_TRUE(heard.seen.empty()) << name;
  }
}

TEST(EngineProgress, ScaledProgressMapsIntoItsShare) {
  // The third of four replicas: 0.5 of its run is (2 + 0.5) / 4 = 0.625 of the step.
  Recorder heard;
  ScaledProgress share(&heard, 0.5, 0.75);
  share.fraction(0.5);
  share.fraction(2.0);  // clamped to the share's end
  EXPECT_EQ(heard.seen, (std::vector<double>{0.625, 0.75}));
  ScaledProgress none(nullptr, 0, 1);
  none.fraction(0.5);  // no outer hook: nothing to call
}

TEST(EngineProgress, StepShareCountsFinishedSubSteps) {
  // Row 2 of 4 under way (1 done): starting it reads 1 / 4, half of it (1 + 0.5) / 4 = 0.375.
  Recorder heard;
  StepShare rows(&heard);
  EXPECT_EQ(rows.hook(), &rows);
  rows.at(1, 4);
  rows.fraction(0.5);
  EXPECT_EQ(heard.seen, (std::vector<double>{0.25, 0.375}));
  StepShare none(nullptr);
  EXPECT_EQ(none.hook(), nullptr);  // an engine given it polls nothing
}

}  // namespace
}  // namespace lockstep
