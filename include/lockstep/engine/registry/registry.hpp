#pragma once
// Engines by name, so that commands and scenarios pick a fidelity level with a string
// ("analytical", "flow", "packet") instead of if-chains over names.
//
//   std::unique_ptr<Engine> engine = make_engine("flow");
//   std::unique_ptr<Engine> packet = make_engine("packet", &*scenario.packet);
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "lockstep/config/arg_node.hpp"
#include "lockstep/engine/engine.hpp"

namespace lockstep {

/// A new engine with its default configuration. Unknown names are an InputError naming `field`
/// and listing the known engines.
std::unique_ptr<Engine> make_engine(std::string_view name, std::string_view field = "engine");
/// The same configured by `config`, a scenario's settings for engines that take them (the packet
/// engine reads its `packet:` section, docs/packet-engine.md); engines without settings, and a
/// null `config`, give the default configuration.
std::unique_ptr<Engine> make_engine(std::string_view name, const ArgNode* config,
                                    std::string_view field = "engine");

/// The names make_engine() accepts, in order of increasing fidelity.
std::vector<std::string> engine_names();

}  // namespace lockstep
