// The noise and fault syntax ("lognormal:0.1", "straggler:p=0.01,x=1.5", "slow-gpu:3:x2",
// "failed-link:leaf0-spine1"). The first byte picks the parser; the rest is the text.
#include <cstddef>
#include <cstdint>

#include "fuzz_common.hpp"
#include "lockstep/topology/faults.hpp"
#include "lockstep/workload/noise.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string_view text = lockstep::fuzz::as_text(data + 1, size - 1);
  lockstep::fuzz::expect_input_error_or_success([&] {
    if (data[0] % 2 == 0) {
      (void)lockstep::parse_jitter(text, "fuzz.jitter");
    } else {
      (void)lockstep::parse_fault(text, "fuzz.faults");
    }
  });
  return 0;
}
