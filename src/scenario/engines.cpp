#include "lockstep/scenario/engines.hpp"

#include "lockstep/engine/packet/packet_engine.hpp"
#include "lockstep/engine/registry/registry.hpp"

namespace lockstep {

EngineFactory scenario_engines(const std::optional<ArgNode>& packet) {
  if (!packet) return nullptr;
  return [section = *packet](std::string_view name) {
    return name == "packet" ? make_packet_engine(section) : make_engine(name);
  };
}

}  // namespace lockstep
