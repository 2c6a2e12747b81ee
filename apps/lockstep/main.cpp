// lockstep: the command-line front end. Thin by design: parse, call the library, print.
// Exit codes: 0 success, 2 bad input (one line naming the field, and file:line:column for
// files), 1 internal error.
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <string>

#include "command.hpp"
#include "lockstep/core/error.hpp"

namespace lockstep::cli {
std::vector<CommandEntry>& command_registry() {
  static std::vector<CommandEntry> registry;
  return registry;
}
}  // namespace lockstep::cli

int main(int argc, char** argv) {
  using namespace lockstep;
  CLI::App app{
      "lockstep: simulate the network of an AI cluster (topology, collectives, training steps).\n"
      "Run 'lockstep <command> --help' for the options of a command."};
  app.name("lockstep");
  app.set_version_flag("--version", std::string("lockstep ") + LOCKSTEP_VERSION);
  app.require_subcommand(1);
  auto& registry = cli::command_registry();
  std::sort(
      registry.begin(), registry.end(),
      [](const cli::CommandEntry& a, const cli::CommandEntry& b) { return a.order < b.order; });
  for (const auto& entry : registry) entry.setup(app);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ExtrasError& e) {
    // CLI11 lists the unexpected words last to first ("8 -g 2 -f"): name the first one, and the
    // command whose --help lists what it takes.
    std::string words = e.what();
    words = words.substr(words.find(": ") == std::string::npos ? 0 : words.find(": ") + 2);
    const std::string first = words.substr(words.rfind(' ') + 1);
    std::string command = "lockstep";
    for (const CLI::App* sub : app.get_subcommands()) command += " " + sub->get_name();
    const std::string what = "'" + first + "'";
    std::fprintf(stderr, "lockstep: error: %s: unexpected %s (see '%s --help')\n", command.c_str(),
                 what.c_str(), command.c_str());
    return 2;
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "lockstep: error: %s (see 'lockstep --help')\n", e.what());
    return 2;
  } catch (const InputError& e) {
    std::fprintf(stderr, "lockstep: error: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "lockstep: internal error: %s\n", e.what());
    return 1;
  }
  return 0;
}
