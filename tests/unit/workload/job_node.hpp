#pragma once
// A scenario's `job:` section as the YAML reader hands it to parse_train_config, with locations
// in a file s.yaml (the map at 3:1, one key per line below it, column 3), so that tests can
// check both the parsed values and where an error points.
#include <string>
#include <utility>
#include <vector>

#include "lockstep/config/arg_node.hpp"
#include "lockstep/core/error.hpp"
#include "lockstep/workload/train_config.hpp"

namespace lockstep::testing {

using JobKeys = std::vector<std::pair<std::string, std::string>>;

/// The keys in order, the first on line 4.
inline ArgNode job_node(const JobKeys& keys) {
  ArgNode m = ArgNode::map("job", {"s.yaml", 3, 1});
  int line = 4;
  for (const auto& [k, v] : keys) m.set(k, ArgNode::scalar(v, "job." + k, {"s.yaml", line++, 3}));
  return m;
}

/// parse_train_config's error message for `node`, or "" when it parses.
inline std::string train_config_error(const ArgNode& node) {
  try {
    parse_train_config(node);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace lockstep::testing
