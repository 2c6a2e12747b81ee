// The YAML front end: any byte string either parses into an ArgNode tree or is refused with a
// located one-line InputError, in bounded time and memory (issue 22: a lone ',' looped in
// yaml-cpp 0.7 until bad_alloc; alias bombs grew past 4 GB).
#include <cstddef>
#include <cstdint>

#include "fuzz_common.hpp"
#include "lockstep/config/yaml_reader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  lockstep::fuzz::expect_input_error_or_success(
      [&] { (void)lockstep::parse_yaml_args(lockstep::fuzz::as_text(data, size), "fuzz.yaml"); });
  return 0;
}
