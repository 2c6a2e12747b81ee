// How an attempt learns that its rank classes do not hold (src/engine/flow/asymmetry.hpp): each
// kind of asymmetry is the attempt's result, not an exception, and the individual class map of
// the same input runs to the end with the figures FlowEngine::run gives after its retries.
#include <gtest/gtest.h>

#include <optional>

#include "../../../../src/engine/flow/simulation.hpp"
#include "fixtures.hpp"
#include "lockstep/routing/router.hpp"

namespace lockstep {
namespace {

using flow_detail::Asymmetry;
using flow_detail::ClassMap;

struct Attempt {
  std::optional<RunResult> result;
  Asymmetry asymmetry = Asymmetry::None;
};

Attempt attempt(const EngineInput& input, const ClassMap& classes) {
  const FlowEngineConfig config;
  flow_detail::PathCache paths(*input.router);
  flow_detail::Simulation sim(input, config, paths, classes);
  Attempt a;
  a.result = sim.run();
  a.asymmetry = sim.asymmetry();
  return a;
}

// `classes` end their attempt with `found` and no result; the individual map gives what the
// engine gives once it has given up on the classes, after `attempts` attempts.
void expect_asymmetry(const EngineInput& input, const ClassMap& classes, Asymmetry found,
                      std::uint32_t attempts) {
  const Attempt aggregated = attempt(input, classes);
  EXPECT_FALSE(aggregated.result.has_value());
  EXPECT_EQ(aggregated.asymmetry, found);
  const Attempt individual = attempt(input, ClassMap(input.programs->num_ranks()));
  ASSERT_TRUE(individual.result.has_value());
  EXPECT_EQ(individual.asymmetry, Asymmetry::None);
  FlowEngine engine({});
  const RunResult r = engine.run(input);
  EXPECT_EQ(engine.last_stats().attempts, attempts);
  EXPECT_EQ(engine.last_stats().class_size, 1u);
  EXPECT_EQ(r.rank_finish, individual.result->rank_finish);
  EXPECT_EQ(r.link_bytes, individual.result->link_bytes);
}

// A ring of 4 on a star whose GPU 1 has half the bandwidth: with one class of 4 (period 1) the
// route from rank 0 to 1 and its member from 1 to 2 differ on their first hop.
TEST(FlowAsymmetry, MembersWhosePathsDifferEndTheAttemptWithPaths) {
  const Topology t = flow_test::star(4, Bandwidth::gBps(100), Time::us(1), 1);
  const flow_test::LazyRing ring(4, 4'000'000);
  const auto router = make_router(t, {});
  // Classes of 4, then of 2 ({0, 2} and {1, 3}: 1 -> 2 against 3 -> 0), then every rank.
  expect_asymmetry(flow_test::input_for(t, ring, *router), ClassMap(4, 1, 1, 1), Asymmetry::Paths,
                   3);
}

// The skewed exchange with spines of 100 GB/s: the four flows on leaf A's uplink to spine 0 get
// 25 GB/s each while members of their classes send at 50 GB/s. Found only once rates are solved.
TEST(FlowAsymmetry, AnUnevenOrbitOverItsCapacityEndsTheAttemptWithOverload) {
  const Topology t = flow_test::skewed_exchange_topology(100);
  const flow_test::SpineRouter router = flow_test::skewed_spines();
  const flow_test::CrossLeafExchange exchange;
  expect_asymmetry(flow_test::input_for(t, exchange, router), ClassMap(4, 2, 1, 1),
                   Asymmetry::Overload, 2);
}

// With spines of 200 GB/s the same uplink carries 4 x 50 GB/s, a tie: the classes hold and the
// attempt has its result, 4 us + 1 MB / 50 GB/s.
TEST(FlowAsymmetry, AnUnevenOrbitThatLimitsNothingFindsNoAsymmetry) {
  const Topology t = flow_test::skewed_exchange_topology(200);
  const flow_test::SpineRouter router = flow_test::skewed_spines();
  const flow_test::CrossLeafExchange exchange;
  const Attempt two_classes =
      attempt(flow_test::input_for(t, exchange, router), ClassMap(4, 2, 1, 1));
  ASSERT_TRUE(two_classes.result.has_value());
  EXPECT_EQ(two_classes.asymmetry, Asymmetry::None);
  EXPECT_EQ(two_classes.result->makespan, Time::us(24));
}

// Four ranks reduce together in one NetReduce group while promising period 2: classes {0, 2} and
// {1, 3} each hold half of the group, so no class's op can stand for it.
class OneGroupOfFour final : public MaterializedProgramSet {
 public:
  OneGroupOfFour() : MaterializedProgramSet(4) {
    const std::uint32_t g = add_group({0, 1, 2, 3});
    for (Rank r = 0; r < 4; ++r)
      add(r, make_net_reduce(g, {Buffer::Input, 0, 1'000'000}, {Buffer::Output, 0, 1'000'000}));
  }
  Rank symmetry_period() const override { return 2; }
};

TEST(FlowAsymmetry, AGroupSpreadOverClassesEndsTheAttemptWithGroup) {
  const Topology t = flow_test::star(4, Bandwidth::gBps(100), Time::us(1));
  const OneGroupOfFour programs;
  const auto router = make_router(t, {});
  expect_asymmetry(flow_test::input_for(t, programs, *router), ClassMap(4, 2, 1, 1),
                   Asymmetry::Group, 2);
}

}  // namespace
}  // namespace lockstep
