#pragma once
// The preset options every command that takes a cluster offers (--system, --fabric, --nodes, ...),
// read into the ClusterFlags the scenario layer resolves (lockstep/scenario/cluster_source.hpp).
#include <CLI/CLI.hpp>

#include "lockstep/scenario/cluster_source.hpp"

namespace lockstep::cli {

void add_cluster_options(CLI::App& cmd, ClusterFlags& flags);

}  // namespace lockstep::cli
