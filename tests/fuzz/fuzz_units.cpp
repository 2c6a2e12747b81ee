// The units parser: times, sizes and rates as users type them ("2GiB", "400Gbps", "1.5us").
// The first byte picks the parser; the rest is the text.
#include <cstddef>
#include <cstdint>

#include "fuzz_common.hpp"
#include "lockstep/core/units.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string_view text = lockstep::fuzz::as_text(data + 1, size - 1);
  lockstep::fuzz::expect_input_error_or_success([&] {
    switch (data[0] % 3) {
      case 0:
        (void)lockstep::parse_time(text, "fuzz.time");
        break;
      case 1:
        (void)lockstep::parse_bytes(text, "fuzz.size");
        break;
      default:
        (void)lockstep::parse_bandwidth(text, "fuzz.rate");
        break;
    }
  });
  return 0;
}
