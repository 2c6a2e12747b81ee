// In-network reduction: the switches add the data (InfiniBand SHARP aggregation trees, NVLink
// SHARP / NVLS on NVSwitch). A NetReduce op hands a range to the network and gets the sum of all
// group members' ranges back, so each rank sends S and receives S however many ranks there are.
//   all_reduce, flat (ranks_per_node 0 or n): one group of all ranks, the buffer cut into
//     channel slices and pipelining chunks (default 512 KiB), one net_reduce each.
//   all_reduce with g ranks per node (NCCL's NVLS across nodes: NVLink SHARP inside the node,
//     InfiniBand SHARP between nodes): for each chunk X, (1) NVLS reduce-scatter, a net_reduce
//     in the node's group with src X and dst block l of X, (2) local rank l net_reduces block l
//     in the group of rail l (one rank per node), (3) NVLS multicast all-gather, a net_reduce in
//     the node's group with src block l and dst X. NVLink carries S (1 + 1/g) per GPU each way,
//     a node's NICs S. A channel's reduce-scatters run one chunk after another (each waits for
//     the previous chunk's), as NCCL's steps do: otherwise every chunk's first phase would share
//     NVLink at once and the pipeline would never fill. And a chunk's reduce-scatter waits for
//     the network reduction of the chunk kSlots before it: the reduced block waits for the
//     network in one of NCCL_STEPS (8) buffer slots per channel (NCCL's src/include/device.h;
//     Simple protocol), freed when the network has taken it. Without that bound every chunk's
//     network reduction was in flight at once whenever NVLink outran the NICs (B200 + XDR: up to
//     1,024 per channel at 8 GiB, each solve of the flow engine over all of them).
//   reduce: the flat all_reduce (non-root buffers are scratch); barrier: one zero-byte
//     net_reduce of all ranks.
// CollNet Direct (Algorithm::CollNet, NCCL's COLLNET_DIRECT all-reduce): per chunk X, local
// rank l (1) reduce-scatters X over NVLink by direct sends (block j to local rank j, receiving
// and adding block l from every other local rank), (2) net_reduces block l in the group of
// rail l (SHARP in the InfiniBand switches), (3) sends block l to every other local rank
// (all-gather). NVLink carries 2 (g-1)/g S per GPU each way, a node's NICs S: the volumes of
// NCCL's model (nccl/cost.cpp collnet_cost). Reduce-scatter and all-gather use their own channel
// (2c and 2c + 1) so their messages never match each other's.
#include <vector>

#include "generated.hpp"

namespace lockstep::collective_detail {
namespace {

constexpr std::uint64_t kDefaultChunk = 512 * 1024;
constexpr std::uint64_t kSlots = 8;  // NCCL_STEPS

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
  // Across nodes, rank r + g runs rank r's program on the next node: its node's group is the
  // translate of r's, its rail's group the same (ProgramSet::symmetry_period).
  Rank symmetry_period() const override {
    return g_ < spec().ranks && spec().ranks % g_ == 0 ? g_ : 0;
  }

 protected:
  void generate(Rank r, ProgramBuilder& b) const override {
    const CollectiveSpec& s = spec();
    if (s.op == CollectiveOp::Barrier) {
      b.add(make_net_reduce(0, b.range(Buffer::Input, {0, 0}), b.range(Buffer::Input, {0, 0})));
      return;
    }
    const Rank nodes = s.ranks / g_, node = r / g_, l = r % g_;
    std::vector<OpIndex> previous_local(s.channels, kNoOp);
    // The network reductions of each channel's last kSlots chunks (ring buffer by chunk).
    std::vector<OpIndex> in_network(g_ == s.ranks ? 0 : s.channels * kSlots, kNoOp);
    for (std::uint64_t k = 0; k < k_; ++k) {
      for (std::uint16_t c = 0; c < s.channels; ++c) {
        const Span x = Span{0, s.elements()}.part(s.channels, c).part(k_, k);
        // src and dst differ for NVLS's reduce-scatter and multicast all-gather (windowed
        // NetReduce, engine/functional/executor.hpp).
        const auto nr = [&](std::uint32_t group, Span src, Span dst, OpIndex dep, OpIndex dep2) {
          Op op = make_net_reduce(group, b.range(Buffer::Input, src), b.range(Buffer::Input, dst));
          op.channel = c;
          return b.add(op, {dep, dep2});
        };
        if (g_ == s.ranks) {
          nr(0, x, x, kNoOp, kNoOp);
          continue;
        }
        const Span mine = x.part(g_, l);
        OpIndex& slot = in_network[c * kSlots + k % kSlots];
        const OpIndex scattered = nr(1 + node, x, mine, previous_local[c], slot);
        previous_local[c] = scattered;
        const OpIndex global = nr(1 + nodes + l, mine, mine, scattered, kNoOp);
        slot = global;
        nr(1 + node, mine, x, global, kNoOp);
      }
    }
  }

 private:
  Rank g_ = 1;
  std::uint64_t k_ = 1;
};

// Per-GPU block of a CollNet chunk: 512 KiB (NCCL's Simple step), halved while a channel would
// get fewer than 8 chunks (not below 64 KiB), so that the three phases pipeline.
std::uint64_t collnet_block(std::uint64_t channel_bytes, std::uint64_t g) {
  std::uint64_t block = 512 * 1024;
  while (channel_bytes / (g * block) < 8 && block > 64 * 1024) block /= 2;
  return block;
}

class CollNetProgramSet final : public GeneratedProgramSet {
 public:
  explicit CollNetProgramSet(const CollectiveSpec& s)
      : GeneratedProgramSet(s, "all_reduce/collnet") {
    g_ = s.ranks_per_node ? s.ranks_per_node : s.ranks;
    for (Rank l = 0; l < g_; ++l) {  // group l: rail l (local rank l of every node)
      std::vector<Rank> m;
      for (Rank node = 0; node < s.ranks / g_; ++node) m.push_back(node * g_ + l);
      add_group(std::move(m));
    }
    const std::uint64_t slice = (s.elements() + s.channels - 1) / s.channels;
    k_ = pipeline_depth(s, slice, g_ * collnet_block(s.bytes.count() / s.channels, g_));
  }
  BufferSizes buffers(Rank r) const override { return standard_buffers(spec(), r); }
  // Rank r + g runs rank r's program on the next node, in the same rail's group.
  Rank symmetry_period() const override {
    return g_ < spec().ranks && spec().ranks % g_ == 0 ? g_ : 0;
  }

 protected:
  void generate(Rank r, ProgramBuilder& b) const override {
    const CollectiveSpec& s = spec();
    const Rank node = r / g_, l = r % g_;
    const auto local = [&](Rank j) { return node * g_ + j; };
    for (std::uint64_t k = 0; k < k_; ++k) {
      for (std::uint16_t c = 0; c < s.channels; ++c) {
        const Span x = Span{0, s.elements()}.part(s.channels, c).part(k_, k);
        const auto rs = static_cast<std::uint16_t>(2 * c), ag = static_cast<std::uint16_t>(rs + 1);
        std::vector<OpIndex> scattered_to(g_, kNoOp), reduced;
        for (Rank st = 1; st < g_; ++st) {
          const Rank j = (l + st) % g_;
          scattered_to[j] = b.send(local(j), Buffer::Input, x.part(g_, j), rs, {});
        }
        for (Rank st = 1; st < g_; ++st)
          reduced.push_back(b.recv(local((l + g_ - st) % g_), Buffer::Input, x.part(g_, l),
                                   RecvMode::Reduce, rs, {}));
        Op sharp = make_net_reduce(l, b.range(Buffer::Input, x.part(g_, l)),
                                   b.range(Buffer::Input, x.part(g_, l)));
        sharp.channel = c;
        const OpIndex summed = b.add(sharp, std::span<const OpIndex>(reduced));
        for (Rank st = 1; st < g_; ++st)
          b.send(local((l + st) % g_), Buffer::Input, x.part(g_, l), ag, {summed});
        // A block's result may land only once this rank's own copy of it has been sent.
        for (Rank st = 1; st < g_; ++st) {
          const Rank from = (l + g_ - st) % g_;
          b.recv(local(from), Buffer::Input, x.part(g_, from), RecvMode::Copy, ag,
                 {scattered_to[from]});
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

std::unique_ptr<ProgramSet> make_collnet(const CollectiveSpec& spec) {
  return std::make_unique<CollNetProgramSet>(spec);
}

}  // namespace lockstep::collective_detail
