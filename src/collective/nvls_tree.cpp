// NCCL's NVLS_TREE all-reduce (NCCL 2.18+, multi-node Hopper / Blackwell): NVLink SHARP inside
// each node, a double binary tree between nodes. With g ranks per node, every pipelining chunk X
// of every channel goes through three phases on rank r = node x g + l:
//   1. reduce-scatter through the NVSwitch: one NetReduce in the node's group with src X and dst
//      block l of X (NVLS's multimem reduce: the switch sums the g GPUs' copies and GPU l gets
//      the node sum of its block). NVLink carries X up and X / g down per GPU.
//   2. the inter-node all-reduce of block l among the rank-l GPUs of all nodes (one rail, one
//      NIC per GPU): NCCL's double binary tree over the nodes, each tree carrying half the block
//      (receive-and-reduce from the children, send to the parent, then back down).
//   3. multicast all-gather through the NVSwitch: one NetReduce in the node's group with src
//      block l and dst X (the switch copies each GPU's block to all g GPUs). NVLink carries X / g
//      up and X down per GPU.
// So a GPU's NVLink moves S (1 + 1/g) each way and a node's NICs 2 S each way (S with two nodes),
// the volumes NCCL's model prices (nccl/cost.cpp nvls_tree_cost). Phases 1 and 3 use the functional
// executor's windowed NetReduce semantics (engine/functional/executor.hpp): offsets are positions.
//
// The trees over the nodes are the same as the tree algorithm's (in_order_tree.hpp).
//
// Programs are lazy: a rank's program is `channels x chunks` repetitions of one block of ops
// whose shape depends only on the rank's tree position, so op(r, i) patches a cached block
// template with the ranges of block i / L. Memory is O(cached ranks x L), not O(program).
//
// Split channels (CollectiveSpec::split_channels, for timing engines: ProgramSet::split_channels
// offers it): rank c x n + r runs only channel c's blocks of GPU r's program, with channel c's
// copies of its peers and NVLS groups. The channels share nothing but links, so the split program
// times exactly like the whole one, and it has a symmetry the whole one lacks: channel c + 1 is
// channel c moved by n ranks (symmetry_period), so the flow engine simulates one channel for all
// of them.
#include <fmt/format.h>

#include <array>
#include <memory>
#include <mutex>
#include <vector>

#include "generated.hpp"
#include "in_order_tree.hpp"
#include "lockstep/core/error.hpp"

namespace lockstep::collective_detail {
namespace {

// NCCL's per-GPU NVLS chunk (NCCL_NVLS_CHUNKSIZE, default 128 KiB), halved for smaller
// messages so that each of the `concurrent` = channels x g heads still gets several chunks
// (enqueue.cc, NVLS_TREE branch: below 4 x concurrent x chunk bytes 64 KiB, below
// 1 x concurrent x chunk 32 KiB). A chunk X of the buffer is g such blocks.
std::uint64_t nvls_tree_block(std::uint64_t bytes, std::uint64_t concurrent) {
  std::uint64_t block = 128 * 1024;
  if (bytes < 4 * concurrent * block) block = 64 * 1024;
  if (bytes < concurrent * block) block = 32 * 1024;
  return block;
}
// Longest block: the reduce-scatter, per tree up to 2 receives from children, the send to and
// receive from the parent and 2 sends down (6), and the all-gather.
constexpr std::size_t kShapeOps = 14;

// Which span of a block an op's range covers.
enum class Piece : std::uint8_t { Chunk, Block, Half0, Half1 };

struct TemplateOp {
  Op op;  // channel: 0/1 = tree half for sends and recvs; deps within the block
  Piece src = Piece::Chunk;
  Piece dst = Piece::Chunk;
};

class NvlsTreeProgramSet final : public ProgramSet {
 public:
  explicit NvlsTreeProgramSet(const CollectiveSpec& s)
      : spec_(s),
        g_(s.ranks_per_node ? s.ranks_per_node : s.ranks),
        nodes_(s.ranks / g_),
        split_(s.split_channels ? s.channels : 1) {
    spec_.alltoallv.clear();
    if (static_cast<std::uint64_t>(s.ranks) * split_ > 0xffffffffull)
      throw InputError("ranks", "nvls_tree: too many ranks x channels to split the channels");
    // Split: channel c's copy of node x's group is group c x nodes + x.
    for (std::uint32_t c = 0; c < split_; ++c) {
      for (Rank node = 0; node < nodes_; ++node) {
        std::vector<Rank> members(g_);
        for (Rank l = 0; l < g_; ++l) members[l] = c * s.ranks + node * g_ + l;
        groups_.push_back(std::move(members));
      }
    }
    const std::uint64_t slice = (s.elements() + s.channels - 1) / s.channels;
    chunks_ = pipeline_depth(s, slice, g_ * nvls_tree_block(s.bytes.count(), s.channels * g_));
    cache_.resize(std::min<std::size_t>(1024, s.ranks));
    if (blocks() * kShapeOps > 0xffffffffull)
      throw InputError("bytes", fmt::format("{} bytes in {} B chunks need more than 2^32 ops per "
                                            "rank; use a larger chunk",
                                            s.bytes.count(), slice / chunks_ * size_of(s.type)));
  }

  Rank num_ranks() const override { return spec_.ranks * split_; }
  OpIndex num_ops(Rank r) const override {
    std::lock_guard lock(mutex_);
    return static_cast<OpIndex>(blocks() / split_ * shape(r % spec_.ranks).size());
  }
  Op op(Rank r, OpIndex i) const override {
    if (split_ > 1) return split_op(r, i);
    std::lock_guard lock(mutex_);
    return whole_op(r, i);
  }

 private:
  // Op i of GPU r's whole program (caller holds mutex_).
  Op whole_op(Rank r, OpIndex i) const {
    const std::vector<TemplateOp>& t = shape(r);
    const auto len = static_cast<OpIndex>(t.size());
    const std::uint64_t block = i / len;
    const auto c = static_cast<std::uint16_t>(block % spec_.channels);
    const std::uint64_t k = block / spec_.channels;
    const TemplateOp& tp = t.at(i % len);
    Op op = tp.op;
    const Span chunk = Span{0, spec_.elements()}.part(spec_.channels, c).part(chunks_, k);
    const Span piece_block = chunk.part(g_, r % g_);
    const auto span_of = [&](Piece p) {
      if (p == Piece::Chunk) return chunk;
      if (p == Piece::Block) return piece_block;
      return piece_block.part(2, p == Piece::Half0 ? 0 : 1);
    };
    const std::size_t es = size_of(spec_.type);
    op.src = elems(Buffer::Input, span_of(tp.src).first, span_of(tp.src).count, es);
    op.dst = elems(Buffer::Input, span_of(tp.dst).first, span_of(tp.dst).count, es);
    if (op.kind == OpKind::Send || op.kind == OpKind::Compute) op.dst = {};
    if (op.kind == OpKind::Recv || op.kind == OpKind::Compute) op.src = {};
    op.channel = op.kind == OpKind::NetReduce ? c : static_cast<std::uint16_t>(2 * c + op.channel);
    for (std::uint8_t d = 0; d < op.num_deps; ++d) op.deps[d] += static_cast<OpIndex>(block * len);
    // A channel reduces its chunks through the switch one after another, as NCCL's NVLS steps
    // do; without this every chunk's reduce-scatter would share NVLink at once and all of them
    // would finish late together, starving the tree.
    if (i % len == 0 && k > 0) op.add_dep(static_cast<OpIndex>((block - spec_.channels) * len));
    return op;
  }

  // Op i of split rank v = c x n + r: op (k x channels + c) x L + j of GPU r's program, where
  // i = k x L + j, with peers, groups and dependencies moved to channel c's copy. NetReduce ops
  // are put on channel 2c, as if they were tree half 0's, so that moving n ranks on moves every
  // channel by 2 (symmetry_channel_shift); the flow engine does not read a NetReduce's channel.
  Op split_op(Rank v, OpIndex i) const {
    const Rank n = spec_.ranks;
    const std::uint32_t c = v / n;
    std::lock_guard lock(mutex_);
    const auto len = static_cast<OpIndex>(shape(v % n).size());
    const auto to_whole = [&](OpIndex x) {
      return static_cast<OpIndex>((x / len * spec_.channels + c) * len + x % len);
    };
    Op op = whole_op(v % n, to_whole(i));
    if (op.kind == OpKind::Send || op.kind == OpKind::Recv) op.peer += c * n;
    if (op.kind == OpKind::NetReduce) {
      op.peer += c * nodes_;
      op.channel = static_cast<std::uint16_t>(2 * c);
    }
    for (std::uint8_t d = 0; d < op.num_deps; ++d) {
      const OpIndex whole = op.deps[d];
      op.deps[d] = static_cast<OpIndex>(whole / len / spec_.channels * len + whole % len);
    }
    return op;
  }

 public:
  BufferSizes buffers(Rank r) const override { return standard_buffers(spec_, r % spec_.ranks); }
  DataType data_type() const override { return spec_.type; }
  std::span<const Rank> group(std::uint32_t id) const override { return groups_.at(id); }
  std::uint32_t num_groups() const override { return static_cast<std::uint32_t>(groups_.size()); }
  std::string label() const override { return "all_reduce/nvls_tree"; }
  // GPU l of a node talks only to GPU l of other nodes and reduces in its own node's group, so
  // rotating the GPUs of every node maps the programs onto themselves with the channels left as
  // they are, provided every GPU's block of every chunk has the same size.
  Rank local_symmetry() const override { return g_ > 1 && nodes_ > 1 && equal_blocks() ? g_ : 0; }
  bool local_symmetry_moves_channels() const override { return false; }
  // Every channel's and chunk's block lies after the one before, and a chunk's reduction comes
  // back 2 x depth steps after it went up.
  Lookahead lookahead() const override { return Lookahead::Program; }
  // Every block has kShapeOps ops.
  OpIndex longest_program() const override {
    return static_cast<OpIndex>(blocks() / split_ * kShapeOps);
  }
  std::unique_ptr<ProgramSet> split_channels() const override {
    if (split_ > 1 || spec_.channels < 2) return nullptr;
    CollectiveSpec split = spec_;
    split.split_channels = true;
    return std::make_unique<NvlsTreeProgramSet>(split);
  }
  // Split: channel c + 1 is channel c moved by n ranks, its sends and recvs on channels 2 (c + 1)
  // + t, when every block has the same size.
  Rank symmetry_period() const override { return split_ > 1 && equal_blocks() ? spec_.ranks : 0; }
  std::uint16_t symmetry_channel_shift() const override { return split_ > 1 ? 2 : 0; }
  std::uint32_t symmetry_channel_modulus() const override { return 2 * split_; }

 private:
  std::uint64_t blocks() const { return chunks_ * spec_.channels; }
  // Every GPU's block of every chunk of every channel has the same size.
  bool equal_blocks() const { return spec_.elements() % (spec_.channels * chunks_ * g_) == 0; }

  // The block template of rank r (cached; caller holds mutex_).
  const std::vector<TemplateOp>& shape(Rank r) const {
    Slot& slot = cache_[r % cache_.size()];
    if (slot.rank != r) {
      slot.ops = build_shape(r);
      slot.rank = r;
    }
    return slot.ops;
  }

  std::vector<TemplateOp> build_shape(Rank r) const {
    std::vector<TemplateOp> out;
    const auto add = [&](Op op, Piece src, Piece dst, std::initializer_list<OpIndex> deps) {
      for (OpIndex d : deps)
        if (d != kNoOp) op.add_dep(d);
      out.push_back({op, src, dst});
      return static_cast<OpIndex>(out.size() - 1);
    };
    const Rank node = r / g_, l = r % g_;
    const OpIndex scattered =
        add(lockstep::make_net_reduce(node, {}, {}), Piece::Chunk, Piece::Block, {});
    std::array<OpIndex, 2> result{scattered, scattered};
    const InOrderTree tree{nodes_};
    for (int t = 0; t < 2 && nodes_ > 1; ++t) {
      const Piece half = t == 0 ? Piece::Half0 : Piece::Half1;
      const auto ch = static_cast<std::uint16_t>(t);
      const auto rank_of = [&](std::uint64_t x) {
        return static_cast<Rank>(tree.unit_at(x, t) * g_ + l);
      };
      const std::uint64_t x = tree.position(node, t), parent = tree.parent(x);
      const std::array<std::uint64_t, 2> kids = tree.children(x);
      // Up: add the children's partial sums into the node sum, pass the total to the parent.
      std::array<OpIndex, 2> from_kids{kNoOp, kNoOp};
      for (int j = 0; j < 2; ++j)
        if (kids[j])
          from_kids[j] =
              add(make_recv(rank_of(kids[j]), {}, RecvMode::Reduce, ch), half, half, {scattered});
      OpIndex summed = scattered;
      if (kids[0]) summed = kids[1] ? kNoOp : from_kids[0];
      OpIndex got = summed;
      if (parent) {
        const OpIndex up = add(make_send(rank_of(parent), {}, ch), half, half,
                               {scattered, from_kids[0], from_kids[1]});
        // Down: the global sum overwrites the partial one.
        got = add(make_recv(rank_of(parent), {}, RecvMode::Copy, ch), half, half, {up});
      } else if (kids[1]) {
        got = add(make_compute(Time::zero()), half, half, {from_kids[0], from_kids[1]});
      }
      for (int j = 0; j < 2; ++j)
        if (kids[j]) add(make_send(rank_of(kids[j]), {}, ch), half, half, {got});
      result[t] = got;
    }
    add(lockstep::make_net_reduce(node, {}, {}), Piece::Block, Piece::Chunk,
        {result[0], result[1]});
    // Every rank's block has the same length, which no block reaches (a double binary tree makes
    // a node inner in one tree only: 10 ops at most). It dates from when engines sized their
    // issue window from rank 0's program; engines now read longest_program(). Kept because
    // full-expansion training steps copy the padding into their programs, where it takes issue
    // window slots: without it, llama3-8b tp 2 dp 8 on 2 HGX-H100 nodes exposes 161.1 ms of TP
    // time instead of 197.6 ms (docs/collectives.md).
    while (out.size() < kShapeOps)
      out.push_back({make_compute(Time::zero()), Piece::Chunk, Piece::Chunk});
    return out;
  }

  struct Slot {
    Rank rank = 0xffffffffu;
    std::vector<TemplateOp> ops;
  };

  CollectiveSpec spec_;
  Rank g_;
  Rank nodes_;
  std::uint64_t chunks_ = 1;
  std::uint32_t split_;  // channels, one rank per (channel, GPU); 1: whole programs
  std::vector<std::vector<Rank>> groups_;
  mutable std::mutex mutex_;
  mutable std::vector<Slot> cache_;
};

}  // namespace

std::unique_ptr<ProgramSet> make_nvls_tree(const CollectiveSpec& spec) {
  return std::make_unique<NvlsTreeProgramSet>(spec);
}

}  // namespace lockstep::collective_detail
