// In-network reduction: the switches add the data (InfiniBand SHARP aggregation trees, NVLink
// SHARP / NVLS on NVSwitch). A NetReduce op hands a range to the network and gets the sum of all
// group members' ranges back, so each rank sends S and receives S however many ranks there are.
//   all_reduce, flat (ranks_per_node 0 or n): one group of all ranks, the buffer cut into
//     channel slices and pipelining chunks (default 512 KiB), one net_reduce each.
//   all_reduce with g ranks per node (NVLS inside the node + SHARP across nodes, as NCCL's
//     NVLS-tree): for each chunk X, (1) net_reduce X in the node's group (every GPU gets the node
//     sum), (2) local rank l net_reduces block l of X in the group of rail l (one rank per node),
//     (3) local rank l sends block l to the other GPUs of its node (all-gather over NVLink).
//   reduce: the flat all_reduce (non-root buffers are scratch); barrier: one zero-byte
//     net_reduce of all ranks.
#include <vector>

#include "generated.hpp"

namespace lockstep::collective_detail {
namespace {

constexpr std::uint64_t kDefaultChunk = 512 * 1024;

class NetReduceProgramSet final : public GeneratedProgramSet {
 public:
  explicit NetReduceProgramSet(const CollectiveSpec& s)
      : GeneratedProgramSet(s, std::string(to_string(s.op)) + "/netreduce") {
    const Rank n = s.ranks;
    g_ = s.ranks_per_node && s.op == CollectiveOp::AllReduce ? s.ranks_per_node : n;
    std::vector<Rank> all(n);
    for (Rank r = 0; r < n; ++r) all[r] = r;
    add_group(std::move(all));  // group 0: every rank
    if (g_ < n) {
      for (Rank node = 0; node < n / g_; ++node) {  // groups 1..N: nodes
        std::vector<Rank> m;
        for (Rank l = 0; l < g_; ++l) m.push_back(node * g_ + l);
        add_group(std::move(m));
      }
      for (Rank l = 0; l < g_; ++l) {  // groups N+1..N+g: rails
        std::vector<Rank> m;
        for (Rank node = 0; node < n / g_; ++node) m.push_back(node * g_ + l);
        add_group(std::move(m));
      }
    }
    const std::uint64_t slice = (s.elements() + s.channels - 1) / s.channels;
    k_ = pipeline_depth(s, slice, kDefaultChunk);
  }
  BufferSizes buffers(Rank r) const override { return standard_buffers(spec(), r); }

 protected:
  void generate(Rank r, ProgramBuilder& b) const override {
    const CollectiveSpec& s = spec();
    if (s.op == CollectiveOp::Barrier) {
      b.add(make_net_reduce(0, b.range(Buffer::Input, {0, 0}), b.range(Buffer::Input, {0, 0})));
      return;
    }
    const Rank nodes = s.ranks / g_, node = r / g_, l = r % g_;
    for (std::uint64_t k = 0; k < k_; ++k) {
      for (std::uint16_t c = 0; c < s.channels; ++c) {
        const Span x = Span{0, s.elements()}.part(s.channels, c).part(k_, k);
        const auto nr = [&](std::uint32_t group, Span sp, std::initializer_list<OpIndex> d) {
          Op op = make_net_reduce(group, b.range(Buffer::Input, sp), b.range(Buffer::Input, sp));
          op.channel = c;
          return b.add(op, d);
        };
        if (g_ == s.ranks) {
          nr(0, x, {});
          continue;
        }
        const OpIndex local = nr(1 + node, x, {});
        const OpIndex global = nr(1 + nodes + l, x.part(g_, l), {local});
        for (Rank st = 1; st < g_; ++st)
          b.send(node * g_ + (l + st) % g_, Buffer::Input, x.part(g_, l), c, {global});
        for (Rank st = 1; st < g_; ++st) {
          const Rank from = (l + g_ - st) % g_;
          b.recv(node * g_ + from, Buffer::Input, x.part(g_, from), RecvMode::Copy, c, {local});
        }
      }
    }
  }

 private:
  Rank g_ = 1;
  std::uint64_t k_ = 1;
};

}  // namespace

std::unique_ptr<ProgramSet> make_net_reduce(const CollectiveSpec& spec) {
  return std::make_unique<NetReduceProgramSet>(spec);
}

}  // namespace lockstep::collective_detail
