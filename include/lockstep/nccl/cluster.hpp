#pragma once
// The cluster as NCCL sees it: GPU generation, NVLink domains ("nodes"), the bandwidth NCCL
// assumes between a node's GPUs and through its NICs. Derived from a preset or from a built
// topology; the tuner (nccl/tuner.hpp) prices collectives on it. docs/nccl-model.md explains each
// field.
//
//   NcclCluster c = nccl_cluster(resolve_preset({.system = "hgx-h100", .nodes = 2}));
//   // c.nodes == 2, c.gpus_per_node == 8, c.node_net_GBps() == 8 x 48
#include <cstdint>
#include <string>
#include <vector>

#include "lockstep/nccl/constants.hpp"
#include "lockstep/topology/graph.hpp"

namespace lockstep {

struct PresetCluster;  // topology/presets.hpp
struct FabricPreset;

/// What NCCL's model needs to know about a cluster.
struct NcclCluster {
  nccl::Generation generation = nccl::Generation::Hopper;
  std::string gpu = "h100";
  std::uint32_t nodes = 1;
  std::uint32_t gpus_per_node = 8;
  nccl::Path intra_path = nccl::Path::NvLink;  // NvLink (or xGMI) / Pcie between local GPUs
  double intra_GBps = 0;            // per GPU, one direction, as NCCL assumes (links x per link)
  std::uint32_t nics_per_node = 0;  // NICs NCCL sees serving the GPUs in use (after fusion)
  double nic_GBps = 0;              // line rate of one such NIC (GB/s, one direction)
  std::uint32_t fused_nics = 1;     // physical NICs fused into each one NCCL sees (fuse_nics)
  double gpu_nic_GBps = 0;          // PCIe between a GPU and its NIC as NCCL rates it (0: none)
  bool sharp = false;               // CollNet (InfiniBand SHARP) available
  bool nvls = false;                // NVLink SHARP available
  bool pat = true;                  // NCCL's PAT algorithm available (NCCL 2.23 on)
  bool amd_host = false;            // host network post overhead 2 us instead of 1 us
  bool ll128_network = true;        // LL128 over the network (false for TCP sockets)
  // NCCL's tuner may pick LL128 unasked (tuning.cc): false on compute capability 8.9 (L40S) and
  // where a node's GPUs meet over PCIe. NCCL_PROTO=LL128 (--proto ll128) still runs it.
  bool ll128_default = true;
  // The rings' hops between GPUs without NVLink pass through a GPU linked to both (NCCL's
  // PATH_NVB: 5 GPUs of a DGX-1, nccl_mesh_rings): NCCL's tuner then prices the ring's steps
  // with its PCIe latency (tuning.cc: the NVLink row only for a ring of type PATH_NVL).
  bool ring_relayed = false;
  // NCCL_NVB_DISABLE unset: a hop may cross one GPU over NVLink (PATH_NVB). disable_nvb clears
  // it on a node wired pair by pair: the rings are searched without relays and the engines'
  // router lets no GPU forward (make_router_without_gpu_transit).
  bool nvb = true;
  // NCCL_PXN_DISABLE unset: p2p sends between nodes (alltoall, alltoallv, sendrecv) leave
  // through the NIC on the receiver's rail, reached over NVLink (docs/routing.md "PXN"); false
  // (`pxn: false`): through the sender's own NIC.
  bool pxn = true;
  // Channels NCCL builds inside the node where lockstep runs its ring search (a DGX-1's mesh, a
  // bridged pair: nccl_ring_search, after both duplications); 0: the generation's NVSwitch
  // count (intra_node_channels).
  std::uint32_t intra_channels = 0;
  double extra_net_step_us = 0;  // fabric latency per network step beyond NCCL's IB table
  // Servers (trays) making up one node: 18 for a GB200 NVL72 rack (multi-node NVLink), else 1.
  std::uint32_t servers_per_node = 1;
  // SHARP's aggregation tree (cost_extra.cpp sharp_depth_us): its levels of switches (1: the
  // rail's leaf holds every node) and what each level above the leaf adds, up and down (us).
  std::uint32_t sharp_levels = 1;
  double sharp_level_us = 0;
  // The NCCL_ALGO / NCCL_PROTO the fabric's transport is documented to run with (GCP's TCPX
  // profile: ring, Simple); empty: NCCL's defaults. They bound the tuner's automatic choice.
  std::vector<Algorithm> net_algos;
  std::vector<nccl::Proto> net_protos;
  // GPUs wired as a torus (one GPU per node, ranks in the builder's order): its sizes, for
  // torus_ring. Empty otherwise, and for any group other than every GPU in order.
  std::vector<std::uint32_t> torus_dims;
  // GPUs wired to each other (one-GPU nodes without NICs: full mesh, torus): the cables a GPU
  // has to other GPUs at the network rate, the ports traffic spread over every peer (all-to-all)
  // leaves by at once. 1 for a GPU behind NICs (its NIC's rings are nics_per_node).
  std::uint32_t gpu_ports = 1;

  std::uint32_t ranks() const { return nodes * gpus_per_node; }
  /// What one GPU can push through its NIC (GB/s): the NIC's line rate or, if lower, the PCIe
  /// link to it (NCCL's search takes the narrowest link of the GPU-to-NIC path).
  double nic_path_GBps() const;
  /// The speed NCCL's search gives one channel through a NIC (GB/s): the generation's inter-node
  /// speed for nic_path_GBps().
  double net_channel_GBps() const;
  /// Rings the search routes through one NIC at that speed: as many as the NIC's line rate and
  /// the PCIe links of the GPUs behind it carry (usually 1).
  std::uint32_t rings_per_nic() const;
  /// Rings the search finds across nodes: NICs x rings per NIC, at most MAXCHANNELS / 2.
  std::uint32_t net_rings() const;
  /// Per-node network bandwidth NCCL's search settles on (GB/s): rings x channel speed.
  double node_net_GBps() const;
  /// Per-node network bandwidth of traffic that leaves every GPU through its own NIC (p2p:
  /// all-to-all, send/recv; per-rail rings): every NIC at the search's speed, without the
  /// MAXCHANNELS / 2 cap on rings (an NVL72 rack's 72 NICs all carry its all-to-all, where its
  /// rings find 16).
  double node_nics_GBps() const;
  /// Ring/tree channels NCCL builds for this cluster (before small-message reduction): the
  /// rings found, duplicated (connect.cc), at most MAXCHANNELS.
  std::uint32_t max_channels() const;
  /// NVLS channels (nvls.cc): 16 on Hopper, 32 on Blackwell, 24 on a multi-node NVLink domain.
  std::uint32_t nvls_channels() const;
};

/// NCCL's view of a node's NICs: more NICs than GPUs are fused into one virtual NIC per GPU at
/// their summed speed (NCCL >= 2.21 merges the ports of a NIC, aws-ofi-nccl stripes a p5 GPU's
/// four EFA rails); fewer are shared by the GPUs. Sets nics_per_node, nic_GBps and fused_nics
/// from `nics` physical NICs of `nic_GBps` each serving `gpus` GPUs of one server.
void fuse_nics(NcclCluster& c, std::uint32_t nics, double nic_GBps, std::uint32_t gpus);
/// NCCL's rating of a PCIe link of `raw_GBps` (catalog PcieSpec::nccl for a catalog link; a
/// link not in the catalog keeps its rate).
double nccl_pcie_GBps(double raw_GBps);

/// A node as NCCL's intra-node ring search sees it (nccl_ring_search): NVLinks per GPU pair at
/// NCCL's per-link rate and, where GPUs without NVLink meet over the host, its PCIe tree.
struct MeshSearchInput {
  std::uint32_t gpus = 0;                         // GPUs in use: the first `gpus` of `links`
  std::vector<std::vector<std::uint32_t>> links;  // NVLinks between GPUs a and b
  double link_GBps = 0;                           // NCCL's figure per NVLink (topo.h)
  bool nvb = true;  // NCCL_NVB_DISABLE unset: a hop may cross one GPU over NVLink (PATH_NVB)
  std::uint32_t gpus_per_switch = 0;   // host PCIe tree (catalog HostPcieTree; 0: none)
  std::uint32_t switches_per_cpu = 0;  //
  double pcie_GBps = 0;                // NCCL's rating of a GPU's PCIe link (and a switch's uplink)
  double cpu_link_GBps = 0;  // NCCL's figure for the link between the CPUs (topo.h QPI_BW)
};
/// What NCCL's intra-node ring search settles on (search.cc ncclTopoCompute).
struct MeshSearch {
  static constexpr int kNvLink = 0, kRelay = 1, kHost = 2;  // path levels: NVL, NVB, PCIe/SYS
  std::vector<std::vector<std::uint32_t>> rings;  // found: Hamiltonian cycles of local indices
  double speed = 0;                               // GB/s per ring, after the search's duplication
  int level = kNvLink;                            // the worst path type the rings take
  std::uint32_t found = 0;                        // rings found
  std::uint32_t duplicated = 0;  // after ncclTopoDupChannels (x2 from 25 GB/s per ring)
  /// Channels NCCL runs: connect.cc doubles the search's channels again.
  std::uint32_t channels() const { return nccl::kChannelDuplication * duplicated; }
  /// NCCL's intra-node bandwidth: channels of the search x their speed (tuning.cc).
  double GBps() const { return duplicated * speed; }
};
/// The search over a node: speeds from search.cc's array for `generation` (from the widest
/// path down while nothing is found or the next speed is above 0.49 of the best's), path types
/// raised one at a time at each speed (NVLink alone, through a GPU, the host's PCIe tree), the
/// most rings that fit each time; the largest rings x speed wins.
MeshSearch nccl_ring_search(const MeshSearchInput& in, nccl::Generation generation);
/// The first `gpus` GPUs of `gpu`'s node as the search sees them: its NVLinks wired pair by pair
/// (catalog mesh_wiring) at NCCL's per-link rate, and its PCIe tree (host_pcie_tree) with NCCL's
/// ratings of the GPUs' PCIe links and of the CPUs' link (CpuLinkSpec::nccl, by generation).
MeshSearchInput nccl_mesh_input(const std::string& gpu, std::uint32_t gpus, bool nvb);
/// The search over the first `gpus` GPUs of `gpu`'s node when its NVLinks are wired pair by pair
/// (DGX-1's hybrid cube mesh; catalog mesh_wiring): empty (no rings) for other nodes. `nvb`
/// false: NCCL_NVB_DISABLE=1, hops between GPUs without NVLink cross the host's PCIe tree.
MeshSearch nccl_mesh_search(const std::string& gpu, std::uint32_t gpus, bool nvb = true);
/// nccl_mesh_search's rings (5 GPUs of a DGX-1: relayed through GPU 0, PATH_NVB).
std::vector<std::vector<std::uint32_t>> nccl_mesh_rings(const std::string& gpu, std::uint32_t gpus,
                                                        bool nvb = true);
/// True when nccl_mesh_rings relays hops through GPUs (no NVLink ring over the GPUs in use).
bool nccl_mesh_rings_relayed(const std::string& gpu, std::uint32_t gpus);
/// The table generation NCCL's tuner takes for `gpu` (tuning.cc, by compute capability).
nccl::Generation nccl_generation(const std::string& gpu);

/// NCCL_NVB_DISABLE=1 (paths.cc): a node wired pair by pair re-runs its ring search without
/// hops through a GPU, so GPUs without NVLink meet over the host's PCIe tree (5 GPUs of a
/// DGX-1: through both CPUs, at NCCL's QPI figure). Other nodes are unchanged.
void disable_nvb(NcclCluster& c);

/// The cluster description NCCL would derive from a preset.
NcclCluster nccl_cluster(const PresetCluster& preset);
/// The same from a built topology's traits and links (for --scenario clusters). An NVLink domain
/// spanning several servers (NVL72) is one NCCL node; `sharp` means the switches could (a sweep
/// turns it on).
NcclCluster nccl_cluster(const Topology& topo);
/// Sets the transport's costs and limits of `fabric` on `c` (extra step latency, LL128 over the
/// network, the documented NCCL_ALGO / NCCL_PROTO).
void apply_transport(NcclCluster& c, const FabricPreset& fabric);

}  // namespace lockstep
