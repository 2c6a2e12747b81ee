// Diameter (scale-out hops) and worst fixed latency of a built graph, measured from one GPU.
#include "lockstep/topology/inventory_paths.hpp"

#include <deque>
#include <functional>
#include <queue>
#include <vector>

namespace lockstep {
namespace {

bool forwards(DeviceKind k) {
  return k == DeviceKind::Switch || k == DeviceKind::Gateway || k == DeviceKind::Gpu;
}

// 0-1 breadth-first search over scale-out links (NVLink excluded): a link costs one hop when
// both ends forward packets (switch-switch, or GPU-GPU in direct topologies such as a torus).
std::uint32_t max_hops(const Topology& topo, DeviceId source) {
  const auto n = topo.num_devices();
  std::vector<std::uint32_t> hops(n, kNone);
  std::deque<DeviceId> queue{source};
  hops[source] = 0;
  while (!queue.empty()) {
    const DeviceId u = queue.front();
    queue.pop_front();
    for (const Port& p : topo.ports(u)) {
      const Link& l = topo.link(Topology::link_of(p.out));
      if (l.medium == LinkMedium::NvLink) continue;
      const std::uint32_t w =
          forwards(topo.device(u).kind) && forwards(topo.device(p.peer).kind) ? 1 : 0;
      if (hops[u] + w < hops[p.peer]) {
        hops[p.peer] = hops[u] + w;
        if (w == 0) {
          queue.push_front(p.peer);
        } else {
          queue.push_back(p.peer);
        }
      }
    }
  }
  std::uint32_t worst = 0;
  for (DeviceId g : topo.gpus()) {
    if (hops[g] != kNone && hops[g] > worst) worst = hops[g];
  }
  return worst;
}

// Dijkstra over every link by fixed latency.
Time max_latency(const Topology& topo, DeviceId source) {
  const auto n = topo.num_devices();
  std::vector<Time> dist(n, Time::infinite());
  using Entry = std::pair<Time, DeviceId>;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> heap;
  dist[source] = Time::zero();
  heap.push({Time::zero(), source});
  while (!heap.empty()) {
    const auto [d, u] = heap.top();
    heap.pop();
    if (d != dist[u]) continue;
    for (const Port& p : topo.ports(u)) {
      const Time nd = d + topo.link(Topology::link_of(p.out)).latency;
      if (nd < dist[p.peer]) {
        dist[p.peer] = nd;
        heap.push({nd, p.peer});
      }
    }
  }
  Time worst = Time::zero();
  for (DeviceId g : topo.gpus()) {
    if (dist[g] != Time::infinite() && dist[g] > worst) worst = dist[g];
  }
  return worst;
}

}  // namespace

PathExtent measure_paths(const Topology& topo, DeviceId source) {
  if (topo.gpus().empty()) return {};
  if (source == kNone) source = topo.gpus().front();
  return {max_hops(topo, source), max_latency(topo, source)};
}

}  // namespace lockstep
