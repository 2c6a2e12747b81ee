// System and fabric presets. Sources are the vendors' datasheets named per entry; the hardware
// figures themselves (GPU, NIC, switch) come from the catalog (catalog.cpp).
#include "lockstep/topology/presets.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string>

#include "lockstep/core/error.hpp"
#include "lockstep/topology/catalog.hpp"

namespace lockstep {

const std::vector<SystemPreset>& system_presets() {
  static const std::vector<SystemPreset> table = {
      // NVIDIA DGX A100 datasheet (2020): 8 x A100 SXM4, 6 NVSwitch, 8 x ConnectX-6 HDR 200G
      // compute NICs (one per GPU), 2 x AMD EPYC 7742 hosts.
      {"dgx-a100", "a100", "hgx_a100", 8, 8, "ib-hdr", 1, true,
       "DGX A100: 8 x A100, NVSwitch gen2, 8 x HDR 200G"},
      // NVIDIA DGX H100 datasheet (2023): 8 x H100 SXM5, 4 NVSwitch gen3, 8 x ConnectX-7 400G
      // (one per GPU, "rails"), 2 x Intel Xeon 8480C.
      {"hgx-h100", "h100", "hgx_h100", 8, 8, "ib-ndr", 1, false,
       "HGX/DGX H100: 8 x H100, NVSwitch gen3 with NVLS, 8 x NDR 400G"},
      // NVIDIA DGX H200 datasheet (2024): the DGX H100 platform with H200 GPUs.
      {"hgx-h200", "h200", "hgx_h100", 8, 8, "ib-ndr", 1, false,
       "HGX/DGX H200: 8 x H200, NVSwitch gen3 with NVLS, 8 x NDR 400G"},
      // NVIDIA DGX B200 datasheet (2024): 8 x B200, 2 NVSwitch gen4, 8 x ConnectX-7 400G
      // (4 OSFP ports), Intel Xeon 8570 hosts.
      {"hgx-b200", "b200", "hgx_b200", 8, 8, "ib-ndr", 1, false,
       "HGX/DGX B200: 8 x B200, NVSwitch gen4 with NVLS, 8 x NDR 400G"},
      // NVIDIA GB200 NVL72 datasheet (2024): 18 compute trays of 2 GB200 superchips (4 GPUs,
      // Grace hosts) in one 72-GPU NVLink domain; 4 x ConnectX-7 400G per tray for scale-out.
      {"gb200-nvl72", "gb200", "nvl72", 4, 4, "ib-ndr", 18, false,
       "GB200 NVL72: node = 4-GPU compute tray, 18 trays per NVLink domain, 4 x NDR 400G"},
      // HGX H20 (NVIDIA spec sheet as reported, 2023): the HGX H100 baseboard (NVSwitch gen3,
      // NVLink 900 GB/s) with H20 GPUs; servers ship 8 x ConnectX-7 400G like HGX H100.
      {"hgx-h20", "h20", "hgx_h100", 8, 8, "ib-ndr", 1, false,
       "HGX H20: 8 x H20 (148 TFLOPS BF16), NVSwitch gen3 with NVLS, 8 x NDR 400G"},
      // DGX/HGX H800 (2023): the H100 platform with NVLink cut to 8 links (400 GB/s); 8 x
      // ConnectX-7 400G (DeepSeek-V3 report: 8 GPUs per node, one 400G InfiniBand NIC each).
      {"hgx-h800", "h800", "hgx_h100", 8, 8, "ib-ndr", 1, false,
       "HGX H800: 8 x H800, NVLink 400 GB/s (8 links) via NVSwitch gen3, 8 x NDR 400G"},
      // HGX A800 (NVIDIA A800 SXM4 product brief, 2022): the HGX A100 8-GPU board (NVSwitch
      // gen2) with NVLink cut to 400 GB/s; servers ship HDR 200G NICs as DGX A100 (8; rows
      // state 4 where a server has 4).
      // Intel or AMD hosts by vendor: the host overhead stays NCCL's default.
      {"hgx-a800", "a800", "hgx_a100", 8, 8, "ib-hdr", 1, false,
       "HGX A800: 8 x A800, NVLink 400 GB/s via NVSwitch gen2, 8 x HDR 200G"},
      // H100 PCIe servers (NVIDIA H100 PCIe product brief; NVIDIA-Certified mainstream servers):
      // 8 x H100 PCIe joined in pairs by NVLink bridges, PCIe Gen5 between pairs, one 400G
      // ConnectX-7 per pair under the pair's PCIe switch (4 per server).
      {"h100-pcie", "h100_pcie", "nvlink_bridge", 8, 4, "ib-ndr", 1, false,
       "H100 PCIe server: 8 x H100 PCIe, NVLink bridge pairs, PCIe Gen5 between pairs, 4 x NDR "
       "400G"},
      // HPE Cray EX254n blade node (HPE QuickSpecs; CSCS Alps): 4 x GH200 joined all-to-all by
      // NVLink (6 links per pair), 4 x HPE Slingshot-11 200G NICs (Cassini), one per GH200.
      {"gh200-quad", "gh200", "gh200_quad", 4, 4, "slingshot", 1, false,
       "HPE Cray EX254n: 4 x GH200, NVLink all-to-all, 4 x Slingshot-11 200G"},
      // NVIDIA DGX B300 / HGX B300 datasheets (2025): 8 x B300 (Blackwell Ultra), NVLink 5 at
      // 1.8 TB/s through 2 NVLink Switch chips as on HGX B200, 8 x ConnectX-8 SuperNIC 800G.
      {"hgx-b300", "b300", "hgx_b200", 8, 8, "ib-xdr", 1, false,
       "HGX/DGX B300: 8 x B300, NVLink 5 switch with NVLS, 8 x XDR 800G"},
      // NVIDIA GB300 NVL72 datasheet (2025): 18 compute trays of 2 GB300 superchips (4 GPUs,
      // Grace hosts) in one 72-GPU NVLink domain; 4 x ConnectX-8 800G per tray.
      {"gb300-nvl72", "gb300", "nvl72", 4, 4, "ib-xdr", 18, false,
       "GB300 NVL72: node = 4-GPU compute tray, 18 trays per NVLink domain, 4 x XDR 800G"},
      // NVIDIA DGX Spark datasheet (2025): one GB10 (1 GPU, no NVLink peer), ConnectX-7 at
      // 200 Gb/s; two units are joined by one QSFP cable (here through a switch).
      {"dgx-spark", "gb10", "none", 1, 1, "roce-200g", 1, false,
       "DGX Spark: 1 x GB10, no scale-up, 1 x ConnectX-7 200GbE RoCE"},
      // AMD Instinct MI300X platform (e.g. Dell PowerEdge XE9680 spec sheet, 2024): 8 x MI300X
      // fully connected by Infinity Fabric, 8 x 400G NICs, AMD EPYC hosts.
      {"mi300x", "mi300x", "xgmi_mesh", 8, 8, "roce-400g", 1, true,
       "MI300X platform: 8 x MI300X, Infinity Fabric mesh, 8 x 400GbE RoCE"},
      // AMD Instinct MI325X platform (datasheet, 2024): the MI300X's 8-GPU UBB with MI325X
      // GPUs; servers ship with 8 x 400G NICs, as the MI300X platforms.
      {"mi325x", "mi325x", "xgmi_mesh", 8, 8, "roce-400g", 1, true,
       "MI325X platform: 8 x MI325X, Infinity Fabric mesh, 8 x 400GbE RoCE"},
      // AMD Instinct MI355X platform (datasheet, 2025; OCI BM.GPU.MI355X): 8 x MI355X on a UBB
      // fully connected by Infinity Fabric, 8 x AMD Pensando Pollara 400 AI NICs (400G RoCE),
      // AMD EPYC hosts.
      {"mi355x", "mi355x", "xgmi_mesh_mi355x", 8, 8, "pollara-400g", 1, true,
       "MI355X platform: 8 x MI355X, Infinity Fabric mesh, 8 x Pollara 400G RoCE"},
      // L40S servers (NVIDIA L40S datasheet: PCIe Gen4 x16, no NVLink; NVIDIA Enterprise
      // Reference Architecture "2-8-5-200": 2 CPUs, 8 GPUs, 5 NICs of which 4 east-west 400G
      // Spectrum-X RoCE SuperNICs, 200 Gb/s per GPU, Intel Xeon hosts): 8 x L40S meeting over
      // PCIe, 4 x 400GbE RoCE, each NIC shared by the 2 GPUs under its PCIe switch.
      {"l40s", "l40s", "pcie_switch", 8, 4, "roce-400g", 1, false,
       "L40S server: 8 x L40S PCIe Gen4, no NVLink, 4 x 400GbE RoCE (200G per GPU)"},
      // A100 PCIe servers (NVIDIA A100 PCIe datasheet: NVLink bridge for 2 GPUs, 600 GB/s
      // bidirectional, PCIe Gen4 x16): 8 x A100 80GB PCIe in bridged pairs, PCIe Gen4 between
      // pairs; one HDR 200G ConnectX-6 per pair under the pair's PCIe switch (4 per server, the
      // layout of h100-pcie: an assumption, --nics-per-node changes it).
      {"a100-pcie", "a100_pcie", "nvlink_bridge", 8, 4, "ib-hdr", 1, false,
       "A100 PCIe server: 8 x A100 80GB PCIe, NVLink bridge pairs, PCIe Gen4 between pairs, 4 x "
       "HDR 200G"},
      // NERSC Perlmutter GPU node (NERSC "Perlmutter Architecture"; HPE Cray EX235n): 1 x AMD
      // EPYC 7763 (Milan), 4 x A100 SXM4 40GB all-to-all by NVLink 3 (4 links per pair), 4 x HPE
      // Slingshot-11 200G NICs (Cassini), one per GPU, on PCIe Gen4.
      {"perlmutter", "a100_40gb", "a100_quad", 4, 4, "slingshot", 1, true,
       "NERSC Perlmutter: 4 x A100 40GB, NVLink 3 all-to-all, 4 x Slingshot-11 200G"},
      // NVIDIA DGX-1 with V100 (DGX-1 datasheet; system architecture whitepaper WP-08437-002):
      // 8 x V100 SXM2 in the NVLink 2 hybrid cube mesh, 4 x EDR 100G InfiniBand (ConnectX-4),
      // one per pair of GPUs under a PCIe switch, 2 x Intel Xeon E5-2698 v4 hosts. AWS
      // p3dn.24xlarge wires the same GPUs and mesh (V100 32GB) with one 100G EFA device.
      {"dgx1-v100", "v100", "dgx1_cube_mesh", 8, 4, "ib-edr", 1, false,
       "DGX-1 V100: 8 x V100 SXM2, NVLink 2 hybrid cube mesh, 4 x EDR 100G"},
      // AWS g5.48xlarge (AWS's G5 instance page): 8 x NVIDIA A10G (24 GB) on PCIe, no NVLink,
      // 2nd generation AMD EPYC hosts, 100 Gbps networking with EFA: one 100G EFA device.
      {"a10g", "a10g", "pcie_switch", 8, 1, "efa", 1, true,
       "AWS g5.48xlarge: 8 x A10G PCIe Gen4, no NVLink, 1 x 100G EFA"},
  };
  return table;
}

const std::vector<FabricPreset>& fabric_presets() {
  // What a network step costs beyond NCCL's table (extra_step_latency): NCCL's per-step network
  // latencies (tuning.cc hwLat, nccl/constants) were measured over InfiniBand verbs, whose
  // one-way small-message latency is about 1 us (perftest ib_send_lat on ConnectX-6/7). A
  // transport whose one-way message latency through its NCCL path (plugin, provider, NIC) is L
  // adds L - 1 us to every network step. The sources of each L are next to its row and in
  // docs/nccl-model.md "Transports"; where no vendor figure exists the row says "estimate".
  // nic_latency (GPU to wire, one way) is descriptive: the graph's links carry the path latency.
  static const std::vector<FabricPreset> table = {
      // InfiniBand HDR 200 Gb/s: ConnectX-6 + Quantum QM8700 (SHARPv2).
      {"ib-hdr", "infiniband", "cx6_hdr", Bandwidth::gbps(200), "qm8700", Time::us(1), Time::zero(),
       true, "InfiniBand HDR 200G, Quantum QM8700, SHARPv2", 0, "", ""},
      // InfiniBand NDR 400 Gb/s: ConnectX-7 + Quantum-2 QM9700 (SHARPv3).
      {"ib-ndr", "infiniband", "cx7_ndr", Bandwidth::gbps(400), "qm9700", Time::us(1), Time::zero(),
       true, "InfiniBand NDR 400G, Quantum-2 QM9700, SHARPv3", 0, "", ""},
      // InfiniBand XDR 800 Gb/s: ConnectX-8 + Quantum-X800 Q3400 (SHARPv4).
      {"ib-xdr", "infiniband", "cx8_xdr", Bandwidth::gbps(800), "q3400", Time::us(1), Time::zero(),
       true, "InfiniBand XDR 800G, Quantum-X800 Q3400, SHARPv4", 0, "", ""},
      // RoCEv2: the same verbs and NCCL IB transport on the same ConnectX silicon (ConnectX-7
      // datasheet: 1-400GbE), so the same per-step cost; the Ethernet switches' longer port-to-
      // port latency is the graph's (catalog). ConnectX-7 ports at 200GbE, Spectrum-4 in 400G mode.
      {"roce-200g", "roce", "cx7_400gbe", Bandwidth::gbps(200), "sn5600_400g", Time::us(1),
       Time::zero(), false, "RoCEv2 200GbE, ConnectX-7, Spectrum-4", 0, "", ""},
      {"roce-400g", "roce", "cx7_400gbe", Bandwidth::gbps(400), "sn5600_400g", Time::us(1),
       Time::zero(), false, "RoCEv2 400GbE, ConnectX-7, Spectrum-4", 0, "", ""},
      {"roce-800g", "roce", "cx8_800gbe", Bandwidth::gbps(800), "sn5600", Time::us(1), Time::zero(),
       false, "RoCEv2 800GbE, ConnectX-8, Spectrum-4", 0, "", ""},
      // AMD Pensando Pollara 400 AI NIC (AMD product brief, 2024): 400GbE RoCEv2, UEC-ready, used
      // by RCCL through the same verbs path as a ConnectX (no latency figure published: RoCE's).
      // The switches are not named by the clusters that use it: Tomahawk 5 stands in.
      {"pollara-400g", "roce", "pollara_400g", Bandwidth::gbps(400), "tomahawk5_400g", Time::us(1),
       Time::zero(), false, "RoCEv2 400GbE, AMD Pensando Pollara 400 AI NIC", 0, "", ""},
      // AWS EFA: one NIC per 100 Gb/s EFA device. p5/p5e (EC2 docs): 3,200 Gb/s over 32
      // devices for 8 H100s (4 per GPU, which aws-ofi-nccl stripes as one); p4d/p4de: 4 x 100G
      // per node (give --nics-per-node 4). SRD through libfabric and aws-ofi-nccl: one-way
      // latency about 15 us (Shalev et al., "A Cloud-Optimized Transport Protocol for Elastic
      // and Scalable HPC", IEEE Micro 2020; AWS's osu_latency figures), so 14 us per step
      // beyond InfiniBand. AWS's switches are not sold: Tomahawk 5 stands in.
      {"efa", "efa", "efa_p5", Bandwidth::gbps(100), "tomahawk5_400g", Time::us(5), Time::us(14),
       false, "AWS EFA (SRD), one NIC per 100G device, 32 per p5 node", 32, "", ""},
      // Plain Ethernet with NCCL's socket transport at 100GbE (ConnectX-7 at 100GbE): kernel TCP
      // and NCCL's socket helper threads, about 30 us per step more (estimate).
      {"tcp", "tcp", "cx7_400gbe", Bandwidth::gbps(100), "tomahawk5_400g", Time::us(10),
       Time::us(30), false, "TCP sockets over 100GbE Ethernet", 0, "", ""},
      // GCP A3 (a3-highgpu-8g) GPUDirect-TCPX: 4 x 200 Gb/s gVNIC for GPU traffic (GCP machine
      // types doc), kernel TCP with device-memory receive through the RxDM daemon. Google's
      // documented NCCL profile for it sets NCCL_ALGO=Ring, NCCL_PROTO=Simple. Per-step cost:
      // kernel TCP in a VM, about 20 us one way (estimate; no figure published). Google's
      // Jupiter fabric is not sold: Tomahawk 5 stands in.
      {"tcpx", "tcp", "gvnic_200g", Bandwidth::gbps(200), "tomahawk5_400g", Time::us(10),
       Time::us(20), false, "GCP GPUDirect-TCPX, 4 x 200G gVNIC per A3 node", 4, "Ring", "Simple"},
      // GCP A3 Mega (a3-megagpu-8g) GPUDirect-TCPXO: 8 x 200 Gb/s NICs, receive path offloaded to
      // the NIC (GCP docs); its documented profile runs NCCL_ALGO=Ring,Tree and
      // NCCL_PROTO=Simple,LL128. Per-step cost about 10 us one way (estimate).
      {"tcpxo", "tcp", "gvnic_200g", Bandwidth::gbps(200), "tomahawk5_400g", Time::us(5),
       Time::us(10), false, "GCP GPUDirect-TCPXO, 8 x 200G per A3 Mega node", 8, "Ring,Tree",
       "Simple,LL128"},
      // HPE Slingshot-11: Cassini-1 200 Gb/s NICs, Rosetta switches (De Sensi et al., "An
      // In-Depth Analysis of the Slingshot Interconnect", SC20: ~2 us MPI latency end to end),
      // NCCL through aws-ofi-nccl and libfabric's CXI provider: about 2 us one way, 1 us per step
      // beyond InfiniBand (estimate).
      {"slingshot", "slingshot", "cassini1_200g", Bandwidth::gbps(200), "rosetta", Time::us(1),
       Time::us(1), false, "HPE Slingshot-11, Cassini-1 200G, Rosetta", 0, "", ""},
      // InfiniBand EDR 100 Gb/s (DGX-1's ConnectX-4 EDR; ConnectX-5 EDR datasheet). The switch
      // is a stand-in: Quantum QM8700 (HDR ports run EDR) for an EDR Switch-IB 2, whose SHARPv1
      // the model has not got (no SHARP here).
      {"ib-edr", "infiniband", "cx5_edr", Bandwidth::gbps(100), "qm8700", Time::us(1), Time::zero(),
       false, "InfiniBand EDR 100G, ConnectX-5 (QM8700 stand-in switch)", 0, "", ""},
  };
  return table;
}

namespace {
template <typename T>
const T& find_named(const std::vector<T>& table, const std::string& name, const std::string& field,
                    const char* what) {
  std::string known;
  for (const auto& e : table) {
    if (e.name == name) return e;
    known += (known.empty() ? "" : ", ") + e.name;
  }
  throw InputError(field,
                   std::string("unknown ") + what + " '" + name + "' (known: " + known + ")");
}
}  // namespace

const SystemPreset& system_preset(const std::string& name, const std::string& field) {
  return find_named(system_presets(), name, field, "system");
}
const FabricPreset& fabric_preset(const std::string& name, const std::string& field) {
  return find_named(fabric_presets(), name, field, "fabric");
}

std::uint32_t DomainFill::domain_of(std::uint32_t n) const {
  const std::uint32_t in_large = large * (small + 1);
  return n < in_large ? n / (small + 1) : large + (n - in_large) / small;
}
std::uint32_t DomainFill::first_node(std::uint32_t d) const {
  return d <= large ? d * (small + 1) : large * (small + 1) + (d - large) * small;
}

DomainFill fill_domains(std::uint32_t nodes, std::uint32_t per_domain) {
  DomainFill f;
  if (nodes == 0 || per_domain == 0) return f;
  f.domains = (nodes + per_domain - 1) / per_domain;
  f.small = nodes / f.domains;
  f.large = nodes % f.domains;
  return f;
}

DomainFill PresetCluster::fill() const {
  return fill_domains(nodes, system.domain_nodes);
}
std::uint32_t PresetCluster::domain_gpus() const {
  return fill().largest() * gpus_per_node;
}
std::uint32_t PresetCluster::domains() const {
  return fill().domains;
}

// GPUs of the instances whose NIC counts fabric_presets() lists (FabricPreset::nics_per_node:
// AWS p5, GCP A3 and A3 Mega, 8 GPUs each), so that another system gets the same NICs per GPU
// (a 4-GPU GB200 tray on efa: 16 devices, not 32).
constexpr std::uint32_t kInstanceGpus = 8;

PresetCluster resolve_preset(const PresetRequest& r) {
  PresetCluster c;
  c.system = system_preset(r.system);
  c.fabric = fabric_preset(r.fabric.empty() ? c.system.fabric : r.fabric);
  if (r.nodes == 0) throw InputError("nodes", "must be at least 1");
  if (r.nodes > 1'000'000) throw InputError("nodes", "at most 1,000,000 nodes");
  c.nodes = r.nodes;
  c.gpus_per_node = r.gpus_per_node == 0 ? c.system.gpus_per_node : r.gpus_per_node;
  if (c.gpus_per_node > c.system.gpus_per_node)
    throw InputError("gpus_per_node",
                     c.system.name + " ships " + std::to_string(c.system.gpus_per_node) +
                         " GPUs per node, cannot use " + std::to_string(c.gpus_per_node));
  // With fewer GPUs than shipped, only the NICs next to the GPUs in use serve them (each GPU's
  // rail NIC), unless the user says how many NICs to use.
  if (r.nics_per_node > 0) {
    if (r.nics_per_node > 64) throw InputError("nics_per_node", "at most 64 NICs per node");
    c.nics_per_node = r.nics_per_node;
  } else {
    // The fabric's own count when the instance ships one (p5: 32 EFA devices for its 8 GPUs),
    // per GPU of that instance, else the system's per GPU it ships; a system that ships on that
    // fabric (AWS G5's one EFA device) keeps its own.
    const bool instance = c.fabric.nics_per_node > 0 && c.fabric.name != c.system.fabric;
    const std::uint32_t shipped = instance ? c.fabric.nics_per_node : c.system.nics_per_node;
    const std::uint32_t per = instance ? kInstanceGpus : c.system.gpus_per_node;
    c.nics_per_node = (shipped * c.gpus_per_node + per - 1) / per;
  }
  c.nic_speed = r.nic_speed.bytes_per_second() > 0 ? r.nic_speed : c.fabric.nic_speed;
  if (r.sharp && !c.fabric.sharp_capable)
    throw InputError("sharp", "the switches of fabric " + c.fabric.name +
                                  " have no in-network reduction (SHARP needs ib-hdr, ib-ndr "
                                  "or ib-xdr)");
  c.sharp = r.sharp;
  c.routing = r.routing;
  c.qps_per_connection = r.qps_per_connection;
  if (r.domain_nodes > 0) {
    if (r.domain_nodes > c.system.domain_nodes)
      throw InputError("domain_nodes", c.system.name + " has NVLink domains of at most " +
                                           std::to_string(c.system.domain_nodes) +
                                           " node(s), cannot use " +
                                           std::to_string(r.domain_nodes));
    c.system.domain_nodes = r.domain_nodes;
  }
  c.nvls = c.system.scale_up != "none" && scale_up_spec(c.system.scale_up).nvls;
  return c;
}

PresetRequest preset_request(const ArgNode& args) {
  PresetRequest r;
  r.system = args.get_string("system", r.system);
  r.fabric = args.get_string("fabric", "");
  r.nodes = static_cast<std::uint32_t>(args.get_int("nodes", 1, 1, 1'000'000));
  r.gpus_per_node = static_cast<std::uint32_t>(args.get_int("gpus_per_node", 0, 1, 72));
  r.nics_per_node = static_cast<std::uint32_t>(args.get_int("nics_per_node", 0, 1, 64));
  r.nic_speed = args.get_bandwidth("nic_speed", Bandwidth());
  r.sharp = args.get_bool("sharp", false);
  r.domain_nodes = static_cast<std::uint32_t>(args.get_int("domain_nodes", 0, 1, 1024));
  if (const ArgNode* routing = args.find("routing"))
    r.routing = routing->as_choice(routing_policy_names());
  r.qps_per_connection = static_cast<std::uint32_t>(args.get_int("qps_per_connection", 0, 1, 128));
  try {
    resolve_preset(r);  // report override errors at the map's location
  } catch (const InputError& e) {
    const ArgNode* at = args.find(e.field());
    if (at != nullptr) at->fail(e.bare_message());
    args.fail(e.bare_message());
  }
  return r;
}

ArgNode rail_optimized_args(const PresetCluster& c, const std::string& path) {
  ArgNode args = ArgNode::map(path);
  auto put = [&](const std::string& key, const std::string& value) {
    args.set(key, ArgNode::scalar(value, path + "." + key));
  };
  const SwitchSpec& sw = switch_spec(c.fabric.switch_model);
  put("builder", "rail_optimized");
  put("nodes", std::to_string(c.nodes));
  // A SuperPOD scalable unit holds 32 nodes (or half a smaller switch's ports); a cluster smaller
  // than one SU gets an SU of its own size, so its leaves' uplinks and spines are sized for the
  // nodes it has rather than for 32 (one node would otherwise buy four spines it never uses).
  std::uint32_t su = std::min<std::uint32_t>(32, sw.radix / 2);
  // Rack-scale systems (NVL72): an SU is whole racks, as the GB200 SuperPOD RA builds it (an SU
  // of 8 NVL72 racks, 576 GPUs), as many as a leaf's half ports hold and at most 8; a rack is
  // the NVLink domain as filled (32 trays: two of 16), so no rack straddles two SUs' leaves.
  if (system_preset(c.system.name).domain_nodes > 1) {
    const std::uint32_t rack = c.domain_gpus() / c.gpus_per_node;
    const std::uint32_t cap = std::max<std::uint32_t>(sw.radix / 2, rack);
    su = rack * std::clamp<std::uint32_t>(cap / rack, 1, 8);
  }
  put("nodes_per_su", std::to_string(std::clamp<std::uint32_t>(c.nodes, 1, su)));
  put("gpu", c.system.gpu);
  put("scale_up", c.system.scale_up);
  // An NVLink partition smaller than the rack (the builder fills partitions as it fills racks).
  const SystemPreset& shipped = system_preset(c.system.name);
  if (c.system.domain_nodes != shipped.domain_nodes)
    put("scale_up_gpus", std::to_string(c.system.domain_nodes * c.gpus_per_node));
  put("gpus_per_node", std::to_string(c.gpus_per_node));
  put("nics_per_node", std::to_string(std::min(c.nics_per_node, c.gpus_per_node)));
  put("nic", c.fabric.nic);
  put("switch", c.fabric.switch_model);
  // More NICs than GPUs (AWS p5: 32 x 100G for 8 GPUs): NCCL sees one fused NIC per GPU at
  // their summed speed (nccl/cluster.cpp fuse_nics), and so does the graph: one NIC per GPU on
  // ports of that speed.
  const std::uint32_t fused =
      c.nics_per_node > c.gpus_per_node ? c.nics_per_node / c.gpus_per_node : 1;
  put("port_speed", std::to_string(c.nic_speed.gigabits_per_second() * fused) + "Gbps");
  // The transport decides NCCL's network protocol choice and the packet engine's flow control;
  // without it a TCP preset would pass for RoCE because it uses the same Ethernet switch.
  put("transport", c.fabric.technology);
  if (!c.routing.empty()) put("routing", c.routing);
  if (c.qps_per_connection != 0) put("qps_per_connection", std::to_string(c.qps_per_connection));
  return args;
}

}  // namespace lockstep
