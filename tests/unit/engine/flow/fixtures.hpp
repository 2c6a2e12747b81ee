#pragma once
// Small topologies and programs for the flow-engine tests, built by hand so that the expected
// times can be derived on paper.
#include <functional>
#include <memory>
#include <vector>

#include "lockstep/collective/collective.hpp"
#include "lockstep/collective/program.hpp"
#include "lockstep/engine/flow/flow_engine.hpp"
#include "lockstep/routing/router.hpp"

namespace lockstep::flow_test {

inline Device gpu(std::uint32_t node, std::uint32_t local = 0) {
  return Device{DeviceKind::Gpu, 0, node, 0, local};
}
inline Device sw(std::uint8_t tier = 0) {
  return Device{DeviceKind::Switch, tier, kNone, 0, 0};
}

/// n GPUs (devices 0..n-1) each linked to one switch (device n) with bandwidth bw and latency
/// lat per direction; `slow_gpu` (if < n) gets half the bandwidth.
inline Topology star(std::uint32_t n, Bandwidth bw, Time lat, std::uint32_t slow_gpu = kNone) {
  TopologyBuilder b("star");
  for (std::uint32_t i = 0; i < n; ++i) b.add_device(gpu(i));
  const DeviceId s = b.add_device(sw());
  for (std::uint32_t i = 0; i < n; ++i) b.add_link(Link{i, s, i == slow_gpu ? bw / 2 : bw, lat});
  return std::move(b).build();
}

/// Two leaves with `per_leaf` GPUs each (GPUs 0.. on leaf A, then leaf B), `spines` spines; all
/// links have bandwidth bw and latency lat.
inline Topology leaf_spine(std::uint32_t per_leaf, std::uint32_t spines, Bandwidth bw, Time lat) {
  TopologyBuilder b("leaf_spine");
  for (std::uint32_t i = 0; i < 2 * per_leaf; ++i) b.add_device(gpu(i));
  const DeviceId leaf[2] = {b.add_device(sw(0)), b.add_device(sw(0))};
  for (std::uint32_t i = 0; i < 2 * per_leaf; ++i) b.add_link(Link{i, leaf[i / per_leaf], bw, lat});
  for (std::uint32_t s = 0; s < spines; ++s) {
    const DeviceId spine = b.add_device(sw(1));
    b.add_link(Link{leaf[0], spine, bw, lat});
    b.add_link(Link{leaf[1], spine, bw, lat});
  }
  return std::move(b).build();
}

/// Ring all-reduce of `bytes` over n ranks, generated on demand: 2(n-1) steps; in step k rank r
/// sends one chunk (bytes / n) to r+1 after receiving step k-1's chunk from r-1. Reduce-scatter
/// steps receive with reduction, all-gather steps with copy. Symmetric under rotation (period 1).
class LazyRing final : public ProgramSet {
 public:
  LazyRing(Rank n, std::uint64_t bytes, Rank period = 1)
      : n_(n), chunk_(bytes / n), period_(period) {}
  Rank num_ranks() const override { return n_; }
  OpIndex num_ops(Rank) const override { return 4 * (n_ - 1); }
  Op op(Rank r, OpIndex i) const override {
    const OpIndex step = i / 2;
    const std::uint64_t chunk_index = (r + n_ - step % n_) % n_;
    const BufferRange range{Buffer::Output, chunk_index * chunk_, chunk_};
    if (i % 2 == 0) {
      Op s = make_send((r + 1) % n_, range);
      if (step > 0) s.add_dep(i - 1);
      return s;
    }
    Op v = make_recv((r + n_ - 1) % n_, range, step < n_ - 1 ? RecvMode::Reduce : RecvMode::Copy);
    if (step > 0) v.add_dep(i - 2);
    return v;
  }
  BufferSizes buffers(Rank) const override { return {chunk_ * n_, chunk_ * n_, 0, true}; }
  Rank symmetry_period() const override { return period_; }
  // Steps 1 .. 2n-3 repeat step 0's shape with one dependency each (recv mode aside).
  PeriodicRegion periodic_region(Rank, OpIndex i) const override {
    if (i < 2 || n_ < 3) return {};
    return {2, 2, 2 * n_ - 3};
  }

 private:
  Rank n_;
  std::uint64_t chunk_;
  Rank period_;
};

/// `nodes` nodes of `per_node` GPUs (devices 0.. in node-major order). Inside a node the GPUs
/// meet at a scale-up switch (bandwidth fast_bw, latency fast_lat per link); every GPU also has a
/// NIC link to one network switch (bw, lat). Shortest paths: NVLink-like inside a node, the
/// network between nodes.
inline Topology nodes_and_network(std::uint32_t nodes, std::uint32_t per_node, Bandwidth fast_bw,
                                  Time fast_lat, Bandwidth bw, Time lat) {
  TopologyBuilder b("nodes_and_network");
  for (std::uint32_t n = 0; n < nodes; ++n)
    for (std::uint32_t i = 0; i < per_node; ++i) b.add_device(gpu(n, i));
  const DeviceId net = b.add_device(sw());
  for (std::uint32_t n = 0; n < nodes; ++n) {
    const DeviceId nvs = b.add_device(Device{DeviceKind::ScaleUpSwitch, 0, n, 0, 0});
    for (std::uint32_t i = 0; i < per_node; ++i) {
      b.add_link(Link{n * per_node + i, nvs, fast_bw, fast_lat});
      b.add_link(Link{n * per_node + i, net, bw, lat});
    }
  }
  return std::move(b).build();
}

/// n GPUs, those with on_a(i) on leaf A and the others on leaf B (100 GB/s), both leaves to
/// `spines` spines at `spine` GB/s, 1 us per link. Link ids: GPU i - its leaf is link i; leaf A -
/// spine k is n + 2k, leaf B - spine k is n + 2k + 1.
inline Topology two_leaves(std::uint32_t n, std::uint32_t spines, double spine,
                           const std::function<bool(std::uint32_t)>& on_a) {
  TopologyBuilder b("two_leaves");
  for (std::uint32_t i = 0; i < n; ++i) b.add_device(gpu(i));
  const DeviceId a = b.add_device(sw(0)), bl = b.add_device(sw(0));
  const Bandwidth g = Bandwidth::gBps(100), x = Bandwidth::gBps(spine);
  for (std::uint32_t i = 0; i < n; ++i) b.add_link(Link{i, on_a(i) ? a : bl, g, Time::us(1)});
  for (std::uint32_t k = 0; k < spines; ++k) {
    const DeviceId s = b.add_device(sw(1));
    b.add_link(Link{a, s, x, Time::us(1)});
    b.add_link(Link{bl, s, x, Time::us(1)});
  }
  return std::move(b).build();
}

/// ECMP as it may fall on such a topology (or leaf_spine, which numbers its links the same way):
/// flow key -> spine, the path GPU -> leaf -> spine -> the other leaf -> GPU.
class SpineRouter final : public Router {
 public:
  SpineRouter(std::uint32_t gpus, std::function<bool(std::uint32_t)> on_a,
              std::function<std::uint32_t(const FlowKey&)> spine_of)
      : gpus_(gpus), on_a_(std::move(on_a)), spine_of_(std::move(spine_of)) {}
  void route(const FlowKey& key, const LinkLoadView*, std::vector<PathShare>& out) const override {
    const LinkId a_side = gpus_ + 2 * spine_of_(key), b_side = a_side + 1;
    const bool from_a = on_a_(key.src);
    const LinkId up = from_a ? a_side : b_side, down = from_a ? b_side : a_side;
    out.assign(1, PathShare{{2 * key.src, 2 * up, 2 * down + 1, 2 * key.dst + 1}, 1.0});
  }
  RoutingPolicy policy() const override { return RoutingPolicy::Ecmp; }

 private:
  std::uint32_t gpus_;
  std::function<bool(std::uint32_t)> on_a_;
  std::function<std::uint32_t(const FlowKey&)> spine_of_;
};

/// Every rank sends S = 1 MB on channels 0 and 1 to rank r + 2 and receives the same from it;
/// ranks r and r + 2 form a class (period 2).
class CrossLeafExchange final : public MaterializedProgramSet {
 public:
  CrossLeafExchange() : MaterializedProgramSet(4) {
    for (Rank r = 0; r < 4; ++r) {
      for (std::uint16_t ch = 0; ch < 2; ++ch)
        add(r, make_send((r + 2) % 4, {Buffer::Input, 0, 1'000'000}, ch));
      for (std::uint16_t ch = 0; ch < 2; ++ch)
        add(r, make_recv((r + 2) % 4, {Buffer::Output, 0, 1'000'000}, RecvMode::Copy, ch));
    }
  }
  Rank symmetry_period() const override { return 2; }
};

/// The skewed exchange (uneven_orbits_test.cpp, asymmetry_test.cpp): GPUs 0, 1 on leaf A, GPUs 2, 3
/// on leaf B, two spines at `spine` GB/s; ECMP as it may fall, GPUs 0 and 1 putting both channels
/// on spine 0, GPUs 2 and 3 channel c on spine c. With CrossLeafExchange, an uplink of 200 GB/s
/// limits nothing (the classes hold) and one of 100 GB/s limits a flow (they split).
inline Topology skewed_exchange_topology(double spine) {
  return two_leaves(4, 2, spine, [](std::uint32_t i) { return i < 2; });
}
inline SpineRouter skewed_spines() {
  return SpineRouter(
      4, [](std::uint32_t i) { return i < 2; },
      [](const FlowKey& key) { return key.src < 2 ? 0u : static_cast<std::uint32_t>(key.label); });
}

// A collective of `bytes` over `ranks` ranks on `channels` channels.
inline CollectiveSpec spec_of(CollectiveOp op, Algorithm algo, Rank ranks, std::uint16_t channels,
                              std::uint64_t bytes, DataType type = DataType::Uint8) {
  CollectiveSpec spec;
  spec.op = op;
  spec.algorithm = algo;
  spec.ranks = ranks;
  spec.channels = channels;
  spec.bytes = Bytes(bytes);
  spec.type = type;
  return spec;
}

inline EngineInput input_for(const Topology& t, const ProgramSet& p, const Router& router,
                             EngineOptions options = {}) {
  return EngineInput{&t, &p, t.gpus().subspan(0, p.num_ranks()), &router, options};
}

}  // namespace lockstep::flow_test
