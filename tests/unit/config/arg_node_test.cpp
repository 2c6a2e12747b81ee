#include "lockstep/config/arg_node.hpp"

#include <gtest/gtest.h>

namespace lockstep {
namespace {

ArgNode sample() {
  ArgNode m = ArgNode::map("cluster", {"s.yaml", 3, 1});
  m.set("k", ArgNode::scalar("8", "cluster.k", {"s.yaml", 4, 6}));
  m.set("speed", ArgNode::scalar("400Gbps", "cluster.speed", {"s.yaml", 5, 10}));
  m.set("typo", ArgNode::scalar("1", "cluster.typo", {"s.yaml", 6, 3}));
  return m;
}

TEST(ArgNode, TypedReadsAndDefaults) {
  const ArgNode m = sample();
  EXPECT_EQ(m.get_int("k", 4, 2, 128), 8);
  EXPECT_EQ(m.get_int("missing", 4, 2, 128), 4);
  EXPECT_DOUBLE_EQ(m.get_bandwidth("speed", {}).bytes_per_second(), 50e9);
}

TEST(ArgNode, OutOfRangeNamesPathAndLocation) {
  const ArgNode m = sample();
  try {
    m.get_int("k", 4, 10, 20);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "s.yaml:4:6: cluster.k: 8 is out of range (must be between 10 and 20)");
  }
}

TEST(ArgNode, UnusedKeyIsReportedAsUnknown) {
  const ArgNode m = sample();
  m.get_int("k", 4, 2, 128);
  m.get_bandwidth("speed", {});
  try {
    m.check_all_used();
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "s.yaml:6:3: cluster.typo: unknown key 'typo'");
  }
}

TEST(ArgNode, BadUnitKeepsLocation) {
  ArgNode m = ArgNode::map("c");
  m.set("bw", ArgNode::scalar("fast", "c.bw", {"f.yaml", 2, 5}));
  try {
    m.get_bandwidth("bw", {});
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.where().line, 2);
    EXPECT_EQ(e.field(), "c.bw");
  }
}

// The slowest rate accepted is 2^-22 B/ps = 1e12 / 4,194,304 = 238,418.58 B/s = 1,907,348.6 b/s
// (docs/units.md): 1.908 Mb/s passes, 1.907 Mb/s does not, at the value's file position.
TEST(ArgNode, RateBelowTheSlowestAcceptedIsAnError) {
  EXPECT_DOUBLE_EQ(ArgNode::scalar("1.908Mbps", "c.bw").as_bandwidth().bytes_per_second(),
                   238'500.0);
  try {
    ArgNode::scalar("1.907Mbps", "c.bw", {"f.yaml", 2, 5}).as_bandwidth();
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "f.yaml:2:5: c.bw: '1.907Mbps' is below 1.9073 Mb/s, the slowest rate lockstep "
              "accepts (docs/units.md)");
  }
}

TEST(ArgNode, ChoiceListsAlternatives) {
  const ArgNode n = ArgNode::scalar("mesh", "x.kind");
  try {
    n.as_choice({"ring", "tree"});
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "x.kind: unknown value 'mesh' (expected one of ring, tree)");
  }
}

}  // namespace
}  // namespace lockstep
