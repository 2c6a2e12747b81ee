// The hardware catalog's NICs, scale-out switches and scale-up systems, each with its public
// source. Prices are approximate street prices; figures marked "estimate" are not published by
// the vendor, and the comment says how the value was chosen.
#include "catalog_tables.hpp"

namespace lockstep::catalog_tables {

const std::vector<NicSpec>& nics() {
  static const std::vector<NicSpec> table = {
      // NVIDIA ConnectX-6 VPI adapter datasheet: HDR 200 Gb/s InfiniBand (MCX653105A-HDAT).
      // Power ~20 W (estimate from the datasheet's typical-power range).
      // Approximate street price, ~$1,000 (2023).
      {"cx6_hdr", "NVIDIA ConnectX-6 HDR 200G", "infiniband", Bandwidth::gbps(200), 1, 20, 1'000},
      // NVIDIA ConnectX-7 datasheet: NDR 400 Gb/s InfiniBand (MCX75310AAS-NEAT), ~25 W.
      // Approximate street price, ~$2,000 (2024).
      {"cx7_ndr", "NVIDIA ConnectX-7 NDR 400G", "infiniband", Bandwidth::gbps(400), 1, 25, 2'000},
      // Same ConnectX-7 silicon in 400GbE mode with RoCEv2 (ConnectX-7 datasheet).
      {"cx7_400gbe", "NVIDIA ConnectX-7 400GbE (RoCE)", "roce", Bandwidth::gbps(400), 1, 25, 2'000},
      // NVIDIA BlueField-3 SuperNIC datasheet (B3140H): 400GbE RoCE, up to 75 W.
      // Approximate street price, ~$2,500 (2024).
      {"bf3_400gbe", "NVIDIA BlueField-3 SuperNIC 400GbE", "roce", Bandwidth::gbps(400), 1, 75,
       2'500},
      // NVIDIA ConnectX-8 SuperNIC datasheet (2024): 800 Gb/s XDR InfiniBand or 800GbE.
      // Power ~40 W (estimate). Approximate street price, ~$3,000 (estimate, 2025).
      {"cx8_xdr", "NVIDIA ConnectX-8 SuperNIC XDR 800G", "infiniband", Bandwidth::gbps(800), 1, 40,
       3'000},
      {"cx8_800gbe", "NVIDIA ConnectX-8 SuperNIC 800GbE (RoCE)", "roce", Bandwidth::gbps(800), 1,
       40, 3'000},
      // AWS p5.48xlarge product page: 3,200 Gb/s of EFA networking over 32 interfaces, i.e.
      // 4 x 100 Gb/s per H100 (SRD transport). Rented with the instance: no power or price here.
      {"efa_p5", "AWS EFA (p5, 4x100G per GPU)", "efa", Bandwidth::gbps(100), 4, 0, 0},
      // HPE Slingshot-11 Cassini-1 NIC: 200 Gb/s Ethernet (HPE Slingshot datasheet; De Sensi et
      // al., SC20). Power ~25 W and price ~$2,000 are estimates.
      {"cassini1_200g", "HPE Slingshot-11 Cassini-1 200G", "roce", Bandwidth::gbps(200), 1, 25,
       2'000},
      // Google Virtual NIC (gVNIC) at 200 Gb/s: A3 (a3-highgpu-8g) has 4 for GPU traffic, A3 Mega
      // (a3-megagpu-8g) 8 (GCP accelerator-optimized machine types doc). Rented: no power or price.
      {"gvnic_200g", "Google gVNIC 200G (A3 GPUDirect-TCPX/TCPXO)", "roce", Bandwidth::gbps(200), 1,
       0, 0},
      // AMD Pensando Pollara 400 AI NIC product brief (2024): 400GbE, RoCEv2, UEC-ready,
      // programmable pipeline. Power ~25 W and price ~$2,000 are estimates.
      {"pollara_400g", "AMD Pensando Pollara 400 AI NIC", "roce", Bandwidth::gbps(400), 1, 25,
       2'000},
      // NVIDIA (Mellanox) ConnectX-5 VPI adapter datasheet: EDR 100 Gb/s InfiniBand
      // (MCX555A-ECAT), PCIe Gen3 x16; DGX-1's ConnectX-4 EDR runs the same rate. Power ~15 W and
      // price ~$700 are estimates.
      {"cx5_edr", "NVIDIA ConnectX-5 EDR 100G", "infiniband", Bandwidth::gbps(100), 1, 15, 700},
  };
  return table;
}

const std::vector<SwitchSpec>& switches() {
  static const std::vector<SwitchSpec> table = {
      // NVIDIA Quantum QM8700 datasheet: 40 x HDR 200 Gb/s, 16 Tb/s, 130 ns port-to-port,
      // SHARPv2, typical power 253 W with passive cables. Buffer not published: 16 MiB
      // (estimate). Approximate street price, ~$20,000 (2023). SHARP aggregation latency per
      // level: not published; ~0.5 us is an estimate from Graham et al., "Scalable Hierarchical
      // Aggregation Protocol (SHArP)", COMHPC 2016 (a few us for a small all-reduce over a
      // two-level tree of Switch-IB 2, ~1 us of it NIC and host), used for every generation.
      {"qm8700", "NVIDIA Quantum QM8700 (40x200G HDR)", "infiniband", 40, Bandwidth::gbps(200),
       Time::ns(130), Bytes::mib(16), 253, 20'000, true, 2, Time::ns(500)},
      // NVIDIA Quantum-2 QM9700 datasheet: 64 x NDR 400 Gb/s on 32 OSFP cages, 51.2 Tb/s,
      // SHARPv3, typical power 747 W with passive cables. Latency not published: taken equal to
      // Quantum's 130 ns (estimate); buffer 32 MiB (estimate). ~$30,000 approximate street
      // price (2024).
      // SHARPv3 adds multi-tenancy (several jobs' aggregation trees at once, QM9700 datasheet);
      // one nccl-tests job uses one tree per rail either way.
      {"qm9700", "NVIDIA Quantum-2 QM9700 (64x400G NDR)", "infiniband", 64, Bandwidth::gbps(400),
       Time::ns(130), Bytes::mib(32), 747, 30'000, true, 3, Time::ns(500)},
      // NVIDIA Quantum-X800 Q3400 datasheet (2024): 144 x XDR 800 Gb/s, 115.2 Tb/s, SHARPv4.
      // Power ~3,500 W and latency 130 ns are estimates (not published); buffer 64 MiB
      // (estimate). ~$120,000 approximate street price (estimate, 2025).
      // SHARPv4: 14.4 TFLOPS of in-network computing (NVIDIA's Quantum-X800 announcement, GTC
      // 2024), i.e. 100 GFLOPS per 800G port: a reduction of 4-byte elements at line rate needs
      // 25, so the aggregation keeps up with the ports.
      {"q3400", "NVIDIA Quantum-X800 Q3400 (144x800G XDR)", "infiniband", 144, Bandwidth::gbps(800),
       Time::ns(130), Bytes::mib(64), 3'500, 120'000, true, 4, Time::ns(500)},
      // NVIDIA Spectrum-4 SN5600 datasheet: 64 x 800GbE (or 128 x 400GbE), 51.2 Tb/s, 160 MB
      // fully shared buffer. Latency ~600 ns and power ~1,500 W are estimates (store-and-
      // forward Ethernet class). ~$50,000 approximate street price (2024).
      {"sn5600", "NVIDIA Spectrum-4 SN5600 (64x800GbE)", "ethernet", 64, Bandwidth::gbps(800),
       Time::ns(600), Bytes(160'000'000), 1'500, 50'000, false, 0, Time::zero()},
      {"sn5600_400g", "NVIDIA Spectrum-4 SN5600 (128x400GbE)", "ethernet", 128,
       Bandwidth::gbps(400), Time::ns(600), Bytes(160'000'000), 1'500, 50'000, false, 0,
       Time::zero()},
      // Broadcom Tomahawk 5 (BCM78900) product brief: 51.2 Tb/s, 64 x 800GbE or 128 x 400GbE,
      // ~165 MB on-chip buffer. Latency ~700 ns and system power ~1,200 W are estimates.
      // ~$40,000 approximate street price for a 64x800G box (2024).
      {"tomahawk5", "Broadcom Tomahawk 5 switch (64x800GbE)", "ethernet", 64, Bandwidth::gbps(800),
       Time::ns(700), Bytes(165'000'000), 1'200, 40'000, false, 0, Time::zero()},
      {"tomahawk5_400g", "Broadcom Tomahawk 5 switch (128x400GbE)", "ethernet", 128,
       Bandwidth::gbps(400), Time::ns(700), Bytes(165'000'000), 1'200, 40'000, false, 0,
       Time::zero()},
      // Earlier Broadcom and NVIDIA Ethernet generations, for their buffers (the packet engine's
      // `buffers: {model: as_built}`). Tomahawk 3 (BCM56980) product brief: 12.8 Tb/s, 32 x
      // 400GbE, 64 MB shared buffer. Tomahawk 4 (BCM56990) product brief: 25.6 Tb/s, 64 x
      // 400GbE, 113 MB shared buffer. Latency, power and price are estimates as for Tomahawk 5.
      {"tomahawk3", "Broadcom Tomahawk 3 switch (32x400GbE)", "ethernet", 32, Bandwidth::gbps(400),
       Time::ns(700), Bytes(64'000'000), 600, 20'000, false, 0, Time::zero()},
      {"tomahawk4", "Broadcom Tomahawk 4 switch (64x400GbE)", "ethernet", 64, Bandwidth::gbps(400),
       Time::ns(700), Bytes(113'000'000), 900, 30'000, false, 0, Time::zero()},
      // NVIDIA Spectrum-2 SN3700 datasheet: 32 x 200GbE, 12.8 Tb/s, 42 MB fully shared buffer.
      // NVIDIA Spectrum-3 SN4700 datasheet: 32 x 400GbE, 25.6 Tb/s, 64 MB fully shared buffer.
      // Latency ~600 ns, power and price are estimates as for SN5600.
      {"sn3700", "NVIDIA Spectrum-2 SN3700 (32x200GbE)", "ethernet", 32, Bandwidth::gbps(200),
       Time::ns(600), Bytes(42'000'000), 450, 20'000, false, 0, Time::zero()},
      {"sn4700", "NVIDIA Spectrum-3 SN4700 (32x400GbE)", "ethernet", 32, Bandwidth::gbps(400),
       Time::ns(600), Bytes(64'000'000), 700, 30'000, false, 0, Time::zero()},
      // HPE Slingshot Rosetta switch (De Sensi et al., "An In-Depth Analysis of the Slingshot
      // Interconnect", SC20): 64 x 200 Gb/s ports, 12.8 Tb/s, ~350 ns port-to-port. Buffer
      // (32 MiB), power (~250 W) and price (~$30,000) are estimates.
      {"rosetta", "HPE Slingshot Rosetta (64x200G)", "ethernet", 64, Bandwidth::gbps(200),
       Time::ns(350), Bytes::mib(32), 250, 30'000, false, 0, Time::zero()},
      // A modular (chassis) spine. Arista 7800R3 Series data sheet: 7804R3 / 7808R3 / 7812R3 /
      // 7816R3 with 4 / 8 / 12 / 16 line-card slots; the 7800R3-36P line card has 36 x 400G
      // QSFP-DD ports, so a 7816R3 holds 16 x 36 = 576 x 400GbE (460 Tb/s, both directions);
      // one port a cage. Meta's RoCE training cluster (Meta, "Building Meta's GenAI
      // Infrastructure", 2024) is built with Arista 7800 switches. Buffer: the line cards'
      // Broadcom Jericho2 chips with 8 GB of HBM each (Jericho2 brief), 3 for 14.4 Tb/s of 400G
      // ports (4.8 Tb/s each): 24 GB a card, 384 GB in all (derived). Power ~16,000 W for a full
      // chassis (~28 W a 400G port), latency ~4 us (deep-buffer store-and-forward class) and
      // price ~$1,000,000 (~$1,700 a 400G port; no public list price) are estimates.
      {"arista_7816r3", "Arista 7816R3 chassis (16 slots x 36 x 400GbE)", "ethernet", 576,
       Bandwidth::gbps(400), Time::us(4), Bytes(384'000'000'000), 16'000, 1'000'000, false, 0,
       Time::zero()},
  };
  return table;
}

const std::vector<ScaleUpSpec>& scale_ups() {
  // NVSwitch chip power and price are not published: ~100 W (gen2/gen3) and ~150 W (gen4) are
  // estimates. HGX chips sit on the HGX baseboard that NVIDIA sells with its 8 GPUs (NVIDIA HGX
  // A100 / H100 / B200 datasheets: "8 GPUs ... NVSwitch" as one board), and the GPUs' street
  // prices above are per GPU of such a board: the chips are priced 0 and the bill of materials
  // says "included in <GPU>". NVLink Switch trays (NVL72) are not sold alone and have no
  // published price: ~$10,000 per chip is an estimate, shown as one. One-way GPU-to-GPU hardware
  // latency through NVSwitch ~500 ns (estimate; NCCL adds its own per-step protocol latency on top,
  // see HARDWARE.md). NVLink per-link rate per direction: NVLink 3 = 600 GB/s / 12 links / 2
  // directions = 25 GB/s (A100 datasheet); NVLink 4 = 900 / 18 / 2 = 25 GB/s (H100 datasheet);
  // NVLink 5 = 1,800 / 18 / 2 = 50 GB/s (Blackwell datasheets). Infinity Fabric: 128 GB/s
  // bidirectional per link = 64 GB/s per direction (MI300X datasheet), 153.6 = 76.8 per direction
  // on MI355X. NVSwitch buffer sizes are not published.
  constexpr Bandwidth kNvlink3Port = Bandwidth::gBps(25);
  constexpr Bandwidth kNvlink4Port = Bandwidth::gBps(25);
  constexpr Bandwidth kNvlink5Port = Bandwidth::gBps(50);
  static const std::vector<ScaleUpSpec> table = {
      // NVIDIA HGX A100 / DGX A100 user guide: 8 GPUs, 6 NVSwitch (gen2, 36 NVLink3 ports).
      {"hgx_a100", "HGX A100 8-GPU (6x NVSwitch gen2)", "NVSwitch gen2", 8, 8, 8, 36, kNvlink3Port,
       6, Time::ns(500), 100, 0, false, true,
       "on the HGX baseboard, sold with its 8 GPUs: NVIDIA HGX A100 datasheet"},
      // NVIDIA DGX H100 user guide / Hopper whitepaper: 8 GPUs, 4 NVSwitch gen3 (64 NVLink4
      // ports each), NVLink SHARP.
      {"hgx_h100", "HGX H100 8-GPU (4x NVSwitch gen3)", "NVSwitch gen3", 8, 8, 8, 64, kNvlink4Port,
       4, Time::ns(500), 100, 0, true, true,
       "on the HGX baseboard, sold with its 8 GPUs: NVIDIA HGX H100 datasheet"},
      // NVIDIA HGX B200 datasheet / DGX B200 user guide: 8 GPUs, 2 NVSwitch gen4 (72 ports).
      {"hgx_b200", "HGX B200 8-GPU (2x NVSwitch gen4)", "NVSwitch gen4", 8, 8, 8, 72, kNvlink5Port,
       2, Time::ns(500), 150, 0, true, true,
       "on the HGX baseboard, sold with its 8 GPUs: NVIDIA HGX B200 datasheet"},
      // NVIDIA GB200 NVL72 datasheet: 72 GPUs in 18 compute trays of 4, 9 NVLink switch trays of
      // 2 NVLink Switch chips = 18 chips (72 GPUs x 18 links / 72 ports).
      {"nvl72", "GB200 NVL72 rack (18x NVLink Switch chips)", "NVLink Switch gen4", 72, 72, 4, 72,
       kNvlink5Port, 18, Time::ns(500), 150, 10'000, true, false,
       "estimate: NVIDIA publishes no price for NVLink Switch chips or trays"},
      // NVIDIA Blackwell architecture brief: NVLink Switch domains up to 576 GPUs. Beyond 72
      // GPUs the domain needs a second switch level (chips_for() derives the count).
      {"nvlink_domain", "NVLink Switch domain (gen4 chips)", "NVLink Switch gen4", 0, 576, 4, 72,
       kNvlink5Port, 0, Time::ns(500), 150, 10'000, true, false,
       "estimate: NVIDIA publishes no price for NVLink Switch chips or trays"},
      // NVIDIA H100 PCIe product brief: NVLink bridges join two GPUs (3 bridges, 12 NVLink 4
      // links, 600 GB/s bidirectional); other GPUs of the server are reached over PCIe. A mesh
      // of 2: no switch chip.
      {"nvlink_bridge", "NVLink bridge pairs (H100 / A100 PCIe)", "", 2, 2, 8, 0, kNvlink4Port, 0,
       Time::ns(500), 0, 0, false, false, ""},
      // NERSC Perlmutter GPU node (HPE Cray EX235n; NERSC "Perlmutter Architecture"): 4 A100
      // SXM4 joined all-to-all by NVLink 3, 4 links (100 GB/s per direction) per pair; no
      // NVSwitch.
      {"a100_quad", "HPE Cray EX235n 4 x A100 NVLink 3 mesh (Perlmutter)", "", 4, 4, 4, 0,
       kNvlink3Port, 0, Time::ns(500), 0, 0, false, false, ""},
      // Servers without NVLink (L40S; NVIDIA L40S datasheet: PCIe Gen4 x16 only): each GPU is
      // its own scale-up domain and GPUs meet through the server's PCIe switches / root complex
      // at their PCIe link's rate (the builders' host device). No chip, no extra latency beyond
      // PCIe's.
      {"pcie_switch", "PCIe only (no NVLink): GPUs meet through PCIe", "", 1, 1, 8, 0, Bandwidth(),
       0, Time::zero(), 0, 0, false, false, ""},
      // NVIDIA DGX-1 with Tesla V100 system architecture whitepaper (WP-08437-002, 2017): 8 V100
      // SXM2 in a hybrid cube mesh of NVLink 2 (25 GB/s per link and direction), 6 links per GPU,
      // pairs wired unequally (mesh_wiring below); no NVSwitch. AWS p3.16xlarge / p3dn.24xlarge
      // wire the same board. Latency ~500 ns, estimate as above.
      {"dgx1_cube_mesh", "DGX-1 V100 hybrid cube mesh (NVLink 2)", "", 8, 8, 8, 0,
       Bandwidth::gBps(25), 0, Time::ns(500), 0, 0, false, false, ""},
      // HPE Cray EX254n blade (HPE QuickSpecs; CSCS Alps docs): 4 GH200 joined all-to-all by
      // NVLink 4, 6 links (150 GB/s per direction) per pair; no NVSwitch.
      {"gh200_quad", "HPE Cray EX254n 4 x GH200 NVLink mesh", "", 4, 4, 4, 0, kNvlink4Port, 0,
       Time::ns(500), 0, 0, false, false, ""},
      // AMD Instinct MI300X platform brief: 8 GPUs fully connected by Infinity Fabric (no
      // switch), the MI325X's the same. Latency ~500 ns, estimate as above.
      {"xgmi_mesh", "AMD Infinity Fabric 8-GPU mesh", "", 8, 8, 8, 0, Bandwidth::gBps(64), 0,
       Time::ns(500), 0, 0, false, false, ""},
      // AMD Instinct MI355X datasheet: the same 8-GPU full mesh at 76.8 GB/s per link and
      // direction (153.6 GB/s bidirectional).
      {"xgmi_mesh_mi355x", "AMD Infinity Fabric 8-GPU mesh (MI355X UBB)", "", 8, 8, 8, 0,
       Bandwidth::gBps(76.8), 0, Time::ns(500), 0, 0, false, false, ""},
  };
  return table;
}

}  // namespace lockstep::catalog_tables
