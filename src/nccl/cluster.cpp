// How NCCL sees a cluster: from a preset, or from a built topology's traits and links.
#include "lockstep/nccl/cluster.hpp"

#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

#include "lockstep/nccl/tuner.hpp"
#include "lockstep/topology/catalog.hpp"
#include "lockstep/topology/presets.hpp"

namespace lockstep {
namespace {

nccl::Generation generation_of(const std::string& gpu) {
  if (gpu == "a100") return nccl::Generation::Ampere;
  if (gpu == "b200" || gpu == "gb200") return nccl::Generation::Blackwell;
  return nccl::Generation::Hopper;  // h100, h200; mi300x uses RCCL's Hopper-era tables
}

// NCCL's per-GPU scale-up bandwidth: links x the per-link figure topo.h assumes (20.6 GB/s for
// NVLink4's 25 GB/s). Non-NVIDIA GPUs get the same 0.824 derating of the catalog figure.
double intra_bandwidth(const std::string& gpu, nccl::Generation g) {
  if (gpu == "mi300x") return gpu_spec(gpu).scale_up_bandwidth.gigabytes_per_second() * 20.6 / 25;
  return nccl::nvlink_links(g) * nccl::nvlink_bw_per_link(g);
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

void apply_transport(NcclCluster& c, const FabricPreset& f) {
  c.extra_net_step_us = f.extra_step_latency.microseconds();
  c.net_algos.clear();
  c.net_protos.clear();
  for (const std::string& a : env_list(f.nccl_algo))
    c.net_algos.push_back(*nccl::parse_algorithm(a, "nccl_algo"));
  for (const std::string& p : env_list(f.nccl_proto))
    c.net_protos.push_back(*nccl::parse_protocol(p, "nccl_proto"));
  // NCCL's socket transport cannot run LL128 (no GPU Direct RDMA); a GPUDirect TCP plugin whose
  // documented profile lists LL128 (TCPXO) does.
  c.ll128_network = f.technology != "tcp" || std::find(c.net_protos.begin(), c.net_protos.end(),
                                                       nccl::Proto::LL128) != c.net_protos.end();
}

double NcclCluster::nic_path_GBps() const {
  return gpu_nic_GBps > 0 ? std::min(nic_GBps, gpu_nic_GBps) : nic_GBps;
}

double NcclCluster::node_net_GBps() const {
  return nics_per_node * nccl::net_search_speed(generation, nic_path_GBps());
}

std::uint32_t NcclCluster::max_channels() const {
  std::uint32_t ch = intra_path == nccl::Path::NvLink ? nccl::intra_node_channels(generation) : 2;
  if (nodes > 1) ch = std::min(ch, std::max(2u, nccl::kChannelsPerNic * nics_per_node));
  return std::min(ch, nccl::kMaxChannels);
}

NcclCluster nccl_cluster(const PresetCluster& p) {
  NcclCluster c;
  c.gpu = p.system.gpu;
  c.generation = generation_of(c.gpu);
  // An NVL72 rack is one NCCL "node": its trays reach each other over NVLink (MNNVL).
  const std::uint32_t trays_per_domain = std::min(p.nodes, p.system.domain_nodes);
  c.nodes = p.domains();
  c.gpus_per_node = p.domain_gpus();
  // NICs beyond one per GPU are striped per GPU as the preset's graph builds them
  // (rail_optimized_args: a p5 GPU's 4 EFA devices are one 400G link).
  const std::uint32_t per_gpu_nics = std::min(p.nics_per_node, p.gpus_per_node);
  const double fused = per_gpu_nics > 0 ? double(p.nics_per_node) / per_gpu_nics : 1.0;
  c.nics_per_node = per_gpu_nics * trays_per_domain;
  c.nic_GBps = p.nic_speed.gigabytes_per_second() * fused;
  c.gpu_nic_GBps = default_gpu_nic_pcie(c.gpu).bandwidth.gigabytes_per_second();
  c.intra_GBps = intra_bandwidth(c.gpu, c.generation);
  c.intra_path = nccl::Path::NvLink;
  c.sharp = p.sharp;
  c.nvls = p.nvls;
  c.amd_host = p.system.amd_host;
  apply_transport(c, p.fabric);
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
  c.nodes = std::max<std::uint32_t>(1, gpus / domain);
  c.nics_per_node = t.nics_per_node * (domain / per_server);
  // The NIC line rate: the fastest link between a NIC and the fabric as built (a NIC run below
  // its rated speed, e.g. a 400G NIC on 100G ports, runs at the port speed), else the catalog's
  // rating when the traits name one; graphs without NICs (a torus of accelerators) use each
  // GPU's fastest link that does not go to its scale-up switch, one per GPU.
  for (const Link& l : topo.links()) {
    const NicSide side = nic_side(topo, l);
    if (side == NicSide::NicToFabric)
      c.nic_GBps = std::max(c.nic_GBps, l.bandwidth.gigabytes_per_second());
    // The GPU's PCIe link to its NIC, which NCCL's path search also sees.
    if (side == NicSide::GpuToNic)
      c.gpu_nic_GBps = std::max(c.gpu_nic_GBps, l.bandwidth.gigabytes_per_second());
  }
  if (c.nic_GBps == 0 && !t.nic.empty()) {
    c.nic_GBps = nic_spec(t.nic).injection().gigabytes_per_second();
  }
  if (c.nic_GBps == 0 && gpus > 0) {
    for (const Port& p : topo.ports(topo.gpus()[0])) {
      const DeviceKind k = topo.device(p.peer).kind;
      if (k == DeviceKind::ScaleUpSwitch || k == DeviceKind::Host) continue;
      c.nic_GBps = std::max(c.nic_GBps,
                            topo.link(Topology::link_of(p.out)).bandwidth.gigabytes_per_second());
    }
    if (c.nics_per_node == 0) c.nics_per_node = c.gpus_per_node;
  }
  if (c.nics_per_node == 0 && c.nodes > 1) c.nics_per_node = c.gpus_per_node;
  const bool scale_up = t.scale_up != "pcie" && t.scale_up != "none" && per_server > 1;
  c.intra_path = scale_up ? nccl::Path::NvLink : nccl::Path::Pcie;
  c.intra_GBps = scale_up ? intra_bandwidth(c.gpu, c.generation) : nccl::kPcieBw;
  c.sharp = t.sharp;
  c.nvls = t.nvls;
  if (c.gpus_per_node == 1) c.torus_dims = t.torus_dims;
  c.amd_host = c.gpu == "a100" || c.gpu == "mi300x";
  c.ll128_network = t.fabric != "tcp";
  for (const FabricPreset& f : fabric_presets()) {
    if (f.technology != t.fabric) continue;
    apply_transport(c, f);  // the first preset of the technology (tcp: sockets, not TCPX)
    break;
  }
  return c;
}

}  // namespace lockstep
