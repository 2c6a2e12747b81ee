// The hardware catalog's cables and pluggable modules, and the rules that choose them (medium by
// length, modules per cage, breakouts and splitters), each with its public source. Prices are
// approximate street prices; figures marked "estimate" are not published by the vendor.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "catalog_tables.hpp"
#include "lockstep/core/error.hpp"
#include "lockstep/topology/inventory_count.hpp"

namespace lockstep {
namespace catalog_tables {

const std::vector<CableSpec>& cables() {
  // Listed cheapest first within each medium: cable_for() takes the first that fits.
  static const std::vector<CableSpec> table = {
      // NVIDIA LinkX cables datasheets: passive copper DAC, QSFP56 HDR 200G up to 3 m
      // (MCP1650-H), OSFP NDR twin-port 2x400G/800G up to 2 m (MCP4Y10-N). Negligible power.
      // Approximate street prices, ~$150 and ~$300 (2024).
      {"dac_200g", "QSFP56 200G passive copper DAC", LinkMedium::CopperDac, Bandwidth::gbps(200), 3,
       0.1, 150, 0},
      {"dac_800g", "OSFP 800G passive copper DAC", LinkMedium::CopperDac, Bandwidth::gbps(800), 2,
       0.1, 300, 0},
      // Credo HiWire AEC product brief (2023): 400G/800G active electrical cables up to 7 m,
      // ~12 W per cable (both ends). Approximate street price, ~$600 (2024).
      {"aec_800g", "800G active electrical cable", LinkMedium::ActiveElectrical,
       Bandwidth::gbps(800), 7, 12, 600, 0},
      // NVIDIA LinkX transceivers: QSFP56 200G SR4 multimode 100 m (MMA1T00-HS, ~5 W); OSFP 400G
      // SR4 50 m (MMA4Z00-NS400, ~8 W); OSFP 800G 2xSR4 twin-port 50 m (MMA4Z00-NS, 17 W);
      // OSFP 800G 2xDR4 single-mode 500 m (MMS4X00-NM, 17 W); OSFP 800G 2xFR4 2 km
      // (MMS4X50-NM, 17 W). Approximate street prices per transceiver (2024): $400, $700,
      // $1,100, $1,500, $2,000.
      {"sr_200g", "QSFP56 200G SR4 transceiver", LinkMedium::Optical, Bandwidth::gbps(200), 100, 5,
       400, 2},
      {"sr_400g", "OSFP 400G SR4 transceiver", LinkMedium::Optical, Bandwidth::gbps(400), 50, 8,
       700, 2},
      {"sr_800g", "OSFP 800G 2xSR4 transceiver", LinkMedium::Optical, Bandwidth::gbps(800), 50, 17,
       1'100, 2},
      // IEEE 802.3bs 400GBASE-DR4: 500 m over single-mode fibre; OSFP ~8 W (MMS4X00-NS400
      // class). Approximate street price, ~$900 (2024).
      {"dr_400g", "OSFP 400G DR4 transceiver", LinkMedium::Optical, Bandwidth::gbps(400), 500, 8,
       900, 2},
      {"dr_800g", "OSFP 800G 2xDR4 transceiver", LinkMedium::Optical, Bandwidth::gbps(800), 500, 17,
       1'500, 2},
      // A ConnectX-8's single 800G XDR port on a Quantum-X800 fabric: the Q3400's ports run 4
      // lanes of 200G (144 ports of 800G on 72 cages of 1.6T, Q3400 datasheet) over single-mode
      // DR optics (dr_1600g below), so the NIC's end is their single-port half, an OSFP 800G DR4
      // of 4 x 200G lanes, 500 m (IEEE 802.3dj 800GBASE-DR4). Not chosen by cable_for (dr_800g
      // comes first at the same speed and reach): only nic_cage_module() names it. NVIDIA's
      // LinkX part number, power and price could not be checked offline: ~13 W (estimate, half
      // the 1.6T module's ~25 W) and ~$1,500 (estimate, the 1.6T module's price per lane).
      {"dr4_800g_xdr", "OSFP 800G DR4 transceiver (4 x 200G lanes, estimate)", LinkMedium::Optical,
       Bandwidth::gbps(800), 500, 13, 1'500, 2},
      {"fr_800g", "OSFP 800G 2xFR4 transceiver", LinkMedium::Optical, Bandwidth::gbps(800), 2'000,
       17, 2'000, 2},
      // NVIDIA LinkX XDR twin-port OSFP 1.6T 2xDR4 single-mode transceiver (500 m), one per
      // Quantum-X800 Q3400 cage of 2 x 800G XDR ports (NVIDIA's Quantum-X800 announcement,
      // GTC 2024: LinkX 1.6T twin-port OSFP). No datasheet power or list price found: ~25 W
      // (estimate, below two 800G modules' 2 x 17 W) and ~$3,000 (estimate: two 800G 2xDR4's
      // ~$1,500, the same price per lane).
      {"dr_1600g", "OSFP 1.6T 2xDR4 transceiver (estimate)", LinkMedium::Optical,
       Bandwidth::gbps(1'600), 500, 25, 3'000, 2},
      // OIF 400ZR implementation agreement: 400G coherent DWDM, 120 km amplified, ~20 W
      // (QSFP-DD). OpenZR+ MSA: 400G over 1,000+ km amplified, ~25 W; 800ZR (OIF, 2024) ~30 W.
      // Approximate street prices, ~$6,000 / ~$8,000 / ~$12,000 per module (estimates, 2024).
      {"zr_400g", "400ZR QSFP-DD coherent transceiver", LinkMedium::LongHaulFibre,
       Bandwidth::gbps(400), 120'000, 20, 6'000, 2},
      {"zr_800g", "800ZR coherent transceiver", LinkMedium::LongHaulFibre, Bandwidth::gbps(800),
       120'000, 30, 12'000, 2},
      {"zrplus_400g", "OpenZR+ 400G coherent transceiver", LinkMedium::LongHaulFibre,
       Bandwidth::gbps(400), 2'000'000, 25, 8'000, 2},
  };
  return table;
}

}  // namespace catalog_tables

using catalog_tables::cables;

CableChoice cable_for(LinkMedium medium, Bandwidth speed, double length_m) {
  if (on_board(medium)) return {};  // board traces
  const CableSpec* fastest = nullptr;
  for (const CableSpec& c : cables()) {
    if (c.medium != medium || c.reach_m < length_m) continue;
    if (c.max_speed >= speed) return {&c, 1};
    if (fastest == nullptr || c.max_speed > fastest->max_speed) fastest = &c;
  }
  if (fastest == nullptr) {
    throw InputError("cable", fmt::format("no {} cable or optic in the catalog reaches {} m",
                                          to_string(medium), length_m));
  }
  const double lanes =
      std::ceil(speed.bytes_per_second() / fastest->max_speed.bytes_per_second() - 1e-9);
  return {fastest, static_cast<std::uint32_t>(std::max(1.0, lanes))};
}

CableChoice nic_cage_module(const NicSpec& nic, LinkMedium medium, Bandwidth cage_speed,
                            double length_m) {
  // NVIDIA ConnectX-8 SuperNIC datasheet: one 800G XDR port (PCIe Gen6 x16); its XDR peer, the
  // Quantum-X800 Q3400, runs 200G lanes on single-mode optics, so the NIC's cage takes the
  // single-port XDR DR4 while it reaches (dr4_800g_xdr above). Other NICs' cages (ConnectX-7,
  // BlueField-3, a CX-8 in 800GbE mode on 100G-lane Spectrum-4 / Tomahawk 5 ports, a CX-8 on
  // a slower port) take the part the reach gives, as the switch's cage at the far end does.
  static constexpr std::pair<std::string_view, std::string_view> kOwnModule[] = {
      {"cx8_xdr", "dr4_800g_xdr"}};
  if (medium == LinkMedium::Optical) {
    for (const auto& [name, part] : kOwnModule) {
      if (nic.name != name) continue;
      for (const CableSpec& c : cables()) {
        if (c.name == part && c.max_speed == cage_speed && c.reach_m >= length_m) return {&c, 1};
      }
    }
  }
  return cable_for(medium, cage_speed, length_m);
}

std::uint32_t switch_ports_per_cage(const SwitchSpec& sw) {
  // NVIDIA Quantum-2 QM9700 datasheet: 64 NDR 400G ports "in 32 OSFP cages" (each cage a
  // twin-port 2 x 400G module, NVIDIA LinkX MMA4Z00-NS 2xSR4 / MMS4X00-NM 2xDR4). Spectrum-4
  // SN5600 datasheet and Broadcom Tomahawk 5 brief: 64 x 800G OSFP cages, 128 x 400G by
  // splitting each cage's module into two 400G ports. NVIDIA Quantum-X800 Q3400 datasheet: 144
  // XDR 800G ports on 72 OSFP cages, a twin-port 1.6T module each (dr_1600g).
  for (const char* twin : {"qm9700", "sn5600_400g", "tomahawk5_400g", "q3400"}) {
    if (sw.name == twin) return 2;
  }
  return 1;
}

std::uint32_t switch_breakout(const SwitchSpec& sw, Bandwidth link) {
  // NVIDIA Quantum-2 QM9700 datasheet: "64 400Gb/s ports or 128 200Gb/s ports" on its 32 OSFP
  // cages; a twin-port 2 x 400G module drives four 200G ports through splitter cables (NVIDIA
  // LinkX MMA4Z00-NS with MFP7E20 1:2 fibre splitters to NDR200 ConnectX-7 ports). NVIDIA
  // Spectrum-4 SN5600 datasheet: 64 x 800GbE OSFP ports, "128 x 400GbE or 256 x 200GbE" by
  // splitting each port 2 x 400G or 4 x 200G; its 128 x 400G configuration (sn5600_400g) is the
  // 2-way split, so a 200G end takes half of one of those. Other switches' splits are not in
  // the catalog: one link end per port.
  static constexpr std::pair<std::string_view, std::uint32_t> kMostWays[] = {
      {"qm9700", 2}, {"sn5600", 4}, {"sn5600_400g", 2}};
  for (const auto& [name, most] : kMostWays) {
    if (sw.name != name) continue;
    for (std::uint32_t k = 2; k <= most; k *= 2) {
      if (link * static_cast<double>(k) == sw.port_speed) return k;
    }
  }
  return 1;
}

std::uint32_t splitter_legs(Bandwidth link) {
  // A split port's module (OSFP 800G 2xSR4 / 2xDR4) has one MPO-12 per 400G (4 lanes of 100G):
  // a 400G end takes that MPO's patch cord; two 200G ends share it through a 1:2 splitter fibre
  // (NVIDIA LinkX MFP7E20, 2 lanes each).
  return link * 2.0 == Bandwidth::gbps(400) ? 2 : 1;
}

const CableSpec& fibre_patch_cord() {
  // MPO-12/APC multimode or single-mode patch cord, ~$50 approximate street price (fs.com
  // list prices, 2024); passive. Long-haul fibre is leased and not priced here.
  static const CableSpec cord{"fibre_mpo",
                              "MPO fibre patch cord",
                              LinkMedium::Optical,
                              Bandwidth::gbps(800),
                              2'000,
                              0,
                              50,
                              0};
  return cord;
}

const CableSpec& splitter_fibre() {
  // NVIDIA LinkX MFP7E20-Nxxx: a multimode fibre splitter, one MPO-12/APC at the switch's 400G
  // port of a twin-port 2xSR4 module to two MPO-12/APC at 200G ports (ConnectX-7 NDR200);
  // passive. Price an estimate (no public list price): two patch cords and a fan-out, $100.
  static const CableSpec splitter{"fibre_mpo_splitter_1x2",
                                  "MPO 1:2 splitter fibre (estimate)",
                                  LinkMedium::Optical,
                                  Bandwidth::gbps(400),
                                  50,
                                  0,
                                  100,
                                  0};
  return splitter;
}

const CableSpec& splitter_dac(std::uint32_t legs) {
  // NVIDIA LinkX NDR splitter DACs (LinkX cables and transceivers catalogue, InfiniBand NDR
  // passive copper): MCP7Y00-N00x, twin-port 800G OSFP to 2 x 400G OSFP, and MCP7Y10-N00x,
  // twin-port 800G OSFP to 4 x 200G OSFP, the switch end in one cage, each leg into a
  // ConnectX-7 port; lengths as the straight NDR DACs (medium_for_length). Passive: power as
  // the DACs above. No public list price: ~$400 and ~$500 are estimates (an 800G DAC's $300
  // and the fan-out).
  static const CableSpec two{"dac_800g_2x400g",
                             "OSFP 800G to 2x400G passive copper splitter DAC (estimate)",
                             LinkMedium::CopperDac,
                             Bandwidth::gbps(400),
                             2,
                             0.1,
                             400,
                             0};
  static const CableSpec four{"dac_800g_4x200g",
                              "OSFP 800G to 4x200G passive copper splitter DAC (estimate)",
                              LinkMedium::CopperDac,
                              Bandwidth::gbps(200),
                              3,
                              0.1,
                              500,
                              0};
  return legs <= 2 ? two : four;
}

LinkMedium medium_for_length(Bandwidth speed, double length_m) {
  const double dac_reach = speed > Bandwidth::gbps(200) ? 2.0 : 3.0;  // LinkX DAC datasheets
  if (length_m <= dac_reach) return LinkMedium::CopperDac;
  if (length_m <= 7.0) return LinkMedium::ActiveElectrical;  // AEC reach, Credo HiWire
  if (length_m <= 2'000.0) return LinkMedium::Optical;       // 2xFR4 reach
  return LinkMedium::LongHaulFibre;
}

Bytes board_packet_payload(LinkMedium medium) {
  switch (medium) {
    // NVLink moves data in 128-bit (16 B) flits; a packet is a header flit and up to 16 data
    // flits, 256 B of payload at most (Foley and Danskin, "Ultra-Performance Pascal GPU and NVLink
    // Interconnect", IEEE Micro 37(2), 2017). NVIDIA has published no larger packet for later
    // generations. The graph's NVLink medium stands for AMD's xGMI too, whose packet format is
    // not public: it takes the same 256 B (an assumption, docs/packet-engine.md).
    case LinkMedium::NvLink:
      return Bytes(256);
    // PCIe's Max_Payload_Size is 128 to 4096 B per TLP, the smallest a path supports (PCI
    // Express Base Specification, Device Control register); NVIDIA's data-centre GPUs and PCIe
    // switches advertise 256 B (lspci "DevCap: MaxPayload 256 bytes").
    case LinkMedium::Pcie:
      return Bytes(256);
    // Between CPU sockets a PCIe write is carried as the coherent fabric's cache-line writes:
    // QPI / UPI data packets carry one 64 B cache line (Intel, "An Introduction to the Intel
    // QuickPath Interconnect", 2009: a cache line in 8 data flits of 64 payload bits), as AMD's
    // Infinity Fabric moves 64 B lines between sockets (AMD EPYC architecture overviews).
    case LinkMedium::CpuLink:
      return Bytes(64);
    case LinkMedium::CopperDac:
    case LinkMedium::ActiveElectrical:
    case LinkMedium::Optical:
    case LinkMedium::LongHaulFibre:
      break;
  }
  return Bytes(0);
}
}  // namespace lockstep
