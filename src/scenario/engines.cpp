#include "lockstep/scenario/engines.hpp"

#include "lockstep/engine/registry/registry.hpp"

namespace lockstep {

EngineFactory scenario_engines(const std::optional<ArgNode>& packet) {
  if (!packet) return nullptr;
  // The registry hands the section to the engines that take settings (the packet engine).
  return [section = *packet](std::string_view name) { return make_engine(name, &section); };
}

}  // namespace lockstep
