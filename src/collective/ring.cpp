// Ring all-reduce, all-gather and reduce-scatter as a lazy ProgramSet: op(rank, i) is computed
// arithmetically from (iteration, channel, step), so a ring over 131,072 ranks costs O(1) memory.
//
// Each of the n blocks of the buffer is split into `channels` slices (one per parallel ring) and
// each slice into K pipelining iterations (chunk). One (iteration, channel) unit runs the
// textbook ring on its pieces; units are independent, so iterations overlap in a pipeline.
// Rank program layout: [prefix ops] then, iteration by iteration, step by step, every channel's
// ops of that step (step major, channel minor), so that a rank's channels sit next to each other
// in its program and progress together within a small issue window, as NCCL's channels do (one
// thread block each). The ops of one step of one channel:
//   all_reduce     2(n-1) steps x [send, recv]: steps 0..n-2 reduce-scatter (recv reduces),
//                  steps n-1..2n-3 all-gather (recv copies)
//   all_gather     prefix Copy(input -> own output block), then n-1 steps x [send, recv]
//   reduce_scatter n-1 steps x [send, recv, reduce]; partial sums live in Scratch
// FIFO matching is per (src, dst, channel) and dependencies are explicit op indices, so the
// interleaving changes where ops sit, not what they do.
#include <algorithm>
#include <map>
#include <mutex>
#include <numeric>
#include <vector>

#include "generated.hpp"
#include "lockstep/core/error.hpp"

namespace lockstep::collective_detail {
namespace {

// Depth-first search for `need` edge-disjoint directed Hamiltonian cycles of the complete
// digraph on g vertices. Cycle i starts 0 -> i + 1 (vertex 0's out-edges are split among the
// cycles), which removes the symmetric duplicates; a step budget bounds the search.
class CycleSearch {
 public:
  CycleSearch(std::uint32_t g, std::uint32_t need) : g_(g), need_(need), used_(g * g, false) {
    cycles.reserve(need);  // extend() holds a reference to the last cycle across recursion
  }
  bool run() { return start_cycle(); }
  std::vector<std::vector<std::uint32_t>> cycles;

 private:
  bool start_cycle() {
    if (cycles.size() == need_) return true;
    const auto first = static_cast<std::uint32_t>(cycles.size() + 1);
    if (used_[first]) return false;
    cycles.push_back({0, first});
    used_[first] = true;
    const bool ok = extend();
    used_[first] = false;
    if (!ok) cycles.pop_back();
    return ok;
  }
  bool extend() {
    if (++steps_ > kBudget) return false;
    std::vector<std::uint32_t>& path = cycles.back();
    const std::uint32_t at = path.back();
    if (path.size() == g_) {
      if (used_[at * g_]) return false;
      used_[at * g_] = true;
      if (start_cycle()) return true;
      used_[at * g_] = false;
      return false;
    }
    for (std::uint32_t v = 1; v < g_; ++v) {
      if (used_[at * g_ + v] || std::find(path.begin(), path.end(), v) != path.end()) continue;
      used_[at * g_ + v] = true;
      path.push_back(v);
      if (extend()) return true;
      path.pop_back();
      used_[at * g_ + v] = false;
    }
    return false;
  }
  static constexpr std::uint64_t kBudget = 2'000'000;
  std::uint32_t g_, need_;
  std::vector<bool> used_;
  std::uint64_t steps_ = 0;
};

class RingProgramSet final : public ProgramSet {
 public:
  explicit RingProgramSet(const CollectiveSpec& spec)
      : spec_(spec), n_(spec.ranks), c_(spec.channels), e_(spec.elements()) {
    es_ = size_of(spec.type);
    const std::uint64_t max_block = (e_ + n_ - 1) / n_;
    k_ = pipeline_depth(spec, (max_block + c_ - 1) / c_, 0);
    // Blocks hold q or q + 1 elements; their channel slices are tabulated once, so op() needs no
    // 64-bit division for them (op() is called for every op the engines run).
    q_ = e_ / n_;
    extra_ = e_ % n_;
    for (int big = 0; big < 2; ++big)
      for (std::uint64_t c = 0; c < c_; ++c) slices_[big].push_back(Span{0, q_ + big}.part(c_, c));
    switch (spec.op) {
      case CollectiveOp::AllReduce:
      case CollectiveOp::Barrier:
        prefix_ = 0;
        per_step_ = 2;
        steps_ = n_ > 1 ? 2 * (n_ - 1) : 0;
        break;
      case CollectiveOp::AllGather:
        prefix_ = 1;
        per_step_ = 2;
        steps_ = n_ - 1;
        break;
      case CollectiveOp::ReduceScatter:
        prefix_ = n_ == 1 ? 1 : 0;
        per_step_ = 3;
        steps_ = n_ - 1;
        break;
      default:
        throw InputError("algorithm", "ring does not implement this collective");
    }
    per_row_ = c_ * per_step_;
    per_iteration_ = steps_ * per_row_;
    g_ = spec.ranks_per_node ? spec.ranks_per_node : n_;
    if (spec.mesh_rings) build_mesh_orders();
    rotate_slots_ = !spec.mesh_rings && g_ > 1 && g_ < n_ && c_ % g_ == 0;
  }

  Rank num_ranks() const override { return n_; }
  OpIndex num_ops(Rank) const override {
    return static_cast<OpIndex>(prefix_ + k_ * per_iteration_);
  }
  // A rank's steps hold every channel's step in turn, and each waits on the step before.
  Lookahead lookahead() const override { return Lookahead::Step; }
  OpIndex longest_program() const override { return num_ops(0); }
  DataType data_type() const override { return spec_.type; }
  std::string label() const override { return std::string(to_string(spec_.op)) + "/ring"; }
  BufferSizes buffers(Rank r) const override {
    BufferSizes b = standard_buffers(spec_, r);
    if (spec_.op == CollectiveOp::ReduceScatter) b.scratch = e_ * es_;
    return b;
  }

  // Rotating the ranks by two nodes maps the ring onto itself (even and odd nodes visit their
  // GPUs in opposite orders), provided every block has the same size and the node count is
  // even; a single node rotates by one rank.
  Rank symmetry_period() const override {
    const std::uint64_t g = spec_.ranks_per_node ? spec_.ranks_per_node : n_;
    if (extra_ != 0 || n_ < 2 || spec_.mesh_rings) return 0;  // mesh walks differ per rank
    if (g == n_) return 1;
    return n_ % (2 * g) == 0 && n_ > 2 * g ? static_cast<Rank>(2 * g) : 0;
  }

  // Channel c + 1 visits the GPUs of every node one local index further on than channel c
  // (ring_rank_at), so rotating every rank by one inside its node and every channel by one
  // inside its block of g channels maps the ring onto itself. Op indices map onto themselves
  // too because a rank's channels sit in its steps in an order rotated by its local index
  // (channel_of_slot). Channel slices must all have the same size.
  Rank local_symmetry() const override {
    return rotate_slots_ && symmetry_period() > 0 && q_ % c_ == 0 ? static_cast<Rank>(g_) : 0;
  }

  // Within an iteration every step after the first repeats the one before it on every channel
  // (same peers and channels, dependencies one step further on) as long as all blocks have the
  // same size, so a region's period is one step of all channels; an all-reduce's all-gather
  // steps carry one more dependency than its reduce-scatter steps, so they form a region of
  // their own.
  PeriodicRegion periodic_region(Rank, OpIndex i) const override {
    // Not claimed for mesh rings: nothing here proves the per-channel walks keep it true.
    if (i < prefix_ || per_iteration_ == 0 || extra_ != 0 || spec_.mesh_rings) return {};
    const std::uint64_t j = i - prefix_;
    const std::uint64_t base = prefix_ + j / per_iteration_ * per_iteration_;
    const std::uint64_t step = j % per_iteration_ / per_row_, n1 = n_ - 1;
    const auto region = [&](std::uint64_t first_step, std::uint64_t steps) {
      if (steps < 2) return PeriodicRegion{};
      return PeriodicRegion{static_cast<OpIndex>(base + first_step * per_row_),
                            static_cast<OpIndex>(per_row_), static_cast<OpIndex>(steps)};
    };
    if (step == 0) return {};
    const bool all_reduce =
        spec_.op == CollectiveOp::AllReduce || spec_.op == CollectiveOp::Barrier;
    if (all_reduce && step >= n1) return region(n1, n1);
    return region(1, n1 - 1);
  }

  Op op(Rank r, OpIndex i) const override {
    if (i < prefix_) return prefix_op(r);
    const std::uint64_t j = i - prefix_;
    const std::uint64_t k = j / per_iteration_, in_iteration = j % per_iteration_;
    const std::uint64_t step = in_iteration / per_row_, in_row = in_iteration % per_row_;
    const std::uint64_t slot = in_row / per_step_;
    const std::uint16_t ch = channel_of_slot(r, slot);
    // w numbers the ops of this (iteration, channel) unit as if its steps were contiguous.
    const std::uint64_t w = step * per_step_ + in_row % per_step_;
    // Where the unit's first op would sit; op `which` of its step s sits at at(x, s, which).
    const auto base = static_cast<OpIndex>(prefix_ + k * per_iteration_ + slot * per_step_);
    const Rank p = position_of(ch, r);
    Ctx x{r,
          k,
          ch,
          base,
          p,
          rank_at_position(ch, (p + 1) % n_),
          rank_at_position(ch, (p + n_ - 1) % n_)};
    switch (spec_.op) {
      case CollectiveOp::AllGather:
        return all_gather(x, w);
      case CollectiveOp::ReduceScatter:
        return reduce_scatter(x, w);
      default:
        return all_reduce(x, w);
    }
  }

 private:
  struct Ctx {
    Rank rank;
    std::uint64_t k;
    std::uint16_t ch;
    OpIndex base;
    Rank pos, next, prev;
  };

  // The channel in position `slot` of rank r's steps: the identity, or, when channels come in
  // blocks of g (rotate_slots_), rotated inside each block by r's local index, so that the rank
  // one local index further on holds the next channel in the same position (local_symmetry).
  std::uint16_t channel_of_slot(Rank r, std::uint64_t slot) const {
    if (!rotate_slots_) return static_cast<std::uint16_t>(slot);
    return static_cast<std::uint16_t>(slot - slot % g_ + (slot % g_ + r % g_) % g_);
  }

  // Program index of op `which` of step `step` of the unit of x (step major, channel minor).
  OpIndex at(const Ctx& x, std::int64_t step, std::uint64_t which) const {
    return x.base + static_cast<OpIndex>(static_cast<std::uint64_t>(step) * per_row_ + which);
  }

  // Piece of block b handled by (channel, iteration): the block's channel slice, then the
  // iteration's part of it.
  Span piece(std::uint64_t b, const Ctx& x) const {
    const bool big = b < extra_;
    const Span slice = slices_[big][x.ch];
    const Span in_block = k_ == 1 ? slice : slice.part(k_, x.k);
    return {q_ * b + (big ? b : extra_) + in_block.first, in_block.count};
  }
  BufferRange bytes(Buffer buf, Span s) const { return elems(buf, s.first, s.count, es_); }
  Rank mod(std::int64_t v) const {
    const auto n = static_cast<std::int64_t>(n_);
    return static_cast<Rank>(((v % n) + n) % n);
  }
  Rank rank_at(const Ctx& x, std::int64_t pos) const { return rank_at_position(x.ch, mod(pos)); }

  // Ring order of channel ch: the shared rotated order, or on a mesh the channel's own walk.
  Rank rank_at_position(std::uint16_t ch, Rank pos) const {
    if (!spec_.mesh_rings) return ring_rank_at(n_, spec_.ranks_per_node, ch, pos);
    const Rank node = pos / g_, j = pos % g_;
    const std::uint64_t row = (ch % mesh_channels_) * g_;
    return node * g_ + mesh_local_[row + (node % 2 == 0 || n_ == g_ ? j : g_ - 1 - j)];
  }
  Rank position_of(std::uint16_t ch, Rank rank) const {
    if (!spec_.mesh_rings) return ring_position_of(n_, spec_.ranks_per_node, ch, rank);
    const Rank node = rank / g_;
    const Rank j = mesh_position_[(ch % mesh_channels_) * g_ + rank % g_];
    return node * g_ + (node % 2 == 0 || n_ == g_ ? j : g_ - 1 - j);
  }

  // Channel c walks cycle c mod C of an edge-disjoint decomposition of the node's complete
  // directed graph, starting at local GPU c mod g (as the rotated order does), so consecutive
  // nodes still meet on the same local index; odd nodes walk it backwards.
  void build_mesh_orders() {
    const std::vector<std::vector<std::uint32_t>>& cycles =
        spec_.node_cycles.empty() ? mesh_cycles(g_) : spec_.node_cycles;
    for (const std::vector<std::uint32_t>& cycle : cycles)
      if (cycle.size() != g_)
        throw InputError("node_cycles", "a node cycle must visit each of the node's GPUs once");
    mesh_channels_ = cycles.size() * g_;
    mesh_local_.resize(mesh_channels_ * g_);
    mesh_position_.resize(mesh_channels_ * g_);
    for (std::uint64_t c = 0; c < mesh_channels_; ++c) {
      const std::vector<std::uint32_t>& cycle = cycles[c % cycles.size()];
      // The complete graph's g - 1 cycles and g starts are coprime: c mod each takes every
      // (cycle, start) pair once in g (g - 1) channels. Given cycles (a wired mesh's) need not
      // be, so their channel c starts at GPU (c / cycles) mod g.
      const std::uint64_t first = spec_.node_cycles.empty() ? c % g_ : c / cycles.size() % g_;
      const auto start =
          static_cast<std::uint64_t>(std::find(cycle.begin(), cycle.end(), first) - cycle.begin());
      for (std::uint64_t j = 0; j < g_; ++j) {
        const std::uint32_t local = cycle[(start + j) % g_];
        mesh_local_[c * g_ + j] = local;
        mesh_position_[c * g_ + local] = static_cast<std::uint32_t>(j);
      }
    }
  }

  Op prefix_op(Rank r) const {
    const Span own{block_start(e_, n_, r), block_size(e_, n_, r)};
    if (spec_.op == CollectiveOp::AllGather)
      return make_copy(bytes(Buffer::Input, {0, own.count}), bytes(Buffer::Output, own));
    return make_copy(bytes(Buffer::Input, own), bytes(Buffer::Output, {0, own.count}));
  }

  // Block numbers are positions (all blocks are alike in an all-reduce).
  Op all_reduce(const Ctx& x, std::uint64_t w) const {
    const std::int64_t s = static_cast<std::int64_t>(w / 2), p = x.pos, n1 = n_ - 1;
    const bool send = w % 2 == 0;
    Op op;
    if (s < n1) {  // reduce-scatter: send block p-s, reduce block p-s-1 into place
      op = send ? make_send(x.next, bytes(Buffer::Input, piece(mod(p - s), x)), x.ch)
                : make_recv(x.prev, bytes(Buffer::Input, piece(mod(p - s - 1), x)),
                            RecvMode::Reduce, x.ch);
    } else {  // all-gather: t = s - (n-1); send block p+1-t, receive block p-t
      const std::int64_t t = s - n1;
      op = send ? make_send(x.next, bytes(Buffer::Input, piece(mod(p + 1 - t), x)), x.ch)
                : make_recv(x.prev, bytes(Buffer::Input, piece(mod(p - t), x)), RecvMode::Copy,
                            x.ch);
      // The copy overwrites block p-t, which this rank sent at reduce-scatter step t.
      if (!send) op.add_dep(at(x, t, 0));
    }
    // Each send forwards what the previous step received.
    if (send && s > 0) op.add_dep(at(x, s - 1, 1));
    return op;
  }

  // Block numbers are ranks (the output layout is by rank).
  Op all_gather(const Ctx& x, std::uint64_t w) const {
    const std::int64_t t = static_cast<std::int64_t>(w / 2), p = x.pos;
    if (w % 2 == 1) {
      return make_recv(x.prev, bytes(Buffer::Output, piece(rank_at(x, p - t - 1), x)),
                       RecvMode::Copy, x.ch);
    }
    if (t == 0) {
      const Span own = piece(x.rank, x);
      return make_send(
          x.next, bytes(Buffer::Input, {own.first - block_start(e_, n_, x.rank), own.count}), x.ch);
    }
    Op op = make_send(x.next, bytes(Buffer::Output, piece(rank_at(x, p - t), x)), x.ch);
    op.add_dep(at(x, t - 1, 1));
    return op;
  }

  // Step s sends the partial sum of block rank(p-s-1) and receives block rank(p-s-2), adding
  // this rank's input to it; the last received block is the rank's own and goes to Output.
  Op reduce_scatter(const Ctx& x, std::uint64_t w) const {
    const std::int64_t s = static_cast<std::int64_t>(w / 3), p = x.pos;
    const auto idx = [&](std::int64_t step, std::uint64_t which) { return at(x, step, which); };
    if (w % 3 == 0) {
      const Span blk = piece(rank_at(x, p - s - 1), x);
      Op op = make_send(x.next, bytes(s == 0 ? Buffer::Input : Buffer::Scratch, blk), x.ch);
      if (s > 0) op.add_dep(idx(s - 1, 2));
      return op;
    }
    const Rank owner = rank_at(x, p - s - 2);
    const Span blk = piece(owner, x);
    const bool last = s == static_cast<std::int64_t>(n_) - 2;
    const BufferRange dst =
        last ? bytes(Buffer::Output, {blk.first - block_start(e_, n_, owner), blk.count})
             : bytes(Buffer::Scratch, blk);
    if (w % 3 == 1) return make_recv(x.prev, dst, RecvMode::Copy, x.ch);
    Op op = make_reduce(bytes(Buffer::Input, blk), dst);
    op.add_dep(idx(s, 1));
    return op;
  }

  CollectiveSpec spec_;
  std::uint64_t n_, c_, e_, es_ = 1, k_ = 1;
  std::uint64_t q_ = 0, extra_ = 0;
  std::vector<Span> slices_[2];  // channel slice of a block of q (0) or q + 1 (1) elements
  std::uint64_t prefix_ = 0;
  std::uint64_t per_step_ = 2;       // ops of one step of one channel
  std::uint64_t steps_ = 0;          // steps of one iteration
  std::uint64_t per_row_ = 0;        // ops of one step of all channels: per_step_ x channels
  std::uint64_t per_iteration_ = 0;  // steps_ x per_row_
  std::uint64_t g_ = 1;              // ranks per node
  bool rotate_slots_ = false;        // channel_of_slot rotates by the local index
  std::uint64_t mesh_channels_ = 1;  // distinct mesh walks: cycles x start GPUs
  std::vector<std::uint32_t> mesh_local_, mesh_position_;  // [walk * g + j], [walk * g + local]
};

}  // namespace

// Hamiltonian cycles of a g-GPU mesh (as local indices), computed once per g: the g - 1
// edge-disjoint cycles that cover every directed pair when the search finds them (Tillson 1980:
// they exist for every g except 4 and 6), else the rotations r -> r + k with gcd(k, g) = 1.
const std::vector<std::vector<std::uint32_t>>& mesh_cycles(std::uint64_t g64) {
  static std::mutex mutex;
  static std::map<std::uint32_t, std::vector<std::vector<std::uint32_t>>> cache;
  const auto g = static_cast<std::uint32_t>(g64);
  const std::lock_guard<std::mutex> lock(mutex);
  auto [it, inserted] = cache.try_emplace(g);
  if (!inserted) return it->second;
  if (g >= 3 && g <= 16 && g != 4 && g != 6) {
    CycleSearch search(g, g - 1);
    if (search.run()) return it->second = std::move(search.cycles);
  }
  for (std::uint32_t k = 1; k < std::max<std::uint32_t>(g, 2); ++k) {
    if (std::gcd(k, g) != 1) continue;
    std::vector<std::uint32_t> cycle(g);
    for (std::uint32_t j = 0; j < g; ++j) cycle[j] = static_cast<std::uint32_t>(j * k % g);
    it->second.push_back(std::move(cycle));
  }
  if (it->second.empty()) it->second.push_back(std::vector<std::uint32_t>(g, 0));
  return it->second;
}

std::unique_ptr<ProgramSet> make_ring(const CollectiveSpec& spec) {
  return std::make_unique<RingProgramSet>(spec);
}

}  // namespace lockstep::collective_detail
