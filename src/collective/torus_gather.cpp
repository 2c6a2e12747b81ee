// Torus all-gather and reduce-scatter as a lazy ProgramSet: the bucket algorithm dimension by
// dimension (Chan et al., CCPE 2007, section 7), each ring run in both directions at once (half
// of every part each way). The output layout is by rank, and only one dimension order keeps the
// parts contiguous in it: reduce-scatter takes the outermost dimension first (the rank then holds
// the blocks of its plane, then of its line, then its own block), all-gather the innermost first
// (its line, its plane, everything). The all-reduce's rotated orders (torus_all_reduce.cpp) would
// need a part made of blocks strided across the buffer: one op per block. So these use two of a
// GPU's 2D links at a time: a phase on a dimension of size m moves (m - 1) / m of its parts, half
// each way.
//
// Units are (direction, channel); a phase's part is split among all units, so the next phase's
// units read what every unit of this one wrote: a join (zero-length compute ops) on the last op
// of every unit separates phases. Rank program layout:
//   all_gather     copy(own block -> output), then per phase [joins] (size - 1) steps x units x
//                  [send, recv]
//   reduce_scatter per phase [joins] (size - 1) steps x units x ops: phase 0 [send, recv into
//                  Scratch, reduce own input into it] (the input stays intact), later phases
//                  [send, recv reducing into Scratch]; then [joins] copy(Scratch block -> output)
#include <algorithm>
#include <vector>

#include "lockstep/core/error.hpp"
#include "torus.hpp"

namespace lockstep::collective_detail {
namespace {

class TorusGather final : public ProgramSet {
 public:
  explicit TorusGather(const CollectiveSpec& spec)
      : spec_(spec), dims_(torus_rings(spec)), n_(spec.ranks), e_(spec.elements()) {
    es_ = size_of(spec.type);
    rs_ = spec.op == CollectiveOp::ReduceScatter;
    // Outermost first for reduce-scatter, innermost first for all-gather.
    if (rs_) std::reverse(dims_.begin(), dims_.end());
    units_ = 2 * spec.channels;
    joins_ = units_ <= kMaxDeps ? 1 : 1 + (units_ - kMaxDeps + kMaxDeps - 2) / (kMaxDeps - 1);
    std::uint64_t at = rs_ ? 0 : 1;  // all-gather's own-block copy
    for (std::size_t p = 0; p < dims_.size(); ++p) {
      Phase ph;
      ph.joins = p > 0 ? joins_ : 0;
      ph.per_step = rs_ && p == 0 ? 3 : 2;
      ph.first = at;
      ph.steps_first = at + ph.joins;
      at = ph.steps_first + (dims_[p].size - 1) * units_ * ph.per_step;
      phases_.push_back(ph);
    }
    if (rs_) {
      suffix_ = at;
      at += dims_.empty() ? 0 : joins_;
      at += 1;  // the copy of the own block to Output
    }
    ops_ = at;
    even_ = e_ % (n_ * units_) == 0;
  }

  Rank num_ranks() const override { return static_cast<Rank>(n_); }
  OpIndex num_ops(Rank) const override { return static_cast<OpIndex>(ops_); }
  BufferSizes buffers(Rank r) const override {
    BufferSizes b = standard_buffers(spec_, r);
    if (rs_) b.scratch = e_ * es_;
    return b;
  }
  DataType data_type() const override { return spec_.type; }
  std::string label() const override { return std::string(to_string(spec_.op)) + "/torus_ring"; }
  Lookahead lookahead() const override { return Lookahead::Step; }
  OpIndex longest_program() const override { return num_ops(0); }

  Rank symmetry_period() const override {
    if (!even_ || dims_.empty()) return 0;
    std::uint64_t outer = 0;
    for (const TorusDim& d : dims_) outer = std::max(outer, d.stride);
    return static_cast<Rank>(outer);
  }

  // Inside a phase, step t + 1 repeats step t from t = 1 on.
  PeriodicRegion periodic_region(Rank, OpIndex i) const override {
    if (!even_) return {};
    for (std::size_t p = 0; p < dims_.size(); ++p) {
      const Phase& ph = phases_[p];
      const std::uint64_t row = units_ * ph.per_step, steps = dims_[p].size - 1;
      if (i < ph.steps_first + row || i >= ph.steps_first + steps * row) continue;
      if (steps - 1 < 2) return {};
      return {static_cast<OpIndex>(ph.steps_first + row), static_cast<OpIndex>(row),
              static_cast<OpIndex>(steps - 1)};
    }
    return {};
  }

  Op op(Rank r, OpIndex i) const override {
    const Span own{block_start(e_, n_, r), block_size(e_, n_, r)};
    if (!rs_ && i == 0)
      return make_copy(elems(Buffer::Input, 0, own.count, es_),
                       elems(Buffer::Output, own.first, own.count, es_));
    if (rs_ && i >= suffix_) {
      if (i + 1 < ops_) return join(i - suffix_, dims_.size() - 1);
      // One rank: its input is the result.
      Op copy = make_copy(
          elems(dims_.empty() ? Buffer::Input : Buffer::Scratch, own.first, own.count, es_),
          elems(Buffer::Output, 0, own.count, es_));
      if (!dims_.empty()) copy.add_dep(static_cast<OpIndex>(ops_ - 2));
      return copy;
    }
    std::size_t p = 0;
    while (p + 1 < phases_.size() && i >= phases_[p + 1].first) ++p;
    const Phase& ph = phases_[p];
    if (i < ph.steps_first) return join(i - ph.first, p - 1);
    const std::uint64_t j = i - ph.steps_first, row = units_ * ph.per_step;
    const std::uint64_t t = j / row, u = j % row / ph.per_step, which = j % ph.per_step;
    const TorusDim& dim = dims_[p];
    const TorusRingStep ring(r, dim, u / spec_.channels == 0 ? 1 : -1);
    const auto ti = static_cast<std::int64_t>(t);
    // Part k of this phase: the blocks whose coordinate along the dimension is k and whose
    // coordinates along the dimensions outside it are the rank's; unit u's share of it.
    const std::uint64_t line = dim.stride * dim.size;
    const std::uint64_t base = r / line * line;
    const auto piece = [&](std::uint64_t k) {
      const std::uint64_t b0 = base + k * dim.stride, b1 = b0 + dim.stride;
      const std::uint64_t first = block_start(e_, n_, b0);
      return Span{first, block_start(e_, n_, b1) - first}.part(units_, u);
    };
    const auto range = [&](Buffer b, Span s) { return elems(b, s.first, s.count, es_); };
    const auto at = [&](std::uint64_t step, std::uint64_t w) {
      return static_cast<OpIndex>(ph.steps_first + step * row + u * ph.per_step + w);
    };
    // The op every unit's first step waits for: the last join, or for the first phase of an
    // all-gather the own-block copy (receives only: the first send reads the input).
    const OpIndex entry = p > 0 ? static_cast<OpIndex>(ph.steps_first - 1) : 0;
    const auto ch = static_cast<std::uint16_t>(u);
    Op op;
    if (!rs_) {
      if (which == 0) {
        const Span s = piece(ring.ag_send(ti));
        op = make_send(ring.next,
                       p == 0 && t == 0 ? range(Buffer::Input, {s.first - own.first, s.count})
                                        : range(Buffer::Output, s),
                       ch);
        if (t > 0) op.add_dep(at(t - 1, 1));
        if (t == 0 && p > 0) op.add_dep(entry);
      } else {
        op = make_recv(ring.prev, range(Buffer::Output, piece(ring.ag_recv(ti))), RecvMode::Copy,
                       ch);
        op.add_dep(t > 0 ? at(t - 1, 1) : entry);
      }
      return op;
    }
    const Span s = which == 0 ? piece(ring.rs_send(ti)) : piece(ring.rs_recv(ti));
    if (p == 0) {
      // The first phase reads the input: receive a partial sum, add the own input to it.
      if (which == 0) {
        op = make_send(ring.next, range(t == 0 ? Buffer::Input : Buffer::Scratch, s), ch);
        if (t > 0) op.add_dep(at(t - 1, 2));
      } else if (which == 1) {
        op = make_recv(ring.prev, range(Buffer::Scratch, s), RecvMode::Copy, ch);
      } else {
        op = make_reduce(range(Buffer::Input, s), range(Buffer::Scratch, s));
        op.add_dep(at(t, 1));
      }
      return op;
    }
    op = which == 0 ? make_send(ring.next, range(Buffer::Scratch, s), ch)
                    : make_recv(ring.prev, range(Buffer::Scratch, s), RecvMode::Reduce, ch);
    op.add_dep(t > 0 ? at(t - 1, 1) : entry);
    return op;
  }

 private:
  struct Phase {
    std::uint64_t joins = 0;     // join ops before the steps
    std::uint64_t per_step = 2;  // ops of one unit in one step
    std::uint64_t first = 0;     // index of the phase's first op (its joins)
    std::uint64_t steps_first = 0;
  };

  // Join k of the joins after phase p: a zero-length compute on the last op of every unit of
  // phase p, kMaxDeps at a time, each later join also on the one before it.
  Op join(std::uint64_t k, std::size_t p) const {
    const Phase& ph = phases_[p];
    const std::uint64_t row = units_ * ph.per_step, steps = dims_[p].size - 1;
    const std::uint64_t last = ph.steps_first + (steps - 1) * row;
    const OpIndex self =
        static_cast<OpIndex>((p + 1 < phases_.size() ? phases_[p + 1].first : suffix_) + k);
    Op op = make_compute(Time::zero());
    std::uint64_t u = 0;
    if (k > 0) {
      op.add_dep(self - 1);
      u = kMaxDeps + (k - 1) * (kMaxDeps - 1);
    }
    for (; u < units_ && op.num_deps < kMaxDeps; ++u)
      op.add_dep(static_cast<OpIndex>(last + u * ph.per_step + ph.per_step - 1));
    return op;
  }

  CollectiveSpec spec_;
  std::vector<TorusDim> dims_;  // in the order of the phases
  std::uint64_t n_, e_, es_ = 1;
  bool rs_ = false;
  std::uint64_t units_ = 2, joins_ = 1;
  std::vector<Phase> phases_;
  std::uint64_t suffix_ = 0;  // reduce-scatter: first op after the phases
  std::uint64_t ops_ = 0;
  bool even_ = false;
};

}  // namespace

std::unique_ptr<ProgramSet> make_torus_gather(const CollectiveSpec& spec) {
  return std::make_unique<TorusGather>(spec);
}

}  // namespace lockstep::collective_detail
