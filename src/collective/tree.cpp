// Binary trees. NCCL's all-reduce tree is a *double* binary tree: two in-order binary trees over
// the ranks, each carrying half of the data, so that a rank that is a leaf in one tree is an
// inner node in the other (in_order_tree.hpp builds both, as NCCL does).
//
// All-reduce per tree and chunk: receive-and-reduce from the children, send the partial sum to
// the parent; then receive the result from the parent and forward it to the children. Chunks
// pipeline: chunk k+1 climbs the tree while chunk k descends. Broadcast and reduce use a single
// tree rotated so that `root` sits at the tree's root.
// With ranks_per_node g (as NCCL): the trees span nodes, and inside each node the g GPUs form a
// chain whose head links to the heads of the parent and child nodes over one rail.
#include <algorithm>
#include <array>
#include <initializer_list>
#include <mutex>
#include <numeric>
#include <stdexcept>
#include <vector>

#include "generated.hpp"
#include "in_order_tree.hpp"
#include "lockstep/core/error.hpp"

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

// Programs are computed lazily, one (chunk, lane) block at a time. Rank r's program is k_ chunks
// of the same layout: lane 0's block, lane 1's, ... (chunk-major, lane-minor, so all lanes
// progress together in an issue window); a block's length depends only on the rank's links in
// that lane, and its dependencies stay inside it, so op(r, i) needs only the rank's layout (its
// links per lane) and one block. A direct-mapped cache keeps each rank's layout and last block
// (engines read a rank's ops in order), so memory stays O(cache) however many ranks and chunks
// there are; a cached copy of every rank's whole program took 1.2 GB at 1,024 GPUs and 1 GiB.
//
// An inner node's later chunks go up before its first ones have come back down, so a rank must
// see its whole program to run as NCCL does (Lookahead::Program, longest_program()): with a
// window of one rank's shorter program the tree ran +89% at 1 MiB on 8 one-GPU nodes
// (docs/collectives.md, F). When lanes rotate, every rank's program ends with zero-length
// Computes that wait for nothing, up to the longest rank's length: the rotation maps ranks onto
// each other only if their lengths agree (local_symmetry). Rank 0's program is padded so too,
// although no engine reads rank 0's length any more: `lockstep plan` prints the padded op count
// and full-expansion training steps copy the padding into their programs, where it takes issue
// window slots (docs/collectives.md), so dropping it would change outputs.
class TreeProgramSet final : public ProgramSet {
 public:
  explicit TreeProgramSet(const CollectiveSpec& s) : spec_(s) {
    trees_ = s.op == CollectiveOp::AllReduce ? 2 : 1;
    split_ = trees_ == 2 && s.channels % 2 == 0;
    lanes_ = split_ ? s.channels : static_cast<std::uint64_t>(trees_) * s.channels;
    const std::uint64_t slice = (s.elements() + lanes_ - 1) / lanes_;
    // The rule sees NCCL's per-channel bytes, S / channels, which is what a lane carries when
    // the channels split between the trees.
    const std::uint64_t chunk = s.op == CollectiveOp::AllReduce
                                    ? nccl_tree_chunk(s.bytes.count() / s.channels, depth())
                                    : kDefaultChunk;
    k_ = pipeline_depth(s, slice, chunk);
    // Chunks past the longer parts of every lane all have the same size: from there on each
    // chunk's blocks repeat the previous chunk's (periodic_region).
    for (std::uint64_t lane = 0; lane < lanes_; ++lane)
      equal_from_ = std::max(equal_from_, block_size(s.elements(), lanes_, lane) % k_);
    cache_.resize(std::min<std::size_t>(kCacheSlots, s.ranks));
    // Rotation inside nodes: all-reduce channels c use chains headed at GPU head_order_[c mod g],
    // so rotating a node's GPUs by one maps the lane headed at GPU h onto the one headed at h + 1
    // (in blocks of g lanes, each block inside one tree) if every lane carries the same bytes.
    const Rank g = unit_size();
    head_order_ = head_order(g, s.ranks_per_node ? s.nics_per_node : 0);
    head_index_.resize(g);
    for (Rank j = 0; j < g; ++j) head_index_[head_order_[j]] = j;
    rotate_lanes_ = s.op == CollectiveOp::AllReduce && split_ && g > 1 && units() > 1 &&
                    (s.channels / 2) % g == 0 && s.elements() % lanes_ == 0;
    if (s.ranks > 1 && k_ * lanes_ * kBlockOps > 0xffffffffull)
      throw InputError("bytes", "tree: too many chunks for one program; raise the chunk size");
    longest_chunk_ = longest_chunk_ops();
  }

  Rank num_ranks() const override { return spec_.ranks; }
  OpIndex num_ops(Rank r) const override {
    if (spec_.ranks == 1) return 0;
    if (r == 0 || rotate_lanes_) return static_cast<OpIndex>(k_ * longest_chunk_);
    std::lock_guard lock(mutex_);
    return static_cast<OpIndex>(k_ * layout(r).chunk_ops);
  }
  Op op(Rank r, OpIndex i) const override {
    if (r >= spec_.ranks || i >= num_ops(r)) throw std::out_of_range("tree: op index");
    std::lock_guard lock(mutex_);
    Slot& slot = layout(r);
    const std::uint64_t k = i / slot.chunk_ops;
    if (k >= k_) return make_compute(Time::zero());  // padding to the longest rank's length
    const auto in_chunk = static_cast<OpIndex>(i % slot.chunk_ops);
    const auto next = std::upper_bound(slot.start.begin(), slot.start.end(), in_chunk);
    const auto at = static_cast<std::uint64_t>(next - slot.start.begin() - 1);
    const std::uint64_t block = k * lanes_ + at;
    if (slot.block != block) {
      fill_block(slot, k, at, static_cast<OpIndex>(i - (in_chunk - slot.start[at])));
      slot.block = block;
    }
    return slot.ops[in_chunk - slot.start[at]];
  }
  BufferSizes buffers(Rank r) const override { return standard_buffers(spec_, r); }
  DataType data_type() const override { return spec_.type; }
  std::string label() const override { return std::string(to_string(spec_.op)) + "/tree"; }

  Rank local_symmetry() const override { return rotate_lanes_ ? unit_size() : 0; }
  Lookahead lookahead() const override { return Lookahead::Program; }
  OpIndex longest_program() const override {
    return spec_.ranks == 1 ? 0 : static_cast<OpIndex>(k_ * longest_chunk_);
  }

  // Chunk k + 1 repeats chunk k on every lane (same peers, channels and sizes, dependencies
  // inside the block) once all chunks have the same size.
  PeriodicRegion periodic_region(Rank r, OpIndex i) const override {
    if (spec_.ranks == 1 || k_ - equal_from_ < 2) return {};
    std::lock_guard lock(mutex_);
    const std::uint64_t chunk_ops = layout(r).chunk_ops;
    const auto first = static_cast<OpIndex>(equal_from_ * chunk_ops);
    const auto end = static_cast<OpIndex>(k_ * chunk_ops);
    if (i < first || i >= end) return {};
    return {first, static_cast<OpIndex>(chunk_ops), static_cast<OpIndex>(k_ - equal_from_)};
  }

 private:
  // The largest block: three recvs from children (the chain's and two in the node tree), their
  // join, the send up, the recv down and three sends down.
  static constexpr OpIndex kBlockOps = 9;
  static constexpr std::size_t kCacheSlots = 4096;
  using Block = std::array<Op, kBlockOps>;

  /// NCCL's tree depth (graph/connect.cc): the chain inside a node plus the binary tree over
  /// the nodes, ranks_per_node - 1 + floor(log2(nodes)).
  std::uint64_t depth() const {
    std::uint64_t levels = 0;
    for (std::uint64_t m = units(); m > 1; m /= 2) ++levels;
    return unit_size() - 1 + levels;
  }

  // Trees are built over units: nodes of ranks_per_node ranks (or single ranks when flat).
  std::uint64_t units() const { return spec_.ranks / unit_size(); }
  Rank unit_size() const { return spec_.ranks_per_node ? spec_.ranks_per_node : 1; }

  // Tree node (1..m) of unit u in tree t, and back.
  std::uint64_t node_of(std::uint64_t u, int t) const {
    const std::uint64_t m = units();
    if (spec_.op != CollectiveOp::AllReduce) {
      const std::uint64_t root = InOrderTree{m}.root();
      return (u + m - spec_.root / unit_size() + root - 1) % m + 1;
    }
    return InOrderTree{m}.position(u, t);
  }
  std::uint64_t unit_of(std::uint64_t x, int t) const {
    const std::uint64_t m = units();
    if (spec_.op != CollectiveOp::AllReduce) {
      const std::uint64_t root = InOrderTree{m}.root();
      return (x - 1 + m - (root - 1) + spec_.root / unit_size()) % m;
    }
    return InOrderTree{m}.unit_at(x, t);
  }

  struct Links {
    bool has_parent = false;
    Rank parent = 0;
    int num_kids = 0;
    std::array<Rank, 3> kids{};
  };

  // Inside a unit the ranks form a chain starting at the head (local index h); heads connect
  // to the heads of the parent and child units, so every inter-node hop stays on rail h.
  // All-reduce channels use different heads (different NICs); broadcast/reduce use the root's.
  Links links(Rank r, int t, std::uint16_t c) const {
    const Rank g = unit_size();
    const std::uint64_t u = r / g;
    const Rank h = spec_.op == CollectiveOp::AllReduce ? head_order_[c % g] : spec_.root % g;
    const Rank i = (r % g + g - h) % g;  // position in the chain
    const auto chain_rank = [&](Rank pos) { return static_cast<Rank>(u * g + (h + pos) % g); };
    Links out;
    if (i + 1 < g) out.kids[out.num_kids++] = chain_rank(i + 1);
    if (i > 0) {
      out.has_parent = true;
      out.parent = chain_rank(i - 1);
      return out;
    }
    const InOrderTree tree{units()};
    const std::uint64_t x = node_of(u, t), px = tree.parent(x);
    for (const std::uint64_t cx : tree.children(x))
      if (cx) out.kids[out.num_kids++] = static_cast<Rank>(unit_of(cx, t) * g + h);
    if (px) {
      out.has_parent = true;
      out.parent = static_cast<Rank>(unit_of(px, t) * g + h);
    }
    return out;
  }

  // Lanes: with an even channel count, as NCCL (graph/connect.cc connectTrees), the first half
  // of the channels run tree 0 and the second half tree 1, channel c and c + C/2 sharing the
  // chain (head) of channel c; each lane carries S / C, so a lane is chunked exactly like an
  // NCCL channel. With an odd count (one channel) every channel carries both trees.
  // Blocks are chunk-major, lane-minor, so that all lanes progress together in a window.
  // The lane at position p of rank r's chunk. With rotate_lanes_, positions are rotated in blocks
  // of g by the rank's local index, so that the rank one GPU further on holds the next lane
  // (whose chain starts one GPU further on) at the same position: local_symmetry.
  std::uint64_t lane_at(Rank r, std::uint64_t p) const {
    if (!rotate_lanes_) return p;
    const Rank g = unit_size();
    return p - p % g + head_index_[(head_order_[p % g] + r % g) % g];
  }

  // The head GPU of channels c, c + g, ... (head_order_[c % g]): with one NIC per GPU, GPU c;
  // with fewer NICs, the first GPU of every NIC, then the second of every NIC, and so on (GPU
  // l on NIC l x nics / g), so that any g consecutive channels use each NIC equally.
  static std::vector<Rank> head_order(Rank g, std::uint32_t nics) {
    std::vector<Rank> order(g);
    std::iota(order.begin(), order.end(), Rank{0});
    if (nics == 0 || nics >= g) return order;
    const auto nic = [&](Rank l) { return static_cast<Rank>(std::uint64_t{l} * nics / g); };
    const auto first_on_nic = [&](Rank n) {  // the smallest l with nic(l) == n
      return static_cast<Rank>((std::uint64_t{n} * g + nics - 1) / nics);
    };
    std::stable_sort(order.begin(), order.end(), [&](Rank a, Rank b) {
      return a - first_on_nic(nic(a)) < b - first_on_nic(nic(b));
    });
    return order;
  }

  Links lane_links(Rank r, std::uint64_t lane) const {
    if (split_) {
      const std::uint64_t half = spec_.channels / 2;
      return links(r, lane >= half ? 1 : 0, static_cast<std::uint16_t>(lane % half));
    }
    return links(r, static_cast<int>(lane % trees_), static_cast<std::uint16_t>(lane / trees_));
  }

  // Ops of one block: reduce and all_reduce receive from each child, join them when more than
  // one, send up; all_reduce and broadcast receive from the parent and send to each child.
  OpIndex block_ops(const Links& l) const {
    const OpIndex kids = static_cast<OpIndex>(l.num_kids), parent = l.has_parent ? 1 : 0;
    const OpIndex up = kids + (kids > 1 ? 1 : 0) + parent;
    if (spec_.op == CollectiveOp::Reduce) return up;
    if (spec_.op == CollectiveOp::Broadcast) return parent + kids;
    return up + parent + kids;
  }

  struct Slot {
    Rank rank = 0xffffffffu;
    std::vector<Links> links;    // per lane position in the chunk (lane_at)
    std::vector<OpIndex> start;  // first op of each position's block within a chunk
    std::uint64_t chunk_ops = 0;
    std::uint64_t block = ~std::uint64_t{0};  // chunk x lanes + lane held in ops
    Block ops{};
  };

  // Rank r's layout in the cache (the caller holds mutex_, except in the constructor).
  Slot& layout(Rank r) const {
    Slot& slot = cache_[r % cache_.size()];
    if (slot.rank == r) return slot;
    slot.rank = r;
    slot.block = ~std::uint64_t{0};
    slot.links.clear();
    slot.start.clear();
    OpIndex at = 0;
    for (std::uint64_t at_lane = 0; at_lane < lanes_; ++at_lane) {
      slot.links.push_back(lane_links(r, lane_at(r, at_lane)));
      slot.start.push_back(at);
      at += block_ops(slot.links.back());
    }
    slot.chunk_ops = at;
    return slot;
  }

  // The longest chunk of any rank. A rank's block lengths depend only on its local index and its
  // node's role (children, parent) in each tree, so one node per distinct role is measured.
  std::uint64_t longest_chunk_ops() const {
    if (spec_.ranks == 1) return 0;
    const std::uint64_t m = units();
    const InOrderTree tree{m};
    std::vector<std::uint32_t> seen;
    std::uint64_t longest = 0;
    for (std::uint64_t u = 0; u < m; ++u) {
      std::uint32_t role = 0;
      for (int t = 0; t < trees_; ++t) {
        const std::uint64_t x = node_of(u, t);
        const std::array<std::uint64_t, 2> kids = tree.children(x);
        const auto num_kids = static_cast<std::uint32_t>((kids[0] ? 1 : 0) + (kids[1] ? 1 : 0));
        role = role * 8 + num_kids * 2 + (tree.parent(x) ? 1 : 0);
      }
      if (std::find(seen.begin(), seen.end(), role) != seen.end()) continue;
      seen.push_back(role);
      for (Rank l = 0; l < unit_size(); ++l)
        longest = std::max(longest, layout(static_cast<Rank>(u * unit_size() + l)).chunk_ops);
    }
    return longest;
  }

  // Chunk k of one lane into slot.ops, its first op at index base: up the tree (reduce,
  // all_reduce: receive and reduce from the children, send the sum up), then down (broadcast,
  // all_reduce: receive the result, which overwrites what went up, and forward it).
  void fill_block(Slot& slot, std::uint64_t k, std::uint64_t at_lane, OpIndex base) const {
    const Links& l = slot.links[at_lane];
    const std::uint64_t lane = lane_at(slot.rank, at_lane);
    const Span piece = Span{0, spec_.elements()}.part(lanes_, lane).part(k_, k);
    const BufferRange range = elems(Buffer::Input, piece.first, piece.count, size_of(spec_.type));
    // With rotate_lanes_, a lane is numbered by its head (in its block of g lanes), so that
    // rotating a node's GPUs moves channel numbers as it moves heads (local_symmetry's sigma).
    const Rank g = unit_size();
    const auto ch =
        static_cast<std::uint16_t>(rotate_lanes_ ? lane - lane % g + head_order_[lane % g] : lane);
    OpIndex n = 0;
    const auto add = [&](Op op, std::initializer_list<OpIndex> local_deps) {
      for (OpIndex d : local_deps)
        if (d != kNoOp) op.add_dep(base + d);
      slot.ops.at(n) = op;
      return n++;
    };
    const CollectiveOp kind = spec_.op;
    OpIndex got = kNoOp;
    if (kind != CollectiveOp::Broadcast) {
      OpIndex summed = kNoOp;
      for (int j = 0; j < l.num_kids; ++j)
        summed = add(make_recv(l.kids[j], range, RecvMode::Reduce, ch), {});
      if (l.num_kids > 1) {  // join the recvs (at most 3 <= kMaxDeps)
        Op join = make_compute(Time::zero());
        for (int j = 0; j < l.num_kids; ++j) join.add_dep(base + static_cast<OpIndex>(j));
        summed = add(join, {});
      }
      const OpIndex sent_up = l.has_parent ? add(make_send(l.parent, range, ch), {summed}) : kNoOp;
      if (kind == CollectiveOp::Reduce) return;
      got = l.has_parent ? add(make_recv(l.parent, range, RecvMode::Copy, ch), {sent_up}) : summed;
    } else if (l.has_parent) {
      got = add(make_recv(l.parent, range, RecvMode::Copy, ch), {});
    }
    for (int j = 0; j < l.num_kids; ++j) {
      Op down = make_send(l.kids[j], range, ch);
      down.fan_out = static_cast<std::uint8_t>(l.num_kids);
      add(down, {got});
    }
  }

  CollectiveSpec spec_;
  int trees_ = 1;
  bool split_ = false;               // channels split between the two trees (NCCL), else both
  bool rotate_lanes_ = false;        // lane_at rotates by the local index (local_symmetry)
  std::vector<Rank> head_order_;     // the head of channel c's chain: head_order_[c % g]
  std::vector<Rank> head_index_;     // its inverse
  std::uint64_t lanes_ = 1;          // pipelines: (channel, tree) pairs
  std::uint64_t k_ = 1;              // chunks per lane
  std::uint64_t equal_from_ = 0;     // first chunk from which all chunks have the same size
  std::uint64_t longest_chunk_ = 0;  // ops per chunk of the longest rank
  mutable std::mutex mutex_;
  mutable std::vector<Slot> cache_;
};

}  // namespace

std::unique_ptr<ProgramSet> make_tree(const CollectiveSpec& spec) {
  return std::make_unique<TreeProgramSet>(spec);
}

}  // namespace lockstep::collective_detail
