#pragma once
// Internal to the collective layer: the torus's geometry as the torus_ring programs see it
// (torus_all_reduce.cpp, torus_gather.cpp). Rank r has coordinate (r / stride_k) % size_k along
// dimension k, dims[0] varying fastest: the torus builder's GPU order.
#include <cstdint>
#include <memory>
#include <vector>

#include "generated.hpp"

namespace lockstep::collective_detail {

/// One dimension of the torus that has a ring (size >= 2; size-1 dimensions have none).
struct TorusDim {
  std::uint64_t size = 1;
  std::uint64_t stride = 1;  // rank distance between neighbours along this dimension
};

/// The dimensions of size >= 2 of spec.torus_dims (one ring of all ranks when it is empty), in
/// order, with their strides in rank order.
std::vector<TorusDim> torus_rings(const CollectiveSpec& spec);

inline std::uint64_t coord_of(std::uint64_t rank, const TorusDim& d) {
  return rank / d.stride % d.size;
}
/// The rank whose coordinate along `d` is `coord` (taken modulo the size) and whose other
/// coordinates are those of `rank`.
inline Rank torus_peer(std::uint64_t rank, const TorusDim& d, std::int64_t coord) {
  const auto m = static_cast<std::int64_t>(d.size);
  const auto c = static_cast<std::uint64_t>(((coord % m) + m) % m);
  return static_cast<Rank>(rank - coord_of(rank, d) * d.stride + c * d.stride);
}

/// Where one unit (direction x channel) of a ring phase stands: the rank's coordinate `a` along
/// the phase's dimension, the direction sigma (+1: send to a + 1, receive from a - 1; -1: the
/// mirror) and its neighbours. Step t of a reduce-scatter sends part a - sigma (t + 1) and
/// reduces part a - sigma (t + 2) into place, so that after size - 1 steps the rank holds part a
/// summed over the ring; step t of an all-gather sends part a - sigma t and receives part
/// a - sigma (t + 1).
struct TorusRingStep {
  std::int64_t a = 0, sigma = 1, size = 1;
  Rank next = 0, prev = 0;

  TorusRingStep(Rank rank, const TorusDim& d, std::int64_t direction)
      : a(static_cast<std::int64_t>(coord_of(rank, d))),
        sigma(direction),
        size(static_cast<std::int64_t>(d.size)),
        next(torus_peer(rank, d, a + direction)),
        prev(torus_peer(rank, d, a - direction)) {}
  std::uint64_t part(std::int64_t j) const {
    return static_cast<std::uint64_t>(((j % size) + size) % size);
  }
  std::uint64_t rs_send(std::int64_t t) const { return part(a - sigma * (t + 1)); }
  std::uint64_t rs_recv(std::int64_t t) const { return part(a - sigma * (t + 2)); }
  std::uint64_t ag_send(std::int64_t t) const { return part(a - sigma * t); }
  std::uint64_t ag_recv(std::int64_t t) const { return part(a - sigma * (t + 1)); }
};

std::unique_ptr<ProgramSet> make_torus_all_reduce(const CollectiveSpec& spec);
std::unique_ptr<ProgramSet> make_torus_gather(const CollectiveSpec& spec);  // AG, RS

}  // namespace lockstep::collective_detail
