#pragma once
// The engines a scenario's jobs run on: the engine registry's, except that the scenario's
// `packet:` section, when it has one, configures the engines that take it (the packet engine,
// docs/packet-engine.md).
#include <optional>

#include "lockstep/config/arg_node.hpp"
#include "lockstep/workload/training.hpp"

namespace lockstep {

/// Engines by name with the `packet:` section applied; null (the registry's own) without one.
EngineFactory scenario_engines(const std::optional<ArgNode>& packet);

}  // namespace lockstep
