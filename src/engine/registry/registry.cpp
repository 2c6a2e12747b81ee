// The engine table: one line per engine.
#include "lockstep/engine/registry/registry.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <array>

#include "lockstep/core/error.hpp"
#include "lockstep/engine/analytical/analytical_engine.hpp"
#include "lockstep/engine/flow/flow_engine.hpp"
#include "lockstep/engine/packet/packet_engine.hpp"

namespace lockstep {
namespace {

struct EngineEntry {
  const char* name;
  std::unique_ptr<Engine> (*make)(const ArgNode* config);
};

const std::array<EngineEntry, 3> kEngines = {{
    {"analytical", [](const ArgNode*) { return make_analytical_engine(); }},
    {"flow", [](const ArgNode*) { return make_flow_engine(); }},
    {"packet",
     [](const ArgNode* config) {
       return config ? make_packet_engine(*config) : make_packet_engine();
     }},
}};

}  // namespace

std::vector<std::string> engine_names() {
  std::vector<std::string> out;
  for (const auto& e : kEngines) out.emplace_back(e.name);
  return out;
}

std::unique_ptr<Engine> make_engine(std::string_view name, std::string_view field) {
  return make_engine(name, nullptr, field);
}

std::unique_ptr<Engine> make_engine(std::string_view name, const ArgNode* config,
                                    std::string_view field) {
  for (const auto& e : kEngines)
    if (name == e.name) return e.make(config);
  throw InputError(std::string(field), fmt::format("unknown engine '{}' (known: {})", name,
                                                   fmt::join(engine_names(), ", ")));
}

}  // namespace lockstep
