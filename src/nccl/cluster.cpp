// How NCCL sees a cluster: from a preset, or from a built topology's traits and links.
#include "lockstep/nccl/cluster.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <string>
#include <unordered_map>
#include <vector>

#include "lockstep/nccl/tuner.hpp"
#include "lockstep/topology/catalog.hpp"
#include "lockstep/topology/presets.hpp"

namespace lockstep {
namespace {

// AMD Instinct GPUs (MI300X, MI325X, MI355X): wired pairwise by xGMI, run by RCCL.
bool xgmi_gpu(const std::string& gpu) {
  const auto& all = gpu_catalog();
  return std::any_of(all.begin(), all.end(), [&](const GpuSpec& s) {
    return s.name == gpu && s.default_scale_up.rfind("xgmi_mesh", 0) == 0;
  });
}

// The A100 family (compute capability 8.0), A10G (8.6) and L40S (Ada, 8.9): NCCL's tuning.cc takes
// the Ampere row of its tables for compute capability 8.x (minCompCap >= 80 and < 90).
bool ampere_tables(const std::string& gpu) {
  return gpu == "a100" || gpu == "a800" || gpu == "a100_pcie" || gpu == "a100_40gb" ||
         gpu == "l40s" || gpu == "a10g";
}

nccl::Generation generation_of(const std::string& gpu) {
  // V100 (compute capability 7.0): tuning.cc's Volta row.
  if (gpu == "v100") return nccl::Generation::Volta;
  if (ampere_tables(gpu)) return nccl::Generation::Ampere;
  // Blackwell Ultra (B300, GB300: sm_103) and GB10 (sm_121) have compute capability >= 10.0,
  // where NCCL takes its Blackwell tables.
  if (gpu == "b200" || gpu == "gb200" || gpu == "b300" || gpu == "gb300" || gpu == "gb10")
    return nccl::Generation::Blackwell;
  // h100, h200, h20, h800, gh200. AMD GPUs: the latency rows and protocol caps are NCCL's Hopper
  // ones (docs/nccl-model.md "RCCL on AMD Instinct"); their xGMI bandwidth is AMD's own below.
  return nccl::Generation::Hopper;
}

// NCCL's per-GPU scale-up bandwidth: links x the per-link figure topo.h assumes (20.6 GB/s for
// NVLink4's 25 GB/s). xGMI: the links to the node's other GPUs in use (one per pair on AMD's
// UBB, so 2 GPUs of 8 have one) at the datasheet rate x NCCL's lane payload fraction.
double intra_bandwidth(const std::string& gpu, nccl::Generation g, std::uint32_t gpus_per_node) {
  if (xgmi_gpu(gpu)) {
    const GpuSpec& s = gpu_spec(gpu);
    const std::uint32_t links = std::min(s.scale_up_links, std::max(1u, gpus_per_node - 1));
    return nccl::xgmi_bw(links, s.scale_up_bandwidth.gigabytes_per_second() / s.scale_up_links);
  }
  // The links NVML reports (H800: 8, not Hopper's usual 18). On a switchless NVLink mesh
  // (GH200 quad, Perlmutter's A100 quad, a bridged pair) each pair has links of its own, so the
  // GPUs in use reach links / (mesh - 1) per peer they have.
  const GpuSpec& s = gpu_spec(gpu);
  std::uint32_t links = s.scale_up_links;
  if (!s.default_scale_up.empty()) {
    const ScaleUpSpec& su = scale_up_spec(s.default_scale_up);
    if (su.chip_ports == 0 && su.domain_gpus > 1)
      links = links / (su.domain_gpus - 1) *
              std::min(su.domain_gpus - 1, std::max(1u, gpus_per_node - 1));
  }
  return links * nccl::nvlink_bw_per_link(g);
}

// The rings NCCL's intra-node search finds where lockstep derives it (nccl_ring_search): a node
// wired pair by pair (DGX-1) and a bridged pair (H100 / A100 PCIe, 2 GPUs in use); elsewhere the
// generation's NVSwitch channels (intra_channels 0) at links x NCCL's per-link figure. Sets the
// node's bandwidth, channels and path type.
void search_node_rings(NcclCluster& c, bool nvb) {
  c.intra_channels = 0;
  c.ring_relayed = false;
  MeshSearch found;
  const GpuSpec& s = gpu_spec(c.gpu);
  const bool wired = !mesh_wiring(s.default_scale_up).empty();
  if (wired) {
    found = nccl_mesh_search(c.gpu, c.gpus_per_node, nvb);
  } else if (c.gpus_per_node == 2 && !s.default_scale_up.empty() &&
             scale_up_spec(s.default_scale_up).chip_ports == 0 &&
             scale_up_spec(s.default_scale_up).domain_gpus == 2) {
    MeshSearchInput pair;
    pair.gpus = 2;
    pair.links = {{0, s.scale_up_links}, {s.scale_up_links, 0}};
    pair.link_GBps = nccl::nvlink_bw_per_link(c.generation);
    found = nccl_ring_search(pair, c.generation);
  }
  if (found.found == 0) {
    // No ring over the GPUs in use, even through a GPU or the host: it crosses PCIe, at NCCL's
    // figure for the GPU's link.
    c.intra_GBps = wired ? default_gpu_nic_pcie(c.gpu).nccl.gigabytes_per_second()
                         : intra_bandwidth(c.gpu, c.generation, c.gpus_per_node);
    return;
  }
  c.intra_GBps = found.GBps();
  c.intra_channels = found.channels();
  c.ring_relayed = found.level == MeshSearch::kRelay;
  if (found.level == MeshSearch::kHost) c.intra_path = nccl::Path::Pcie;
}

// SHARP's aggregation tree over `servers` servers with `rails` NICs each, on the rail-optimised
// fabric the presets build (rail_optimized_args, builders/rail_optimized.cpp): a rail's leaf holds
// a scalable unit of min(32, radix / 2) servers, so one SU reduces at its leaves (1 level);
// leaves (SUs x rails) under one tier of spines while they fit a spine's radix (2); otherwise
// pods under a core tier (3). Each CollNet head reduces over its own rail's tree.
std::uint32_t sharp_tree_levels(std::uint32_t servers, std::uint32_t rails, std::uint32_t radix) {
  const std::uint32_t su = std::max<std::uint32_t>(1, std::min<std::uint32_t>(32, radix / 2));
  const std::uint32_t sus = (servers + su - 1) / su;
  if (sus <= 1) return 1;
  return std::uint64_t{sus} * std::max<std::uint32_t>(1, rails) <= radix ? 2 : 3;
}

// The same read from a built fabric, whatever its builder: the switches the first rail's NICs
// (local index 0) plug into; 1 level if one switch holds them all, 2 if one switch a tier up
// reaches every one of them, else 3 (a core tier, or more).
std::uint32_t sharp_tree_levels(const Topology& topo) {
  std::vector<DeviceId> leaves;
  const auto switches_of = [&](DeviceId d, std::uint8_t above) {
    std::vector<DeviceId> out;
    for (const Port& p : topo.ports(d)) {
      const Device& peer = topo.device(p.peer);
      if (peer.kind == DeviceKind::Switch && peer.tier >= above &&
          std::find(out.begin(), out.end(), p.peer) == out.end())
        out.push_back(p.peer);
    }
    return out;
  };
  std::vector<bool> seen(topo.num_devices());
  for (DeviceId d = 0; d < topo.num_devices(); ++d) {
    const Device& dev = topo.device(d);
    if (dev.kind != DeviceKind::Nic || dev.local_index != 0) continue;
    for (DeviceId s : switches_of(d, 0))
      if (!seen[s]) {
        seen[s] = true;
        leaves.push_back(s);
      }
  }
  if (leaves.size() <= 1) return 1;
  std::unordered_map<DeviceId, std::size_t> reach;  // switch a tier up: leaves it reaches
  for (DeviceId leaf : leaves)
    for (DeviceId up : switches_of(leaf, topo.device(leaf).tier + 1))
      if (++reach[up] == leaves.size()) return 2;
  return 3;
}

// What each level above the leaf costs: a traversal up and one down (port-to-port latency each
// way) and the level's aggregation (catalog, SwitchSpec); nothing without SHARP switches.
void set_sharp_level_cost(NcclCluster& c, const std::string& switch_model) {
  if (switch_model.empty()) return;
  const SwitchSpec& sw = switch_spec(switch_model);
  if (sw.sharp_version == 0) return;
  c.sharp_level_us = 2 * sw.latency.microseconds() + sw.sharp_level_latency.microseconds();
}

// NCCL enables LL128 by default (tuning.cc, NCCL_PROTO unset) only on the compute capabilities
// it was tested on (7.0, 8.0, 9.0, 10.0, 12.0: not A10G's 8.6 nor Ada's 8.9) and only when the GPUs
// of a node meet over NVLink (the ring's intra-node path at most PATH_NVB): not across PCIe (H100
// or A100 PCIe bridge pairs with more than 2 GPUs, L40S). One GPU per node has no intra-node path.
bool ll128_by_default(const NcclCluster& c) {
  if (c.gpu == "l40s" || c.gpu == "a10g") return false;  // 8.9, 8.6
  return c.intra_path == nccl::Path::NvLink || c.gpus_per_node == 1;
}

// "Ring,Tree" -> its items, lower-cased, as NCCL_ALGO / NCCL_PROTO list them.
std::vector<std::string> env_list(const std::string& text) {
  std::vector<std::string> out(1);
  for (char ch : text) {
    if (ch == ',') {
      out.emplace_back();
    } else {
      out.back() += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    }
  }
  if (text.empty()) out.clear();
  return out;
}

}  // namespace

nccl::Generation nccl_generation(const std::string& gpu) {
  return generation_of(gpu);
}

void apply_transport(NcclCluster& c, const FabricPreset& f) {
  c.extra_net_step_us = f.extra_step_latency.microseconds();
  c.net_algos.clear();
  c.net_protos.clear();
  for (const std::string& a : env_list(f.nccl_algo))
    c.net_algos.push_back(*nccl::parse_algorithm(a, "nccl_algo"));
  for (const std::string& p : env_list(f.nccl_proto))
    c.net_protos.push_back(*nccl::parse_protocol(p, "nccl_proto"));
  // The A100 EFA instances (p4d, p4de: EFA's first generation, 4 x 100G for 8 GPUs) run Simple
  // only: aws-ofi-nccl's platform code (src/platform-aws.c) sets NCCL_PROTO=simple there, as
  // NCCL's LL and LL128 poll flags written with the data, an ordering the plugin does not
  // promise on that EFA generation; p5 and later keep NCCL's protocols. The published p4de log
  // agrees: 164.3 us for 8 B, where Simple's tree takes 140.4 us and LL's 73.2.
  if (f.technology == "efa" && c.generation == nccl::Generation::Ampere && c.net_protos.empty())
    c.net_protos.push_back(nccl::Proto::Simple);
  // NCCL's socket transport cannot run LL128 (no GPU Direct RDMA); a GPUDirect TCP plugin whose
  // documented profile lists LL128 (TCPXO) does.
  c.ll128_network = f.technology != "tcp" || std::find(c.net_protos.begin(), c.net_protos.end(),
                                                       nccl::Proto::LL128) != c.net_protos.end();
}

void disable_nvb(NcclCluster& c) {
  if (c.servers_per_node != 1 || mesh_wiring(gpu_spec(c.gpu).default_scale_up).empty()) return;
  c.nvb = false;
  search_node_rings(c, /*nvb=*/false);
  c.ll128_default = ll128_by_default(c);
}

double NcclCluster::nic_path_GBps() const {
  return gpu_nic_GBps > 0 ? std::min(nic_GBps, gpu_nic_GBps) : nic_GBps;
}

double NcclCluster::net_channel_GBps() const {
  return nccl::net_search_speed(generation, nic_path_GBps());
}

// search.cc charges each channel's speed to every link of its path (ncclTopoFollowPath) and
// keeps adding channels at the speed while the links have bandwidth left: a NIC carries as many
// rings as its line rate holds, and so do the PCIe links of the GPUs behind it (a channel enters
// and leaves the node through one GPU's PCIe link each way). One GPU with four 400G NICs on a
// Gen5 link: 48 / 48 = 1 ring (the PCIe cap); an 800G NIC searched at 48 on Hopper: 2 rings.
std::uint32_t NcclCluster::rings_per_nic() const {
  const double speed = net_channel_GBps();
  if (!(speed > 0) || nics_per_node == 0) return 1;
  const auto fits = [&](double bw) { return static_cast<std::uint32_t>(bw / speed + 1e-9); };
  std::uint32_t rings = fits(nic_GBps);
  if (gpu_nic_GBps > 0) {
    const std::uint32_t sharing = std::max(1u, gpus_per_node / nics_per_node);
    rings = std::min(rings, sharing * fits(gpu_nic_GBps));
  }
  return std::max(1u, rings);
}

// init.cc: the ring search looks for at most MAXCHANNELS / 2 rings (the rest is duplication).
std::uint32_t NcclCluster::net_rings() const {
  return std::min(nccl::kMaxChannels / 2, nics_per_node * rings_per_nic());
}

double NcclCluster::node_net_GBps() const {
  return net_rings() * net_channel_GBps();
}

double NcclCluster::node_nics_GBps() const {
  return static_cast<double>(nics_per_node) * rings_per_nic() * net_channel_GBps();
}

// connect.cc (ncclTopoPostset) duplicates every channel the search found; inside an NVSwitch
// node the search finds half of intra_node_channels, on a node whose search lockstep runs
// (search_node_rings) intra_channels. Across nodes a channel is a ring through
// the NICs, so the network's rings set the count.
std::uint32_t NcclCluster::max_channels() const {
  std::uint32_t ch = intra_channels > 0                 ? intra_channels
                     : intra_path == nccl::Path::NvLink ? nccl::intra_node_channels(generation)
                                                        : 2;
  if (nodes > 1) ch = std::min(ch, std::max(2u, nccl::kChannelDuplication * net_rings()));
  return std::min(ch, nccl::kMaxChannels);
}

// nvls.cc: NVLS runs its own channel count, not the rings': 16 on sm90, 32 on sm100, 24 when
// the NVLink domain spans trays (MNNVL, more GPUs than one HGX board's 8).
std::uint32_t NcclCluster::nvls_channels() const {
  if (generation != nccl::Generation::Blackwell) return 16;
  return gpus_per_node > 8 ? 24 : 32;
}

void fuse_nics(NcclCluster& c, std::uint32_t nics, double nic_GBps, std::uint32_t gpus) {
  c.fused_nics = gpus > 0 && nics > gpus ? nics / gpus : 1;
  c.nics_per_node = c.fused_nics > 1 ? gpus : nics;
  c.nic_GBps = nic_GBps * c.fused_nics;
}

double nccl_pcie_GBps(double raw_GBps) {
  for (const PcieSpec& p : pcie_catalog()) {
    const double bw = p.bandwidth.gigabytes_per_second();
    if (std::abs(bw - raw_GBps) <= 1e-9 * bw) return p.nccl.gigabytes_per_second();
  }
  return raw_GBps;
}

NcclCluster nccl_cluster(const PresetCluster& p) {
  NcclCluster c;
  c.gpu = p.system.gpu;
  c.generation = generation_of(c.gpu);
  // An NVL72 rack is one NCCL "node": its trays reach each other over NVLink (MNNVL). The model
  // needs equal nodes; racks filled unevenly (37 trays: 13 + 12 + 12) fall back to one node per
  // tray, as nccl_cluster(Topology) does for the graph they build (docs/presets.md).
  const DomainFill fill = p.fill();
  const std::uint32_t trays_per_domain = fill.equal() ? fill.small : 1;
  c.nodes = p.nodes / trays_per_domain;
  c.servers_per_node = trays_per_domain;
  c.gpus_per_node = p.gpus_per_node * trays_per_domain;
  fuse_nics(c, p.nics_per_node, p.nic_speed.gigabytes_per_second(), p.gpus_per_node);
  c.nics_per_node *= trays_per_domain;
  const PcieSpec& pcie = default_gpu_nic_pcie(c.gpu);
  c.gpu_nic_GBps = pcie.nccl.gigabytes_per_second();
  // NVLink joins the GPUs in use unless the system's NVLink groups are smaller (H100 PCIe bridge
  // pairs): NCCL's rings then cross PCIe, at NCCL's figure for the link (width x GT/s / 80).
  // A server without NVLink (L40S: a scale-up of one GPU with no link rate) meets over PCIe too.
  const bool nvlink = p.system.scale_up != "none" &&
                      scale_up_spec(p.system.scale_up).port_speed.bytes_per_second() > 0 &&
                      scale_up_spec(p.system.scale_up).domain_gpus >= p.gpus_per_node;
  c.intra_path = nvlink ? nccl::Path::NvLink : nccl::Path::Pcie;
  c.intra_GBps = nvlink ? intra_bandwidth(c.gpu, c.generation, c.gpus_per_node) : c.gpu_nic_GBps;
  if (nvlink && trays_per_domain == 1) search_node_rings(c, /*nvb=*/true);
  c.ll128_default = ll128_by_default(c);
  c.sharp = p.sharp;
  c.nvls = p.nvls;
  c.amd_host = p.system.amd_host;
  apply_transport(c, p.fabric);
  c.sharp_levels = sharp_tree_levels(p.nodes, std::min(p.nics_per_node, p.gpus_per_node),
                                     switch_spec(p.fabric.switch_model).radix);
  set_sharp_level_cost(c, p.fabric.switch_model);
  return c;
}

// GPUs reachable from GPU `gpu` through its scale-up switch (its NVLink domain), at least 1.
std::uint32_t domain_size(const Topology& topo, DeviceId gpu) {
  for (const Port& p : topo.ports(gpu)) {
    if (topo.device(p.peer).kind != DeviceKind::ScaleUpSwitch) continue;
    std::uint32_t n = 0;
    for (const Port& q : topo.ports(p.peer)) n += topo.device(q.peer).kind == DeviceKind::Gpu;
    return std::max<std::uint32_t>(1, n);
  }
  return 1;
}

NcclCluster nccl_cluster(const Topology& topo) {
  const ClusterTraits& t = topo.traits();
  NcclCluster c;
  c.gpu = t.gpu;
  c.generation = generation_of(c.gpu);
  const auto gpus = static_cast<std::uint32_t>(topo.gpus().size());
  const std::uint32_t servers = std::max<std::uint32_t>(1, topo.num_nodes());
  const std::uint32_t per_server =
      t.gpus_per_node > 0 ? t.gpus_per_node : std::max<std::uint32_t>(1, gpus / servers);
  // NCCL's "node" is an NVLink domain: an NVL72 rack of 18 trays is one node (MNNVL).
  std::uint32_t domain = gpus > 0 ? domain_size(topo, topo.gpus()[0]) : 1;
  if (domain < per_server || domain % per_server != 0 || gpus % domain != 0) domain = per_server;
  c.gpus_per_node = domain;
  c.servers_per_node = domain / per_server;
  c.nodes = std::max<std::uint32_t>(1, gpus / domain);
  c.nics_per_node = t.nics_per_node * (domain / per_server);
  // The NIC line rate: the fastest link between a NIC and the fabric as built (a NIC run below
  // its rated speed, e.g. a 400G NIC on 100G ports, runs at the port speed), else the catalog's
  // rating when the traits name one; graphs without NICs (a torus of accelerators) use each
  // GPU's fastest link that does not go to its scale-up switch, one per GPU. A NIC's fabric
  // links add up: a dual-ToR NIC (Alibaba HPN, SIGCOMM 2024) has two ports, one to each ToR of
  // a pair, and NCCL drives the NIC (one device, both ports bonded) at their sum.
  std::vector<double> nic_fabric(topo.num_devices(), 0.0);
  for (const Link& l : topo.links()) {
    const NicSide side = nic_side(topo, l);
    if (side == NicSide::NicToFabric) {
      const DeviceId nic = topo.device(l.a).kind == DeviceKind::Nic ? l.a : l.b;
      nic_fabric[nic] += l.bandwidth.gigabytes_per_second();
      c.nic_GBps = std::max(c.nic_GBps, nic_fabric[nic]);
    }
    // The GPU's PCIe link to its NIC, which NCCL's path search also sees.
    if (side == NicSide::GpuToNic)
      c.gpu_nic_GBps = std::max(c.gpu_nic_GBps, l.bandwidth.gigabytes_per_second());
  }
  if (c.nic_GBps == 0 && !t.nic.empty()) {
    c.nic_GBps = nic_spec(t.nic).injection().gigabytes_per_second();
  }
  if (c.nic_GBps == 0 && gpus > 0) {
    std::vector<double> cables;
    for (const Port& p : topo.ports(topo.gpus()[0])) {
      const DeviceKind k = topo.device(p.peer).kind;
      if (k == DeviceKind::ScaleUpSwitch || k == DeviceKind::Host) continue;
      cables.push_back(topo.link(Topology::link_of(p.out)).bandwidth.gigabytes_per_second());
    }
    for (double bw : cables) c.nic_GBps = std::max(c.nic_GBps, bw);
    // Every cable at that rate is a port (a torus's 2 per dimension, a full mesh's n - 1).
    c.gpu_ports = static_cast<std::uint32_t>(std::count_if(
        cables.begin(), cables.end(), [&](double bw) { return bw >= c.nic_GBps * (1 - 1e-9); }));
    c.gpu_ports = std::max(1u, c.gpu_ports);
    if (c.nics_per_node == 0) c.nics_per_node = c.gpus_per_node;
  }
  if (c.nics_per_node == 0 && c.nodes > 1) c.nics_per_node = c.gpus_per_node;
  c.gpu_nic_GBps = nccl_pcie_GBps(c.gpu_nic_GBps);
  // A from_file server with more NICs than GPUs: NCCL sees one fused NIC per GPU.
  if (t.nics_per_node > per_server && c.nic_GBps > 0) {
    fuse_nics(c, t.nics_per_node, c.nic_GBps, per_server);
    c.nics_per_node *= domain / per_server;
  }
  const bool scale_up = t.scale_up != "pcie" && t.scale_up != "none" && per_server > 1;
  c.intra_path = scale_up ? nccl::Path::NvLink : nccl::Path::Pcie;
  // GPUs joined over PCIe (H100 PCIe bridge pairs, traits "pcie"): NCCL's figure for the GPU's
  // PCIe link, as the preset's view has it; no scale-up at all: NCCL's PCI_BW.
  c.intra_GBps = scale_up               ? intra_bandwidth(c.gpu, c.generation, c.gpus_per_node)
                 : t.scale_up == "pcie" ? default_gpu_nic_pcie(c.gpu).nccl.gigabytes_per_second()
                                        : nccl::kPcieBw;
  if (scale_up && c.servers_per_node == 1) search_node_rings(c, /*nvb=*/true);
  c.sharp = t.sharp;
  c.nvls = t.nvls;
  if (c.gpus_per_node == 1) c.torus_dims = t.torus_dims;
  // DGX A100, Perlmutter (A100 40GB nodes) and AWS G5 (A10G: 2nd generation EPYC, AWS's G5
  // page) have AMD EPYC hosts.
  c.amd_host = c.gpu == "a100" || c.gpu == "a100_40gb" || c.gpu == "a10g" || xgmi_gpu(c.gpu);
  c.ll128_default = ll128_by_default(c);
  c.ll128_network = t.fabric != "tcp";
  for (const FabricPreset& f : fabric_presets()) {
    if (f.technology != t.fabric) continue;
    apply_transport(c, f);  // the first preset of the technology (tcp: sockets, not TCPX)
    break;
  }
  c.sharp_levels = sharp_tree_levels(topo);
  set_sharp_level_cost(c, t.switch_model);
  return c;
}

}  // namespace lockstep
