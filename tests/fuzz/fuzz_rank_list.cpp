// Rank lists ("0-7,12,64-71"), as slow-rank and trace-rank options take them. A list may name at
// most as many ranks as a cluster can have; a huge range is an InputError, not an allocation.
#include <cstddef>
#include <cstdint>

#include "fuzz_common.hpp"
#include "lockstep/workload/train_config.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  lockstep::fuzz::expect_input_error_or_success(
      [&] { (void)lockstep::parse_rank_list(lockstep::fuzz::as_text(data, size), "fuzz.ranks"); });
  return 0;
}
