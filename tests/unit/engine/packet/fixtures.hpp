#pragma once
// Small hand-built fabrics and a tiny shortest-path router for the packet engine's unit tests,
// so they depend on nothing but the topology graph. GPUs stand for hosts (endpoints).
#include <algorithm>
#include <deque>
#include <memory>
#include <vector>

#include "lockstep/collective/program.hpp"
#include "lockstep/core/rng.hpp"
#include "lockstep/engine/engine.hpp"
#include "lockstep/engine/packet/packet_engine.hpp"
#include "lockstep/routing/router.hpp"
#include "lockstep/topology/graph.hpp"

namespace lockstep::packet_test {

/// All shortest paths (by hop count); ECMP picks one by hashing the flow key, Spray returns all.
class TinyRouter : public Router {
 public:
  TinyRouter(const Topology& topo, RoutingPolicy policy) : topo_(topo), policy_(policy) {}
  RoutingPolicy policy() const override { return policy_; }
  void route(const FlowKey& key, const LinkLoadView*, std::vector<PathShare>& out) const override {
    out.clear();
    std::vector<std::uint32_t> dist(topo_.num_devices(), kNone);
    std::deque<DeviceId> q{key.dst};
    dist[key.dst] = 0;
    while (!q.empty()) {
      const DeviceId d = q.front();
      q.pop_front();
      for (const Port& p : topo_.ports(d)) {
        if (dist[p.peer] == kNone) {
          dist[p.peer] = dist[d] + 1;
          q.push_back(p.peer);
        }
      }
    }
    std::vector<std::vector<DirLinkId>> all;
    std::vector<DirLinkId> cur;
    collect(key.src, key.dst, dist, cur, all);
    if (policy_ == RoutingPolicy::Spray) {
      for (auto& hops : all) out.push_back({hops, 1.0 / static_cast<double>(all.size())});
    } else {
      const std::uint64_t h = mix64((std::uint64_t{key.src} << 32 | key.dst) ^ mix64(key.label));
      out.push_back({all[h % all.size()], 1.0});
    }
  }

 private:
  void collect(DeviceId at, DeviceId dst, const std::vector<std::uint32_t>& dist,
               std::vector<DirLinkId>& cur, std::vector<std::vector<DirLinkId>>& all) const {
    if (at == dst) {
      all.push_back(cur);
      return;
    }
    for (const Port& p : topo_.ports(at)) {
      // Only GPUs at the ends: never route through another endpoint.
      if (dist[p.peer] + 1 != dist[at]) continue;
      if (p.peer != dst && topo_.device(p.peer).kind == DeviceKind::Gpu) continue;
      cur.push_back(p.out);
      collect(p.peer, dst, dist, cur, all);
      cur.pop_back();
    }
  }
  const Topology& topo_;
  RoutingPolicy policy_;
};

inline Device gpu(std::uint32_t node) {
  Device d;
  d.kind = DeviceKind::Gpu;
  d.node = node;
  return d;
}

inline Device fabric_switch(std::uint8_t tier) {
  Device d;
  d.kind = DeviceKind::Switch;
  d.tier = tier;
  d.model = 0xFFFF;  // no catalog entry: the engine's config and fallbacks apply
  return d;
}

inline Link link(DeviceId a, DeviceId b, Bandwidth bw, Time latency) {
  Link l;
  l.a = a;
  l.b = b;
  l.bandwidth = bw;
  l.latency = latency;
  return l;
}

/// `hosts` GPUs on one switch (GPUs are devices 0..hosts-1, the switch is device `hosts`).
inline Topology star(std::uint32_t hosts, Bandwidth bw, Time latency) {
  TopologyBuilder b("star");
  for (std::uint32_t i = 0; i < hosts; ++i) b.add_device(gpu(i));
  const DeviceId sw = b.add_device(fabric_switch(0));
  for (std::uint32_t i = 0; i < hosts; ++i) b.add_link(link(i, sw, bw, latency));
  return std::move(b).build();
}

/// Two-tier leaf-spine: GPUs first (leaf-major), then leaves, then spines.
inline Topology leaf_spine(std::uint32_t leaves, std::uint32_t spines, std::uint32_t per_leaf,
                           Bandwidth bw, Time latency) {
  TopologyBuilder b("leaf_spine");
  const std::uint32_t hosts = leaves * per_leaf;
  for (std::uint32_t i = 0; i < hosts; ++i) b.add_device(gpu(i));
  for (std::uint32_t i = 0; i < leaves + spines; ++i)
    b.add_device(fabric_switch(i < leaves ? 0 : 1));
  for (std::uint32_t i = 0; i < hosts; ++i) b.add_link(link(i, hosts + i / per_leaf, bw, latency));
  for (std::uint32_t l = 0; l < leaves; ++l)
    for (std::uint32_t s = 0; s < spines; ++s)
      b.add_link(link(hosts + l, hosts + leaves + s, bw, latency));
  return std::move(b).build();
}

/// Programs of independent point-to-point transfers (rank = GPU index).
struct Transfer {
  Rank src, dst;
  std::uint64_t bytes;
  std::uint16_t channel = 0;
};

inline MaterializedProgramSet transfers(Rank ranks, const std::vector<Transfer>& list) {
  MaterializedProgramSet p(ranks);
  for (const Transfer& t : list) {
    p.add(t.src, make_send(t.dst, {Buffer::Input, 0, t.bytes}, t.channel));
    p.add(t.dst, make_recv(t.src, {Buffer::Output, 0, t.bytes}, RecvMode::Copy, t.channel));
  }
  return p;
}

struct Outcome {
  RunResult result;
  PacketStats stats;
};

/// Runs `programs` on `topo` with a TinyRouter of the given policy.
inline Outcome simulate(const Topology& topo, const ProgramSet& programs, const PacketConfig& cfg,
                        RoutingPolicy policy = RoutingPolicy::Ecmp, std::uint64_t seed = 1) {
  TinyRouter router(topo, policy);
  PacketEngine engine(cfg);
  EngineInput in;
  in.topology = &topo;
  in.programs = &programs;
  in.router = &router;
  in.options.seed = seed;
  Outcome r{engine.run(in), {}};
  r.stats = engine.stats();
  return r;
}

/// The same with engine options (overheads, record_ops), ECMP routing.
inline Outcome simulate(const Topology& topo, const ProgramSet& programs, const PacketConfig& cfg,
                        const EngineOptions& options) {
  TinyRouter router(topo, RoutingPolicy::Ecmp);
  PacketEngine engine(cfg);
  EngineInput in;
  in.topology = &topo;
  in.programs = &programs;
  in.router = &router;
  in.options = options;
  Outcome r{engine.run(in), {}};
  r.stats = engine.stats();
  return r;
}

}  // namespace lockstep::packet_test
