// How NCCL sees a cluster: from a preset, or from a built topology's traits and links.
#include <algorithm>

#include "lockstep/collective/tuner.hpp"
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

}  // namespace

NcclCluster nccl_cluster(const PresetCluster& p) {
  NcclCluster c;
  c.gpu = p.system.gpu;
  c.generation = generation_of(c.gpu);
  // An NVL72 rack is one NCCL "node": its trays reach each other over NVLink (MNNVL).
  const std::uint32_t trays_per_domain = std::min(p.nodes, p.system.domain_nodes);
  c.nodes = p.domains();
  c.gpus_per_node = p.domain_gpus();
  c.nics_per_node = p.nics_per_node * trays_per_domain;
  c.nic_GBps = p.nic_speed.gigabytes_per_second();
  c.intra_GBps = intra_bandwidth(c.gpu, c.generation);
  c.intra_path = nccl::Path::NvLink;
  c.sharp = p.sharp;
  c.nvls = p.nvls;
  c.amd_host = p.system.amd_host;
  c.ll128_network = p.fabric.technology != "tcp";
  c.extra_net_step_us = p.fabric.extra_step_latency.microseconds();
  return c;
}

NcclCluster nccl_cluster(const Topology& topo) {
  const ClusterTraits& t = topo.traits();
  NcclCluster c;
  c.gpu = t.gpu;
  c.generation = generation_of(c.gpu);
  const std::uint32_t gpus = static_cast<std::uint32_t>(topo.gpus().size());
  c.nodes = std::max<std::uint32_t>(1, topo.num_nodes());
  c.gpus_per_node =
      t.gpus_per_node > 0 ? t.gpus_per_node : std::max<std::uint32_t>(1, gpus / c.nodes);
  c.nics_per_node = t.nics_per_node;
  // The NIC line rate: the catalog's when the traits name one, else the fastest NIC link.
  if (!t.nic.empty()) {
    c.nic_GBps = nic_spec(t.nic).injection().gigabytes_per_second();
  } else {
    for (const Link& l : topo.links()) {
      const bool nic_end =
          topo.device(l.a).kind == DeviceKind::Nic || topo.device(l.b).kind == DeviceKind::Nic;
      const bool to_gpu =
          topo.device(l.a).kind == DeviceKind::Gpu || topo.device(l.b).kind == DeviceKind::Gpu;
      if (nic_end && !to_gpu) c.nic_GBps = std::max(c.nic_GBps, l.bandwidth.gigabytes_per_second());
    }
  }
  if (c.nics_per_node == 0 && c.nodes > 1) c.nics_per_node = c.gpus_per_node;
  const bool scale_up = t.scale_up != "pcie" && t.scale_up != "none";
  c.intra_path = scale_up ? nccl::Path::NvLink : nccl::Path::Pcie;
  c.intra_GBps = scale_up ? intra_bandwidth(c.gpu, c.generation) : nccl::kPcieBw;
  c.sharp = t.sharp;
  c.nvls = t.nvls;
  c.amd_host = c.gpu == "a100" || c.gpu == "mi300x";
  c.ll128_network = t.fabric != "tcp";
  for (const FabricPreset& f : fabric_presets()) {
    if (f.technology != t.fabric) continue;
    c.extra_net_step_us = f.extra_step_latency.microseconds();
    break;
  }
  return c;
}

}  // namespace lockstep
