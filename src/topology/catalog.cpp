// The hardware catalog: PCIe links, CPU socket links, the host wiring of systems with no switch,
// and the lookups by name over every table (the tables themselves: catalog_gpus.cpp,
// catalog_network.cpp, catalog_cables.cpp). Every figure carries its public source.
#include <fmt/format.h>

#include "catalog_tables.hpp"
#include "lockstep/core/error.hpp"

namespace lockstep {
namespace catalog_tables {

const std::vector<PcieSpec>& pcies() {
  // PCI-SIG base specifications: Gen4 16 GT/s and Gen5 32 GT/s per lane, 128b/130b encoding;
  // x16 per direction = 31.5 GB/s (Gen4) and 63.0 GB/s (Gen5). Gen6 (PCIe 6.0, 2022): 64 GT/s
  // PAM4 per lane in 256 B flits of which 236 B carry TLPs: x16 = 128 x 236 / 256 = 118.0 GB/s
  // (what an 800 Gb/s NIC needs). One-way latency ~250 ns through the root complex / switch
  // (estimate). NCCL's figure (src/graph/topo.cc, kvDictPciGen, "x100 Mbps per lane": 16 GT/s
  // -> 120, 32 -> 240, 64 -> 480; a link is width x that / 80 GB/s) is 75% of the signalling
  // rate: 24, 48 and 96 GB/s for x16, what nvbandwidth / bandwidthTest measure host-to-device
  // within a few percent (~25 GB/s Gen4, ~50-55 Gen5). It caps what a GPU moves to its NICs.
  static const std::vector<PcieSpec> table = {
      {"gen4_x16", Bandwidth::gBps(16 * 16.0 / 8 * 128 / 130), Time::ns(250),
       Bandwidth::gBps(16 * 120 / 80.0)},
      {"gen5_x16", Bandwidth::gBps(16 * 32.0 / 8 * 128 / 130), Time::ns(250),
       Bandwidth::gBps(16 * 240 / 80.0)},
      {"gen6_x16", Bandwidth::gBps(16 * 64.0 / 8 * 236 / 256), Time::ns(250),
       Bandwidth::gBps(16 * 480 / 80.0)},
      // Gen3 (8 GT/s, 128b/130b: 15.75 GB/s per direction at x16; kvDictPciGen 8 GT/s -> 60, so
      // NCCL's 12 GB/s, its PCI_BW): V100's host link (V100 datasheet).
      {"gen3_x16", Bandwidth::gBps(16 * 8.0 / 8 * 128 / 130), Time::ns(250),
       Bandwidth::gBps(16 * 60 / 80.0)},
  };
  return table;
}

// The socket link of each CPU generation, per direction, both sockets' links summed: a link
// moves 16 data bits per transfer each way (Intel QPI and UPI: 20 lanes, 16 of them data; an AMD
// xGMI link is 16 lanes of 1 bit). One hop's latency ~100 ns is an estimate (neither vendor
// publishes one per hop). NCCL rates the link by the CPUs alone (topo.cc ncclTopoConnectCpus:
// Intel x86 before Skylake topo.h QPI_BW 6 GB/s, from Skylake on SKL_QPI_BW 10, AMD x86 AMD_BW
// 16), whatever the links' rate.
const std::vector<CpuLinkSpec>& cpu_links() {
  static const std::vector<CpuLinkSpec> table = {
      // Intel Xeon E5-2698 v4 product specification (the DGX-1's): 2 QPI links at 9.6 GT/s,
      // 9.6 x 2 B = 19.2 GB/s per link per direction, 38.4 over both.
      {"qpi_broadwell", "Intel Xeon E5 v4 (Broadwell)", 2, 9.6, Bandwidth::gBps(2 * 9.6 * 2),
       Time::ns(100), Bandwidth::gBps(6)},
      // Intel Xeon Platinum 8168 product specification (Skylake-SP, the DGX-2's): 3 UPI links at
      // 10.4 GT/s, 20.8 GB/s per link per direction, 62.4 over the three (a two-socket board
      // that wires all three; some wire two).
      {"upi_skylake", "Intel Xeon Scalable (Skylake-SP)", 3, 10.4, Bandwidth::gBps(3 * 10.4 * 2),
       Time::ns(100), Bandwidth::gBps(10)},
      // AMD EPYC 9004 (Genoa) architecture overview: a two-socket server joins the sockets by up
      // to 4 x16 xGMI links at 32 Gb/s per lane, 16 x 32 / 8 = 64 GB/s per link per direction,
      // 256 over four.
      {"xgmi_genoa", "AMD EPYC 9004 (Genoa)", 4, 32, Bandwidth::gBps(4 * 16 * 32.0 / 8),
       Time::ns(100), Bandwidth::gBps(16)},
  };
  return table;
}

}  // namespace catalog_tables

namespace {

using catalog_tables::cables;
using catalog_tables::cpu_links;
using catalog_tables::gpus;
using catalog_tables::nics;
using catalog_tables::pcies;
using catalog_tables::scale_ups;
using catalog_tables::switches;

template <typename Spec>
std::size_t index_of(const std::vector<Spec>& table, std::string_view name, std::string_view field,
                     const char* what) {
  for (std::size_t i = 0; i < table.size(); ++i) {
    if (table[i].name == name) return i;
  }
  std::string known;
  for (const auto& s : table) {
    if (!known.empty()) known += ", ";
    known += s.name;
  }
  throw InputError(std::string(field),
                   fmt::format("unknown {} '{}' (known: {})", what, name, known));
}

}  // namespace

std::uint64_t ScaleUpSpec::chips_for(std::uint64_t gpus, std::uint32_t links_per_gpu) const {
  if (chip_ports == 0 || gpus == 0) return 0;
  if (fixed_chips != 0 && domain_gpus != 0) {
    return fixed_chips * ((gpus + domain_gpus - 1) / domain_gpus);
  }
  const std::uint64_t gpu_ports = gpus * links_per_gpu;
  if (gpus <= chip_ports) {
    // One level: every GPU link lands on a chip port.
    return (gpu_ports + chip_ports - 1) / chip_ports;
  }
  // Two levels (a non-blocking fat tree of chips): level-1 chips use half their ports down,
  // level-2 chips all of theirs, so chips = gpu_ports * (2/P + 1/P).
  const std::uint64_t level1 = (2 * gpu_ports + chip_ports - 1) / chip_ports;
  const std::uint64_t level2 = (gpu_ports + chip_ports - 1) / chip_ports;
  return level1 + level2;
}

std::span<const GpuSpec> gpu_catalog() {
  return gpus();
}
std::span<const NicSpec> nic_catalog() {
  return nics();
}
std::span<const SwitchSpec> switch_catalog() {
  return switches();
}
std::span<const ScaleUpSpec> scale_up_catalog() {
  return scale_ups();
}
std::span<const CableSpec> cable_catalog() {
  return cables();
}
std::span<const PcieSpec> pcie_catalog() {
  return pcies();
}
std::span<const CpuLinkSpec> cpu_link_catalog() {
  return cpu_links();
}

const GpuSpec& gpu_spec(std::string_view name, std::string_view field) {
  return gpus()[index_of(gpus(), name, field, "GPU")];
}
const NicSpec& nic_spec(std::string_view name, std::string_view field) {
  return nics()[index_of(nics(), name, field, "NIC")];
}
const SwitchSpec& switch_spec(std::string_view name, std::string_view field) {
  return switches()[index_of(switches(), name, field, "switch")];
}
const ScaleUpSpec& scale_up_spec(std::string_view name, std::string_view field) {
  return scale_ups()[index_of(scale_ups(), name, field, "scale-up system")];
}
const PcieSpec& pcie_spec(std::string_view name, std::string_view field) {
  return pcies()[index_of(pcies(), name, field, "PCIe link")];
}
const CpuLinkSpec& cpu_link_spec(std::string_view name, std::string_view field) {
  return cpu_links()[index_of(cpu_links(), name, field, "CPU link")];
}
// The DGX-1 V100 hybrid cube mesh (whitepaper WP-08437-002, figure "DGX-1 uses an 8-GPU hybrid
// cube-mesh interconnection network topology"; as `nvidia-smi topo -m` prints it on a DGX-1V or
// a p3.16xlarge: NV2 = two links, NV1 = one): GPUs 0-3 and 4-7 are two fully connected quads,
// each GPU tied to its twin in the other quad (0-4, 1-5, 2-6, 3-7). Every GPU has 2 peers on 2
// links, 2 on 1, and 3 with none: 6 links each.
const std::vector<std::vector<std::uint32_t>>& mesh_wiring(std::string_view scale_up) {
  static const std::vector<std::vector<std::uint32_t>> none;
  static const std::vector<std::vector<std::uint32_t>> dgx1 = {
      // 0  1  2  3  4  5  6  7
      {0, 1, 1, 2, 2, 0, 0, 0},  // GPU 0
      {1, 0, 2, 1, 0, 2, 0, 0},  // GPU 1
      {1, 2, 0, 2, 0, 0, 1, 0},  // GPU 2
      {2, 1, 2, 0, 0, 0, 0, 1},  // GPU 3
      {2, 0, 0, 0, 0, 1, 1, 2},  // GPU 4
      {0, 2, 0, 0, 1, 0, 2, 1},  // GPU 5
      {0, 0, 1, 0, 1, 2, 0, 2},  // GPU 6
      {0, 0, 0, 1, 2, 1, 2, 0},  // GPU 7
  };
  return scale_up == "dgx1_cube_mesh" ? dgx1 : none;
}

// NVIDIA DGX-1 with Tesla V100 system architecture whitepaper (WP-08437-002), figure "DGX-1
// PCIe topology": four PCIe switches, each joining two GPUs and one EDR NIC to a CPU's root
// complex by a Gen3 x16 link, two switches per CPU (GPUs 0-3 on CPU 0, 4-7 on CPU 1). The two
// Xeon E5-2698 v4 (Broadwell) are joined by QPI (cpu_links above: 38.4 GB/s per direction).
const HostPcieTree& host_pcie_tree(std::string_view scale_up) {
  static const HostPcieTree none;
  static const HostPcieTree dgx1{2, 2, &cpu_link_spec("qpi_broadwell")};
  return scale_up == "dgx1_cube_mesh" ? dgx1 : none;
}

// NVIDIA DGX A100 user guide (PCIe Gen4 switches to the ConnectX-6 NICs); DGX H100 / DGX B200
// datasheets (PCIe Gen5 to ConnectX-7); AMD Instinct MI300X OAM: PCIe Gen5 x16 host interface.
// Blackwell Ultra (B300, GB300) and ConnectX-8 are PCIe Gen6 (HGX B300 / GB300 NVL72
// datasheets; ConnectX-8 SuperNIC datasheet: PCIe Gen6 x16 with a built-in PCIe switch).
const PcieSpec& default_gpu_nic_pcie(std::string_view gpu) {
  // A100-based (SXM4 40 / 80 GB, A800, A100 PCIe) and L40S: PCIe Gen4 x16 (datasheets).
  if (gpu == "a100" || gpu == "a800" || gpu == "a100_pcie" || gpu == "a100_40gb" || gpu == "l40s" ||
      gpu == "a10g")
    return pcie_spec("gen4_x16");
  if (gpu == "b300" || gpu == "gb300") return pcie_spec("gen6_x16");
  if (gpu == "v100") return pcie_spec("gen3_x16");  // V100 SXM2 datasheet
  return pcie_spec("gen5_x16");
}
std::uint16_t gpu_index(std::string_view name) {
  return static_cast<std::uint16_t>(index_of(gpus(), name, "gpu", "GPU"));
}
std::uint16_t nic_index(std::string_view name) {
  return static_cast<std::uint16_t>(index_of(nics(), name, "nic", "NIC"));
}
std::uint16_t switch_index(std::string_view name) {
  return static_cast<std::uint16_t>(index_of(switches(), name, "switch", "switch"));
}
std::uint16_t scale_up_index(std::string_view name) {
  return static_cast<std::uint16_t>(index_of(scale_ups(), name, "scale_up", "scale-up system"));
}

const NicSpec& default_nic_for(const SwitchSpec& sw) {
  for (const NicSpec& n : nics()) {
    const bool same_fabric =
        sw.fabric == "infiniband" ? n.fabric == "infiniband" : n.fabric == "roce";
    if (same_fabric && n.port_speed == sw.port_speed) return n;
  }
  return nics()[index_of(nics(), "cx7_ndr", "nic", "NIC")];
}

}  // namespace lockstep
