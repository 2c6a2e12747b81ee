#pragma once
// Names for the devices of a built topology, so that users can point at one (a fault's
// `link=nic3-leaf3`) and errors can say which one they mean:
//   gpuR                 the GPU of rank R (topology.gpus()[R]: node-major, then local index)
//   nicI, hostI, scale_up_switchI, gatewayI
//                        the I-th device of that kind in id order (on a rail fabric with one NIC
//                        per GPU, nicR is rank R's NIC)
//   leafI, spineI, coreI, tierT_I
//                        the I-th switch of that tier in id order
//   devD                 device D as `lockstep topo --emit` numbers it ("id")
//
//   DeviceNames names(topo);
//   DeviceId nic = names.find("nic3");   // kNone if there is no such device
//   std::string s = names.name(nic);     // "nic3"
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "lockstep/topology/graph.hpp"

namespace lockstep {

class DeviceNames {
 public:
  explicit DeviceNames(const Topology& topo);

  std::string name(DeviceId d) const;
  /// The device `name` denotes (any of the forms above), kNone if none.
  DeviceId find(std::string_view name) const;
  /// Every valid name as ranges, for errors: "gpu0 .. gpu15, nic0 .. nic15, ..., dev0 .. dev42".
  std::string summary() const;
  /// A device as a reader finds it in the machine room: "node 12 gpu 3", "node 12 nic 3",
  /// "leaf 5 (rail 3)" (a leaf whose NICs all sit on one rail), "spine 2", "gateway 0".
  std::string describe(const Topology& topo, DeviceId d) const;
  /// A directed link by what it joins: "node 12 gpu 3 -> node 12 nic 3",
  /// "node 12 nic 3 -> leaf 5 (rail 3)", "leaf 5 (rail 3) -> spine 2".
  std::string link_name(const Topology& topo, DirLinkId link) const;

 private:
  struct Class {
    std::string prefix;  // "gpu", "leaf", "tier3_"
    std::vector<DeviceId> members;
  };
  std::vector<Class> classes_;
  std::vector<std::uint32_t> class_of_;  // per device
  std::vector<std::uint32_t> ordinal_;   // per device, within its class
};

}  // namespace lockstep
