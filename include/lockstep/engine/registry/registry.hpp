#pragma once
// Engines by name, so that commands and scenarios pick a fidelity level with a string
// ("analytical", "flow", "packet") instead of if-chains over names.
//
//   std::unique_ptr<Engine> engine = make_engine("flow");
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "lockstep/engine/engine.hpp"

namespace lockstep {

/// A new engine with its default configuration. Unknown names are an InputError naming `field`
/// and listing the known engines.
std::unique_ptr<Engine> make_engine(std::string_view name, std::string_view field = "engine");

/// The names make_engine() accepts, in order of increasing fidelity.
std::vector<std::string> engine_names();

}  // namespace lockstep
