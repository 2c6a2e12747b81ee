#pragma once
// Each CLI command lives in its own file and registers itself here with a static
// RegisterCommand object; main() adds every registered command to the root CLI::App. Commands
// report bad input by throwing lockstep::InputError (exit code 2).
#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <vector>

namespace lockstep::cli {

struct CommandEntry {
  int order;  // position in --help
  std::function<void(CLI::App& root)> setup;
};

std::vector<CommandEntry>& command_registry();

struct RegisterCommand {
  RegisterCommand(int order, std::function<void(CLI::App& root)> setup) {
    command_registry().push_back({order, std::move(setup)});
  }
};

}  // namespace lockstep::cli
