// 'lockstep units': converts and prints a quantity, a quick check of how lockstep reads units.
#include <fmt/format.h>

#include "command.hpp"
#include "lockstep/core/units.hpp"

namespace lockstep::cli {
namespace {
const RegisterCommand kUnits(90, [](CLI::App& root) {
  auto* cmd = root.add_subcommand("units", "Show how lockstep reads a time, size or bandwidth");
  auto value = std::make_shared<std::string>();
  auto kind = std::make_shared<std::string>("size");
  cmd->add_option("value", *value, "e.g. 400Gbps, 1.5us, 8GiB")->required();
  cmd->add_option("--kind", *kind, "time | size | bandwidth")
      ->check(CLI::IsMember({"time", "size", "bandwidth"}));
  cmd->callback([value, kind] {
    if (*kind == "time") {
      const Time t = parse_time(*value, "value");
      fmt::print("{} = {} ps\n", to_string(t), t.picoseconds());
    } else if (*kind == "size") {
      const Bytes b = parse_bytes(*value, "value");
      fmt::print("{} = {} bytes\n", to_string(b), b.count());
    } else {
      const Bandwidth bw = parse_bandwidth(*value, "value");
      fmt::print("{} = {} GB/s = {} bytes/s\n", to_string(bw), bw.gigabytes_per_second(),
                 bw.bytes_per_second());
    }
  });
});
}  // namespace
}  // namespace lockstep::cli
