// A scenario's `packet:` section configures the packet engine and leaves the others alone.
#include "lockstep/scenario/engines.hpp"

#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "lockstep/config/yaml_reader.hpp"

namespace lockstep {
namespace {

TEST(ScenarioEngines, WithoutAPacketSectionTheRegistryChooses) {
  EXPECT_FALSE(static_cast<bool>(scenario_engines(std::nullopt)));
}

TEST(ScenarioEngines, APacketSectionConfiguresOnlyThePacketEngine) {
  // A section with `fabric:` is checked when the packet engine is made (section_test.cpp), so
  // its misspelt key shows which engines received it.
  const EngineFactory engines =
      scenario_engines(parse_yaml_args("fabric: roce\nmtuu: 4096\n", "s.yaml", "packet"));
  ASSERT_TRUE(static_cast<bool>(engines));
  EXPECT_EQ(engines("flow")->name(), "flow");
  EXPECT_EQ(engines("analytical")->name(), "analytical");
  try {
    engines("packet");
    ADD_FAILURE() << "no InputError thrown";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("s.yaml:2:7: packet.mtuu: unknown key 'mtuu'", 0), 0u)
        << e.what();
  }
}

}  // namespace
}  // namespace lockstep
