// Switch buffers as built: sizes from the catalog (docs/packet-engine.md "Buffers as built").
#include "buffers.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "huge_pages.hpp"
#include "lockstep/core/error.hpp"
#include "lockstep/topology/catalog.hpp"

namespace lockstep::packet {

namespace {
// As link_setup.cpp's fallback: a switch without a catalog entry (hand-built topologies).
constexpr std::int64_t kFallbackSwitchBuffer = 32ll << 20;

bool is_fabric_switch(DeviceKind k) {
  return k == DeviceKind::Switch || k == DeviceKind::Gateway;
}

// The default model: as built where every switch is a catalog part whose buffer layout (its
// cell) is published, so that no switch of the run mixes in the shared model's assumptions.
bool every_switch_as_built(const Topology& topo) {
  const auto cat = switch_catalog();
  bool any = false;
  for (DeviceId d = 0; d < topo.num_devices(); ++d) {
    const Device& dev = topo.device(d);
    if (dev.kind != DeviceKind::Switch) continue;
    if (dev.model >= cat.size()) return false;
    const SwitchBufferSpec* spec = switch_buffer_spec(cat[dev.model].name);
    if (spec == nullptr || spec->cell.count() == 0) return false;
    any = true;
  }
  return any;
}
}  // namespace

std::int64_t pfc_headroom(Bandwidth rate, Time latency, Time switch_latency,
                          std::int64_t max_wire) {
  const double window = 2 * latency.seconds() + switch_latency.seconds();
  return static_cast<std::int64_t>(std::min(0x1p53, std::ceil(rate.bytes_per_second() * window))) +
         2 * max_wire + kPfcFrameWire;
}

void Buffers::setup(const PacketConfig& cfg, const Topology& topo, std::uint32_t queues,
                    std::uint32_t lanes, std::int64_t max_wire) {
  on_ = cfg.buffers.model_set ? cfg.buffers.as_built
                              : cfg.buffers.as_built || every_switch_as_built(topo);
  if (!on_) return;
  lanes_ = lanes;
  const std::size_t links = topo.num_directed_links();
  // Read at random by every hop: on huge pages (huge_pages.hpp).
  reserve_on_huge_pages(pools_, topo.num_devices());
  pools_.assign(topo.num_devices(), SwitchPool{});
  reserve_on_huge_pages(queue_bytes_, links * queues);
  queue_bytes_.assign(links * queues, 0);
  reserve_on_huge_pages(pg_, links * lanes);
  pg_.assign(links * lanes, PriorityGroup{});
  headroom_.assign(links, 0);
  const auto cat = switch_catalog();
  const bool pfc = cfg.flow_control == FlowControl::Pfc;
  const bool lossy = cfg.flow_control == FlowControl::None;
  for (DeviceId d = 0; d < topo.num_devices(); ++d) {
    const Device& dev = topo.device(d);
    if (!is_fabric_switch(dev.kind)) continue;
    const SwitchSpec* spec =
        dev.kind == DeviceKind::Switch && dev.model < cat.size() ? &cat[dev.model] : nullptr;
    const SwitchBufferSpec* bspec = spec ? switch_buffer_spec(spec->name) : nullptr;
    SwitchPool& p = pools_[d];
    std::int64_t total = static_cast<std::int64_t>(cfg.switch_buffer.count());
    if (total == 0 && spec) total = static_cast<std::int64_t>(spec->buffer.count());
    if (total == 0) total = kFallbackSwitchBuffer;
    p.cell = static_cast<std::int64_t>(cfg.buffers.cell.count());
    if (p.cell == 0 && bspec) p.cell = static_cast<std::int64_t>(bspec->cell.count());
    p.cell = std::max<std::int64_t>(p.cell, 1);
    p.alpha = cfg.dynamic_threshold;
    p.ingress_alpha = cfg.buffers.ingress_alpha;
    p.reserved_queue = static_cast<std::int64_t>(cfg.buffers.reserved_queue.count());
    p.reserved_pg = static_cast<std::int64_t>(cfg.buffers.reserved_pg.count());
    const bool catalog_ecn = !cfg.ecn_thresholds_set && bspec && bspec->ecn_kmax.count() > 0;
    p.ecn_kmin = static_cast<std::int64_t>((catalog_ecn ? bspec->ecn_kmin : cfg.ecn_kmin).count());
    p.ecn_kmax = static_cast<std::int64_t>((catalog_ecn ? bspec->ecn_kmax : cfg.ecn_kmax).count());
    p.ecn_pmax = catalog_ecn ? bspec->ecn_pmax : cfg.ecn_pmax;
    // Reserves and headroom of the ports in use (a NOS configures the ports that are up).
    std::int64_t reserved = 0;
    for (const Port& port : topo.ports(d)) {
      const DirLinkId in = port.out ^ 1u;  // the link arriving over this port
      const Link& l = topo.link(Topology::link_of(in));
      if (pfc) {
        headroom_[in] = cfg.buffers.headroom.count() != 0
                            ? static_cast<std::int64_t>(cfg.buffers.headroom.count())
                            : pfc_headroom(l.bandwidth, l.latency, cfg.switch_latency, max_wire);
        reserved += static_cast<std::int64_t>(lanes) * (p.reserved_pg + headroom_[in]);
      }
      if (lossy) reserved += static_cast<std::int64_t>(lanes) * p.reserved_queue;
    }
    p.shared = total - reserved;
    if (p.shared < 0) {
      throw InputError("packet.buffers",
                       fmt::format("reserves and PFC headroom ({} B) exceed the {} B buffer of "
                                   "switch {} (device {})",
                                   reserved, total, spec ? spec->name : "without a model", d));
    }
  }
}

std::int64_t Buffers::cells(std::uint32_t dev, std::uint32_t wire) const {
  const std::int64_t c = pools_[dev].cell;
  return (static_cast<std::int64_t>(wire) + c - 1) / c * c;
}

bool Buffers::admit(std::uint32_t dev, std::size_t queue, std::uint32_t wire) const {
  const SwitchPool& p = pools_[dev];
  const std::int64_t before = queue_bytes_[queue];
  const std::int64_t after = before + cells(dev, wire);
  const std::int64_t share = shared_part(after, p.reserved_queue);
  if (share == 0) return true;
  const std::int64_t used = p.used + share - shared_part(before, p.reserved_queue);
  if (used > p.shared) return false;
  return static_cast<double>(share) <= p.alpha * static_cast<double>(p.shared - used);
}

void Buffers::add_egress(std::uint32_t dev, std::size_t queue, std::uint32_t wire) {
  SwitchPool& p = pools_[dev];
  std::int64_t& q = queue_bytes_[queue];
  p.used -= shared_part(q, p.reserved_queue);
  q += cells(dev, wire);
  p.used += shared_part(q, p.reserved_queue);
}

void Buffers::remove_egress(std::uint32_t dev, std::size_t queue, std::uint32_t wire) {
  SwitchPool& p = pools_[dev];
  std::int64_t& q = queue_bytes_[queue];
  p.used -= shared_part(q, p.reserved_queue);
  q -= cells(dev, wire);
  p.used += shared_part(q, p.reserved_queue);
}

std::int64_t Buffers::egress_booked() const {
  std::int64_t sum = 0;
  for (const std::int64_t q : queue_bytes_) sum += q < 0 ? -q : q;
  return sum;
}

bool Buffers::add_ingress(std::uint32_t dev, std::size_t pg, std::uint32_t wire, bool paused,
                          std::int64_t xoff) {
  SwitchPool& p = pools_[dev];
  PriorityGroup& g = pg_[pg];
  const std::int64_t c = cells(dev, wire);
  if (paused) {
    g.headroom += c;
    g.since_xoff += c;
    peak_headroom = std::max(peak_headroom, g.since_xoff);
    if (g.headroom > headroom_[pg / lanes_]) ++headroom_overflows;
    return false;
  }
  p.used -= shared_part(g.bytes, p.reserved_pg);
  g.bytes += c;
  const std::int64_t share = shared_part(g.bytes, p.reserved_pg);
  p.used += share;
  if (xoff > 0) return g.bytes > xoff;
  return static_cast<double>(share) > p.ingress_alpha * static_cast<double>(p.shared - p.used);
}

bool Buffers::remove_ingress(std::uint32_t dev, std::size_t pg, std::uint32_t wire,
                             std::int64_t xon, std::int64_t xon_gap) {
  SwitchPool& p = pools_[dev];
  PriorityGroup& g = pg_[pg];
  std::int64_t c = cells(dev, wire);
  const std::int64_t from_headroom = std::min(c, g.headroom);
  g.headroom -= from_headroom;
  c -= from_headroom;
  p.used -= shared_part(g.bytes, p.reserved_pg);
  g.bytes -= std::min(c, g.bytes);
  p.used += shared_part(g.bytes, p.reserved_pg);
  if (g.headroom > 0) return false;
  const bool below = xon > 0 ? g.bytes <= xon
                             : static_cast<double>(shared_part(g.bytes, p.reserved_pg) + xon_gap) <=
                                   p.ingress_alpha * static_cast<double>(p.shared - p.used);
  if (below) g.since_xoff = 0;  // the next XOFF starts a new count
  return below;
}

}  // namespace lockstep::packet
