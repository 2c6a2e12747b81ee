// Binary trees. NCCL's all-reduce tree is a *double* binary tree (Sanders, Speck, Traeff 2009):
// two in-order binary trees over the ranks, each carrying half of the data, built so that a rank
// that is a leaf in one tree is an inner node in the other, so that every rank sends and
// receives about S per direction in total instead of inner nodes doing double work.
//
// In-order tree over nodes 1..m: node x with lowest set bit b has children x - b/2 and x + b/2
// (for leaves b = 1 there are none); where x + b/2 > m the right child is the largest
// x + b/2^j <= m (the left spine of the missing subtree). The root is the largest power of two
// <= m, and a node's parent is its first ancestor in the infinite in-order tree that is <= m.
// Odd nodes are leaves. Tree 0 puts rank r at node r + 1; tree 1 mirrors it (node m - r) when m
// is even and shifts it (node (r + 1) mod m + 1) when m is odd: both map leaves (even r) to inner
// nodes, which is how NCCL builds its second tree.
//
// All-reduce per tree and chunk: receive-and-reduce from the children, send the partial sum to
// the parent; then receive the result from the parent and forward it to the children. Chunks
// pipeline: chunk k+1 climbs the tree while chunk k descends. Broadcast and reduce use a single
// tree rotated so that `root` sits at the tree's root.
// With ranks_per_node g (as NCCL): the trees span nodes, and inside each node the g GPUs form a
// chain whose head links to the heads of the parent and child nodes over one rail.
#include <vector>

#include "generated.hpp"

namespace lockstep::collective_detail {
namespace {

constexpr std::uint64_t kDefaultChunk = 512 * 1024;  // as chain.cpp (NCCL Simple step)

// NCCL's tree pipelining (enqueue.cc, tree + Simple, up/down pattern): start from one Simple
// step (512 KiB) and halve the chunk while a channel would get fewer than 8 x depth chunks (not
// below 128 KiB), fewer than 4 x depth (not below 64 KiB), fewer than depth (not below 32 KiB),
// so the pipeline's fill, about 2 x depth chunk times, stays a small part of the transfer.
std::uint64_t nccl_tree_chunk(std::uint64_t channel_bytes, std::uint64_t depth) {
  std::uint64_t chunk = kDefaultChunk;
  const auto halve_while = [&](std::uint64_t min_chunks, std::uint64_t floor) {
    while (channel_bytes / chunk < min_chunks && chunk > floor) chunk /= 2;
  };
  halve_while(8 * depth, 128 * 1024);
  halve_while(4 * depth, 64 * 1024);
  halve_while(depth, 32 * 1024);
  return chunk;
}

std::uint64_t lowbit(std::uint64_t x) {
  return x & (~x + 1);
}

struct InOrderTree {
  std::uint64_t m;
  std::uint64_t root() const {
    std::uint64_t p = 1;
    while (p * 2 <= m) p *= 2;
    return p;
  }
  std::uint64_t parent(std::uint64_t x) const {  // 0 for the root
    if (x == root()) return 0;
    std::uint64_t y = x;
    do {
      const std::uint64_t b = lowbit(y);
      y = (y & (2 * b)) ? y - b : y + b;
    } while (y > m);
    return y;
  }
  std::vector<std::uint64_t> children(std::uint64_t x) const {
    std::vector<std::uint64_t> out;
    const std::uint64_t b = lowbit(x);
    if (b == 1) return out;
    out.push_back(x - b / 2);
    for (std::uint64_t h = b / 2; h >= 1; h /= 2) {
      if (x + h <= m) {
        out.push_back(x + h);
        break;
      }
    }
    return out;
  }
};

class TreeProgramSet final : public GeneratedProgramSet {
 public:
  explicit TreeProgramSet(const CollectiveSpec& s)
      : GeneratedProgramSet(s, std::string(to_string(s.op)) + "/tree") {
    trees_ = s.op == CollectiveOp::AllReduce ? 2 : 1;
    const std::uint64_t slice = (s.elements() + trees_ * s.channels - 1) / (trees_ * s.channels);
    // NCCL runs each channel on one of the two trees with S / channels; here each channel
    // carries both trees (S / (2 channels) each), and the rule sees NCCL's per-channel bytes.
    const std::uint64_t chunk = s.op == CollectiveOp::AllReduce
                                    ? nccl_tree_chunk(s.bytes.count() / s.channels, depth())
                                    : kDefaultChunk;
    k_ = pipeline_depth(s, slice, chunk);
  }

  /// NCCL's tree depth (graph/connect.cc): the chain inside a node plus the binary tree over
  /// the nodes, ranks_per_node - 1 + floor(log2(nodes)).
  std::uint64_t depth() const {
    std::uint64_t levels = 0;
    for (std::uint64_t m = units(); m > 1; m /= 2) ++levels;
    return unit_size() - 1 + levels;
  }
  BufferSizes buffers(Rank r) const override { return standard_buffers(spec(), r); }

 private:
  // Trees are built over units: nodes of ranks_per_node ranks (or single ranks when flat).
  std::uint64_t units() const { return spec().ranks / unit_size(); }
  Rank unit_size() const { return spec().ranks_per_node ? spec().ranks_per_node : 1; }

  // Tree node (1..m) of unit u in tree t, and back.
  std::uint64_t node_of(std::uint64_t u, int t) const {
    const std::uint64_t m = units();
    if (spec().op != CollectiveOp::AllReduce) {
      const std::uint64_t root = InOrderTree{m}.root();
      return (u + m - spec().root / unit_size() + root - 1) % m + 1;
    }
    if (t == 0) return u + 1;
    return m % 2 == 0 ? m - u : (u + 1) % m + 1;
  }
  std::uint64_t unit_of(std::uint64_t x, int t) const {
    const std::uint64_t m = units();
    if (spec().op != CollectiveOp::AllReduce) {
      const std::uint64_t root = InOrderTree{m}.root();
      return (x - 1 + m - (root - 1) + spec().root / unit_size()) % m;
    }
    if (t == 0) return x - 1;
    return m % 2 == 0 ? m - x : (x + m - 2) % m;
  }

  struct Links {
    bool has_parent = false;
    Rank parent = 0;
    std::vector<Rank> kids;
  };

  // Inside a unit the ranks form a chain starting at the head (local index h); heads connect
  // to the heads of the parent and child units, so every inter-node hop stays on rail h.
  // All-reduce channels use different heads (different NICs); broadcast/reduce use the root's.
  Links links(Rank r, int t, std::uint16_t c) const {
    const Rank g = unit_size();
    const std::uint64_t u = r / g;
    const Rank h = spec().op == CollectiveOp::AllReduce ? c % g : spec().root % g;
    const Rank i = (r % g + g - h) % g;  // position in the chain
    const auto chain_rank = [&](Rank pos) { return static_cast<Rank>(u * g + (h + pos) % g); };
    Links out;
    if (i + 1 < g) out.kids.push_back(chain_rank(i + 1));
    if (i > 0) {
      out.has_parent = true;
      out.parent = chain_rank(i - 1);
      return out;
    }
    const InOrderTree tree{units()};
    const std::uint64_t x = node_of(u, t), px = tree.parent(x);
    for (std::uint64_t cx : tree.children(x))
      out.kids.push_back(static_cast<Rank>(unit_of(cx, t) * g + h));
    if (px) {
      out.has_parent = true;
      out.parent = static_cast<Rank>(unit_of(px, t) * g + h);
    }
    return out;
  }

 protected:
  void generate(Rank r, ProgramBuilder& b) const override {
    const CollectiveSpec& s = spec();
    if (s.ranks == 1) return;
    const Span all{0, s.elements()};
    std::vector<Links> by_channel;  // the tree links do not depend on the chunk
    for (std::uint16_t c = 0; c < s.channels; ++c)
      for (int t = 0; t < trees_; ++t) by_channel.push_back(links(r, t, c));
    for (std::uint64_t k = 0; k < k_; ++k) {
      for (std::uint16_t c = 0; c < s.channels; ++c) {
        for (int t = 0; t < trees_; ++t) {
          const auto ch = static_cast<std::uint16_t>(c * trees_ + t);
          const Span piece = all.part(trees_ * s.channels, ch).part(k_, k);
          const Links& l = by_channel[ch];
          const bool px = l.has_parent;
          const Rank parent = l.parent;
          const std::vector<Rank>& kids = l.kids;
          if (s.op == CollectiveOp::Broadcast) {
            const OpIndex got =
                px ? b.recv(parent, Buffer::Input, piece, RecvMode::Copy, ch, {}) : kNoOp;
            for (Rank kid : kids) b.send(kid, Buffer::Input, piece, ch, {got});
            continue;
          }
          // Up the tree (reduce and all_reduce).
          std::vector<OpIndex> ups;
          for (Rank kid : kids)
            ups.push_back(b.recv(kid, Buffer::Input, piece, RecvMode::Reduce, ch, {}));
          const OpIndex summed = b.join(ups);
          const OpIndex sent_up = px ? b.send(parent, Buffer::Input, piece, ch, {summed}) : kNoOp;
          if (s.op == CollectiveOp::Reduce) continue;
          // Down the tree (all_reduce): the result overwrites what went up.
          const OpIndex got =
              px ? b.recv(parent, Buffer::Input, piece, RecvMode::Copy, ch, {sent_up}) : summed;
          for (Rank kid : kids) b.send(kid, Buffer::Input, piece, ch, {got});
        }
      }
    }
  }

 private:
  int trees_ = 1;
  std::uint64_t k_ = 1;
};

}  // namespace

std::unique_ptr<ProgramSet> make_tree(const CollectiveSpec& spec) {
  return std::make_unique<TreeProgramSet>(spec);
}

}  // namespace lockstep::collective_detail
