// Logarithmic all-gather and reduce-scatter for large scale, our stand-in for NCCL's PAT
// ("parallel aggregated trees", NCCL 2.23, used at one GPU per node): a Bruck-style algorithm
// with ceil(log2 n) steps for any n and (n-1)/n x S bytes per rank, the volume and latency
// profile of PAT. NCCL's exact aggregation order and its bounded intermediate buffers are not
// modelled.
//
// All-gather (Bruck et al. 1997): at step k (d = 2^k) rank r sends the blocks it holds,
// r .. r + cnt - 1 (mod n) with cnt = min(d, n - d), to rank r - d and receives blocks
// r + d .. r + d + cnt - 1 from rank r + d. After the steps it holds all n blocks. Blocks are
// written straight to their place in Output; a run of blocks that wraps past n - 1 becomes two
// spans, split identically by sender and receiver.
// Reduce-scatter is the transpose: steps in reverse order, rank r sends the partial sums of
// blocks r + d .. r + d + cnt - 1 to rank r + d and reduces the partial sums of blocks
// r .. r + cnt - 1 received from rank r - d. Partial sums live in a Scratch copy of the input.
#include <vector>

#include "generated.hpp"

namespace lockstep::collective_detail {
namespace {

class PatProgramSet final : public GeneratedProgramSet {
 public:
  explicit PatProgramSet(const CollectiveSpec& s)
      : GeneratedProgramSet(s, std::string(to_string(s.op)) + "/pat") {}
  BufferSizes buffers(Rank r) const override {
    BufferSizes b = standard_buffers(spec(), r);
    if (spec().op == CollectiveOp::ReduceScatter) b.scratch = b.input;
    return b;
  }

 protected:
  void generate(Rank r, ProgramBuilder& b) const override {
    const CollectiveSpec& s = spec();
    const Rank n = s.ranks;
    const std::uint64_t e = s.elements();
    const Span own{block_start(e, n, r), block_size(e, n, r)};
    std::vector<std::uint64_t> dists;
    for (std::uint64_t d = 1; d < n; d *= 2) dists.push_back(d);
    if (s.op == CollectiveOp::AllGather) {
      OpIndex prev =
          b.add(make_copy(b.range(Buffer::Input, {0, own.count}), b.range(Buffer::Output, own)));
      for (std::uint64_t d : dists) {
        const std::uint64_t cnt = std::min(d, n - d);
        const Rank to = static_cast<Rank>((r + n - d) % n), from = static_cast<Rank>((r + d) % n);
        transfer(b, to, Buffer::Output, r, cnt, false, {prev});
        prev = transfer(b, from, Buffer::Output, (r + d) % n, cnt, true, {prev});
      }
      return;
    }
    const Span all{0, e};
    OpIndex prev = b.add(make_copy(b.range(Buffer::Input, all), b.range(Buffer::Scratch, all)));
    for (std::size_t k = dists.size(); k-- > 0;) {
      const std::uint64_t d = dists[k], cnt = std::min(d, n - d);
      const Rank to = static_cast<Rank>((r + d) % n), from = static_cast<Rank>((r + n - d) % n);
      transfer(b, to, Buffer::Scratch, (r + d) % n, cnt, false, {prev});
      prev = transfer(b, from, Buffer::Scratch, r, cnt, true, {prev});
    }
    b.add(make_copy(b.range(Buffer::Scratch, own), b.range(Buffer::Output, {0, own.count})),
          {prev});
  }

 private:
  // Sends (or receives: copy for all-gather, reduce for reduce-scatter) blocks first .. first +
  // cnt - 1 (mod n) of `buf`, as at most two contiguous spans, each split over the channels.
  // Returns one op that completes after all of them.
  OpIndex transfer(ProgramBuilder& b, Rank peer, Buffer buf, std::uint64_t first, std::uint64_t cnt,
                   bool receive, std::initializer_list<OpIndex> deps) const {
    const CollectiveSpec& s = spec();
    const std::uint64_t n = s.ranks, e = s.elements();
    const OpIndex after = b.join(std::vector<OpIndex>(deps));
    const RecvMode mode = s.op == CollectiveOp::AllGather ? RecvMode::Copy : RecvMode::Reduce;
    std::vector<OpIndex> ops;
    const auto run = [&](std::uint64_t lo, std::uint64_t hi) {  // blocks [lo, hi)
      const Span span{block_start(e, n, lo), block_start(e, n, hi) - block_start(e, n, lo)};
      for (std::uint16_t c = 0; c < s.channels; ++c) {
        const Span part = span.part(s.channels, c);
        ops.push_back(receive ? b.recv(peer, buf, part, mode, c, {after})
                              : b.send(peer, buf, part, c, {after}));
      }
    };
    if (first + cnt <= n) {
      run(first, first + cnt);
    } else {
      run(first, n);
      run(0, first + cnt - n);
    }
    return b.join(ops);
  }
};

}  // namespace

std::unique_ptr<ProgramSet> make_pat(const CollectiveSpec& spec) {
  return std::make_unique<PatProgramSet>(spec);
}

}  // namespace lockstep::collective_detail
