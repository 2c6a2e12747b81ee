#include "lockstep/report/progress.hpp"

#include <gtest/gtest.h>

namespace lockstep::report {
namespace {

TEST(Progress, HalfwayWithEta) {
  // 3 of 6 steps in 30 s: 10 s per step, 3 steps left -> ETA 0:30; 12 of 24 cells filled.
  EXPECT_EQ(render_progress(3, 6, 30.0, "fabric=tcp: training"),
            "[############------------]  50%  3/6  ETA 0:30  fabric=tcp: training");
}

TEST(Progress, EtaRoundsUpToWholeSecondsAndMinutes) {
  // 1 of 4 steps in 25.1 s: 75.3 s left -> rounds up to 76 s = 1:16.
  EXPECT_EQ(render_progress(1, 4, 25.1, "", 4), "[#---]  25%  1/4  ETA 1:16  ");
}

TEST(Progress, UnknownEtaBeforeFirstStepAndZeroAtEnd) {
  EXPECT_EQ(render_progress(0, 5, 3.0, "x", 5), "[-----]   0%  0/5  ETA --:--  x");
  EXPECT_EQ(render_progress(5, 5, 3.0, "x", 5), "[#####] 100%  5/5  ETA 0:00  x");
}

TEST(Progress, ClampsOverrunAndZeroTotal) {
  EXPECT_EQ(render_progress(9, 5, 1.0, "", 5), "[#####] 100%  5/5  ETA 0:00  ");
  EXPECT_EQ(render_progress(0, 0, 0.0, "", 2), "[--]   0%  0/1  ETA --:--  ");
}

TEST(Progress, WithinAStep) {
  // 1 whole step of 3 done and half of the second: 1.5 / 3 = 50%, 2 of 4 cells; 15 s for 1.5
  // steps, 1.5 left -> ETA 0:15; the count still shows whole steps.
  EXPECT_EQ(render_progress_within(1, 0.5, 3, 15.0, "x", 4), "[##--]  50%  1/3  ETA 0:15  x");
  // Nothing done but a tenth of the first step in 2 s: 0.9 steps left -> 18 s.
  EXPECT_EQ(render_progress_within(0, 0.1, 1, 2.0, "", 10), "[#---------]  10%  0/1  ETA 0:18  ");
}

TEST(Progress, DisabledBarWritesNothing) {
  ::testing::internal::CaptureStderr();
  {
    Progress p(false, 3);
    p.begin("a");
    p.fraction(0.5);
    p.advance();
    p.finish();
    EXPECT_EQ(p.hook(), nullptr);  // engines poll nothing
  }
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
}

}  // namespace
}  // namespace lockstep::report
