// Pipelined chain broadcast and reduce (NCCL's "ring" broadcast/reduce): the ranks form a chain
// along the channel's ring order starting at the root; the buffer is cut into chunks, and each
// rank forwards chunk k as soon as it has it, so the time is about (n-1) x chunk/B + S/B.
// Broadcast flows root -> last; reduce flows last -> root, each rank adding its own data.
#include "generated.hpp"

namespace lockstep::collective_detail {
namespace {

// NCCL's Simple protocol moves about 512 KiB per channel step (buffSize 4 MiB / 8 steps).
constexpr std::uint64_t kDefaultChunk = 512 * 1024;

class ChainProgramSet final : public GeneratedProgramSet {
 public:
  explicit ChainProgramSet(const CollectiveSpec& s)
      : GeneratedProgramSet(s, std::string(to_string(s.op)) + "/" + to_string(s.algorithm)) {
    const std::uint64_t slice = (s.elements() + s.channels - 1) / s.channels;
    k_ = pipeline_depth(s, slice, kDefaultChunk);
  }
  BufferSizes buffers(Rank r) const override { return standard_buffers(spec(), r); }
  // Chunk k of every channel comes before chunk k + 1 of any, and a rank forwards a chunk as
  // soon as it has received it: a few chunks of look-ahead keep the chain's pipeline full.
  Lookahead lookahead() const override { return Lookahead::Step; }

 protected:
  void generate(Rank r, ProgramBuilder& b) const override {
    const CollectiveSpec& s = spec();
    const Rank n = s.ranks;
    if (n == 1) return;
    const bool bcast = s.op == CollectiveOp::Broadcast;
    const Span all{0, s.elements()};
    for (std::uint64_t k = 0; k < k_; ++k) {
      for (std::uint16_t c = 0; c < s.channels; ++c) {
        const Rank root_pos = ring_position_of(n, s.ranks_per_node, c, s.root);
        const Rank i = (ring_position_of(n, s.ranks_per_node, c, r) + n - root_pos) % n;
        const auto at = [&](Rank idx) {
          return ring_rank_at(n, s.ranks_per_node, c, (root_pos + idx) % n);
        };
        const Span piece = all.part(s.channels, c).part(k_, k);
        // Upstream is where data comes from: i-1 for broadcast, i+1 for reduce.
        const bool has_up = bcast ? i > 0 : i + 1 < n;
        const bool has_down = bcast ? i + 1 < n : i > 0;
        OpIndex got = kNoOp;
        if (has_up) {
          got = b.recv(at(bcast ? i - 1 : i + 1), Buffer::Input, piece,
                       bcast ? RecvMode::Copy : RecvMode::Reduce, c, {});
        }
        if (has_down) b.send(at(bcast ? i + 1 : i - 1), Buffer::Input, piece, c, {got});
      }
    }
  }

 private:
  std::uint64_t k_ = 1;
};

}  // namespace

std::unique_ptr<ProgramSet> make_chain(const CollectiveSpec& spec) {
  return std::make_unique<ChainProgramSet>(spec);
}

}  // namespace lockstep::collective_detail
