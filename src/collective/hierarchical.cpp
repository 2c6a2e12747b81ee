// Hierarchical all-reduce (what NCCL does across nodes, and the textbook 2D algorithm): with g
// ranks per scale-up domain (node) and N = n / g nodes, on each channel's slice X of the buffer
//   1. reduce-scatter X inside each node over NVLink (a ring over the g local ranks): local rank
//      l ends with block (l + 1) mod g of the node's sum;
//   2. all-reduce that block across nodes among the ranks with the same local index (one ring
//      per rail, N ranks each, rail-aligned: every transfer stays on rail l);
//   3. all-gather X inside each node.
// Bytes per rank: 2(g-1)/g x S over NVLink and 2(N-1)/N x S/g over the scale-out network.
// Any domain size works (g = n is one node, g = 1 is a flat ring across nodes). On a fully
// connected node (mesh_rings: AMD xGMI, no switch) channel c's ring in the node walks cycle
// c mod mesh_cycles(g).size() of the mesh (g - 1 edge-disjoint Hamiltonian cycles on 8 GPUs), as
// the ring's channels do, so the channels together use every link of a GPU instead of one.
#include <algorithm>
#include <vector>

#include "generated.hpp"

namespace lockstep::collective_detail {
namespace {

// One ring in place over `size` members: this rank is at `pos`, blocks are span.part(size, i).
struct InPlaceRing {
  Rank next, prev;
  std::uint64_t pos, size;
  Span span;
  std::uint16_t ch;

  Span blk(std::int64_t i) const {
    const auto n = static_cast<std::int64_t>(size);
    return span.part(size, static_cast<std::uint64_t>(((i % n) + n) % n));
  }

  // Reduce-scatter: afterwards this rank holds the sum of block pos + 1. Returns the last op.
  OpIndex reduce_scatter(ProgramBuilder& b, OpIndex start, std::vector<OpIndex>& sends) const {
    OpIndex prev_op = start;
    const auto p = static_cast<std::int64_t>(pos);
    for (std::int64_t s = 0; s + 1 < static_cast<std::int64_t>(size); ++s) {
      sends.push_back(b.send(next, Buffer::Input, blk(p - s), ch, {prev_op}));
      prev_op = b.recv(prev, Buffer::Input, blk(p - s - 1), RecvMode::Reduce, ch, {start});
    }
    return prev_op;
  }

  // All-gather of the reduced blocks; `rs_sends` are the reduce-scatter sends that read the
  // blocks the copies overwrite.
  OpIndex all_gather(ProgramBuilder& b, OpIndex start, const std::vector<OpIndex>& rs_sends) const {
    OpIndex prev_op = start;
    const auto p = static_cast<std::int64_t>(pos);
    for (std::int64_t t = 0; t + 1 < static_cast<std::int64_t>(size); ++t) {
      b.send(next, Buffer::Input, blk(p + 1 - t), ch, {prev_op});
      prev_op = b.recv(prev, Buffer::Input, blk(p - t), RecvMode::Copy, ch,
                       {rs_sends[static_cast<std::size_t>(t)], prev_op});
    }
    return prev_op;
  }
};

class HierarchicalProgramSet final : public GeneratedProgramSet {
 public:
  explicit HierarchicalProgramSet(const CollectiveSpec& s)
      : GeneratedProgramSet(s, "all_reduce/hierarchical") {}
  BufferSizes buffers(Rank r) const override { return standard_buffers(spec(), r); }

 protected:
  void generate(Rank r, ProgramBuilder& b) const override {
    const CollectiveSpec& s = spec();
    const Rank g = s.ranks_per_node ? s.ranks_per_node : s.ranks;
    const Rank nodes = s.ranks / g, node = r / g, l = r % g;
    const bool mesh = s.mesh_rings && g >= 3;
    for (std::uint16_t c = 0; c < s.channels; ++c) {
      const Span x = Span{0, s.elements()}.part(s.channels, c);
      // The node's ring: local GPUs in order, or the channel's cycle of the mesh. The GPU at
      // position p of it ends the reduce-scatter with block p + 1, the block its rail reduces.
      std::uint64_t pos = l;
      Rank next = (l + 1) % g, prev = (l + g - 1) % g;
      if (mesh) {
        const std::vector<std::vector<std::uint32_t>>& cycles =
            s.node_cycles.empty() ? mesh_cycles(g) : s.node_cycles;
        const std::vector<std::uint32_t>& cycle = cycles[c % cycles.size()];
        pos = static_cast<std::uint64_t>(std::find(cycle.begin(), cycle.end(), l) - cycle.begin());
        next = cycle[(pos + 1) % g];
        prev = cycle[(pos + g - 1) % g];
      }
      const InPlaceRing intra{node * g + next, node * g + prev, pos, g, x, c};
      const InPlaceRing inter{((node + 1) % nodes) * g + l,
                              ((node + nodes - 1) % nodes) * g + l,
                              node,
                              nodes,
                              x.part(g, (pos + 1) % g),
                              c};
      std::vector<OpIndex> intra_sends, inter_sends;
      OpIndex last = intra.reduce_scatter(b, kNoOp, intra_sends);
      last = inter.reduce_scatter(b, last, inter_sends);
      last = inter.all_gather(b, last, inter_sends);
      intra.all_gather(b, last, intra_sends);
    }
  }
};

}  // namespace

std::unique_ptr<ProgramSet> make_hierarchical(const CollectiveSpec& spec) {
  return std::make_unique<HierarchicalProgramSet>(spec);
}

}  // namespace lockstep::collective_detail
