// Recursive halving-doubling (Rabenseifner) and recursive doubling, with the standard handling
// of a rank count n that is not a power of two (Thakur, Rabenseifner, Gropp 2005): with
// P = 2^floor(log2 n) and rem = n - P, the first 2 x rem ranks pair up; each even rank of a pair
// hands its data to its odd neighbour (the "fold") and sits out, the P remaining ranks run the
// power-of-two algorithm as virtual ranks 0..P-1, and the odd ranks hand the result back.
//
// Data is cut into n blocks (one per real rank); virtual rank v owns the blocks of the real
// ranks it stands for ({2v, 2v+1} for v < rem, else {v + rem}), which are contiguous, so every
// range of virtual ranks is one contiguous span of the buffer.
//   halving (reduce-scatter): step j pairs v with v ^ (P >> (j+1)); each keeps the half of its
//     current range that contains its own blocks, sends the other half and reduces the half it
//     keeps. After log2 P steps v holds the sum of its own blocks. All-reduce pairs v with
//     v ^ 2^j instead (nearest first, so that only the smallest exchanges cross nodes) and keeps
//     the lower half when bit j of v is 0.
//   doubling (all-gather): the same pairs in reverse order; each sends what it has, receives the
//     partner's part, and the held range doubles.
// all_reduce = halving + doubling in place; reduce_scatter works on a Scratch copy of the input;
// all_gather works in Output. Recursive doubling all_reduce exchanges the whole buffer with
// v ^ 2^j for j = 0..log2 P - 1 (log2 n steps, n log n x S bytes in total: a latency-optimal
// small-message algorithm). Barrier is the dissemination barrier: round k sends a zero-byte
// message to r + 2^k and receives from r - 2^k (mod n), ceil(log2 n) rounds, any n.
// Every span is split across channels (part c of each span on channel c).
#include <vector>

#include "generated.hpp"

namespace lockstep::collective_detail {
namespace {

class DoublingProgramSet final : public GeneratedProgramSet {
 public:
  explicit DoublingProgramSet(const CollectiveSpec& s)
      : GeneratedProgramSet(s, std::string(to_string(s.op)) + "/" + to_string(s.algorithm)) {
    p_ = 1;
    while (p_ * 2 <= s.ranks) p_ *= 2;
    rem_ = s.ranks - p_;
  }
  BufferSizes buffers(Rank r) const override {
    BufferSizes b = standard_buffers(spec(), r);
    if (spec().op == CollectiveOp::ReduceScatter) b.scratch = b.input;
    return b;
  }

 private:
  using Deps = std::vector<OpIndex>;

  Rank real(std::uint64_t v) const { return static_cast<Rank>(v < rem_ ? 2 * v + 1 : v + rem_); }
  // Span of the blocks of virtual ranks [a, b).
  Span vspan(std::uint64_t a, std::uint64_t b) const {
    const std::uint64_t e = spec().elements(), n = spec().ranks;
    const std::uint64_t lo = a < rem_ ? 2 * a : a + rem_;
    const std::uint64_t hi = b - 1 < rem_ ? 2 * (b - 1) + 2 : b - 1 + rem_ + 1;
    const std::uint64_t first = block_start(e, n, lo);
    return {first, block_start(e, n, hi) - first};
  }
  Span block(Rank r) const {
    const std::uint64_t e = spec().elements(), n = spec().ranks;
    return {block_start(e, n, r), block_size(e, n, r)};
  }

  // Sends `span` of `buf` on every channel; returns the ops.
  Deps send(ProgramBuilder& b, Rank peer, Buffer buf, Span span, const Deps& deps) const {
    Deps out;
    const OpIndex d = b.join(deps);
    for (std::uint16_t c = 0; c < spec().channels; ++c)
      out.push_back(b.send(peer, buf, span.part(spec().channels, c), c, {d}));
    return out;
  }
  Deps recv(ProgramBuilder& b, Rank peer, Buffer buf, Span span, RecvMode m,
            const Deps& deps) const {
    Deps out;
    const OpIndex d = b.join(deps);
    for (std::uint16_t c = 0; c < spec().channels; ++c)
      out.push_back(b.recv(peer, buf, span.part(spec().channels, c), m, c, {d}));
    return out;
  }

 protected:
  void generate(Rank r, ProgramBuilder& b) const override {
    const CollectiveSpec& s = spec();
    if (s.op == CollectiveOp::Barrier) return dissemination(r, b);
    const Span all{0, s.elements()};
    const bool rs = s.op != CollectiveOp::AllGather, ag = s.op != CollectiveOp::ReduceScatter;
    const Buffer w = s.op == CollectiveOp::AllReduce       ? Buffer::Input
                     : s.op == CollectiveOp::ReduceScatter ? Buffer::Scratch
                                                           : Buffer::Output;
    const auto own_copy = [&]() -> OpIndex {
      if (s.op == CollectiveOp::ReduceScatter)
        return b.add(make_copy(b.range(Buffer::Input, all), b.range(Buffer::Scratch, all)));
      if (s.op == CollectiveOp::AllGather)
        return b.add(make_copy(b.range(Buffer::Input, {0, block(r).count}),
                               b.range(Buffer::Output, block(r))));
      return kNoOp;
    };
    if (s.ranks == 1) {
      if (s.op == CollectiveOp::ReduceScatter)
        b.add(make_copy(b.range(Buffer::Input, all), b.range(Buffer::Output, all)));
      else
        own_copy();
      return;
    }
    // Fold: even ranks below 2 x rem hand over their data and wait for the result.
    if (r < 2 * rem_ && r % 2 == 0) {
      if (s.op == CollectiveOp::AllReduce) {
        const Deps sent = send(b, r + 1, Buffer::Input, all, {});
        recv(b, r + 1, Buffer::Input, all, RecvMode::Copy, sent);
      } else if (s.op == CollectiveOp::ReduceScatter) {
        send(b, r + 1, Buffer::Input, all, {});
        recv(b, r + 1, Buffer::Output, {0, block(r).count}, RecvMode::Copy, {});
      } else {
        const OpIndex c0 = own_copy();
        send(b, r + 1, Buffer::Input, {0, block(r).count}, {});
        recv(b, r + 1, Buffer::Output, all, RecvMode::Copy, {c0});
      }
      return;
    }
    Deps prev{own_copy()};
    if (r < 2 * rem_) {
      prev = s.op == CollectiveOp::AllGather
                 ? recv(b, r - 1, Buffer::Output, block(r - 1), RecvMode::Copy, prev)
                 : recv(b, r - 1, w, all, RecvMode::Reduce, prev);
    }
    const std::uint64_t v = r < 2 * rem_ ? r / 2 : r - rem_;
    if (s.algorithm == Algorithm::RecursiveDoubling) {
      for (std::uint64_t d = 1; d < p_; d *= 2) {
        const Rank peer = real(v ^ d);
        const Deps sent = send(b, peer, w, all, prev);
        prev = recv(b, peer, w, all, RecvMode::Reduce, sent);
      }
    } else {
      halving_doubling(b, v, w, rs, ag, prev);
    }
    // Unfold: give the folded neighbour its result.
    if (r < 2 * rem_) {
      if (s.op == CollectiveOp::ReduceScatter)
        send(b, r - 1, Buffer::Scratch, block(r - 1), prev);
      else
        send(b, r - 1, w, all, prev);
    }
    if (s.op == CollectiveOp::ReduceScatter)
      b.add(make_copy(b.range(Buffer::Scratch, block(r)),
                      b.range(Buffer::Output, {0, block(r).count})),
            prev);
  }

  void halving_doubling(ProgramBuilder& b, std::uint64_t v, Buffer w, bool rs, bool ag,
                        Deps& prev) const {
    // Ranges kept (K) and given away (G) at each halving step.
    std::vector<std::pair<std::uint64_t, std::uint64_t>> keep, give;
    // All-reduce pairs nearest ranks first (distance 1, 2, 4, ...): with node-major ranks the
    // big early exchanges stay inside a node and only the last, smallest ones cross the
    // network, each on the rank's own rail. v then ends holding the virtual block bitrev(v),
    // which the all-gather returns to everyone. Reduce-scatter and all-gather alone must end
    // (start) with block v, so they pair farthest first (P/2, P/4, ...).
    const bool nearest_first = rs && ag;
    const auto distance = [&](std::size_t j) {
      return nearest_first ? std::uint64_t{1} << j : p_ >> (j + 1);
    };
    std::uint64_t lo = 0, hi = p_;
    for (std::size_t j = 0; distance(j) >= 1 && distance(j) < p_; ++j) {
      const std::uint64_t d = distance(j);
      const std::uint64_t mid = lo + (hi - lo) / 2;
      if ((v & d) == 0) {
        keep.emplace_back(lo, mid);
        give.emplace_back(mid, hi);
        hi = mid;
      } else {
        keep.emplace_back(mid, hi);
        give.emplace_back(lo, mid);
        lo = mid;
      }
    }
    const std::size_t steps = keep.size();
    std::vector<Deps> rs_sends(steps);
    const auto peer = [&](std::size_t j) { return real(v ^ distance(j)); };
    if (rs) {
      for (std::size_t j = 0; j < steps; ++j) {
        rs_sends[j] = send(b, peer(j), w, vspan(give[j].first, give[j].second), prev);
        prev = recv(b, peer(j), w, vspan(keep[j].first, keep[j].second), RecvMode::Reduce, prev);
      }
    }
    if (ag) {
      for (std::size_t j = steps; j-- > 0;) {
        send(b, peer(j), w, vspan(keep[j].first, keep[j].second), prev);
        // The copy overwrites the range this rank gave away at halving step j; chaining the
        // receives makes each send below depend on everything gathered so far.
        Deps before = prev;
        if (rs) before.insert(before.end(), rs_sends[j].begin(), rs_sends[j].end());
        prev = recv(b, peer(j), w, vspan(give[j].first, give[j].second), RecvMode::Copy, before);
      }
    }
  }

  void dissemination(Rank r, ProgramBuilder& b) const {
    const Rank n = spec().ranks;
    OpIndex prev = kNoOp;
    for (std::uint64_t d = 1; d < n; d *= 2) {
      const OpIndex sent = b.send(static_cast<Rank>((r + d) % n), Buffer::Input, {0, 0}, 0, {prev});
      prev = b.recv(static_cast<Rank>((r + n - d % n) % n), Buffer::Input, {0, 0}, RecvMode::Copy,
                    0, {sent});
    }
  }

  std::uint64_t p_ = 1, rem_ = 0;
};

}  // namespace

std::unique_ptr<ProgramSet> make_halving_doubling(const CollectiveSpec& spec) {
  return std::make_unique<DoublingProgramSet>(spec);
}
std::unique_ptr<ProgramSet> make_recursive_doubling(const CollectiveSpec& spec) {
  return std::make_unique<DoublingProgramSet>(spec);
}

}  // namespace lockstep::collective_detail
