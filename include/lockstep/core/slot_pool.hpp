#pragma once
// Pools of reusable slots addressed by 32-bit ids, as the engines keep their flows, packets,
// transfers and solver variables: a vector of elements plus a list of freed ids.
#include <cstdint>
#include <vector>

namespace lockstep {

/// An index into `pool`: the last id freed into `free` if there is one (its old contents left for
/// the caller to reset or reuse, e.g. to keep a vector's capacity), else a new default element.
template <class T>
std::uint32_t take_slot(std::vector<T>& pool, std::vector<std::uint32_t>& free) {
  if (free.empty()) {
    pool.emplace_back();
    return static_cast<std::uint32_t>(pool.size() - 1);
  }
  const std::uint32_t id = free.back();
  free.pop_back();
  return id;
}

}  // namespace lockstep
