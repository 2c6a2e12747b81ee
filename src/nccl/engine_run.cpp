// The engine run NCCL's model implies (docs/nccl-model.md "Flow runs"): per medium, the link
// speed NCCL assumes relative to the raw link's; per message, NCCL's step latency less what the
// engine's path already charges; the fixed launch and base latency added to the makespan.
#include "lockstep/nccl/engine_run.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <numeric>
#include <vector>

#include "group_programs.hpp"
#include "lockstep/routing/pxn.hpp"
#include "lockstep/routing/router.hpp"
#include "lockstep/topology/catalog.hpp"
#include "pxn.hpp"

namespace lockstep {
namespace {

// The fraction of the bus bandwidth the NCCL model lets the algorithm use: the protocol's
// payload efficiency, times PAT's 0.75, except for the tree, whose per-protocol factors replace
// it (tuning.cc: Simple 0.92, LL128 120/128 across nodes or 7/9 in one, LL 1/3.8).
//
// NVLS: the program's NetReduce carries S up and S down per GPU (what the op means), but NVLink
// SHARP moves S (1 + 1/g) per direction per GPU for an all-reduce (cost.cpp nvls_cost: the
// switch pulls every slice, each GPU multicasts its reduced S/g slice) at NCCL's NVLS efficiency.
// The glue folds both into the efficiency rather than the program, so the program stays the
// op's semantics (the functional executor checks it) and only the timing carries the extra bytes.
double algorithm_efficiency(const Prediction& p, const NcclCluster& c, CollectiveOp op) {
  if (p.algo == Algorithm::Pat) return nccl::kPatEfficiency * p.efficiency;  // 0.75 x ring bw
  if (p.algo == Algorithm::NetReduce) {
    // Across nodes the program itself moves S (1 + 1/g) (NVLS reduce-scatter + multicast).
    const double extra =
        op == CollectiveOp::AllReduce && c.nodes == 1 ? 1 + 1.0 / c.gpus_per_node : 1.0;
    return nccl::nvls_efficiency(c.generation) / extra;
  }
  if (p.algo == Algorithm::NvlsTree) {
    // The program moves NVLS's S (1 + 1/g) on NVLink. One efficiency covers NVLink and the
    // GPU-NIC PCIe hop, and 0.85 there would throttle the NICs (63 x 0.824 x 0.85 = 44 < 48
    // GB/s): apply NVLS's efficiency only where the model's NVLS term is the bottleneck.
    const double nvls =
        c.intra_GBps * nccl::nvls_efficiency(c.generation) / (1 + 1.0 / c.gpus_per_node);
    return nvls <= p.bus_GBps * (1 + 1e-9) ? nccl::nvls_efficiency(c.generation) : p.efficiency;
  }
  if (p.algo != Algorithm::Tree) return p.efficiency;
  switch (p.proto) {
    case nccl::Proto::Simple:
      return nccl::kTreeSimpleEfficiency;
    case nccl::Proto::LL128:
      return c.nodes == 1 ? nccl::kTreeLL128SingleNode : nccl::kTreeLL128MultiNode;
    case nccl::Proto::LL:
      return 1.0 / nccl::kTreeLLDivisor;
  }
  return p.efficiency;
}

// What a GPU's link is to NCCL: scale-up (NVLink, xGMI) when it goes to the GPU's scale-up switch
// or to a GPU of the same server; scale-out when it leaves the server without a NIC (GPUs wired
// to each other across servers, as in a torus or a full mesh of one-GPU nodes, or a GPU cabled
// straight into a switch). NCCL's cluster takes the network rate from such a link when there is
// no NIC (cluster.cpp), so it must run at NCCL's network speed, not at NCCL's intra-node one
// (which for one-GPU nodes is its PCIe figure, 12 GB/s: 4-6 GB/s on meshes and tori before).
enum class GpuLink { None, ScaleUp, ScaleOut, Host };
GpuLink gpu_link(const Topology& topo, const Link& l) {
  const Device &a = topo.device(l.a), &b = topo.device(l.b);
  if (a.kind != DeviceKind::Gpu && b.kind != DeviceKind::Gpu) return GpuLink::None;
  const DeviceKind other = a.kind == DeviceKind::Gpu ? b.kind : a.kind;
  switch (other) {
    case DeviceKind::ScaleUpSwitch:
      return GpuLink::ScaleUp;
    case DeviceKind::Gpu:
      return a.node == b.node ? GpuLink::ScaleUp : GpuLink::ScaleOut;
    case DeviceKind::Switch:
    case DeviceKind::Gateway:
      return GpuLink::ScaleOut;
    case DeviceKind::Host:
      return GpuLink::Host;
    case DeviceKind::Nic:
      return GpuLink::None;
  }
  return GpuLink::None;
}

struct MeshLinks {
  std::uint32_t peers = 0;  // GPUs of its server the first GPU reaches over a direct link
  double total_GBps = 0;    // those links' bandwidth summed (one direction)
};
MeshLinks gpu_mesh_links(const Topology& topo) {
  MeshLinks m;
  const auto gpus = topo.gpus();
  if (gpus.empty()) return m;
  for (const Port& port : topo.ports(gpus[0]))
    if (topo.device(port.peer).kind == DeviceKind::Gpu &&
        gpu_link(topo, topo.link(Topology::link_of(port.out))) == GpuLink::ScaleUp) {
      ++m.peers;
      m.total_GBps += topo.link(Topology::link_of(port.out)).bandwidth.gigabytes_per_second();
    }
  return m;
}

// Per medium, the raw link's speed relative to what NCCL assumes of it, times the algorithm's
// efficiency: the flow engine then moves data at the rate the model uses on NVLink (NCCL's
// intra-node bandwidth) and on the NICs (NCCL's network search speed) alike.
struct FlowEfficiency {
  double intra = 1;
  double network = 0;  // 0: the topology has no network links
};
FlowEfficiency flow_efficiency(const Prediction& p, const NcclCluster& c, CollectiveOp op,
                               const Topology& topo) {
  double raw_intra = 0, raw_nic = 0, raw_gpu_nic = 0, raw_host = 0;
  for (const Link& l : topo.links()) {
    const double bw = l.bandwidth.gigabytes_per_second();
    const GpuLink kind = gpu_link(topo, l);
    if (kind == GpuLink::ScaleUp) raw_intra = std::max(raw_intra, bw);
    if (kind == GpuLink::Host) raw_host = std::max(raw_host, bw);
    const NicSide side = nic_side(topo, l);
    if (side == NicSide::NicToFabric || kind == GpuLink::ScaleOut) raw_nic = std::max(raw_nic, bw);
    if (side == NicSide::GpuToNic) raw_gpu_nic = std::max(raw_gpu_nic, bw);
  }
  // The network path starts with the GPU's PCIe link to its NIC (a network link to the flow
  // engine): scale by its narrowest link, which is what NCCL's search speed is taken from.
  if (raw_gpu_nic > 0 && raw_nic > 0) raw_nic = std::min(raw_nic, raw_gpu_nic);
  // On a mesh (GPUs linked pairwise, no switch) mesh rings spread the channels over all of a
  // GPU's links, so NCCL's per-GPU rate is their sum, not one link's.
  if (const MeshLinks mesh = gpu_mesh_links(topo); mesh.peers > 1) raw_intra = mesh.total_GBps;
  // A mesh wired pair by pair (DGX-1): each of NCCL's rings takes one link per hop, so the rings
  // x one link's rate is what the model's intra rate stands for (6 GPUs of a DGX-1 run 2 rings
  // though GPU 0 has 6 links among them).
  // Rings over its PCIe tree (NCCL_NVB_DISABLE=1: 5 GPUs of a DGX-1) cross a GPU's PCIe link,
  // narrower than an NVLink (Gen3 x16, 15.75 GB/s), one direction per ring: that link is each
  // ring's to scale.
  const auto rings = c.servers_per_node == 1 ? nccl_mesh_rings(c.gpu, c.gpus_per_node, c.nvb)
                                             : std::vector<std::vector<std::uint32_t>>{};
  if (!rings.empty()) {
    const ScaleUpSpec& su = scale_up_spec(gpu_spec(c.gpu).default_scale_up);
    double per_ring = su.port_speed.gigabytes_per_second();
    if (c.intra_path == nccl::Path::Pcie && raw_host > 0) per_ring = std::min(per_ring, raw_host);
    raw_intra = static_cast<double>(rings.size()) * per_ring;
  } else if (c.intra_path == nccl::Path::Pcie && raw_host > 0) {
    // Rings crossing PCIe between NVLink groups (H100 PCIe bridge pairs): NCCL's intra rate is
    // the PCIe link's, so that is the link to scale.
    raw_intra = raw_host;
  }
  const double algo = algorithm_efficiency(p, c, op);
  FlowEfficiency e;
  e.intra = algo;
  if (raw_intra > 0 && c.intra_GBps > 0) e.intra *= std::min(1.0, c.intra_GBps / raw_intra);
  if (raw_nic > 0)
    e.network =
        std::min(1.0, nccl::net_search_speed(c.generation, c.nic_path_GBps()) / raw_nic) * algo;
  return e;
}

// A ring across nodes with several GPUs per node (docs/nccl-model.md "The ring across nodes"):
// - every message pays the same share of NCCL's latency sum (base excluded): NCCL counts
//   2(N-1) network steps of an all-reduce, but the longest chain of dependent hops in the
//   program, 2(n-1) consecutive hops, crosses a node boundary every g hops (2N times for g > 2),
//   so paying each hop its own step latency would overcount; the overhead is that share less
//   the mean path latency along such a chain (the engine adds each path's latency itself);
// - each channel's sends are capped at NCCL's channel speed (EngineOptions::
//   channel_send_bandwidth), so that a channel waiting out its latency does not lend its share
//   of a link to the others and NCCL's sum of latency and transfer holds.
void price_ring_across_nodes(const NcclCluster& c, const Prediction& p, CollectiveOp op,
                             double base_us, const Topology& topo, NcclEngineRun& how) {
  const double n = c.ranks(), g = c.gpus_per_node;
  const double steps = op == CollectiveOp::AllReduce ? 2 * (n - 1) : n - 1;
  const double per_step_us = (p.latency.microseconds() - base_us) / steps;
  const double crossings = std::min(steps, std::ceil(steps / g));
  const double nvlink_us = gpu_path_latency(topo, 0, 1).microseconds();
  const double net_us = gpu_path_latency(topo, 0, c.gpus_per_node).microseconds();
  const double path_us = ((steps - crossings) * nvlink_us + crossings * net_us) / steps;
  how.per_message_overhead = Time::us(std::max(0.0, per_step_us - path_us));
  how.network_message_latency = Time::zero();
}

// NCCL's ceiling on one tree channel (tuning.cc, payload GB/s): perChMaxTreeLL128Bws and
// perChMaxTreeBws. One channel is one thread block, whose copy and reduce speed with the protocol
// these tables encode, whatever links it drives; the model prices the tree with them (cost.cpp
// tree_proto_bw), and flow and packet runs cap each (rank, channel)'s sends at them. NCCL's tree
// splits the block's threads between the reduction going up and the broadcast coming down
// (all_reduce.h runTreeSplit), each moving the channel's S / ch once, however many children the
// broadcast stores each line to (Op::fan_out): 2 S / (ch x cap), the model's time. LL has no
// per-channel figure (llMaxBws is the whole operation's): none.
double tree_channel_cap_GBps(const NcclCluster& c, nccl::Proto p) {
  switch (p) {
    case nccl::Proto::LL:
      return 0;
    case nccl::Proto::LL128:
      return nccl::tree_ll128_per_channel_bw(c.generation, c.nodes);
    case nccl::Proto::Simple:
      return nccl::tree_simple_per_channel_bw(c.generation, c.nodes);
  }
  return 0;
}

// A tree channel's share of the model's bus bandwidth, as a ring channel's (docs/nccl-model.md
// "A tree channel runs at its share", "Why the share"): NCCL fitted its tree step latencies in its
// sum latency + S / bus, with every channel moving at its share of bus, so a channel allowed past
// its share while another waits out a step latency would count the head start that latency already
// holds a second time (one of the two 8.5 us network steps on 2 one-GPU nodes). The tree program's
// lanes (one per channel, or per channel and tree with an odd count: collective/tree.cpp) each
// carry S / lanes; the busiest rank of a lane sends it up and, where it also has children, down
// once more (a broadcast counts once: Op::fan_out), 2 S / lanes, which takes the model's S / bus at
// 2 bus / lanes. A rank has both a parent and children where the tree is at least two edges
// deep: the node chain's g - 1 edges plus the binary tree's floor(log2 N) (NCCL's depth,
// graph/connect.cc), so on 2 or 3 one-GPU nodes or 2 GPUs of one node a lane's busiest rank
// sends S / lanes and its share is bus / lanes. Never above NCCL's per-channel ceiling; none
// for LL, which has no per-channel figure (tree_channel_cap_GBps).
double tree_channel_share_GBps(const NcclCluster& c, const Prediction& p, std::uint32_t lanes) {
  const double ceiling = tree_channel_cap_GBps(c, p.proto);
  if (ceiling <= 0) return 0;
  std::uint32_t depth = c.gpus_per_node - 1;
  for (std::uint32_t m = c.nodes; m > 1; m /= 2) ++depth;
  const double load = depth >= 2 ? 2 : 1;
  return std::min(ceiling, load * p.bus_GBps / lanes);
}

bool same_programs(const CollectiveSpec& a, const CollectiveSpec& b) {
  return a.op == b.op && a.algorithm == b.algorithm && a.ranks == b.ranks && a.bytes == b.bytes &&
         a.type == b.type && a.channels == b.channels && a.chunk == b.chunk && a.root == b.root &&
         a.ranks_per_node == b.ranks_per_node && a.ranks_per_server == b.ranks_per_server &&
         a.nics_per_node == b.nics_per_node && a.channels_per_peer == b.channels_per_peer &&
         a.mesh_rings == b.mesh_rings && a.node_cycles == b.node_cycles &&
         a.split_channels == b.split_channels && a.alltoallv == b.alltoallv &&
         a.torus_dims == b.torus_dims;
}

}  // namespace

// What the flow engine adds to every message between the two GPUs (engine_run.hpp).
Time gpu_path_latency(const Topology& topo, std::size_t from, std::size_t to) {
  const auto gpus = topo.gpus();
  if (to >= gpus.size() || from == to) return Time::zero();
  const auto router = make_router(topo, fabric_routing(topo));
  std::vector<PathShare> paths;
  router->route(FlowKey{gpus[from], gpus[to], 0}, nullptr, paths);
  Time t = Time::zero();
  if (!paths.empty())
    for (const DirLinkId l : paths.front().hops) t += topo.link(Topology::link_of(l)).latency;
  return t;
}

void NcclEngineRun::apply(EngineOptions& options) const {
  options.per_message_overhead = per_message_overhead;
  options.overhead_as_latency = overhead_as_latency;
  options.transfer_efficiency = transfer_efficiency;
  options.network_transfer_efficiency = network_transfer_efficiency;
  options.network_message_latency = network_message_latency;
  options.channel_send_bandwidth = channel_bandwidth.bytes_per_second() > 0
                                       ? channel_bandwidth / transfer_efficiency
                                       : Bandwidth{};
}

NcclEngineRun nccl_engine_run(const NcclCluster& c, const Prediction& p, CollectiveOp op,
                              Bytes bytes, DataType type, const Topology& topo) {
  NcclEngineRun how;
  how.pxn = c.pxn;
  how.spec.op = op;
  how.spec.algorithm = p.algo;
  how.spec.ranks = c.ranks();
  how.spec.bytes = bytes;
  how.spec.type = type;
  how.spec.channels = static_cast<std::uint16_t>(p.channels);
  // One node is one scale-up domain too: NCCL's tree is then a chain through the node's GPUs.
  how.spec.ranks_per_node = c.gpus_per_node > 1 ? c.gpus_per_node : 0;
  // An NVL72 node (rack) is made of trays: direct programs walk them tray by tray, so that
  // rotating each tray's GPUs (its 4 NICs, one per rail) is a symmetry the flow engine can use
  // where racks differ in their paths (docs/flow-engine.md C8).
  if (c.servers_per_node > 1 && c.gpus_per_node % c.servers_per_node == 0)
    how.spec.ranks_per_server = c.gpus_per_node / c.servers_per_node;
  // Tree chains head at GPUs spread over the NICs (collective/tree.cpp), as NCCL's search assigns
  // its channels NICs in turn: with 4 NICs for 8 GPUs (p4d), heads 0..3 would use only two.
  how.spec.nics_per_node = c.nics_per_node;
  // p2p transfers between nodes use NCCL's channels per peer, not every channel: at 192 ranks one
  // channel per peer, so an all-to-all has a connection (and a flow) per peer, as NCCL's.
  if (how.spec.algorithm == Algorithm::Direct)
    how.spec.channels_per_peer = static_cast<std::uint16_t>(
        nccl::p2p_channels_per_peer(c.ranks(), p.channels, c.nodes, c.fused_nics));
  if (p.algo == Algorithm::TorusRing) how.spec.torus_dims = c.torus_dims;
  if (op == CollectiveOp::AllToAllV)
    how.spec.alltoallv = skewed_alltoallv(c.ranks(), bytes, type, p.skew);
  // NVLS all-gather and reduce-scatter (NCCL's NVLS algorithm in one NVLink domain) have no
  // NetReduce program: NVLink SHARP's multicast brings every other GPU's block down each GPU's
  // switch link, (n-1)/n S, the load of the direct program, which runs in their place at NVLS's
  // efficiency (cost.cpp nvls_cost's volume; the analytical engine prices them alike,
  // graph_model.cpp nominal_spec).
  if (p.algo == Algorithm::NetReduce && !is_supported(op, Algorithm::NetReduce))
    how.spec.algorithm = Algorithm::Direct;
  // A fully connected node (AMD xGMI): each ring channel takes its own cycle, as RCCL's do
  // (docs/nccl-model.md "Mesh rings").
  how.spec.mesh_rings = c.gpus_per_node > 2 && gpu_mesh_links(topo).peers + 1 >= c.gpus_per_node;
  // A mesh wired pair by pair (DGX-1): each channel walks one of the rings NCCL's search finds
  // over its links (nccl_mesh_rings, docs/presets.md), not the GPUs in rank order, whose hops
  // (3 -> 4, 7 -> 0) have no NVLink.
  if (c.gpus_per_node > 2 && c.servers_per_node == 1) {
    how.spec.node_cycles = nccl_mesh_rings(c.gpu, c.gpus_per_node, c.nvb);
    if (!how.spec.node_cycles.empty()) how.spec.mesh_rings = true;
  }
  // Its g - 1 cycles then carry equal channel counts only if g - 1 divides the channels, else
  // the link with one channel more limits them all: round up (channel speed is bus / channels
  // below, so the aggregate rate the model priced is unchanged). Across nodes, to a multiple of
  // g (g - 1) as well: channel c walks cycle c mod (g - 1) from GPU c mod g (ring.cpp), and as
  // g and g - 1 are coprime, g (g - 1) channels take every (cycle, start) pair once, so every
  // GPU enters and leaves its node on g - 1 channels and every NIC direction carries as many
  // (16 -> 56 on MI300X; with 21, one NIC carried 6 channels out and flow ran at half the model).
  // The hierarchical all-reduce's node rings walk the cycles too; its network ring stays on each
  // GPU's own rail, so g - 1 channels suffice there.
  const bool hierarchical = p.algo == Algorithm::Hierarchical;
  if (how.spec.mesh_rings && (p.algo == Algorithm::Ring || hierarchical)) {
    const auto cycles = how.spec.node_cycles.empty()
                            ? c.gpus_per_node - 1
                            : static_cast<std::uint32_t>(how.spec.node_cycles.size());
    // A wired mesh's cycles (6 on a DGX-1) need not be coprime with g: every (cycle, entry)
    // pair once is cycles x g channels (ring.cpp), so each NIC carries as many out as in.
    const std::uint32_t unit =
        c.nodes > 1 && !hierarchical
            ? (how.spec.node_cycles.empty() ? std::lcm(cycles, c.gpus_per_node)
                                            : cycles * c.gpus_per_node)
            : cycles;
    how.spec.channels = static_cast<std::uint16_t>((p.channels + unit - 1) / unit * unit);
  }
  // NCCL's per-step latency covers the hop; the flow engine adds the path's link latencies, so
  // the overhead is what is left (docs/nccl-model.md "Flow runs"). A multi-node ring's local
  // steps pay at least the network post overhead, and its Simple all-reduce's whole latency,
  // base included, is scaled (cost.cpp ring_cost).
  double intra_us = p.step_us, net_us = network_step_us(c, p.algo, p.proto);
  const bool ring = p.algo == Algorithm::Ring;
  if (ring && c.nodes > 1)
    intra_us = std::max(intra_us, nccl::net_overhead_us(c.amd_host, p.proto));
  const double scale =
      ring && op == CollectiveOp::AllReduce && p.proto == nccl::Proto::Simple && c.nodes > 1 &&
              bytes.as_double() / (static_cast<double>(p.channels) * c.ranks()) >= 64
          ? nccl::kRingSimpleMultiNodeLatencyFactor
          : 1.0;
  intra_us *= scale;
  net_us *= scale;
  const Time intra_path = c.gpus_per_node > 1 ? gpu_path_latency(topo, 0, 1) : Time::zero();
  how.per_message_overhead = std::max(Time::zero(), Time::us(intra_us) - intra_path);
  how.overhead_as_latency =
      !(ring && (op == CollectiveOp::AllReduce || op == CollectiveOp::AllGather ||
                 op == CollectiveOp::ReduceScatter));
  if (c.nodes > 1 && c.gpus_per_node == 1) {
    // Every message crosses the network: its step latency is the overhead itself (so engine
    // users that copy only the overhead and one efficiency, like training steps, get it too).
    how.per_message_overhead =
        std::max(Time::zero(), Time::us(net_us) - gpu_path_latency(topo, 0, 1));
  } else if (c.nodes > 1) {
    // A message that crosses the network pays the overhead, its path and this extra latency.
    const Time net_path = gpu_path_latency(topo, 0, c.gpus_per_node);
    how.network_message_latency =
        std::max(Time::zero(), Time::us(net_us) - how.per_message_overhead - net_path);
  }
  const FlowEfficiency eff = flow_efficiency(p, c, op, topo);
  // With one GPU per node no NVLink carries data: the network's efficiency is the one to use on
  // every link (PCIe GPU-NIC hops included), as a single number.
  how.transfer_efficiency = c.gpus_per_node == 1 && eff.network > 0 ? eff.network : eff.intra;
  how.network_transfer_efficiency = eff.network;
  const double base_us = nccl::base_latency_us(p.algo, p.proto) * scale;
  how.fixed = Time::us(nccl::kLaunchOverheadUs + base_us);
  // NVLS in one node is one in-network reduction: NCCL charges its step latency once, and the
  // flow engine's NetReduce pays no per-message overhead, only the path.
  if (how.spec.algorithm == Algorithm::NetReduce && c.nodes == 1)
    how.fixed += how.per_message_overhead;
  if (ring && !how.overhead_as_latency && c.nodes > 1 && c.gpus_per_node > 1)
    price_ring_across_nodes(c, p, op, base_us, topo, how);
  // Every ring channel runs at NCCL's channel speed (channel_send_bandwidth): the bus bandwidth the
  // model priced, LL's and LL128's caps included, shared evenly by the channels.
  if (ring && !how.overhead_as_latency)
    how.channel_bandwidth = Bandwidth::gBps(p.bus_GBps / how.spec.channels);
  // Every tree channel runs at its share of the model's bus bandwidth, at most NCCL's per-channel
  // tree ceiling (tree_channel_share_GBps). LL128 and LL cut their own chunks (enqueue.cc;
  // nccl::tree_chunk_bytes, the model's fill): LL128 from its 614,400 B step, halved while a
  // channel would get too few, 15/16 of it payload; LL its 64 KiB step's 32 KiB of payload. Not the
  // Simple steps the tree program halves by default, which Simple keeps (docs/nccl-model.md "Flow
  // runs").
  if (p.algo == Algorithm::Tree && op == CollectiveOp::AllReduce) {
    // Lanes: one per channel when the channels split between the two trees, else one per
    // channel and tree (collective/tree.cpp).
    const std::uint32_t lanes = p.channels % 2 == 0 ? p.channels : 2 * p.channels;
    how.channel_bandwidth = Bandwidth::gBps(tree_channel_share_GBps(c, p, lanes));
    if (p.proto != nccl::Proto::Simple)
      how.spec.chunk = Bytes(static_cast<std::uint64_t>(nccl::tree_chunk_bytes(
          p.proto, bytes.as_double(), p.channels, c.gpus_per_node, c.nodes)));
  }
  return how;
}

Time run_nccl_engine(const NcclEngineRun& how, const Topology& topo, const Router& router,
                     Engine& engine, const std::vector<NcclGroupSpec>& groups) {
  return run_nccl_engine(how, topo, router, engine, groups, {});
}

Time run_nccl_engine(const NcclEngineRun& how, const Topology& topo, const Router& router,
                     Engine& engine, const std::vector<NcclGroupSpec>& groups,
                     const std::vector<std::optional<Time>>& late) {
  // Groups with the same spec as the one before share its program set.
  std::vector<std::shared_ptr<const ProgramSet>> sets;
  std::vector<DeviceId> placement;
  const auto gpus = topo.gpus();
  for (std::size_t j = 0; j < groups.size(); ++j) {
    if (j == 0 || !same_programs(groups[j].spec, groups[j - 1].spec))
      sets.push_back(make_collective(groups[j].spec));
    else
      sets.push_back(sets.back());
    for (std::uint32_t g : groups[j].gpus) placement.push_back(gpus[g]);
  }
  std::unique_ptr<ProgramSet> side_by_side;
  if (sets.size() > 1) side_by_side = std::make_unique<nccl_detail::GroupPrograms>(sets);
  EngineInput input;
  input.topology = &topo;
  input.programs = side_by_side ? side_by_side.get() : sets.front().get();
  std::unique_ptr<ProgramSet> late_start;
  if (std::any_of(late.begin(), late.end(), [](const auto& d) { return d.has_value(); })) {
    late_start = std::make_unique<nccl_detail::LateStart>(*input.programs, late);
    input.programs = late_start.get();
  }
  input.placement = placement;
  input.router = &router;
  how.apply(input.options);
  return how.fixed + engine.run(input).makespan;
}

Time run_nccl_engine(const NcclEngineRun& how, const Topology& topo, Engine& engine) {
  NcclGroupSpec all{how.spec, std::vector<std::uint32_t>(how.spec.ranks)};
  std::iota(all.gpus.begin(), all.gpus.end(), 0u);
  const auto router = nccl_detail::routes_with_pxn(how)
                          ? make_pxn_router(topo, fabric_routing(topo))
                          : make_router(topo, fabric_routing(topo));
  return run_nccl_engine(how, topo, *router, engine, {all});
}

}  // namespace lockstep
