#pragma once
// Small graphs the analytical engine's tests share.
#include <cstdint>

#include "lockstep/topology/graph.hpp"

namespace lockstep::analytical_test {

/// n GPUs on one scale-up switch, each by one link of `bw` and `latency` (a GPU-to-GPU path is
/// two links).
inline Topology star(std::uint32_t n, Bandwidth bw, Time latency) {
  TopologyBuilder b("star");
  const DeviceId sw = b.add_device(Device{DeviceKind::ScaleUpSwitch, 0, 0, 0, 0});
  for (std::uint32_t i = 0; i < n; ++i) {
    const DeviceId g = b.add_device(Device{DeviceKind::Gpu, 0, 0, 0, i});
    b.add_link(Link{g, sw, bw, latency, LinkMedium::NvLink});
  }
  return std::move(b).build();
}

}  // namespace lockstep::analytical_test
