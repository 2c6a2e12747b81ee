// The JSON topology reader (the from_file builder's graph files): parse, then build the graph the
// text lists. Malformed JSON, dangling link ends, absurd speeds or counts must all be InputErrors.
#include <cstddef>
#include <cstdint>

#include "fuzz_common.hpp"
#include "lockstep/config/arg_node.hpp"
#include "lockstep/config/json_reader.hpp"
#include "lockstep/topology/builder.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  lockstep::fuzz::expect_input_error_or_success([&] {
    const lockstep::ArgNode root =
        lockstep::parse_json_args(lockstep::fuzz::as_text(data, size), "fuzz.json");
    if (root.kind() != lockstep::ArgNode::Kind::Map) return;
    // Always the from_file builder, whatever the text names: the other builders take sizes,
    // not listings, and are the units and scenario targets' business.
    const lockstep::BuilderInfo* from_file = lockstep::find_builder("from_file");
    if (from_file == nullptr) std::abort();
    (void)from_file->build(root, lockstep::BuildOptions{});
  });
  return 0;
}
