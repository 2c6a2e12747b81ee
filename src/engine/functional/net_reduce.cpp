// The windowed NetReduce (see net_reduce.hpp). Every member passing the chunk as src and its
// block as dst is NVLink SHARP's reduce-scatter; every member passing its block as src and the
// chunk as dst is its multicast all-gather (src/collective/nvls_tree.cpp).
#include "net_reduce.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <iterator>
#include <utility>
#include <vector>

#include "lockstep/core/error.hpp"
#include "reduce.hpp"

namespace lockstep::functional_detail {

void net_reduce_windowed(std::uint32_t group, std::span<const NetReduceMember> members,
                         DataType type) {
  const std::size_t es = size_of(type);
  std::uint64_t lo = ~std::uint64_t{0}, hi = 0;
  for (const NetReduceMember& o : members) {
    if (o.src.buffer != o.dst.buffer || o.src.offset % es != 0 || o.dst.offset % es != 0)
      throw InputError("programs", fmt::format("net_reduce group {}: rank {} op {} has src and "
                                               "dst of different sizes, so both must be "
                                               "element-aligned ranges of one buffer",
                                               group, o.rank, o.op));
    lo = std::min(lo, o.src.offset);
    hi = std::max(hi, o.src.offset + o.src.bytes);
  }
  std::vector<std::byte> sum(hi > lo ? hi - lo : 0);
  // Positions written so far, as disjoint, non-touching [begin, end) byte ranges (relative to
  // lo) in order: a member's range is copied where it is new and added where it is not.
  std::vector<std::pair<std::uint64_t, std::uint64_t>> covered;
  for (const NetReduceMember& o : members) {
    const std::byte* src = o.src_data;
    const std::uint64_t a = o.src.offset - lo, b = a + o.src.bytes;
    const auto put = [&](std::uint64_t from, std::uint64_t to, bool add) {
      if (!src || to <= from) return;
      if (add)
        reduce_into(sum.data() + from, src + (from - a), to - from, type);
      else
        std::memcpy(sum.data() + from, src + (from - a), to - from);
    };
    std::uint64_t pos = a;
    for (const auto& [c, d] : covered) {
      if (d <= pos) continue;
      if (c >= b) break;
      put(pos, std::min(c, b), false);
      put(std::max(c, pos), std::min(d, b), true);
      pos = std::min(d, b);
    }
    put(pos, b, false);
    if (b > a) {
      // Insert [a, b) and merge it with the ranges it overlaps or touches.
      auto first = std::lower_bound(covered.begin(), covered.end(), a,
                                    [](const auto& r, std::uint64_t v) { return r.second < v; });
      auto last = first;
      std::uint64_t begin = a, end = b;
      while (last != covered.end() && last->first <= b) {
        begin = std::min(begin, last->first);
        end = std::max(end, last->second);
        ++last;
      }
      first = covered.erase(first, last);
      covered.insert(first, {begin, end});
    }
  }
  for (const NetReduceMember& o : members) {
    const std::uint64_t a = o.dst.offset - lo, b = a + o.dst.bytes;
    const auto it = std::upper_bound(covered.begin(), covered.end(), a,
                                     [](std::uint64_t v, const auto& r) { return v < r.first; });
    const bool inside =
        o.dst.bytes == 0 || (o.dst.offset >= lo && it != covered.begin() &&
                             std::prev(it)->first <= a && b <= std::prev(it)->second);
    if (!inside)
      throw InputError("programs",
                       fmt::format("net_reduce group {}: rank {} op {} receives "
                                   "positions [{}, {}) that no member contributes",
                                   group, o.rank, o.op, o.dst.offset, o.dst.offset + o.dst.bytes));
    if (o.dst_data) std::memcpy(o.dst_data, sum.data() + a, o.dst.bytes);
  }
}

}  // namespace lockstep::functional_detail
