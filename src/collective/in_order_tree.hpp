#pragma once
// Internal to the collective layer: NCCL's binary tree over nodes, shared by the tree and
// nvls_tree algorithms so that both build exactly the trees NCCL builds (graph/trees.cc).
//
// In-order tree over positions 1..m: position x with lowest set bit b has children x - b/2 and
// x + b/2 (for leaves, b = 1, there are none); where x + b/2 > m the right child is the largest
// x + b/2^j <= m (the left spine of the missing subtree). The root is the largest power of two
// <= m, and a position's parent is its first ancestor in the infinite in-order tree that is
// <= m. Odd positions are leaves.
//
// NCCL's all-reduce runs a *double* binary tree (Sanders, Speck, Traeff 2009): tree 0 puts unit
// u at position u + 1; tree 1 mirrors it (m - u) when m is even and shifts it ((u + 1) mod m + 1)
// when m is odd. Both map the leaves of tree 0 (even u) to inner positions of tree 1, so every
// unit sends and receives about the same volume instead of inner units doing double work.
#include <array>
#include <cstdint>

namespace lockstep::collective_detail {

struct InOrderTree {
  std::uint64_t m;  // positions 1..m

  std::uint64_t root() const {
    std::uint64_t p = 1;
    while (p * 2 <= m) p *= 2;
    return p;
  }

  // Parent of x, 0 for the root.
  std::uint64_t parent(std::uint64_t x) const {
    if (x == root()) return 0;
    do {
      const std::uint64_t b = lowest_bit(x);
      x = (x & (2 * b)) ? x - b : x + b;
    } while (x > m);
    return x;
  }

  // Up to two children, left first; 0 where there is none (a left child exists whenever a right
  // one does).
  std::array<std::uint64_t, 2> children(std::uint64_t x) const {
    std::array<std::uint64_t, 2> out{0, 0};
    const std::uint64_t b = lowest_bit(x);
    if (b == 1) return out;
    out[0] = x - b / 2;
    for (std::uint64_t h = b / 2; h >= 1; h /= 2) {
      if (x + h <= m) {
        out[1] = x + h;
        break;
      }
    }
    return out;
  }

  // Position (1..m) of unit u (0..m-1) in tree t (0 or 1) of the double binary tree, and back.
  std::uint64_t position(std::uint64_t u, int t) const {
    if (t == 0) return u + 1;
    return m % 2 == 0 ? m - u : (u + 1) % m + 1;
  }
  std::uint64_t unit_at(std::uint64_t x, int t) const {
    if (t == 0) return x - 1;
    return m % 2 == 0 ? m - x : (x + m - 2) % m;
  }

 private:
  static std::uint64_t lowest_bit(std::uint64_t x) { return x & (~x + 1); }
};

}  // namespace lockstep::collective_detail
