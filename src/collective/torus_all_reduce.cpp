// Torus all-reduce as a lazy ProgramSet: the multi-colour bucket algorithm (Chan, Heimlich,
// Purkayastha, van de Geijn, "Collective communication: theory, practice, and experience",
// CCPE 2007, section 7 on multidimensional meshes; Jain and Sabharwal, "Optimal bucket
// algorithms for large MPI collectives on torus interconnects", ICS 2010, for the colours that
// keep every link of a torus busy at once).
//
// With D dimensions of size >= 2, the buffer is cut into 2D colours (x channels) of S / 2D.
// Colour (i, sigma) reduce-scatters its slice along the dimensions in the rotated order i, i + 1,
// ..., i - 1 (a ring per line of the torus, sending in direction sigma), each phase on the part
// the previous one left (S / 2D, then / size_0, ...), then all-gathers back in the reverse order.
// At any step the colours starting at different dimensions use different dimensions and the two
// directions opposite links, so with equal sizes each directed link carries one colour: every
// one of a GPU's 2D links is busy. Per directed link of a k x k x k torus: 2 (k-1)/k x S/6 x (1 +
// 1/k + 1/k^2) bytes (21/64 S at k = 4), the all-reduce lower bound 2 (n-1)/n S / 6 links.
//
// Rank program layout: global step major (2 sum(size - 1) steps, the same for every colour),
// then unit (colour x channel), then [send, recv]. A colour's phases fall on different global
// steps than another's when the sizes differ; each op finds its own (phase, step) in a table.
#include <algorithm>
#include <vector>

#include "lockstep/core/error.hpp"
#include "torus.hpp"

namespace lockstep::collective_detail {

std::vector<TorusDim> torus_rings(const CollectiveSpec& spec) {
  std::vector<std::uint32_t> dims = spec.torus_dims;
  if (dims.empty()) dims.push_back(spec.ranks);
  std::vector<TorusDim> out;
  std::uint64_t stride = 1;
  for (std::uint32_t d : dims) {
    if (d >= 2) out.push_back({d, stride});
    stride *= d;
  }
  return out;
}

namespace {

// A global step as one dimension order sees it.
struct StepInfo {
  bool gather = false;         // all-gather half (else reduce-scatter)
  std::uint32_t phase = 0;     // index into the order
  std::uint32_t t = 0;         // step inside the phase
  std::uint32_t rs_first = 0;  // global step where this phase's reduce-scatter began
};

class TorusAllReduce final : public ProgramSet {
 public:
  explicit TorusAllReduce(const CollectiveSpec& spec)
      : spec_(spec), dims_(torus_rings(spec)), e_(spec.elements()), es_(size_of(spec.type)) {
    const std::size_t d = dims_.size();
    units_ = 2 * d * spec.channels;
    std::uint64_t half = 0;
    for (const TorusDim& dim : dims_) half += dim.size - 1;
    steps_ = 2 * half;
    for (std::size_t i = 0; i < d; ++i) {
      std::vector<std::uint32_t> order(d);
      for (std::size_t p = 0; p < d; ++p) order[p] = static_cast<std::uint32_t>((i + p) % d);
      std::vector<StepInfo> table;
      std::vector<std::uint32_t> rs_first(d);
      for (std::uint32_t p = 0; p < d; ++p) {
        rs_first[p] = static_cast<std::uint32_t>(table.size());
        for (std::uint32_t t = 0; t + 1 < dims_[order[p]].size; ++t)
          table.push_back({false, p, t, 0});
      }
      for (std::uint32_t p = static_cast<std::uint32_t>(d); p-- > 0;)
        for (std::uint32_t t = 0; t + 1 < dims_[order[p]].size; ++t)
          table.push_back({true, p, t, rs_first[p]});
      for (std::size_t g = 0; g < table.size(); ++g)
        if (table[g].t == 0) boundaries_.push_back(static_cast<std::uint32_t>(g));
      orders_.push_back(std::move(order));
      tables_.push_back(std::move(table));
    }
    boundaries_.push_back(static_cast<std::uint32_t>(steps_));
    std::sort(boundaries_.begin(), boundaries_.end());
    boundaries_.erase(std::unique(boundaries_.begin(), boundaries_.end()), boundaries_.end());
    // Every colour, channel and nested part the same size: what symmetry and periods need.
    std::uint64_t n = 1;
    for (const TorusDim& dim : dims_) n *= dim.size;
    even_ = units_ > 0 && e_ % (units_ * n) == 0;
  }

  Rank num_ranks() const override { return spec_.ranks; }
  OpIndex num_ops(Rank) const override { return static_cast<OpIndex>(steps_ * units_ * 2); }
  BufferSizes buffers(Rank r) const override { return standard_buffers(spec_, r); }
  DataType data_type() const override { return spec_.type; }
  std::string label() const override { return "all_reduce/torus_ring"; }
  Lookahead lookahead() const override { return Lookahead::Step; }
  OpIndex longest_program() const override { return num_ops(0); }

  // Moving every rank one step along the outermost ring maps the torus onto itself.
  Rank symmetry_period() const override {
    if (!even_ || dims_.empty()) return 0;
    return static_cast<Rank>(dims_.back().stride);
  }

  // Between two global steps at which some colour starts a phase, every step repeats the one
  // before it (same dimension and direction per colour, dependencies one step further on).
  PeriodicRegion periodic_region(Rank, OpIndex i) const override {
    if (!even_) return {};
    const auto g = static_cast<std::uint32_t>(i / (units_ * 2));
    const auto next = std::upper_bound(boundaries_.begin(), boundaries_.end(), g);
    const std::uint32_t first = *(next - 1) + 1, end = *next;
    if (g < first || end - first < 2) return {};
    const auto row = static_cast<OpIndex>(units_ * 2);
    return {static_cast<OpIndex>(first * row), row, static_cast<OpIndex>(end - first)};
  }

  Op op(Rank r, OpIndex i) const override {
    const std::uint64_t row = units_ * 2;
    const std::uint64_t g = i / row, u = i % row / 2;
    const bool send = i % 2 == 0;
    const std::uint64_t colour = u / spec_.channels;
    const std::vector<std::uint32_t>& order = orders_[colour / 2];
    const StepInfo& st = tables_[colour / 2][g];
    // The slice of this unit, narrowed by the phases before this one to the rank's part.
    Span range = Span{0, e_}.part(units_, u);
    for (std::uint32_t q = 0; q < st.phase; ++q) {
      const TorusDim& d = dims_[order[q]];
      range = range.part(d.size, coord_of(r, d));
    }
    const TorusDim& dim = dims_[order[st.phase]];
    const TorusRingStep ring(r, dim, colour % 2 == 0 ? 1 : -1);
    const auto t = static_cast<std::int64_t>(st.t);
    const auto part = [&](std::uint64_t j) {
      const Span s = range.part(dim.size, j);
      return elems(Buffer::Input, s.first, s.count, es_);
    };
    const auto at = [&](std::uint64_t step, std::uint64_t which) {
      return static_cast<OpIndex>(step * row + u * 2 + which);
    };
    const auto ch = static_cast<std::uint16_t>(u);
    Op op;
    if (!st.gather) {
      op = send ? make_send(ring.next, part(ring.rs_send(t)), ch)
                : make_recv(ring.prev, part(ring.rs_recv(t)), RecvMode::Reduce, ch);
      // A send forwards what the step before reduced; a receive adds into the part this rank
      // summed in the phase before (its last receive), or the chain of receives since.
      if (g > 0) op.add_dep(at(g - 1, 1));
      return op;
    }
    op = send ? make_send(ring.next, part(ring.ag_send(t)), ch)
              : make_recv(ring.prev, part(ring.ag_recv(t)), RecvMode::Copy, ch);
    op.add_dep(at(g - 1, 1));
    // The copy overwrites the part this rank sent at the same step of the reduce-scatter (its
    // sum cannot arrive before that send, but the dependency says so, as ring.cpp does).
    if (!send) op.add_dep(at(st.rs_first + st.t, 0));
    return op;
  }

 private:
  CollectiveSpec spec_;
  std::vector<TorusDim> dims_;
  std::uint64_t e_, es_;
  std::uint64_t units_ = 0, steps_ = 0;
  std::vector<std::vector<std::uint32_t>> orders_;  // per colour pair: dimension order
  std::vector<std::vector<StepInfo>> tables_;       // per order: global step -> phase, step
  std::vector<std::uint32_t> boundaries_;           // steps where some colour starts a phase
  bool even_ = false;
};

}  // namespace

std::unique_ptr<ProgramSet> make_torus_all_reduce(const CollectiveSpec& spec) {
  return std::make_unique<TorusAllReduce>(spec);
}

std::unique_ptr<ProgramSet> make_torus_ring(const CollectiveSpec& spec) {
  if (spec.op == CollectiveOp::AllReduce) return make_torus_all_reduce(spec);
  return make_torus_gather(spec);
}

}  // namespace lockstep::collective_detail
