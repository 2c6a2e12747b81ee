// DeepSeek-V3's DualPipe (arXiv:2412.19437, section 3.2.1, Table 2): the bubble and the
// iteration from a 1F1B step's breakdown, derived by hand in the comments.
#include "lockstep/workload/dualpipe.hpp"

#include <gtest/gtest.h>

#include "lockstep/workload/training.hpp"

namespace lockstep {
namespace {

TEST(DualPipe, BubbleOfTableTwoForSixteenStages) {
  // PP 16, F = 10 ms, B = 20 ms, W = 8 ms, a pair bound by its compute (F&B = F + B = 30 ms):
  // (16 / 2 - 1)(F&B + B - 3W) = 7 x (30 + 20 - 24) = 182 ms; 1F1B's (PP - 1)(F + B) = 450 ms.
  EXPECT_EQ(dualpipe_bubble(16, Time::ms(30), Time::ms(20), Time::ms(8)), Time::ms(182));
  EXPECT_EQ(one_f_one_b_bubble(16, Time::ms(10), Time::ms(20)), Time::ms(450));
  // Two stages (one pair of ranks, fed from both ends): no bubble term; a W so large that
  // F&B + B - 3W < 0 is none either.
  EXPECT_EQ(dualpipe_bubble(2, Time::ms(30), Time::ms(20), Time::ms(8)), Time::zero());
  EXPECT_EQ(dualpipe_bubble(16, Time::ms(30), Time::ms(20), Time::ms(20)), Time::zero());
}

TEST(DualPipe, PairsHideTheAllToAllUpToTheirCompute) {
  // 120 micro-batches, PP 16: compute 10.8 s (C = 90 ms a pair), all-to-all 14.4 s (E = 120
  // ms): F&B = max(90, 120) = 120 ms, 30 ms of each pair exposed: 3.6 s of EP. Bubble with B =
  // 2/3 C = 60 ms and W = 1/3 C = 30 ms: 7 x (120 + 60 - 90) = 630 ms. The rest is kept.
  TrainBreakdown b;
  b.compute = Time::ms(10'800);
  b.ep = Time::ms(14'400);
  b.bubble = Time::ms(5'000);
  b.pp = Time::ms(100);
  b.dp = Time::ms(40);
  const TrainBreakdown d = dualpipe_breakdown(b, 120, 16, {2.0 / 3.0, 1.0 / 3.0});
  EXPECT_EQ(d.compute, Time::ms(10'800));
  EXPECT_NEAR(d.ep.seconds(), 3.6, 1e-9);
  EXPECT_NEAR(d.bubble.seconds(), 0.630, 1e-9);
  EXPECT_EQ(d.pp, Time::ms(100));
  EXPECT_EQ(d.dp, Time::ms(40));
  // A pair whose compute exceeds its all-to-all hides all of it: E = 60 ms < C = 90 ms, F&B =
  // 90 ms, bubble 7 x (90 + 60 - 90) = 420 ms.
  b.ep = Time::ms(7'200);
  const TrainBreakdown hidden = dualpipe_breakdown(b, 120, 16, {2.0 / 3.0, 1.0 / 3.0});
  EXPECT_EQ(hidden.ep, Time::zero());
  EXPECT_NEAR(hidden.bubble.seconds(), 0.420, 1e-9);
}

// DeepSeek-V3 gives its all-to-all 20 of the H800's 132 SMs (section 3.2.2; 3.5.1): a pair's
// compute runs on the other 112 while the transfer is in flight.
TEST(DualPipe, CommunicationSmsSlowThePairedCompute) {
  const double share = 20.0 / 132.0;
  // C = 10 ms, E = 6 ms: 10 x 132 / 112 = 11.79 ms of compute outlasts E; during E it does 6 x
  // 112 / 132 = 5.09 ms of its work, the other 4.91 ms at full speed: 6 + 4.91 = 10 + 6 x 20 /
  // 132 = 10.909 ms (10 ms with no SMs taken).
  EXPECT_NEAR(dualpipe_pair(Time::ms(10), Time::ms(6), share).seconds(), 0.010 + 0.006 * share,
              1e-12);
  EXPECT_EQ(dualpipe_pair(Time::ms(10), Time::ms(6), 0), Time::ms(10));
  // E = 11 ms, above C but below C x 132 / 112 = 11.79 ms: still bound by the slowed compute,
  // 10 + 11 x 20 / 132 = 11.667 ms (11 ms with no SMs taken).
  EXPECT_NEAR(dualpipe_pair(Time::ms(10), Time::ms(11), share).seconds(), 0.010 + 0.011 * share,
              1e-12);
  EXPECT_EQ(dualpipe_pair(Time::ms(10), Time::ms(11), 0), Time::ms(11));
  // E = 13.6 ms = 1.36 C (DeepSeek-V3 on lockstep's all-to-all): the compute ends on 112 SMs
  // at 11.79 ms, within E: the pair takes E whatever the SMs.
  EXPECT_EQ(dualpipe_pair(Time::ms(10), Time::us(13'600), share), Time::us(13'600));
  // In the breakdown: 10 micro-batches of C = 10 ms and E = 6 ms, pp 2 (no bubble term): the
  // 0.909 ms each pair's compute loses shows as exposed EP, 9.09 ms in all.
  TrainBreakdown b;
  b.compute = Time::ms(100);
  b.ep = Time::ms(60);
  const TrainBreakdown d = dualpipe_breakdown(b, 10, 2, {2.0 / 3.0, 1.0 / 3.0}, share);
  EXPECT_EQ(d.compute, Time::ms(100));
  EXPECT_NEAR(d.ep.seconds(), 10 * 0.006 * share, 1e-9);
  EXPECT_EQ(dualpipe_breakdown(b, 10, 2, {2.0 / 3.0, 1.0 / 3.0}).ep, Time::zero());
}

}  // namespace
}  // namespace lockstep
