// A scenario's `job:` map read from YAML: the model map, parallel degrees, precision, recompute,
// noise and faults, all validated before anything is simulated. Parsing only: no topology is
// built and nothing is simulated, so sizes cannot turn into allocations here.
#include <cstddef>
#include <cstdint>

#include "fuzz_common.hpp"
#include "lockstep/config/yaml_reader.hpp"
#include "lockstep/workload/train_config.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  lockstep::fuzz::expect_input_error_or_success([&] {
    const lockstep::ArgNode job =
        lockstep::parse_yaml_args(lockstep::fuzz::as_text(data, size), "fuzz.yaml", "job");
    (void)lockstep::parse_train_config(job);
  });
  return 0;
}
