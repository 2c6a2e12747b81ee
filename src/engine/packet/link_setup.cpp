// The packet engine's set-up: each device's buffer and latency, and each directed link's rate,
// latency, flow control, credits, PFC thresholds and lane levels, from the topology, the catalog
// and the packet config. The run itself is in simulator.cpp.
#include <algorithm>
#include <cmath>

#include "huge_pages.hpp"
#include "lockstep/core/error.hpp"
#include "lockstep/topology/catalog.hpp"
#include "simulator.hpp"

namespace lockstep::packet {

namespace {

bool is_fabric_switch(DeviceKind k) {
  return k == DeviceKind::Switch || k == DeviceKind::Gateway;
}

// The order in which routes climb and descend: a Clos routes up the tiers then down (Autonet's
// up*/down*, Schroeder et al. 1991), a gateway sits above its site's top tier, and devices of one
// rank are ordered by id. Within one lane level every route climbs then descends in this order,
// so no cycle of buffers can form on it (docs/packet-engine.md "Lane change at turns").
std::uint64_t order_key(const Device& d, DeviceId id) {
  const std::uint64_t rank = d.kind == DeviceKind::Gateway ? 0xFF : std::uint64_t{d.tier} + 1;
  return rank << 32 | id;
}

// Auto lane levels: two where some fabric switch is wired to two or more fabric switches of its
// own rank (a dragonfly's routers, a ring of switches), where minimal routes can turn down then
// up; one elsewhere (Clos tiers, a pair of gateways), where they cannot and nothing changes.
std::uint32_t auto_lane_levels(const Topology& t) {
  for (DeviceId d = 0; d < t.num_devices(); ++d) {
    const Device& dev = t.device(d);
    if (!is_fabric_switch(dev.kind)) continue;
    const std::uint64_t rank = order_key(dev, d) >> 32;
    DeviceId first = kNone;
    for (const Port& p : t.ports(d)) {
      const Device& peer = t.device(p.peer);
      if (!is_fabric_switch(peer.kind) || order_key(peer, p.peer) >> 32 != rank) continue;
      if (first == kNone) first = p.peer;
      if (p.peer != first) return 2;
    }
  }
  return 1;
}

// Model default when a switch's catalog entry cannot be found (hand-built test topologies whose
// Device::model points nowhere): a mid-size shared buffer. Documented in docs/packet-engine.md.
constexpr std::int64_t kFallbackSwitchBuffer = 32ll << 20;
// NICs, hosts and scale-up switches are credit-controlled (PCIe and NVLink are lossless); their
// per-port buffer is a model parameter, at least enough to keep a link busy (see setup_links).
constexpr std::int64_t kDefaultNicBuffer = 256ll << 10;

}  // namespace

Simulator::Simulator(const PacketConfig& config, const EngineInput& input, PacketStats& stats)
    : cfg_(config), topo_(input.topology), input_(input), stats_(stats), rng_(input.options.seed) {
  lossy_ = cfg_.flow_control == FlowControl::None;
  classes_ = cfg_.virtual_lanes;
  // Lossy fabrics drop instead of waiting: no buffer cycle, no lane change.
  levels_ = lossy_ ? 1 : cfg_.lane_levels != 0 ? cfg_.lane_levels : auto_lane_levels(*topo_);
  levels_ = std::max<std::uint32_t>(1, std::min(levels_, 16 / classes_));
  lanes_ = classes_ * levels_;
  queues_ = lanes_ + 1;
  reliable_ = lossy_;
  multipath_ = cfg_.spray || cfg_.adaptive || cfg_.switch_adaptive;
  // NCCL's network efficiency (48 of an NDR NIC's 50 GB/s) is a payload rate, headers included;
  // this engine puts the fabric's real headers on every packet, so it inflates a fabric
  // transfer's payload only by the rest: eff x (MTU + header) / MTU, and a full-size stream then
  // moves payload at eff x the line rate, as the analytical and flow engines price it
  // (docs/packet-engine.md "Payload efficiency and headers").
  const EngineOptions& o = input.options;
  board_efficiency_ = o.transfer_efficiency;
  fabric_efficiency_ = board_efficiency_;
  if (o.network_transfer_efficiency > 0) {
    const auto mtu = static_cast<double>(cfg_.payload.count());
    const auto header = static_cast<double>(cfg_.header.count());
    fabric_efficiency_ = std::min(1.0, o.network_transfer_efficiency * (mtu + header) / mtu);
  }
  router_ = input.router;
  if (router_ == nullptr) throw InputError("engine.router", "the packet engine needs a router");
  if (multipath_ && router_->policy() != RoutingPolicy::Spray) {
    own_router_ = make_router(*topo_, RouterOptions{RoutingPolicy::Spray, 1, input.options.seed});
    router_ = own_router_.get();
  }
  setup_links();
  setup_cables();
  programs_.init(*this, input);
}

void Simulator::setup_links() {
  const Topology& t = *topo_;
  devices_.resize(t.num_devices());
  for (DeviceId d = 0; d < t.num_devices(); ++d) {
    const Device& dev = t.device(d);
    DeviceState& s = devices_[d];
    s.endpoint = dev.kind == DeviceKind::Gpu;
    if (dev.kind == DeviceKind::Switch) {
      const auto cat = switch_catalog();
      const SwitchSpec* spec = dev.model < cat.size() ? &cat[dev.model] : nullptr;
      s.buffer = cfg_.switch_buffer.count() != 0
                     ? static_cast<std::int64_t>(cfg_.switch_buffer.count())
                     : (spec ? static_cast<std::int64_t>(spec->buffer.count()) : 0);
      if (s.buffer == 0) s.buffer = kFallbackSwitchBuffer;
      s.latency = cfg_.switch_latency.picoseconds();
    } else {
      s.buffer = cfg_.switch_buffer.count() != 0 && dev.kind == DeviceKind::Gateway
                     ? static_cast<std::int64_t>(cfg_.switch_buffer.count())
                     : kFallbackSwitchBuffer;
      s.latency = dev.kind == DeviceKind::Gateway ? cfg_.switch_latency.picoseconds() : 0;
    }
  }
  const std::size_t n = t.num_directed_links();
  // What every hop reads at random: on huge pages (huge_pages.hpp).
  reserve_on_huge_pages(links_, n);
  links_.resize(n);
  reserve_on_huge_pages(fifos_, n * queues_);
  fifos_.assign(n * queues_, Fifo{});
  reserve_on_huge_pages(lane_, n * lanes_);
  lane_.resize(n * lanes_);
  reserve_on_huge_pages(tally_, n);
  link_bytes_.assign(n, 0.0);
  tally_.assign(n, LinkTally{});
  incast_room_.assign(n, kNever);
  // The queue histograms, 128 bytes a link, every arrival updates one (reset keeps the room).
  reserve_on_huge_pages(stats_.links.queue_hist, n * LinkCounters::kQueueBuckets);
  stats_.links.reset(n, true);
  // The largest packet on any link: the fabric's, or an on-board copy's where it is larger.
  const std::int64_t max_wire = max_wire_ = static_cast<std::int64_t>(
      std::max({cfg_.payload.count() + cfg_.header.count(), cfg_.board_payload.count(),
                board_packet_payload(LinkMedium::NvLink).count(),
                board_packet_payload(LinkMedium::Pcie).count(),
                board_packet_payload(LinkMedium::CpuLink).count()}));
  watchdog_ = cfg_.watchdog.picoseconds();
  for (DirLinkId d = 0; d < n; ++d) {
    const Link& l = t.link(Topology::link_of(d));
    LinkState& s = links_[d];
    s.src = t.source(d);
    s.dst = t.target(d);
    s.ps_per_byte = 1e12 / l.bandwidth.bytes_per_second();
    s.latency = l.latency.picoseconds();
    s.far_latency = devices_[s.dst].latency;
    s.to_endpoint = devices_[s.dst].endpoint;
    // The watchdog calls the run stalled when no packet started or arrived for a whole period,
    // so a period must hold the longest hop: the largest packet's serialisation plus latencies
    // (on a 1.9 Mb/s link a 4 KiB packet takes 17 ms, which the 500 us default took for a
    // deadlock).
    const Time ser = Time::from_ps(static_cast<double>(max_wire) * s.ps_per_byte);
    watchdog_ = std::max(watchdog_, later(later(ser.picoseconds(), s.latency), s.far_latency));
    const Device& far = t.device(s.dst);
    const Device& near = t.device(s.src);
    if (is_fabric_switch(near.kind) && is_fabric_switch(far.kind))
      s.turn = order_key(far, s.dst) > order_key(near, s.src) ? kUp : kDown;
    if (far.kind == DeviceKind::Gpu) {
      s.control = LinkControl::Sink;
    } else if (is_fabric_switch(far.kind)) {
      s.control = cfg_.flow_control == FlowControl::Credit ? LinkControl::Credit
                  : cfg_.flow_control == FlowControl::Pfc  ? LinkControl::Pfc
                                                           : LinkControl::Lossy;
    } else {
      s.control = LinkControl::Credit;
    }
    // Bytes in flight on a round trip of this link: what a credit or PAUSE loop must cover.
    // (At most 2^53 B, which no buffer reaches, so that absurd latencies cannot overflow it.)
    const auto bdp = static_cast<std::int64_t>(
        std::min(0x1p53, std::ceil(l.bandwidth.bytes_per_second() * 2.0 * l.latency.seconds())));
    // A switch chip shares its buffer among all its ports (the catalog radix), also when a
    // topology uses fewer of them (a k=16 fat tree of 64-port switches).
    std::size_t ports = t.ports(s.dst).size();
    if (far.kind == DeviceKind::Switch && far.model < switch_catalog().size())
      ports = std::max<std::size_t>(ports, switch_catalog()[far.model].radix);
    ports = std::max<std::size_t>(ports, 1);
    std::int64_t port = static_cast<std::int64_t>(cfg_.port_buffer.count());
    if (port == 0) {
      port = is_fabric_switch(far.kind) ? devices_[s.dst].buffer / static_cast<std::int64_t>(ports)
             : cfg_.nic_buffer.count() != 0 ? static_cast<std::int64_t>(cfg_.nic_buffer.count())
                                            : kDefaultNicBuffer;
      // Unless the user set it, assume the buffer covers the link's round trip (real long-haul
      // InfiniBand needs range extenders for exactly this reason; see docs).
      port = std::max(port, static_cast<std::int64_t>(lanes_) * (bdp + 4 * max_wire));
    }
    const std::int64_t per_lane = port / lanes_;
    if (s.control == LinkControl::Credit) {
      const auto inputs = static_cast<std::int64_t>(std::max<std::size_t>(ports, 2) - 1);
      incast_room_[d] = std::max<std::int64_t>(per_lane - bdp, 0) / inputs;
    }
    // InfiniBand's link-level flow control counts 64-byte blocks (IBTA Vol. 1, 7.9.4): the
    // receiver advertises its buffer in whole blocks and a packet takes ceil(wire / 64).
    // NVLink's, PCIe's and the CPUs' link's credits are the engine's bytes (their units are
    // another model).
    if (cfg_.flow_control == FlowControl::Credit && !on_board(l.medium)) s.credit_shift = 6;
    const std::int64_t lane_credits = per_lane >> s.credit_shift;
    for (std::uint32_t lane = 0; lane < lanes_; ++lane) {
      lane_[lidx(d, static_cast<std::uint8_t>(lane))].credits =
          s.control == LinkControl::Credit ? lane_credits : 0;
    }
    if (s.control == LinkControl::Credit) stats_.credits_initial += lane_credits * lanes_;
    // 802.1Qbb's delay model as pfc_headroom (buffers.cpp), the switch latency aside.
    const std::int64_t headroom = bdp + 2 * max_wire + kPfcFrameWire;
    s.xoff = cfg_.pfc_xoff.count() != 0 ? static_cast<std::int64_t>(cfg_.pfc_xoff.count())
                                        : std::max(per_lane - headroom, 2 * max_wire);
    s.xon = cfg_.pfc_xon.count() != 0 ? static_cast<std::int64_t>(cfg_.pfc_xon.count())
                                      : std::max<std::int64_t>(s.xoff - 2 * max_wire, 0);
  }
  buffers_.setup(cfg_, t, queues_, lanes_, max_wire);
  events_.reserve(1 << 16);
}

}  // namespace lockstep::packet
