// The NCCL-style cost model: latency terms exactly as NCCL's tuning.cc writes them, bandwidth
// terms from NCCL's per-protocol efficiencies and caps applied to the bytes each algorithm really
// moves per GPU (docs/nccl-model.md derives each case).
#include "cost.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "lockstep/core/error.hpp"

namespace lockstep {
namespace {

using nccl::Path;
using nccl::Proto;
using A = Algorithm;

constexpr double kInf = std::numeric_limits<double>::infinity();

int log2_floor(std::uint64_t v) {
  int r = 0;
  while (v > 1) {
    v >>= 1;
    ++r;
  }
  return r;
}
int log2_ceil(std::uint64_t v) {
  const int f = log2_floor(v);
  return (std::uint64_t{1} << f) < v ? f + 1 : f;
}

// Per-step latency of one intra-node hop and one network hop (tuning.cc; network_step_us).
// A ring relayed through GPUs (PATH_NVB) takes the PCIe row: tuning.cc gives the NVLink row
// only to a graph whose intra-node type is PATH_NVL.
double intra_lat(const NcclCluster& c, Algorithm a, Proto p) {
  const bool relayed = a == Algorithm::Ring && c.ring_relayed;
  return nccl::hw_latency_us(relayed ? nccl::Path::Pcie : c.intra_path, a, p);
}
double inter_lat(const NcclCluster& c, Algorithm a, Proto p) {
  return network_step_us(c, a, p);
}

// Protocol efficiency applied to a ring-style bus bandwidth (tuning.cc "model refinements").
double ring_proto_bw(const NcclCluster& c, Proto p, double bus, std::uint32_t channels) {
  switch (p) {
    case Proto::LL:
      return std::min(nccl::ll_max_bw(c.generation, c.nodes), nccl::kLLRingFraction * bus);
    case Proto::LL128: {
      const double eff = (c.gpus_per_node == 1 && c.nodes > 1) ? nccl::kLL128SingleGpuPerNode
                                                               : nccl::kLL128Efficiency;
      return std::min(eff * bus, channels * nccl::ring_ll128_per_channel_bw(c.generation));
    }
    case Proto::Simple:
      return bus;
  }
  return bus;
}

double tree_proto_bw(const NcclCluster& c, Proto p, double bus, std::uint32_t channels) {
  switch (p) {
    case Proto::LL:
      return std::min(bus / nccl::kTreeLLDivisor, nccl::ll_max_bw(c.generation, c.nodes));
    case Proto::LL128: {
      const double f = c.nodes == 1 ? nccl::kTreeLL128SingleNode : nccl::kTreeLL128MultiNode;
      return std::min(bus * f, channels * nccl::tree_ll128_per_channel_bw(c.generation, c.nodes));
    }
    case Proto::Simple:
      return std::min(nccl::kTreeSimpleEfficiency * bus,
                      channels * nccl::tree_simple_per_channel_bw(c.generation, c.nodes));
  }
  return bus;
}

double proto_payload_efficiency(Proto p) {
  return p == Proto::LL ? 0.5 : p == Proto::LL128 ? nccl::kLL128Efficiency : 1.0;
}

// The ring's bus bandwidth, from the bytes each link carries (docs/nccl-model.md "The ring
// across nodes"). Each channel's ring crosses every node boundary once, so a node's
// NICs carry the ring's full rate. Inside one node every GPU forwards over NVLink; across nodes
// a channel enters a node on one GPU's NIC and leaves on another's, so of the g hops a channel
// makes per node g-1 use NVLink and one the leaving GPU's NIC (PCIe, not NVLink). Channels
// rotate over the GPUs, so a GPU's NVLink carries (g-1)/g of the ring's rate: NVLink bounds the
// bus at intra x g/(g-1). NCCL's search charges a channel's speed to the links its path uses in
// the same way, and tuning.cc prices a ring over more than two nodes as nChannels x bwInter,
// the network speed.
double ring_bus(const NcclCluster& c) {
  const double g = c.gpus_per_node;
  if (c.nodes == 1) return c.intra_GBps;
  if (g == 1) return c.node_net_GBps();
  return std::min(c.intra_GBps * g / (g - 1), c.node_net_GBps());
}

// What a node's tree traffic between nodes has (GB/s): its NICs at the search's speed or, where
// one-GPU nodes are wired to each other (a full mesh or a torus: three cables or more at the
// network rate, NcclCluster::gpu_ports), two cables' worth. There every tree edge is a cable of
// its own (NCCL's search charges a channel's speed only to the links its path takes,
// search.cc ncclTopoFollowPath), so a node's 2 S per direction does not meet on one port; but
// for an even node count NCCL's second tree is the first shifted by one rank (trees.cc
// ncclGetDtree), which puts an edge of each tree on one pair of ranks the other way round
// (ranks 2 and 3: 3 a child of 2 in one tree, 2 of 3 in the other), and that cable carries one
// tree's climb and the other's descent, S / 2 each: S per direction, half a port's 2 S. On a
// torus the edges' routes share cables beyond that; the analytical engine's graph term prices
// them (docs/nccl-model.md "A GPU's other cables").
bool tree_edges_own_cables(const NcclCluster& c) {
  return c.gpus_per_node == 1 && c.nodes > 2 && c.gpu_ports >= 3 && c.gpu_ports + 1 >= c.nodes;
}
double tree_net_GBps(const NcclCluster& c) {
  return c.node_net_GBps() * (tree_edges_own_cables(c) ? 2 : 1);
}

// Pipeline fill of the tree (docs/nccl-model.md "Transports"). A channel's S/ch moves in chunks
// (nccl::tree_chunk_bytes) through 2 (g-1) chain stages and 2 log2(N) network stages (up, then
// down). A stage that forwards only whole chunks (store and forward) delays the first chunk by
// its chunk time: every stage with Simple, whose steps are signalled when complete, but only the
// network stages with LL and LL128, whose flagged lines are forwarded over NVLink as they land
// while the proxy posts a network send per completed step. The first chunk has the channel's
// share of each link at the protocol's payload efficiency (none of the return traffic that
// halves a chain link's steady rate has started). The makespan is the latencies, S / algbw and
// the fill below: NCCL's formula has the first two.
double tree_fill_us(const NcclCluster& c, double S, Proto p, std::uint32_t ch) {
  const std::uint32_t g = c.gpus_per_node, N = c.nodes;
  const double chunk = nccl::tree_chunk_bytes(p, S, ch, g, N);
  const double eff = proto_payload_efficiency(p);
  const auto chunk_us = [&](double link_GBps) { return chunk / (link_GBps * eff / ch * 1e3); };
  const double intra_us = g > 1 ? chunk_us(c.intra_GBps) : 0;
  double net_us = N > 1 ? chunk_us(c.node_net_GBps()) : 0;
  // On cables of its own (tree_net_GBps) a channel's first chunk shares its cable only with its
  // tree's other channels, at the rate NCCL's model gives a tree channel there: the protocol's
  // tree efficiency and per-channel ceiling (tree_proto_bw), which the flow engine runs each
  // tree channel at, on a lone cable as on a shared one.
  if (N > 1 && tree_edges_own_cables(c))
    net_us = chunk / (tree_proto_bw(c, p, tree_net_GBps(c), ch) / ch * 1e3);
  double fill = 2.0 * log2_floor(N) * net_us;
  if (p == Proto::Simple) fill += 2.0 * (g - 1) * intra_us;
  // A channel's k chunks leave the last stage one steady period apart (the steady bottleneck of
  // tree_cost's two terms, S / algbw for all k): the makespan is the first chunk's passage plus
  // k - 1 periods, so the fill is the passage less one period. The passage holds the
  // store-and-forward stages above and, when the bottleneck forwards lines as they land (LL and
  // LL128 over NVLink), one crossing of it at its steady rate without the sharing that halves it
  // (a chain GPU's port carries the climb and the descent; an inner node's NICs too). One chunk
  // per channel never shares a link with another: its makespan is the passage alone.
  const double halve_intra = 2, halve_net = N == 2 ? 1 : 2;
  const double steady_intra = g > 1 ? tree_proto_bw(c, p, c.intra_GBps, ch) / halve_intra : kInf;
  const double steady_net = N > 1 ? tree_proto_bw(c, p, tree_net_GBps(c), ch) / halve_net : kInf;
  const bool net_binds = steady_net <= steady_intra;
  const double chunks = std::max(1.0, std::ceil(S / ch / chunk));
  const double period_us = S / chunks / (std::min(steady_intra, steady_net) * 1e3);
  if (!net_binds && p != Proto::Simple) fill += period_us / halve_intra;
  return fill - period_us;
}

// Pipeline fill of the NVLS tree (docs/nccl-model.md "Transports"). A channel's S/ch is split
// among the node's NVLS heads (nccl::nvls_heads); each (channel, head) pair moves its share in
// chunks (nccl::nvls_tree_chunk_bytes) through four kinds of store-and-forward stages, Simple
// steps signalled when complete: the head's NVLS reduce (multimem loads through the switch into
// the network send buffer), log2(N) network stages up the tree, log2(N) down, the head's
// multicast to the node. The first chunk has the pair's share of each link: the head's NVLink
// serves its head index on every channel (intra / ch), a head's NIC its share of the node's
// (node net / (heads x ch)). As for the tree, the steady bottleneck's chunk time is within
// S / algbw.
double nvls_tree_fill_us(const NcclCluster& c, double S, std::uint32_t ch, double intra_bw,
                         double inter_bw) {
  const std::uint32_t N = c.nodes, heads = nccl::nvls_heads(c.gpus_per_node);
  const double chunk = nccl::nvls_tree_chunk_bytes(S, ch, heads, N);
  const double intra_us = chunk / (c.intra_GBps / ch * 1e3);
  const double net_us = chunk / (c.node_net_GBps() / (double(heads) * ch) * 1e3);
  const double fill = 2 * intra_us + 2.0 * log2_floor(N) * net_us;
  return fill - (inter_bw <= intra_bw ? net_us : intra_us);
}

// Pipeline fill of NVLS with SHARP across nodes (all_reduce.h, NVLS with a network "out"): each
// (channel, head) pair's chunks (nccl::nvls_chunk_bytes) pass the head's NVLS reduce, the SHARP
// round trip (one network operation per chunk, posted and completed whole by the proxy) and the
// head's multicast, store and forward, the first at the pair's share of each link; the steady
// bottleneck's chunk time is within S / bandwidth. In one node the reduce and the multicast are
// one pass through the switch, and only local copies hold whole chunks: no fill
// (docs/nccl-model.md "Transports").
double nvls_sharp_fill_us(const NcclCluster& c, double S, bool net_binds, double bus_GBps) {
  const std::uint32_t ch = c.nvls_channels(), heads = nccl::nvls_heads(c.gpus_per_node);
  const double chunk = nccl::nvls_chunk_bytes(S, ch, heads, c.nodes, bus_GBps);
  const double intra_us = chunk / (c.intra_GBps / ch * 1e3);
  const double net_us = chunk / (c.node_net_GBps() / (double(heads) * ch) * 1e3);
  return net_binds ? 2 * intra_us : intra_us + net_us;
}

}  // namespace

double network_step_us(const NcclCluster& c, Algorithm a, Proto p) {
  // CollNet and NVLS across nodes reduce in SHARP's tree, which is deeper on larger fabrics.
  const double sharp = a == A::CollNet || a == A::NetReduce ? sharp_depth_us(c) : 0.0;
  if (a == A::CollNet && c.gpus_per_node == 1)
    return nccl::collnet_chain_hw_latency_us(Path::Network) + c.extra_net_step_us + sharp;
  const bool ring_or_tree = a == A::Ring || a == A::Tree || a == A::HalvingDoubling ||
                            a == A::Direct || a == A::Hierarchical || a == A::TorusRing;
  const Algorithm row = c.gpus_per_node == 1 && ring_or_tree ? A::Tree : a;
  return nccl::hw_latency_us(Path::Network, row, p) + c.extra_net_step_us + sharp;
}

std::uint32_t pick_channels(std::uint32_t max_channels, Algorithm a, Proto p, std::uint64_t bytes,
                            std::uint32_t ranks) {
  // The torus's rings run 2D colours of their own (collective/torus_all_reduce.cpp), not channels.
  if (a == A::TorusRing) return 1;
  // enqueue.cc: drop channels while each thread would get less than its threshold of bytes.
  std::uint64_t nc = max_channels;
  const std::uint64_t nt = nccl::max_threads(p);
  const std::uint64_t threshold = nccl::thread_threshold(a, p, ranks);
  while (nc >= 2 && bytes < nc * nt * threshold) --nc;
  return static_cast<std::uint32_t>(std::max<std::uint64_t>(nc, 1));
}

Cost ring_cost(const NcclCluster& c, CollectiveOp op, double S, Proto p, std::uint32_t ch) {
  const std::uint64_t n = c.ranks(), N = c.nodes;
  const bool ar = op == CollectiveOp::AllReduce;
  const double steps = ar ? 2.0 * (n - 1) : n - 1.0;
  const double inter_steps = N > 1 ? (ar ? 2.0 * (N - 1) : N - 1.0) : 0.0;
  double il = intra_lat(c, A::Ring, p);
  if (N > 1) il = std::max(il, nccl::net_overhead_us(c.amd_host, p));
  Cost cost;
  cost.latency_us = nccl::base_latency_us(A::Ring, p) + (steps - inter_steps) * il +
                    inter_steps * inter_lat(c, A::Ring, p);
  if (ar && p == Proto::Simple && N > 1 && S / (ch * n) >= 64)
    cost.latency_us *= nccl::kRingSimpleMultiNodeLatencyFactor;
  // Across nodes a channel is one ring through one NIC per node at the search's speed (NCCL's
  // bandwidth per channel): fewer channels than the search built (--channels) carry less.
  double bus = ring_bus(c);
  if (N > 1) bus = std::min(bus, ch * c.net_channel_GBps());
  cost.bus_GBps = ring_proto_bw(c, p, bus, ch);
  // Bytes each rank pushes through its bottleneck: 2(n-1)/n S for all-reduce, (n-1)/n S for
  // all-gather and reduce-scatter, S for the pipelined broadcast / reduce chain.
  const double volume = ar ? 2.0 * (n - 1) / n * S
                        : (op == CollectiveOp::AllGather || op == CollectiveOp::ReduceScatter)
                            ? (n - 1.0) / n * S
                            : S;
  cost.transfer_us = volume / (cost.bus_GBps * 1e3);
  cost.step_us = intra_lat(c, A::Ring, p);
  return cost;
}

Cost tree_cost(const NcclCluster& c, double S, Proto p, std::uint32_t ch) {
  const std::uint32_t g = c.gpus_per_node, N = c.nodes;
  Cost cost;
  cost.latency_us =
      nccl::base_latency_us(A::Tree, p) +
      2 * ((g - 1) * intra_lat(c, A::Tree, p) + log2_floor(N) * inter_lat(c, A::Tree, p));
  // Inside a node the tree is a chain: every GPU forwards S up and S down (2S per direction).
  // Between nodes each of the two trees carries S/2, and a node moves S/2 per direction for
  // each of its tree edges (one per child on the way up and on the way down, one to the
  // parent): the busiest node's NICs carry S with two nodes (one edge in each tree), 1.5 S
  // with three (trees.cc: the second tree is the first shifted by one, so one node is the root
  // of two children in one tree and a leaf in the other) and 2 S from four nodes on (an inner
  // node of three edges in one tree is a leaf in the other).
  double algbw = kInf;
  if (g > 1) algbw = tree_proto_bw(c, p, c.intra_GBps, ch) / 2;
  const double net_load = N == 2 ? 1.0 : N == 3 ? 1.5 : 2.0;
  if (N > 1) algbw = std::min(algbw, tree_proto_bw(c, p, tree_net_GBps(c), ch) / net_load);
  cost.bus_GBps = algbw;
  cost.transfer_us = S / (algbw * 1e3);
  cost.step_us = intra_lat(c, A::Tree, p);
  cost.fill_us = tree_fill_us(c, S, p, ch);
  return cost;
}

Cost nvls_cost(const NcclCluster& c, CollectiveOp op, double S) {
  const double eff = nccl::nvls_efficiency(c.generation);
  const std::uint64_t n = c.ranks();
  Cost cost;
  cost.latency_us = intra_lat(c, A::NetReduce, Proto::Simple);
  if (c.nodes > 1) cost.latency_us += inter_lat(c, A::NetReduce, Proto::Simple);
  // NVLink SHARP all-reduce: the switch pulls every GPU's slices (S out of each GPU's memory)
  // and each GPU multicasts its reduced S/g slice, so a GPU's link carries S (1 + 1/g) per
  // direction for S of result; all-gather / reduce-scatter move (n-1)/n S. Between nodes
  // (NVLS + SHARP) each head GPU hands its reduced slice to its NIC and SHARP reduces it across
  // nodes, so the node's NICs carry S each way, not S (1 + 1/g): NCCL's NVLS graph has one head
  // per NIC and bounds the algorithm by the heads' network speed (nvls.cc, tuning.cc), both
  // sides at NVLS's efficiency.
  const double g = c.gpus_per_node;
  const double volume = op == CollectiveOp::AllReduce ? S * (1 + 1 / g) : (n - 1.0) / n * S;
  const double intra_us = volume / (c.intra_GBps * eff * 1e3);
  const double net_us = c.nodes > 1 ? S / (c.node_net_GBps() * eff * 1e3) : 0;
  const double us = std::max(intra_us, net_us);
  cost.transfer_us = us;
  cost.bus_GBps = volume / (us * 1e3);
  cost.step_us = intra_lat(c, A::NetReduce, Proto::Simple);
  if (c.nodes > 1 && op == CollectiveOp::AllReduce)
    cost.fill_us = nvls_sharp_fill_us(c, S, net_us >= intra_us, cost.bus_GBps);
  return cost;
}

Cost nvls_tree_cost(const NcclCluster& c, double S, std::uint32_t ch) {
  const std::uint32_t N = c.nodes;
  Cost cost;
  cost.latency_us = intra_lat(c, A::NvlsTree, Proto::Simple) +
                    2 * log2_floor(N) * inter_lat(c, A::NvlsTree, Proto::Simple);
  // Inside the node NVLS reduce-scatters and all-gathers: S (1 + 1/g) per direction per GPU.
  const double intra =
      c.intra_GBps * nccl::nvls_efficiency(c.generation) / (1 + 1.0 / c.gpus_per_node);
  const double inter =
      std::min(c.node_net_GBps(), ch * nccl::nvls_tree_per_channel_bw(c.generation, N)) /
      (N == 2 ? 1 : 2);
  cost.bus_GBps = std::min(intra, inter);
  cost.transfer_us = S / (cost.bus_GBps * 1e3);
  cost.step_us = intra_lat(c, A::NvlsTree, Proto::Simple);
  cost.fill_us = nvls_tree_fill_us(c, S, ch, intra, inter);
  return cost;
}

Cost collnet_cost(const NcclCluster& c, double S) {
  const std::uint32_t g = c.gpus_per_node;
  // NCCL's CollNetDirect, or CollNetChain with one GPU per node.
  const bool direct = g > 1;
  Cost cost;
  const double il = direct ? intra_lat(c, A::CollNet, Proto::Simple)
                           : nccl::collnet_chain_hw_latency_us(c.intra_path);
  cost.latency_us = direct ? 2 * (std::min(1u, g - 1) * il + (g - 1) * nccl::kCollNetArityLatencyUs)
                           : 2 * (g - 1) * il;
  cost.latency_us += network_step_us(c, A::CollNet, Proto::Simple);
  // The switches reduce: a node's NICs send S and receive S. Inside the node each GPU
  // reduce-scatters and all-gathers its share: 2(g-1)/g S per direction over NVLink.
  const double eff = c.generation < nccl::Generation::Hopper ? nccl::kTreeSimpleEfficiency
                                                             : nccl::kCollNetHopperEfficiency;
  double bw = c.node_net_GBps() * eff;
  if (g > 1) bw = std::min(bw, c.intra_GBps * g / (2.0 * (g - 1)));
  cost.bus_GBps = bw;
  cost.transfer_us = S / (bw * 1e3);
  cost.step_us = il;
  return cost;
}

Cost pat_cost(const NcclCluster& c, double S, Proto p) {
  const std::uint64_t n = c.ranks();
  Cost cost;
  cost.latency_us =
      nccl::base_latency_us(A::Pat, p) + log2_ceil(n) * inter_lat(c, A::Pat, Proto::Simple);
  cost.bus_GBps = nccl::kPatEfficiency * c.node_net_GBps();
  cost.transfer_us = (n - 1.0) / n * S / (cost.bus_GBps * 1e3);
  cost.step_us = nccl::hw_latency_us(Path::Network, A::Pat, Proto::Simple);
  return cost;
}

Cost halving_doubling_cost(const NcclCluster& c, double S, Proto p, std::uint32_t ch) {
  // Rabenseifner: log2(n) halving steps then log2(n) doubling steps, the same 2(n-1)/n S per
  // rank as the ring; a rank count that is not a power of two costs one extra exchange of S
  // each way. The all-reduce pairs nearest ranks first, so the first log2(g) steps of each half
  // stay in the node (2(g-1)/g S per GPU over NVLink) and the last log2(nodes) cross the network
  // on each GPU's own rail (2(N-1)/N x S/g per GPU, all GPUs of a node at once: 2(N-1)/N S on
  // the node's NICs). The steps run one after the other, so the two phases add up.
  const std::uint64_t n = c.ranks();
  const int lg = log2_ceil(n);
  const bool pow2 = (std::uint64_t{1} << lg) == n;
  const double inter_steps = c.nodes > 1 ? 2.0 * log2_ceil(c.nodes) : 0.0;
  const double steps = 2.0 * lg + (pow2 ? 0 : 2);
  Cost cost;
  cost.latency_us = nccl::base_latency_us(A::Ring, p) +
                    (steps - inter_steps) * intra_lat(c, A::Ring, p) +
                    inter_steps * inter_lat(c, A::Ring, p);
  const double g = c.gpus_per_node, N = c.nodes;
  const double intra_bw = ring_proto_bw(c, p, c.intra_GBps, ch);
  const double net_bw = N > 1 ? ring_proto_bw(c, p, c.node_net_GBps(), ch) : kInf;
  double us = 2.0 * (N - 1) / N * S / (net_bw * 1e3);
  if (g > 1) us += 2.0 * (g - 1) / g * S / (intra_bw * 1e3);
  if (!pow2) us += 2 * S / (std::min(intra_bw, net_bw) * 1e3);
  cost.transfer_us = us;
  cost.bus_GBps = us > 0 ? 2.0 * (n - 1) / n * S / (us * 1e3) : ring_bus(c);
  cost.step_us = intra_lat(c, A::Ring, p);
  return cost;
}

Cost direct_cost(const NcclCluster& c, CollectiveOp op, double S, Proto p) {
  // Every rank talks to every peer at once. Per GPU: `share` of S goes to each peer; the NVLink
  // carries the local peers' shares, the node's NICs carry all remote shares of its GPUs.
  const double n = c.ranks(), g = c.gpus_per_node, N = c.nodes;
  double per_peer = S / n;  // alltoall, all-gather, reduce-scatter
  double rounds = 1;
  if (op == CollectiveOp::AllReduce) rounds = 2;  // two-shot: reduce-scatter + all-gather
  if (op == CollectiveOp::SendRecv) per_peer = S;
  if (op == CollectiveOp::Broadcast || op == CollectiveOp::Reduce) per_peer = S;
  const bool one_peer = op == CollectiveOp::SendRecv;
  const bool rooted = op == CollectiveOp::Broadcast || op == CollectiveOp::Reduce;
  const double local_peers = one_peer ? (g > 1 ? 1 : 0) : g - 1;
  const double remote_peers = one_peer ? (N > 1 ? 1 : 0) : n - g;
  const double eff = proto_payload_efficiency(p);
  double t = 0;
  if (local_peers > 0) t = std::max(t, rounds * local_peers * per_peer / (c.intra_GBps * eff));
  if (remote_peers > 0) {
    // A root's data or one ring neighbour uses one GPU's NICs; spread traffic uses all of them,
    // and a GPU wired to its peers sends to them over as many of its cables as it has peers
    // (NCCL's p2p channels go to each peer on the path the search found: its own cable).
    const double gpus_sharing = (one_peer || rooted) ? g : 1;
    const double ports = one_peer || rooted ? 1 : std::min<double>(c.gpu_ports, remote_peers);
    const double node_bytes = rounds * remote_peers * per_peer * (one_peer || rooted ? 1 : g);
    t = std::max(t, node_bytes / (c.node_nics_GBps() * ports / gpus_sharing * eff));
  }
  Cost cost;
  const bool remote = remote_peers > 0;
  cost.latency_us = nccl::base_latency_us(A::Ring, p) +
                    rounds * (remote ? inter_lat(c, A::Ring, p) : intra_lat(c, A::Ring, p));
  cost.transfer_us = t / 1e3;
  cost.bus_GBps = t > 0 ? S / t : 0;
  cost.step_us = intra_lat(c, A::Ring, p);
  return cost;
}

}  // namespace lockstep
