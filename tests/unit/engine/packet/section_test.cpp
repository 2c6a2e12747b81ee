// A scenario's `packet:` section configures the engine that runs (make_packet_engine(section)).
#include <gtest/gtest.h>

#include "fixtures.hpp"
#include "lockstep/config/yaml_reader.hpp"
#include "lockstep/core/error.hpp"
#include "lockstep/engine/packet/packet_engine.hpp"

namespace lockstep {
namespace {

// GPU0 -> switch -> GPU1 at 400 Gb/s (20 ps per byte), 100 ns links, one 1 MiB transfer.
Time one_mib_transfer(const std::string& yaml) {
  const Topology topo = packet_test::star(2, Bandwidth::gbps(400), Time::ns(100));
  const auto programs = packet_test::transfers(2, {{0, 1, 1 << 20}});
  packet_test::TinyRouter router(topo, RoutingPolicy::Ecmp);
  const ArgNode section = parse_yaml_args(yaml, "s.yaml", "packet");
  auto engine = make_packet_engine(section);
  EngineInput in;
  in.topology = &topo;
  in.programs = &programs;
  in.router = &router;
  return engine->run(in).makespan;
}

// The star's fabric has no preset, so the section applies to InfiniBand (26 B headers).
// mtu 4096: 256 packets of 4122 B = 82,440 ps; the last leaves GPU0 at 255 x 82,440 ps, is
// forwarded 300 ns later (link + 200 ns switch), serialised and lands 100 ns after that:
//   256 x 82,440 + 400,000 = 21,504,640 ps.
// mtu 2048: 512 packets of 2074 B = 41,480 ps: 512 x 41,480 + 400,000 = 21,637,760 ps (twice
// the headers, 256 x 26 B x 20 ps = 133,120 ps more).
TEST(PacketSection, MtuFromTheSectionChangesTheTime) {
  EXPECT_EQ(one_mib_transfer("switch_latency: 200ns\n"), Time::ps(21'504'640));
  EXPECT_EQ(one_mib_transfer("mtu: 2048\nswitch_latency: 200ns\n"), Time::ps(21'637'760));
}

// RoCE preset (82 B headers) chosen by the section: 256 x 4178 B x 20 ps + 400,000 ps.
TEST(PacketSection, FabricKeyPicksThePreset) {
  EXPECT_EQ(one_mib_transfer("fabric: roce\nswitch_latency: 200ns\n"),
            Time::ps(256 * 4178 * 20 + 400'000));
}

TEST(PacketSection, BadValuesNameFileLineAndColumn) {
  try {
    one_mib_transfer("switch_latency: 200ns\nmtu: lots\n");
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("s.yaml:2:6"), std::string::npos) << e.what();
  }
  // With a `fabric` key the section is checked when the engine is made, before any run.
  const ArgNode section = parse_yaml_args("fabric: roce\nmtuu: 4096\n", "s.yaml", "packet");
  try {
    make_packet_engine(section);
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("s.yaml:2:7"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("mtuu"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace lockstep
