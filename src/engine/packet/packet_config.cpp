#include "lockstep/engine/packet/packet_config.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "lockstep/core/error.hpp"

namespace lockstep {

const char* to_string(FabricModel m) {
  switch (m) {
    case FabricModel::InfiniBand:
      return "infiniband";
    case FabricModel::RoCE:
      return "roce";
    case FabricModel::Ethernet:
      return "ethernet";
    case FabricModel::UltraEthernet:
      return "ultra_ethernet";
  }
  return "?";
}

const char* to_string(FlowControl f) {
  switch (f) {
    case FlowControl::Credit:
      return "credit";
    case FlowControl::Pfc:
      return "pfc";
    case FlowControl::None:
      return "none";
  }
  return "?";
}

const char* to_string(CongestionControl c) {
  switch (c) {
    case CongestionControl::None:
      return "none";
    case CongestionControl::Dcqcn:
      return "dcqcn";
    case CongestionControl::Reno:
      return "reno";
    case CongestionControl::Delay:
      return "delay";
    case CongestionControl::Ecn:
      return "ecn";
    case CongestionControl::Nscc:
      return "nscc";
    case CongestionControl::Rccc:
      return "rccc";
    case CongestionControl::NsccRccc:
      return "nscc+rccc";
  }
  return "?";
}

const char* to_string(Delivery d) {
  return d == Delivery::Rod ? "rod" : "rud";
}

namespace {

// Per-packet header overheads are protocol constants (not hardware figures):
// InfiniBand (IBTA spec vol. 1): LRH 8 + BTH 12 + ICRC 4 + VCRC 2 = 26 B.
PacketConfig infiniband() {
  PacketConfig c;
  c.model = FabricModel::InfiniBand;
  c.flow_control = FlowControl::Credit;
  c.congestion = CongestionControl::None;
  c.payload = Bytes(4096);
  c.header = Bytes(26);
  // An RC responder acknowledges at least each message and may coalesce (IBTA Vol. 1, 9.7.5.1):
  // one ACK per message. ACK: LRH 8 + BTH 12 + AETH 4 + ICRC 4 + VCRC 2 = 30 B. ACKs ride
  // their QP's service level, i.e. the data's virtual lane: no priority.
  c.ack_every = 0;
  c.ack_wire = Bytes(30);
  return c;
}

// RoCEv2: Ethernet 14 + IPv4 20 + UDP 8 + BTH 12 + ICRC 4 + FCS 4 + preamble/SFD 8 + IFG 12 = 82.
PacketConfig roce() {
  PacketConfig c;
  c.model = FabricModel::RoCE;
  c.flow_control = FlowControl::Pfc;
  c.congestion = CongestionControl::Dcqcn;
  c.payload = Bytes(4096);
  c.header = Bytes(82);
  c.ecn = true;
  // One ACK per message as on InfiniBand (IBTA Vol. 1, 9.7.5.1). ACK: Ethernet 14 + IPv4 20 +
  // UDP 8 + BTH 12 + AETH 4 + ICRC 4 + FCS 4 + preamble/SFD 8 + IFG 12 = 86 B. CNP (IBTA RoCEv2
  // Annex A17.9.2: BTH opcode 0x81 and 16 reserved bytes): 14 + 20 + 8 + 12 + 16 + 4 + 4 + 20 =
  // 98 B. NVIDIA's RoCE configuration guides give CNPs a strict-priority class (priority 6,
  // DSCP 48): control_priority on.
  c.ack_every = 0;
  c.ack_wire = Bytes(86);
  c.cnp_wire = Bytes(98);
  c.control_priority = true;
  return c;
}

// Kernel TCP over a 1500 B IP MTU: payload 1500 - IPv4 20 - TCP 20 - timestamps 12 = 1448;
// overhead 52 + Ethernet 14 + FCS 4 + preamble 8 + IFG 12 = 90 B per packet.
PacketConfig tcp() {
  PacketConfig c;
  c.model = FabricModel::Ethernet;
  c.flow_control = FlowControl::None;
  c.congestion = CongestionControl::Reno;
  c.payload = Bytes(1448);
  c.header = Bytes(90);
  // Host cost of the kernel stack: a syscall and wake-up per message and a copy per byte.
  // Typical figures (a few us per message, ~0.1 ns/B for a memcpy at ~10 GB/s per core) are
  // scenario inputs; the defaults model an idle, well-tuned host.
  c.host_per_message = Time::us(5);
  c.host_per_byte_ps = Time::ps(0);
  // Delayed ACKs: at least every second full-sized segment (RFC 1122 4.2.3.2, RFC 5681 4.2), at
  // once for an out-of-order or duplicate segment (RFC 5681 4.2). ACK: Ethernet 14 + IPv4 20 +
  // TCP 20 + timestamps 12 + FCS 4 = 70 B frame + preamble/SFD 8 + IFG 12 = 90 B. Data centre
  // switches queue ACKs with the data (one traffic class).
  c.ack_every = 2;
  c.ack_wire = Bytes(90);
  return c;
}

// Sprayed, lossy Ethernet with a reliable transport and a delay-based window, without trimming:
// AWS SRD on EFA, Slingshot's Rosetta and Spectrum-X as the engine modelled them before the UEC
// preset followed the UEC 1.0 specification; kept so that their results do not move.
// Headers as Ultra Ethernet's (below).
PacketConfig sprayed_ethernet() {
  PacketConfig c;
  c.model = FabricModel::UltraEthernet;
  c.flow_control = FlowControl::None;
  c.congestion = CongestionControl::Delay;
  c.payload = Bytes(4096);
  c.header = Bytes(110);
  c.spray = true;
  c.ecn = true;
  c.rto_min = Time::us(100);
  c.reorder_threshold = 64;  // spraying reorders; only a large gap means loss
  c.initial_window = 0;      // start at one bandwidth-delay product, as UEC's NSCC does
  // Every packet acknowledged; an ACK is taken as large as a data header (UET's PDS ACK plus SES
  // response, rounded the same way). Trimmed headers and control packets in a strict-priority
  // class.
  c.ack_every = 1;
  c.ack_wire = Bytes(110);
  c.control_priority = true;
  return c;
}

// Ultra Ethernet transport over Ethernet: Ethernet 14 + IPv4 20 + UDP 8 + UET PDS/SES ~44
// (UEC 1.0 spec, rounded) + FCS 4 + preamble 8 + IFG 12 = 110 B. As UEC 1.0 describes it
// (docs/packet-engine.md section 4): reliable unordered delivery sprayed over the paths,
// switches trim a packet they cannot buffer to its header and forward that at high priority
// (the receiver NACKs it), and NSCC sets the sender's window from delay and ECN. ACKs, NACKs and
// RCCC grants are control packets on the wire, each the size of an ACK, ahead of data
// (control_priority). One ACK per packet: UEC 1.0's PDS lets a target coalesce ACKs but the
// count is left to the implementation, and NSCC as the spec describes it reacts to each
// packet's delay sample and ECN mark (nscc_on_ack), so the preset does not coalesce
// (`ack_every` overrides it). Each ACK carries PDS's SACK bitmap (64 PSNs past the cumulative
// one), so coalescing with `ack_every` holds across spraying's reordering.
PacketConfig ultra_ethernet() {
  PacketConfig c = sprayed_ethernet();
  c.sack_bitmap = true;
  c.congestion = CongestionControl::Nscc;
  c.delivery = Delivery::Rud;
  c.trimming = true;
  return c;
}

struct Preset {
  const char* name;
  PacketConfig (*make)();
};

constexpr Preset kPresets[] = {
    {"infiniband", infiniband},
    {"ib", infiniband},
    {"roce", roce},
    {"rocev2", roce},
    {"ethernet", tcp},
    {"tcp", tcp},
    {"ultra_ethernet", ultra_ethernet},
    {"uec", ultra_ethernet},
    {"spectrum_x", sprayed_ethernet},
};

}  // namespace

std::vector<std::string> packet_fabric_names() {
  std::vector<std::string> names;
  for (const auto& p : kPresets) names.emplace_back(p.name);
  return names;
}

PacketConfig packet_config_for_fabric(const std::string& fabric) {
  std::string key = fabric;
  std::replace(key.begin(), key.end(), '-', '_');
  for (const auto& p : kPresets) {
    if (key == p.name) return p.make();
  }
  // Catalog fabric names like "ib-ndr" or "roce-400g" map onto their family.
  if (key.rfind("ib_", 0) == 0) return infiniband();
  if (key.rfind("roce_", 0) == 0) return roce();
  if (key == "efa") return sprayed_ethernet();  // SRD sprays over many paths, like UET
  // Rosetta routes adaptively per packet with hardware congestion control (De Sensi et al.,
  // SC20), the behaviour Ultra Ethernet standardises.
  if (key == "slingshot") return sprayed_ethernet();
  throw InputError("fabric", fmt::format("unknown packet fabric '{}' (expected one of {})", fabric,
                                         fmt::join(packet_fabric_names(), ", ")));
}

void PacketConfig::validate() const {
  auto bad = [](const char* field, const std::string& msg) { throw InputError(field, msg); };
  if (payload.count() == 0) bad("packet.mtu", "must be positive");
  if (payload.count() > (1u << 20)) bad("packet.mtu", "must be at most 1 MiB");
  if (board_payload.count() > (1u << 20)) bad("packet.board_mtu", "must be at most 1 MiB");
  if (virtual_lanes == 0 || virtual_lanes > 16) bad("packet.virtual_lanes", "must be 1..16");
  if (lane_levels > 16 || virtual_lanes * lane_levels > 16)
    bad("packet.lane_levels", "virtual_lanes x lane_levels must be at most 16 lanes");
  if (ecn && ecn_kmax < ecn_kmin) bad("packet.ecn.kmax", "must be at least kmin");
  if (ecn_pmax < 0 || ecn_pmax > 1) bad("packet.ecn.pmax", "must be within [0, 1]");
  if (pfc_xoff.count() != 0 && pfc_xon > pfc_xoff) bad("packet.pfc.xon", "must not exceed xoff");
  if (watchdog <= Time::zero()) bad("packet.watchdog", "must be positive");
  if (rto_min <= Time::zero()) bad("packet.rto_min", "must be positive");
  if (switch_latency < Time::zero()) bad("packet.switch_latency", "must not be negative");
  if (dynamic_threshold <= 0) bad("packet.dynamic_threshold", "must be positive");
  if (switch_adaptive && flow_control != FlowControl::Credit)
    bad("packet.adaptive", "'switch' is InfiniBand's adaptive routing (flow_control: credit)");
  if (ib_cc && flow_control != FlowControl::Credit)
    bad("packet.ib_cc", "InfiniBand congestion control needs credit flow control");
  if (ib_cc && ib_cc_timer <= Time::zero()) bad("packet.ib_cc.ccti_timer", "must be positive");
  if (ack_wire.count() == 0 || ack_wire.count() > 9216)
    bad("packet.ack_wire", "must be 1 to 9216 B");
  if (cnp_wire.count() == 0 || cnp_wire.count() > 9216)
    bad("packet.cnp_wire", "must be 1 to 9216 B");
  if (ack_delay <= Time::zero()) bad("packet.ack_delay", "must be positive");
  if (trimming && flow_control != FlowControl::None)
    bad("packet.trimming", "needs a lossy fabric (flow_control: none)");
  if (congestion == CongestionControl::Reno || congestion == CongestionControl::Delay ||
      congestion == CongestionControl::Ecn || congestion == CongestionControl::Nscc ||
      congestion == CongestionControl::Rccc || congestion == CongestionControl::NsccRccc) {
    if (flow_control != FlowControl::None)
      bad("packet.congestion", "window controllers run on the lossy reliable transport only");
  }
  if (delivery == Delivery::Rod && (spray || adaptive))
    bad("packet.delivery", "rod keeps a flow on one path: turn spray and adaptive off");
  if (loss_rate < 0 || loss_rate >= 1) bad("packet.loss_rate", "must be within [0, 1)");
  if (congestion == CongestionControl::Dcqcn && flow_control == FlowControl::None)
    bad("packet.congestion", "dcqcn needs a lossless fabric (flow_control: pfc or credit)");
}

PacketConfig packet_config_for_topology(const ArgNode* section,
                                        const std::string& topology_fabric) {
  PacketConfig base;
  try {
    base = packet_config_for_fabric(topology_fabric);
  } catch (const InputError&) {
    base = packet_config_for_fabric("infiniband");
  }
  return section ? packet_config_from_args(*section, base) : base;
}

PacketConfig packet_config_from_args(const ArgNode& node, const PacketConfig& base) {
  if (node.kind() != ArgNode::Kind::Map) node.fail("expected a map of packet-engine settings");
  PacketConfig c = base;
  if (const ArgNode* f = node.find("fabric")) {
    try {
      c = packet_config_for_fabric(f->text());
    } catch (const InputError& e) {
      f->fail(e.bare_message());
    }
  }
  auto bytes = [&](const ArgNode& n, const char* key, Bytes& out) {
    if (const ArgNode* v = n.find(key)) out = v->as_bytes();
  };
  auto time = [&](const ArgNode& n, const char* key, Time& out) {
    if (const ArgNode* v = n.find(key)) out = v->as_time();
  };
  if (const ArgNode* v = node.find("mtu")) {
    // The MTU as people quote it: IB/RoCE/UET payload size; for TCP the IP MTU.
    const Bytes mtu = v->as_bytes();
    // InfiniBand's path MTUs run from 256 B to 4 KiB (IBTA Vol. 1, 7.7.2), which RoCE and
    // UET reuse; an IPv4 link carries at least 576 B (RFC 791) and jumbo frames at most
    // 9216 B (the common switch limit).
    const bool ip = c.model == FabricModel::Ethernet;
    const std::uint64_t lo = ip ? 576 : 256;
    const std::uint64_t hi = ip ? 9216 : 4096;
    if (mtu.count() < lo || mtu.count() > hi) {
      v->fail(fmt::format("{} B is outside {} to {} B (the {} MTU range)", mtu.count(), lo, hi,
                          ip ? "IP" : "InfiniBand/RoCE"));
    }
    if (c.model == FabricModel::Ethernet) {
      c.payload = Bytes(mtu.count() - 52);
    } else {
      c.payload = mtu;
    }
  }
  bytes(node, "header", c.header);
  if (const ArgNode* v = node.find("board_mtu")) {
    c.board_payload = v->as_bytes();
    if (c.board_payload.count() == 0) v->fail("must be positive (leave it out for the medium's)");
  }
  if (const ArgNode* v = node.find("flow_control")) {
    const std::vector<std::string> names = {"credit", "pfc", "none"};
    const std::string& s = v->as_choice(names);
    c.flow_control =
        static_cast<FlowControl>(std::find(names.begin(), names.end(), s) - names.begin());
  }
  if (const ArgNode* v = node.find("congestion")) {
    const std::vector<std::string> names = {"none", "dcqcn", "reno", "delay",
                                            "ecn",  "nscc",  "rccc", "nscc+rccc"};
    const std::string& s = v->as_choice(names);
    c.congestion =
        static_cast<CongestionControl>(std::find(names.begin(), names.end(), s) - names.begin());
  }
  bytes(node, "switch_buffer", c.switch_buffer);
  time(node, "switch_latency", c.switch_latency);
  c.cut_through = node.get_bool("cut_through", c.cut_through);
  bytes(node, "port_buffer", c.port_buffer);
  bytes(node, "nic_buffer", c.nic_buffer);
  c.virtual_lanes =
      static_cast<std::uint32_t>(node.get_int("virtual_lanes", c.virtual_lanes, 1, 16));
  c.lane_levels = static_cast<std::uint32_t>(node.get_int("lane_levels", c.lane_levels, 0, 16));
  c.dynamic_threshold = node.get_double("dynamic_threshold", c.dynamic_threshold, 1e-3, 1e3);
  time(node, "host_per_message", c.host_per_message);
  time(node, "host_per_byte", c.host_per_byte_ps);
  c.spray = node.get_bool("spray", c.spray);
  if (const ArgNode* v = node.find("adaptive");
      v && v->kind() == ArgNode::Kind::Scalar && v->text() == "switch") {
    c.adaptive = false;
    c.switch_adaptive = true;
  } else {
    c.adaptive = node.get_bool("adaptive", c.adaptive);
  }
  if (const ArgNode* b = node.find("buffers")) {
    auto& m = c.buffers;
    if (const ArgNode* v = b->find("model")) {
      m.as_built = v->as_choice(std::vector<std::string>{"shared", "as_built"}) == "as_built";
      m.model_set = true;
    }
    bytes(*b, "cell", m.cell);
    bytes(*b, "reserved_queue", m.reserved_queue);
    bytes(*b, "reserved_pg", m.reserved_pg);
    m.ingress_alpha = b->get_double("ingress_alpha", m.ingress_alpha, 1e-3, 1e3);
    bytes(*b, "headroom", m.headroom);
    b->check_all_used();
  }
  if (const ArgNode* pfc = node.find("pfc")) {
    bytes(*pfc, "xoff", c.pfc_xoff);
    bytes(*pfc, "xon", c.pfc_xon);
    pfc->check_all_used();
  }
  if (const ArgNode* ecn = node.find("ecn")) {
    if (ecn->kind() == ArgNode::Kind::Scalar) {
      c.ecn = ecn->as_bool();
    } else {
      c.ecn = ecn->get_bool("enabled", true);
      c.ecn_thresholds_set = ecn->find("kmin") || ecn->find("kmax") || ecn->find("pmax");
      bytes(*ecn, "kmin", c.ecn_kmin);
      bytes(*ecn, "kmax", c.ecn_kmax);
      c.ecn_pmax = ecn->get_double("pmax", c.ecn_pmax, 0.0, 1.0);
      ecn->check_all_used();
    }
  }
  if (const ArgNode* cc = node.find("ib_cc")) {
    if (cc->kind() == ArgNode::Kind::Scalar) {
      c.ib_cc = cc->as_bool();
    } else {
      c.ib_cc = cc->get_bool("enabled", true);
      bytes(*cc, "threshold", c.ib_cc_threshold);
      time(*cc, "ccti_timer", c.ib_cc_timer);
      c.ib_cc_limit =
          static_cast<std::uint32_t>(cc->get_int("ccti_limit", c.ib_cc_limit, 1, 16383));
      cc->check_all_used();
    }
  }
  if (const ArgNode* d = node.find("dcqcn")) {
    c.dcqcn_g = d->get_double("g", c.dcqcn_g, 1e-6, 1.0);
    time(*d, "timer", c.dcqcn_timer);
    time(*d, "cnp_interval", c.dcqcn_cnp_interval);
    c.dcqcn_rai = d->get_bandwidth("rai", c.dcqcn_rai);
    c.dcqcn_rhai = d->get_bandwidth("rhai", c.dcqcn_rhai);
    d->check_all_used();
  }
  time(node, "rto_min", c.rto_min);
  c.initial_window =
      static_cast<std::uint32_t>(node.get_int("initial_window", c.initial_window, 0, 1 << 20));
  c.reorder_threshold = static_cast<std::uint32_t>(
      node.get_int("reorder_threshold", c.reorder_threshold, 1, 1 << 20));
  time(node, "delay_target", c.delay_target);
  c.trimming = node.get_bool("trimming", c.trimming);
  c.ack_every = static_cast<std::uint32_t>(node.get_int("ack_every", c.ack_every, 0, 1 << 20));
  bytes(node, "ack_wire", c.ack_wire);
  bytes(node, "cnp_wire", c.cnp_wire);
  time(node, "ack_delay", c.ack_delay);
  c.control_priority = node.get_bool("control_priority", c.control_priority);
  c.sack_bitmap = node.get_bool("sack_bitmap", c.sack_bitmap);
  if (const ArgNode* v = node.find("delivery")) {
    c.delivery = v->as_choice({"rud", "rod"}) == "rod" ? Delivery::Rod : Delivery::Rud;
    // Ordered delivery keeps a flow on one path; say `spray: true` to get the conflict.
    if (c.delivery == Delivery::Rod && !node.find("spray")) c.spray = false;
  }
  bytes(node, "rccc_initial_credit", c.rccc_initial_credit);
  c.llr = node.get_bool("llr", c.llr);
  c.loss_rate = node.get_double("loss_rate", c.loss_rate, 0.0, 1.0);
  time(node, "watchdog", c.watchdog);
  c.throw_on_deadlock = node.get_bool("throw_on_deadlock", c.throw_on_deadlock);
  time(node, "sample_period", c.sample_period);
  c.series_links =
      static_cast<std::uint32_t>(node.get_int("series_links", c.series_links, 0, 1 << 20));
  node.check_all_used();
  try {
    c.validate();
  } catch (const InputError& e) {
    // Point at the offending key when the section sets it (packet.ecn.kmax -> ecn: {kmax}),
    // else at the section: the value came from the preset.
    const ArgNode* at = &node;
    std::string field = e.field();
    if (field.rfind("packet.", 0) == 0) field.erase(0, 7);
    for (std::size_t start = 0; at != nullptr && start <= field.size();) {
      const std::size_t dot = std::min(field.find('.', start), field.size());
      at = at->kind() == ArgNode::Kind::Map ? at->find(field.substr(start, dot - start)) : nullptr;
      start = dot + 1;
    }
    if (at != nullptr) at->fail(e.bare_message());
    node.fail(e.field() + ": " + e.bare_message());
  }
  return c;
}

}  // namespace lockstep
