// Chakra traces (docs/chakra.md): the bytes of two rank files, read, checked across ranks and run
// on two H100s. The first byte splits the rest between rank 0 and rank 1.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz_common.hpp"
#include "lockstep/chakra/simulate.hpp"
#include "lockstep/chakra/trace.hpp"
#include "lockstep/topology/builder.hpp"
#include "lockstep/topology/presets.hpp"

namespace {

const lockstep::Topology& two_gpus() {
  static const lockstep::Topology topo = [] {
    lockstep::PresetRequest r;
    r.system = "hgx-h100";
    r.nodes = 1;
    r.gpus_per_node = 2;
    return *lockstep::build_topology(lockstep::rail_optimized_args(lockstep::resolve_preset(r)))
                .graph;
  }();
  return topo;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string rest(reinterpret_cast<const char*>(data + 1), size - 1);
  const std::size_t split = rest.size() * data[0] / 255;
  lockstep::fuzz::expect_input_error_or_success([&] {
    std::vector<lockstep::chakra::RankTrace> traces;
    traces.push_back(lockstep::chakra::read_trace_bytes(rest.substr(0, split), "t.0.et", 0));
    traces.push_back(lockstep::chakra::read_trace_bytes(rest.substr(split), "t.1.et", 1));
    (void)lockstep::chakra::run_traces(traces, two_gpus());
  });
  return 0;
}
