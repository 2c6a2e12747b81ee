#pragma once
// The hardware catalog: every GPU, NIC, switch, scale-up system, cable and optic lockstep knows,
// each figure with its public source (see src/topology/catalog*.cpp). Builders look parts up by
// name ("h100", "cx7_ndr", "qm9700", "osfp_800g_sr8"); an unknown name is an InputError that lists
// the known ones. Device::model stores the index of a part within its table, so engines and the
// inventory can find a device's spec with gpu_catalog()[device.model] and friends.
//
// Names (lower case, stable; scenario files use them):
//   GPUs:      a100, h100, h200, b200, gb200, h20, h800, h100_pcie, gh200, b300, gb300, gb10,
//              mi300x, mi325x, mi355x, l40s, a100_pcie, a100_40gb, v100, a10g
//   NICs:      cx6_hdr, cx7_ndr, cx7_400gbe, bf3_400gbe, cx8_xdr, cx8_800gbe, efa_p5, cx5_edr
//   switches:  qm8700, qm9700, q3400, sn5600, sn5600_400g, tomahawk5, tomahawk5_400g,
//              tomahawk3, tomahawk4, sn3700, sn4700, rosetta, arista_7816r3 (a chassis)
//   scale-up:  hgx_a100, hgx_h100, hgx_b200, nvl72, nvlink_domain, nvlink_bridge, gh200_quad,
//              xgmi_mesh, xgmi_mesh_mi355x, a100_quad, pcie_switch, dgx1_cube_mesh
//   cables:    dac, aec, sr (multimode optics), dr (single-mode optics), zr (long-haul coherent)
//              -- the exact part is chosen by speed (see cable_for()).
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "lockstep/core/units.hpp"
#include "lockstep/topology/graph.hpp"

namespace lockstep {

/// What the training kernel model (docs/kernel-model.md) needs of a GPU besides its peaks: the
/// streaming multiprocessors (AMD: compute units) that GEMM tiles and attention blocks spread
/// over, HBM bandwidth for memory-bound kernels, and the fraction of a dense peak that large,
/// well-shaped kernels reach in public measurements (0: no figure; the kernel model then refuses
/// the GPU and asks for `efficiency`).
struct KernelRates {
  std::uint32_t sms = 0;
  Bandwidth hbm_bandwidth;
  double gemm_bf16 = 0;      // large GEMMs, of the BF16 dense peak
  double gemm_fp8 = 0;       // of the FP8 dense peak
  double gemm_fp4 = 0;       // of the FP4 dense peak
  double attention_fwd = 0;  // FlashAttention's forward pass, of the BF16 dense peak
  double attention_bwd = 0;  // its backward pass (FLOPs counted as 2.5 x the forward's)
  double hbm_fraction = 0;   // of hbm_bandwidth that streaming (element-wise) kernels reach
};

struct GpuSpec {
  std::string name;              // catalog key, e.g. "h100"
  std::string display;           // "NVIDIA H100 SXM5 80GB"
  Bandwidth scale_up_bandwidth;  // NVLink / Infinity Fabric per GPU, per direction
  std::uint32_t scale_up_links;  // NVLink (or xGMI) links per GPU
  Bytes hbm;                     // memory capacity
  double bf16_dense_flops;       // peak dense BF16 FLOP/s (no sparsity)
  double power_w;                // TDP / TBP
  double price_usd;              // approximate street price
  std::string default_scale_up;  // scale-up catalog name used when the scenario does not say
  std::uint32_t default_gpus_per_node;
  // Peak dense FP8 and FP4 tensor FLOP/s (no sparsity); 0: the datasheet gives none (A100 has
  // no FP8 tensor cores, Hopper and CDNA 3 no FP4).
  double fp8_dense_flops = 0;
  double fp4_dense_flops = 0;
  KernelRates kernels;
};

struct NicSpec {
  std::string name;      // "cx7_ndr"
  std::string display;   // "NVIDIA ConnectX-7 NDR 400G"
  std::string fabric;    // infiniband | roce | efa
  Bandwidth port_speed;  // per port, per direction
  std::uint32_t ports;   // ports a GPU's share of this adapter drives (efa_p5: 4 x 100G per GPU)
  double power_w;
  double price_usd;
  Bandwidth injection() const { return port_speed * static_cast<double>(ports); }
};

struct SwitchSpec {
  std::string name;     // "qm9700"
  std::string display;  // "NVIDIA Quantum-2 QM9700 (64x400G NDR)"
  std::string fabric;   // infiniband | ethernet
  std::uint32_t radix;  // ports at port_speed
  Bandwidth port_speed;
  Time latency;  // port-to-port, cut-through, no congestion
  Bytes buffer;  // packet buffer (shared)
  double power_w;
  double price_usd;
  bool sharp;  // in-network reduction (InfiniBand SHARP)
  // SHARP generation (2: Quantum HDR, 3: Quantum-2 NDR, 4: Quantum-X800 XDR; 0: none). From v2 on
  // large messages stream through the aggregation tree at line rate, so the tree's throughput is
  // its ports'; what a deeper tree costs is latency: each level above the leaf adds a traversal
  // up and one down plus the level's aggregation (waiting for its children and reducing).
  std::uint32_t sharp_version;
  Time sharp_level_latency;  // aggregation latency per tree level (beyond port-to-port)
};

/// How a switch chip buffers packets, as the packet engine's `buffers: {model: as_built}` uses
/// it (docs/packet-engine.md "Buffers as built"). The buffer's size is SwitchSpec::buffer; this
/// adds the allocation cell (a packet takes whole cells) and the ECN marking thresholds of the
/// vendor's RoCE configuration. Zero = not published (the engine's setting applies).
struct SwitchBufferSpec {
  std::string_view switch_name;  // a SwitchSpec::name
  Bytes cell;
  Bytes ecn_kmin, ecn_kmax;
  double ecn_pmax;
  std::string_view source;
};

/// The buffer details of switch `name`, or nullptr when the catalog has none.
const SwitchBufferSpec* switch_buffer_spec(std::string_view name);

/// A scale-up system: how GPUs of one domain reach each other without the scale-out network.
/// The graph models one logical ScaleUpSwitch device per domain; `chips_for()` says how many real
/// NVSwitch chips that stands for (the inventory counts those).
struct ScaleUpSpec {
  std::string name;             // "hgx_h100"
  std::string display;          // "HGX H100 8-GPU baseboard (4x NVSwitch gen3)"
  std::string switch_chip;      // "NVSwitch gen3", "" for a switchless mesh
  std::uint32_t domain_gpus;    // GPUs per domain (0: set by the scenario, up to max_gpus)
  std::uint32_t max_gpus;       // largest domain this technology builds
  std::uint32_t gpus_per_node;  // GPUs per server / compute tray in this system
  std::uint32_t chip_ports;     // NVLink ports per switch chip (0 for a mesh)
  Bandwidth port_speed;         // per NVLink port (link), per direction
  std::uint32_t fixed_chips;    // chips per domain when fixed by the product (0: derive)
  Time latency;                 // GPU-to-GPU one-way latency through the scale-up switch
  double chip_power_w;
  double chip_price_usd;
  bool nvls;  // NVLink SHARP (in-switch reduction)
  // The chips come with the GPUs (an HGX baseboard's NVSwitches): priced 0 here because the
  // GPU's price covers them, and the bill of materials says "included in <GPU>".
  bool chips_in_gpu_price;
  std::string price_note;  // the chip price's basis as the bill of materials shows it
  /// Switch chips for a domain of `gpus` GPUs with `links_per_gpu` NVLinks each.
  std::uint64_t chips_for(std::uint64_t gpus, std::uint32_t links_per_gpu) const;
};

/// A cable or pluggable optic for one scale-out link. Optical links need two transceivers (one
/// per end) plus fibre; DAC and AEC are single assemblies with the connectors built in.
struct CableSpec {
  std::string name;     // "osfp_800g_2xsr4"
  std::string display;  // "OSFP 800G 2xSR4 multimode transceiver (twin-port 2x400G)"
  LinkMedium medium;    // CopperDac | ActiveElectrical | Optical | LongHaulFibre
  Bandwidth max_speed;  // highest port speed this part carries
  double reach_m;       // longest supported link
  double power_w;       // per cable (DAC/AEC) or per transceiver (optics)
  double price_usd;     // per cable or per transceiver
  std::uint32_t transceivers_per_link;  // 2 for optics, 0 for DAC/AEC
};

struct PcieSpec {
  std::string name;     // "gen5_x16"
  Bandwidth bandwidth;  // per direction, after 128b/130b encoding
  Time latency;
  // What NCCL's topology gives the link (per direction): lanes x its per-lane figure, 75% of
  // the signalling rate (topo.cc kvDictPciGen: 16 GT/s -> 12 Gb/s; x16 Gen4 24 GB/s, Gen5 48).
  Bandwidth nccl;
};

/// The link between a two-socket server's CPUs (Intel QPI / UPI, AMD Infinity Fabric xGMI), one
/// entry per CPU generation: the socket links summed, and what NCCL's topology makes of it.
struct CpuLinkSpec {
  std::string name;           // "qpi_broadwell"
  std::string cpu;            // the CPUs it joins: "Intel Xeon E5 v4 (Broadwell)"
  std::uint32_t links = 0;    // socket links between the two CPUs
  double transfers_GTps = 0;  // per link
  Bandwidth bandwidth;        // all the links together, per direction
  Time latency;               // one hop across
  // NCCL's figure for the CPU-to-CPU link, per direction, by the CPUs' vendor and model
  // (topo.cc ncclTopoConnectCpus; topo.h QPI_BW 6, SKL_QPI_BW 10, AMD_BW 16 GB/s).
  Bandwidth nccl;
};

// Tables (stable order: Device::model indexes them).
std::span<const GpuSpec> gpu_catalog();
std::span<const NicSpec> nic_catalog();
std::span<const SwitchSpec> switch_catalog();
std::span<const ScaleUpSpec> scale_up_catalog();
std::span<const CableSpec> cable_catalog();
std::span<const PcieSpec> pcie_catalog();
std::span<const CpuLinkSpec> cpu_link_catalog();

// Lookups by name: InputError(field, "unknown GPU 'x' (known: a100, h100, ...)") when absent.
const GpuSpec& gpu_spec(std::string_view name, std::string_view field = "gpu");
const NicSpec& nic_spec(std::string_view name, std::string_view field = "nic");
const SwitchSpec& switch_spec(std::string_view name, std::string_view field = "switch");
const ScaleUpSpec& scale_up_spec(std::string_view name, std::string_view field = "scale_up");
/// The NVLinks between GPUs i and j ([i][j]) of a switchless mesh whose pairs are wired unequally
/// (DGX-1's hybrid cube mesh); empty for meshes that wire every pair alike.
const std::vector<std::vector<std::uint32_t>>& mesh_wiring(std::string_view scale_up);
const PcieSpec& pcie_spec(std::string_view name, std::string_view field = "pcie");
const CpuLinkSpec& cpu_link_spec(std::string_view name, std::string_view field = "cpu_link");

/// The PCIe tree of a server whose GPUs meet over PCIe where no NVLink joins them (DGX-1): the
/// GPUs sit in groups behind PCIe switches, each switch on one CPU's root complex by a link at
/// the GPUs' PCIe rate, and the CPUs are joined by their socket interconnect (QPI / UPI).
struct HostPcieTree {
  std::uint32_t gpus_per_switch = 0;      // GPUs behind each PCIe switch (0: no tree)
  std::uint32_t switches_per_cpu = 0;     // PCIe switches on each CPU's root complex
  const CpuLinkSpec* cpu_link = nullptr;  // between the two CPUs (the server's CPU generation)
};
/// The tree of a scale-up's servers; gpus_per_switch 0 for servers built with one host device.
const HostPcieTree& host_pcie_tree(std::string_view scale_up);
/// The PCIe link between a GPU and its NIC when a cluster does not name one: what the servers
/// of that GPU ship with (Gen4 x16 on A100 systems, Gen6 x16 on B300/GB300, Gen5 x16 on the
/// others).
const PcieSpec& default_gpu_nic_pcie(std::string_view gpu);
std::uint16_t gpu_index(std::string_view name);  // position in gpu_catalog(); throws like above
std::uint16_t nic_index(std::string_view name);
std::uint16_t switch_index(std::string_view name);
std::uint16_t scale_up_index(std::string_view name);

/// The cable or optic a link uses, and how many of them in parallel (a 12.8 Tb/s long-haul link
/// needs 16 x 800G coherent optics pairs).
struct CableChoice {
  const CableSpec* spec = nullptr;
  std::uint32_t parallel = 1;  // parallel cables (or transceiver pairs) per link
};

/// The cable or optic for a link of `medium` at `speed` over `length_m`: the first catalog part
/// of that medium (cheapest first) whose reach >= length and max_speed >= speed; when no single
/// part is fast enough, the fastest one in parallel. InputError when nothing reaches that far.
CableChoice cable_for(LinkMedium medium, Bandwidth speed, double length_m);

/// The fibre of one optical link (the transceivers at its ends are counted separately).
const CableSpec& fibre_patch_cord();

/// The fibre of a switch port split 1:2 (switch_breakout): one splitter for two optical links.
const CableSpec& splitter_fibre();

/// The copper assembly of a switch cage whose `legs` ports (a twin-port OSFP, each port split
/// as switch_breakout() allows) reach single-port ends: one passive splitter DAC from the cage's
/// 800G twin-port OSFP, 1:2 to 400G (NVIDIA LinkX MCP7Y00) for 2 legs, 1:4 to 200G (MCP7Y10)
/// for more.
const CableSpec& splitter_dac(std::uint32_t legs);

/// The medium a scale-out link of this length uses: copper DAC up to its reach (about 2-3 m at
/// 400-800G), active electrical cable up to about 7 m, optics up to 2 km, long-haul fibre beyond.
LinkMedium medium_for_length(Bandwidth speed, double length_m);

/// The most payload one packet of an on-board medium carries (NVLink, which stands for xGMI
/// too, and PCIe), each with its source in catalog_cables.cpp; zero for the scale-out media, whose
/// packets are the fabric's (its MTU).
Bytes board_packet_payload(LinkMedium medium);

/// Light in fibre: about 5 ns per metre one way (refractive index ~1.47). Copper is similar.
inline constexpr double kPropagationNsPerMetre = 5.0;

/// Ports of a switch that share one pluggable cage, so one transceiver module (twin-port OSFP,
/// or an 800G cage broken out into two 400G ports): 2 on Quantum-2 QM9700 (64 NDR ports on 32
/// OSFP cages) and on the 128 x 400G configurations of 64-cage 800G switches; 1 elsewhere.
std::uint32_t switch_ports_per_cage(const SwitchSpec& sw);

/// Link ends at `link` rate that share one of the switch's ports by breakout, as its datasheet
/// allows (QM9700: a 400G port split 2 x 200G by a splitter cable; SN5600: an 800G port split
/// 2 x 400G or 4 x 200G); 1 where none is listed.
std::uint32_t switch_breakout(const SwitchSpec& sw, Bandwidth link);

/// Optical ends of `link` rate at a split switch port that share one 1:2 splitter fibre (2 at
/// 200G: an MPO of 400G fanned out), or 1 (a patch cord each).
std::uint32_t splitter_legs(Bandwidth link);

/// The NIC a switch pairs with by default (same fabric and port speed): qm9700 -> cx7_ndr.
const NicSpec& default_nic_for(const SwitchSpec& sw);

}  // namespace lockstep
