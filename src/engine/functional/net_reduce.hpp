#pragma once
// The windowed NetReduce of the functional executor: a NetReduce instance whose members' src and
// dst sizes differ (NVLink SHARP's reduce-scatter and multicast all-gather). It is kept apart
// from the executor's scheduling because it is a self-contained piece of range arithmetic.
#include <cstddef>
#include <cstdint>
#include <span>

#include "lockstep/collective/program.hpp"

namespace lockstep::functional_detail {

// One member of a complete NetReduce instance, as the reduction needs it.
struct NetReduceMember {
  Rank rank = 0;
  OpIndex op = 0;  // index in the rank's program, for error messages
  BufferRange src, dst;
  const std::byte* src_data = nullptr;  // null when the executor does not move data
  std::byte* dst_data = nullptr;        // null when it does not move data or dst is empty
};

// Offsets name positions in one index space shared by the members: each member's src is added
// in at its positions, and each member's dst receives the sum at its own positions, which some
// member must have contributed. Throws InputError naming the group, rank and op otherwise.
void net_reduce_windowed(std::uint32_t group, std::span<const NetReduceMember> members,
                         DataType type);

}  // namespace lockstep::functional_detail
