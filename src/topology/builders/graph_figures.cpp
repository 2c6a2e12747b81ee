#include "graph_figures.hpp"

#include <algorithm>
#include <map>

#include "lockstep/topology/inventory_paths.hpp"
#include "min_cut.hpp"

namespace lockstep::builders {
namespace {

// Above these sizes the exact figures would cost seconds; see docs/scenario.md.
constexpr double kMaxPathWork = 5e7;         // sources x (devices + links) for all-source paths
constexpr std::size_t kSampledSources = 16;  // evenly spaced GPUs otherwise
constexpr std::size_t kMaxCutLinks = 2'000'000;

bool scale_out(LinkMedium m) {
  return !on_board(m);
}

bool is_switch(const Device& d) {
  return d.kind == DeviceKind::Switch || d.kind == DeviceKind::Gateway;
}

void measure_extent(const Topology& topo, Inventory& inv) {
  const auto gpus = topo.gpus();
  const double work =
      static_cast<double>(gpus.size()) * static_cast<double>(topo.num_devices() + topo.num_links());
  const std::size_t sources =
      work <= kMaxPathWork ? gpus.size() : std::min(gpus.size(), kSampledSources);
  inv.diameter_switch_hops = 0;
  inv.max_one_way_latency = Time::zero();
  for (std::size_t i = 0; i < sources; ++i) {
    const PathExtent e = measure_paths(topo, gpus[i * gpus.size() / sources]);
    inv.diameter_switch_hops = std::max(inv.diameter_switch_hops, e.switch_hops);
    inv.max_one_way_latency = std::max(inv.max_one_way_latency, e.latency);
  }
}

// Scale-out bandwidth leaving GPUs and NICs, summed per endpoint and averaged over the GPUs. A
// cluster without a scale-out network (one NVLink domain) reports its NVLink bandwidth instead.
Bandwidth mean_injection(const Topology& topo) {
  if (topo.gpus().empty()) return Bandwidth{};
  double scale_out_total = 0, nvlink_total = 0;
  for (const Link& l : topo.links()) {
    for (DeviceId end : {l.a, l.b}) {
      const DeviceKind k = topo.device(end).kind;
      if (scale_out(l.medium) && (k == DeviceKind::Gpu || k == DeviceKind::Nic)) {
        scale_out_total += l.bandwidth.bytes_per_second();
      } else if (l.medium == LinkMedium::NvLink && k == DeviceKind::Gpu) {
        nvlink_total += l.bandwidth.bytes_per_second();
      }
    }
  }
  const double total = scale_out_total > 0 ? scale_out_total : nvlink_total;
  return Bandwidth::bytes_per_second(total / static_cast<double>(topo.gpus().size()));
}

// Per switch tier: bandwidth towards lower tiers and endpoints over bandwidth towards higher
// tiers. The top tier has nothing above it and reports 1. Links to datacenter gateways belong to
// the scale-across path, not to the site's fabric, and count on neither side.
void set_oversubscription(const Topology& topo, Inventory& inv) {
  std::map<std::string, std::pair<double, double>> down_up;
  for (const Link& l : topo.links()) {
    const Device& a = topo.device(l.a);
    const Device& b = topo.device(l.b);
    const double bw = l.bandwidth.bytes_per_second();
    auto count = [&](const Device& self, const Device& peer) {
      if (self.kind != DeviceKind::Switch || peer.kind == DeviceKind::Gateway) return;
      auto& [down, up] = down_up[switch_tier_name(self.tier)];
      const bool above = peer.kind == DeviceKind::Switch && peer.tier > self.tier;
      (above ? up : down) += bw;
    };
    count(a, b);
    count(b, a);
  }
  for (TierFigures& t : inv.tiers) {
    auto it = down_up.find(t.tier);
    if (it != down_up.end() && it->second.second > 0) {
      t.oversubscription = it->second.first / it->second.second;
    }
  }
}

}  // namespace

void describe_measured_graph(const Topology& topo, Inventory& inv) {
  measure_extent(topo, inv);
  inv.injection_per_gpu = mean_injection(topo);
  set_oversubscription(topo, inv);
  if (topo.num_links() <= kMaxCutLinks) inv.bisection = rank_halves_cut(topo);
  // Network ports per GPU: scale-out links at the GPU itself or at its node's NICs.
  std::uint64_t ports = 0;
  for (const Link& l : topo.links()) {
    if (!scale_out(l.medium)) continue;
    for (DeviceId end : {l.a, l.b}) {
      const Device& d = topo.device(end);
      const Device& peer = topo.device(end == l.a ? l.b : l.a);
      if ((d.kind == DeviceKind::Gpu || d.kind == DeviceKind::Nic) &&
          (is_switch(peer) || peer.kind == DeviceKind::Gpu || peer.node != d.node)) {
        ++ports;
      }
    }
  }
  if (!topo.gpus().empty()) inv.ports_per_gpu = ports / topo.gpus().size();
  if (!topo.connected()) {
    inv.feasible = false;
    inv.problems.push_back("the fabric is not connected");
  }
}

}  // namespace lockstep::builders
