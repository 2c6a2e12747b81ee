#pragma once
// Filling an Inventory: by counting a built graph (count_inventory) or, for designs too large to
// materialise, by telling a BomTally how many of each part the design has. Both paths go through
// BomTally, so a counted and an analytical inventory of the same design agree line for line.
// Figures that depend on the design's structure (bisection, oversubscription) are set by the
// builder; measure_paths() (inventory_paths.hpp) gives diameter and latency of a built graph.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>

#include "lockstep/topology/catalog.hpp"
#include "lockstep/topology/graph.hpp"
#include "lockstep/topology/inventory.hpp"

namespace lockstep {

class BomTally {
 public:
  void add_gpus(std::uint16_t model, std::uint64_t count);
  void add_nics(std::uint16_t model, std::uint64_t count);
  /// `ports_used` summed over the `count` switches; `radix` ports each (0 = unlimited);
  /// `overfull` of them use more ports than their radix (also detected when the sum exceeds).
  void add_switches(std::uint16_t model, std::uint8_t tier, std::uint64_t count,
                    std::uint64_t ports_used, std::uint32_t radix, std::uint64_t overfull = 0);
  /// `domains` logical scale-up switches standing for `chips` switch chips in total.
  void add_scale_up(std::uint16_t model, std::uint64_t domains, std::uint64_t chips,
                    std::uint64_t ports_used);
  /// `count` links of this medium, speed and length (cables/optics chosen by cable_for()). An
  /// optical link takes one transceiver at each end unless `ends_counted` (the builder then
  /// gives the modules at its ends with add_modules()).
  void add_links(LinkMedium medium, Bandwidth speed, double length_m, std::uint64_t count,
                 bool ends_counted = false);
  /// `modules` pluggable optics, each carrying `ports_per_module` ports of `speed` over
  /// `length_m` (a twin-port OSFP on a QM9700 cage: 2 x 400G in one 800G 2xSR4 module).
  /// `nic`: the catalog NIC whose cages hold them, a line of their own (nic_side_module_name())
  /// with the part that NIC's cage takes (nic_cage_module()); none: a switch's or appliance's.
  void add_modules(LinkMedium medium, Bandwidth speed, double length_m,
                   std::uint32_t ports_per_module, std::uint64_t modules,
                   std::optional<std::uint16_t> nic = std::nullopt);
  /// `legs` optical links, already given to add_links(), reach their switch by breakout through
  /// `splitters` splitter fibres (switch_breakout: a QM9700 400G port to two 200G links), each in
  /// place of its legs' patch cords.
  void add_splitters(std::uint64_t splitters, std::uint64_t legs);
  /// `legs` copper links, already given to add_links(), reach their switch cage of
  /// `legs_per_cable` ports through `cables` splitter DACs (splitter_dac()), each in place of
  /// its legs' straight DACs.
  void add_split_dacs(LinkMedium medium, Bandwidth speed, double length_m,
                      std::uint32_t legs_per_cable, std::uint64_t cables, std::uint64_t legs);
  /// Writes counts, lines, power, cost, tiers (ports used/free) and radix problems into `inv`.
  void finish(Inventory& inv) const;
  /// The links of `medium` given to add_links(), board media's too (NVLink, PCIe, the CPUs'
  /// socket links), which buy no part and so leave no line.
  std::uint64_t links(LinkMedium medium) const;

 private:
  struct SwitchCount {
    std::uint64_t count = 0, ports_used = 0, ports_total = 0, overfull = 0;
  };
  struct LinkKey {
    LinkMedium medium;
    double speed;
    double length_m;
    auto operator<=>(const LinkKey&) const = default;
  };
  std::map<std::uint16_t, std::uint64_t> gpus_, nics_;
  std::map<std::pair<std::uint8_t, std::uint16_t>, SwitchCount> switches_;  // (tier, model)
  std::map<std::uint16_t, std::tuple<std::uint64_t, std::uint64_t, std::uint64_t>> scale_up_;
  std::map<LinkKey, std::uint64_t> links_;
  std::map<LinkKey, std::uint64_t> auto_ends_;  // link ends that take one module each
  std::map<LinkKey, std::uint64_t> modules_;    // speed = what one module carries
  std::map<std::pair<LinkKey, std::uint16_t>, std::uint64_t> nic_modules_;  // in NIC model's cages
  std::uint64_t splitters_ = 0, split_legs_ = 0;
  // (link kind, legs per cable) -> (splitter DACs, legs)
  std::map<std::pair<LinkKey, std::uint32_t>, std::pair<std::uint64_t, std::uint64_t>> split_dacs_;
};

/// The bill-of-materials name of catalog optic `part` plugged into a NIC's cage: an OSFP NIC
/// cage takes the flat-top form of the module whose finned-top form sits in a switch cage
/// (NVIDIA LinkX: MMA4Z00-NS400 400G SR4 flat top for ConnectX-7 adapters, MMA4Z00-NS-FLT
/// twin-port 2 x 400G flat top for the DGX H100 / B200 ConnectX-7 cages, MMA4Z00-NS finned top
/// for QM9700), so "OSFP 400G SR4 transceiver, flat top (NIC side)"; other form factors
/// "... (NIC side)".
std::string nic_side_module_name(const CableSpec& part);

/// The module in a cage of NIC `nic` carrying `cage_speed` (its ports' total) over `length_m`
/// (defined with the cables, catalog_cables.cpp):
/// a ConnectX-8 XDR port takes the single-port XDR 800G DR4 of 200G lanes that a Quantum-X800
/// fabric's single-mode optics need (dr4_800g_xdr); other NICs, cable_for() by reach.
CableChoice nic_cage_module(const NicSpec& nic, LinkMedium medium, Bandwidth cage_speed,
                            double length_m);

/// Every device and link of `topo` told to a tally, as count_inventory finishes it.
BomTally tally_topology(const Topology& topo);

/// Counts every device and link of `topo` into `inv` (GPUs, NICs, nodes, switches per tier with
/// ports used and free, cables and transceivers by kind, power, cost, radix problems) and marks
/// it graph_built. Leaves bisection, oversubscription and injection bandwidth to the builder.
void count_inventory(const Topology& topo, Inventory& inv);

}  // namespace lockstep
