// The NIC side of the packet engine: segmentation of transfers into packets, round-robin
// injection at line rate, path choice (single path, spraying, adaptive), the receiver
// (reordering, duplicates, ACK/NACK/CNP generation) and sender congestion control (DCQCN for
// RoCE, Reno for TCP, delay- or ECN-based windows for Ultra Ethernet).
//
// ACKs, NACKs and CNPs are packets: they take the reverse route through the same queues, buffers
// and flow control as data (docs/packet-engine.md "Control packets").
#include <algorithm>
#include <cmath>

#include "lockstep/core/error.hpp"
#include "lockstep/core/slot_pool.hpp"
#include "lockstep/topology/catalog.hpp"
#include "simulator.hpp"

namespace lockstep::packet {

PathSet Simulator::path_set(DeviceId src, DeviceId dst, std::uint64_t label) {
  const RouteKey key{src, dst, label};
  if (auto it = route_cache_.find(key); it != route_cache_.end()) return it->second;
  router_->route(FlowKey{src, dst, label}, nullptr, scratch_paths_);
  if (scratch_paths_.empty() || scratch_paths_.front().hops.empty())
    throw InputError("routing", "no route from device " + std::to_string(src) + " to device " +
                                    std::to_string(dst));
  const DirLinkId first_link = scratch_paths_.front().hops.front();
  // Every hop reads the arena (the next link) and every new packet its PathRef, at random among
  // the flows': with spraying (64 paths of 8 hops per direction and flow) 32 MB and 40 MB at
  // 8,192 hosts. On 4 KiB pages the prefetch of the next event's arena line waited for a page
  // walk (a fifth of `run`'s samples in `perf`): on huge pages (huge_pages.hpp), grown by
  // doubling as push_back would.
  std::size_t hops = 0;
  for (const PathShare& share : scratch_paths_) hops += share.hops.size();
  grow_on_huge_pages(arena_, arena_.size() + hops);
  grow_on_huge_pages(paths_, paths_.size() + scratch_paths_.size());
  PathSet set{static_cast<std::uint32_t>(paths_.size()), 0};
  for (const PathShare& share : scratch_paths_) {
    // A flow injects on one NIC port; spraying uses the paths that leave through it.
    if (share.hops.empty() || share.hops.front() != first_link) continue;
    if (share.hops.size() > 0xFFFF) throw InputError("routing", "path longer than 65535 hops");
    PathRef ref;
    ref.offset = static_cast<std::uint32_t>(arena_.size());
    ref.len = static_cast<std::uint16_t>(share.hops.size());
    if (share.hops.size() > 1) ref.second = share.hops[1];
    ref.min_bw = 1e300;
    std::uint64_t medium = 0;
    std::int64_t room = kNever;
    for (std::size_t i = 0; i < share.hops.size(); ++i) {
      const DirLinkId d = share.hops[i];
      arena_.push_back(d);
      ref.latency = later(ref.latency, links_[d].latency);
      if (i + 1 < share.hops.size())
        ref.latency = later(ref.latency, devices_[links_[d].dst].latency);
      ref.min_bw = std::min(ref.min_bw, 1e12 / links_[d].ps_per_byte);
      const LinkMedium m = topo_->link(Topology::link_of(d)).medium;
      ref.on_board = ref.on_board && (m == LinkMedium::NvLink || m == LinkMedium::Pcie);
      if (ref.on_board) {
        const std::uint64_t packet = board_packet_payload(m).count();
        medium = i == 0 ? packet : std::min(medium, packet);
        room = std::min(room, incast_room_[d]);
      }
    }
    // An on-board copy moves in its media's packets (NVLink's and PCIe's 256 B). The engine
    // moves k of them as one packet where that cannot change what the packets meet: a round of
    // every input of each switch on the path into one output (k packets from each) still fits
    // in the credits beyond the round trip, so an input is never held back by an incast queue
    // that its medium's packets would not build either; at most the fabric's MTU (as before).
    // Without a switch (GPUs wired to each other) nothing queues between sender and receiver.
    // docs/packet-engine.md "Packet size per medium".
    if (ref.on_board && medium > 0) {
      const std::uint64_t most = std::max<std::uint64_t>(1, cfg_.payload.count() / medium);
      const std::uint64_t fit = static_cast<std::uint64_t>(room) / medium;
      ref.board_payload =
          static_cast<std::uint32_t>(medium * std::clamp<std::uint64_t>(fit, 1, most));
    }
    paths_.push_back(ref);
    ++set.count;
  }
  route_cache_.emplace(key, set);
  return set;
}

void Simulator::start_transfer(std::uint32_t transfer, DeviceId src, DeviceId dst,
                               std::uint64_t bytes, std::uint64_t label, std::int64_t ready_at,
                               double cap_share) {
  // The flows are read at random by every ACK and arrival: on huge pages (huge_pages.hpp).
  if (free_flows_.empty()) grow_on_huge_pages(flows_, flows_.size() + 1);
  const std::uint32_t id = take_slot(flows_, free_flows_);
  Flow& f = flows_[id];
  // Timers of the slot's former transfer may still be pending: their generations move on.
  const std::uint32_t gen = f.timer_gen + 1, ack_gen = f.ack_gen + 1;
  const std::uint32_t incarnation = f.incarnation + 1;
  // The slot's per-packet arrays keep their room for this transfer.
  PerPacket<std::uint8_t> state = f.state, got = f.got;
  PerPacket<std::int64_t> sent_at = f.sent_at;
  state.clear();
  got.clear();
  sent_at.clear();
  f = Flow{};
  f.timer_gen = gen;
  f.ack_gen = ack_gen;
  f.incarnation = incarnation;
  f.transfer = transfer;
  f.src = src;
  f.dst = dst;
  f.paths = path_set(src, dst, label);
  const PathRef& p0 = paths_[f.paths.first];
  f.inject_link = arena_[p0.offset];
  f.lane = static_cast<std::uint8_t>(label % classes_);  // level 0 of its class
  // A transfer that stays in its server (NVLink or xGMI, directly or through an NVSwitch; PCIe)
  // is a GPU copy, not a message of the fabric's transport: no NIC adds the fabric's headers, no
  // host stack handles it (kernel TCP's costs), no window paces it. The link's own protocol
  // overhead is in its bandwidth as the caller sees it (NCCL's 20.6 of NVLink4's 25 GB/s).
  f.fabric = false;
  for (std::uint32_t k = 0; k < f.paths.count; ++k)
    f.fabric = f.fabric || !paths_[f.paths.first + k].on_board;
  f.header = f.fabric ? static_cast<std::uint32_t>(cfg_.header.count()) : 0;
  // The payload efficiency NCCL's model assumes (EngineOptions): through the fabric its network
  // one (48 of an NDR NIC's 50 GB/s), on the board its NVLink one (370.8 of 450 GB/s on H100),
  // as the flow engine runs network and NVLink links. A fabric transfer's NVLink hops (a GPU
  // relaying to its NIC) take the network's figure too; NVLink is never their bottleneck.
  const EngineOptions& o = input_.options;
  const double eff = f.fabric && o.network_transfer_efficiency > 0 ? o.network_transfer_efficiency
                                                                   : o.transfer_efficiency;
  attach_pacer(f, label, cap_share, eff);
  bytes = static_cast<std::uint64_t>(std::ceil(static_cast<double>(bytes) / eff));
  f.bytes = bytes;
  // An on-board copy moves in its media's packets (path_set), or in the scenario's `board_mtu`.
  std::uint64_t mtu = cfg_.payload.count();
  if (!f.fabric) {
    std::uint64_t board = cfg_.board_payload.count();
    for (std::uint32_t k = 0; k < f.paths.count && cfg_.board_payload.count() == 0; ++k) {
      const std::uint32_t b = paths_[f.paths.first + k].board_payload;
      board = k == 0 ? b : std::min<std::uint64_t>(board, b);
    }
    if (board != 0) mtu = board;
  }
  f.payload = static_cast<std::uint32_t>(mtu);
  const std::uint64_t n = bytes == 0 ? 1 : (bytes + mtu - 1) / mtu;
  if (n > 0xFFFFFFF0ull) throw InputError("bytes", "transfer too large for the packet engine");
  f.packets = static_cast<std::uint32_t>(n);
  f.last_payload = static_cast<std::uint32_t>(bytes - (n - 1) * mtu);
  f.start = ready_at;
  f.ready_at = later(ready_at, f.fabric ? cfg_.host_per_message.picoseconds() : 0);
  f.line_rate = p0.min_bw;
  f.rate = f.target_rate = f.line_rate;
  f.cwnd = cfg_.initial_window;
  if (f.cwnd == 0) {  // one bandwidth-delay product of the idle path
    const double wire = static_cast<double>(cfg_.payload.count() + f.header);
    const double rtt = 2e-12 * static_cast<double>(p0.latency) + 2 * wire / p0.min_bw;
    f.cwnd = std::max(1.0, std::ceil(rtt * p0.min_bw / wire));
  }
  f.rto = cfg_.rto_min.picoseconds();
  f.window_end = 0;
  if (reliable(f)) {
    per_packet_.assign(state, f.packets, static_cast<std::uint8_t>(PacketState::Unsent));
    per_packet_.assign(sent_at, f.packets, std::int64_t{0});
  }
  if (reliable(f) || multipath_) per_packet_.assign(got, f.packets, std::uint8_t{0});
  f.state = state;
  f.sent_at = sent_at;
  f.got = got;
  uec_start(f, p0);
  f.label = label;
  f.setup = f.ready_at - now_;
  // A transfer of the fabric's transport is acknowledged over the reverse routes.
  if (f.fabric) f.ack_paths = path_set(dst, src, label);
  // One connection streams one transfer at a time (a QP executes its work requests in order,
  // an NCCL channel's slots are a FIFO): a later transfer waits until this one's last packet is
  // out, rather than sharing the port with it round robin and delaying both ends.
  Connection& c = connections_[RouteKey{src, dst, label}];
  if (c.sending != kNil) {
    flows_[c.last].conn_next = id;
    c.last = id;
    return;
  }
  c.sending = c.last = id;
  pacer_streaming(f, true);
  ring_add(id);
  try_transmit(f.inject_link);
}

void Simulator::release_connection(std::uint32_t flow, std::int64_t sent) {
  Flow& f = flows_[flow];
  pacer_streaming(f, false);
  const auto it = connections_.find(RouteKey{f.src, f.dst, f.label});
  const std::uint32_t next = f.conn_next;
  f.conn_next = kNil;
  if (next == kNil) {
    connections_.erase(it);
    return;
  }
  it->second.sending = next;
  // As in the flow engine, a waiting message pays its overhead once the connection is free.
  Flow& n = flows_[next];
  pacer_streaming(n, true);
  n.ready_at = std::max(n.ready_at, later(sent, n.setup));
  ring_add(next);
  wake_link(n.inject_link, n.ready_at);
}

void Simulator::ring_add(std::uint32_t flow) {
  Flow& f = flows_[flow];
  if (f.in_ring || f.sender_done) return;
  LinkState& s = links_[f.inject_link];
  f.in_ring = true;
  ++s.inject_count;
  if (s.inject == kNil) {
    f.next = f.prev = flow;
    s.inject = flow;
    return;
  }
  // Insert before the current head: the newcomer is served last in this round.
  Flow& head = flows_[s.inject];
  f.next = s.inject;
  f.prev = head.prev;
  flows_[head.prev].next = flow;
  head.prev = flow;
}

void Simulator::ring_remove(std::uint32_t flow) {
  Flow& f = flows_[flow];
  if (!f.in_ring) return;
  f.in_ring = false;
  LinkState& s = links_[f.inject_link];
  --s.inject_count;
  if (f.next == flow) {
    s.inject = kNil;
    return;
  }
  flows_[f.prev].next = f.next;
  flows_[f.next].prev = f.prev;
  if (s.inject == flow) s.inject = f.next;
}

void Simulator::wake_link(std::uint32_t link, std::int64_t at) {
  LinkState& s = links_[link];
  if (s.wake_at >= now_ && s.wake_at <= at) return;  // an earlier wake-up is pending
  ++s.wake_gen;
  s.wake_at = at;
  events_.push(at, EventKind::Wake, link, s.wake_gen);
}

bool Simulator::next_seq(Flow& f, std::uint32_t& seq) {
  if (reliable(f) && f.retx_pending > 0) {
    while (f.retx_cursor < f.next_new &&
           f.state[f.retx_cursor] != static_cast<std::uint8_t>(PacketState::Lost))
      ++f.retx_cursor;
    if (f.retx_cursor < f.next_new) {
      seq = f.retx_cursor;
      return true;
    }
  }
  if (f.next_new < f.packets) {
    seq = f.next_new;
    return true;
  }
  return false;
}

std::uint32_t Simulator::pick_injection(std::uint32_t link) {
  LinkState& s = links_[link];
  std::int64_t wake = kNever;
  for (std::uint32_t n = s.inject_count; n > 0 && s.inject != kNil; --n) {
    const std::uint32_t id = s.inject;
    Flow& f = flows_[id];
    std::uint32_t seq = 0;
    if (!next_seq(f, seq)) {
      ring_remove(id);  // nothing to send until an ACK or a loss says otherwise
      continue;
    }
    s.inject = f.next;  // round robin, whether or not this flow may send now
    const bool window_ok = !reliable(f) || f.inflight < std::max(1.0, std::floor(f.cwnd));
    if (!window_ok) continue;
    if (!uec_may_send(f, seq, (seq + 1 == f.packets ? f.last_payload : f.payload) + f.header))
      continue;  // RCCC: no credit yet
    const std::int64_t ready = pacer_ready(f);
    if (ready > now_) {
      wake = std::min(wake, ready);
      continue;
    }
    const std::uint32_t payload = seq + 1 == f.packets ? f.last_payload : f.payload;
    if (can_send(link, f.lane, payload + f.header)) return make_packet(id, seq);
    if (!(s.paused & (1u << f.lane))) {
      ++stats_.credit_stalls;
      ++stats_.links.credit_stalls[link];
      congestion_seen_ = true;
    }
  }
  if (wake != kNever) wake_link(link, wake);
  return kNil;
}

std::uint32_t Simulator::choose_path(Flow& f) {
  if (f.paths.count <= 1) return f.paths.first;
  if (rod(f)) return rod_path(f);
  if (cfg_.switch_adaptive) return f.paths.first;  // the switches choose (adaptive.cpp)
  if (!cfg_.adaptive) return f.paths.first + (f.spray_cursor++ % f.paths.count);
  // Adaptive: the less loaded of two candidates (one rotating, one random), by bytes queued
  // along the path -- the "power of two choices" stand-in for per-switch adaptive routing.
  const std::uint32_t a = f.paths.first + (f.spray_cursor++ % f.paths.count);
  const std::uint32_t b = f.paths.first + static_cast<std::uint32_t>(rng_.below(f.paths.count));
  auto load = [&](std::uint32_t path) {
    const PathRef& r = paths_[path];
    std::int64_t q = 0;
    for (std::uint32_t i = 0; i < r.len; ++i)
      q += fifos_[qidx(arena_[r.offset + i], f.lane + 1u)].bytes;
    return q;
  };
  return load(b) < load(a) ? b : a;
}

std::uint32_t Simulator::make_packet(std::uint32_t flow, std::uint32_t seq) {
  const std::uint32_t pkt = alloc_packet();
  Flow& f = flows_[flow];
  Packet& p = packets_[pkt];
  p.flow = flow;
  p.seq = seq;
  p.payload = seq + 1 == f.packets ? f.last_payload : f.payload;
  p.wire = p.payload + f.header;
  const PathRef& path = paths_[choose_path(f)];
  place(p, path);
  p.lane = p.in_lane = f.lane;
  p.flags = 0;
  p.tail = 0;
  p.next = kNil;
  ++f.in_network;
  ++stats_.packets_sent;
  uec_sent(f, seq, p.wire);
  bool fresh = true;
  if (reliable(f)) {
    auto& st = f.state[seq];
    fresh = st != static_cast<std::uint8_t>(PacketState::Lost);
    if (!fresh) {
      --f.retx_pending;
      ++stats_.retransmissions;
      if (f.inject_link != kNil) {
        ++stats_.links.retransmissions[f.inject_link];
        stats_.link_series.count(f.inject_link, Time::ps(now_), PeriodEvents::Retransmission);
      }
    }
    st = static_cast<std::uint8_t>(PacketState::Inflight);
    f.sent_at[seq] = now_;
    ++f.inflight;
    if (f.rto_deadline < 0) arm_rto(f);
  }
  if (fresh && ++f.next_new == f.packets) {
    // The port is free for the connection's next message once this packet is serialised.
    const LinkState& port = links_[f.inject_link];
    release_connection(flow, later(now_, Time::from_ps(p.wire * port.ps_per_byte).picoseconds()));
  }
  // Pacing: DCQCN's current rate and the host's per-byte cost delay the next packet.
  std::int64_t gap = 0;
  if (f.rate < f.line_rate) gap = Time::from_ps(std::trunc(p.wire * 1e12 / f.rate)).picoseconds();
  if (f.fabric) gap = std::max(gap, (cfg_.host_per_byte_ps * p.payload).picoseconds());
  if (gap > 0) f.ready_at = later(now_, gap);
  pacer_sent(f, p.payload);
  return pkt;
}

void Simulator::on_deliver(std::uint32_t pkt) {
  // Copied out: sending an ACK takes a packet from the pool, which may move it.
  const Packet& p = packets_[pkt];
  const std::uint32_t flow = p.flow, seq = p.seq, payload = p.payload;
  const std::uint8_t flags = p.flags;
  Flow& f = flows_[flow];
  --f.in_network;
  free_packet(pkt);
  ++stats_.packets_delivered;
  ++progress_;
  bool fresh_data = false;
  if (f.receiver_done) {
    ++stats_.duplicate_packets;
  } else if (rod(f) && !rod_accept(flow, seq, flags)) {
    // Trimmed or past a gap: discarded, the expected packet NACKed (uec_delivery.cpp).
  } else if (flags & kTrimmed) {
    ++stats_.nacks;
    send_control(flow, kNack, seq, f.got.empty() ? f.received : f.contiguous);
  } else {
    const std::uint32_t before = f.contiguous;
    bool fresh = true;
    if (!f.got.empty()) {
      fresh = !f.got[seq];
      f.got[seq] = 1;
      while (f.contiguous < f.packets && f.got[f.contiguous]) ++f.contiguous;
    }
    fresh_data = fresh;
    if (fresh) {
      ++f.received;
      stats_.payload_bytes_delivered += payload;
      if (!f.got.empty())
        stats_.max_reorder = std::max<std::uint64_t>(stats_.max_reorder, f.received - f.contiguous);
    } else {
      ++stats_.duplicate_packets;
    }
    const bool ecn = flags & kEcn;
    if (f.fabric) acknowledge(flow, seq, before, fresh, ecn);
    if (!reliable(f) && ecn &&
        (cfg_.ib_cc ||  // a BECN for every FECN (ib_cc.cpp)
         (cfg_.congestion == CongestionControl::Dcqcn &&
          (f.last_cnp < 0 || now_ - f.last_cnp >= cfg_.dcqcn_cnp_interval.picoseconds())))) {
      f.last_cnp = now_;
      send_control(flow, kCnp, seq, 0);
    }
    if (f.received == f.packets) receiver_complete(flow);
  }
  uec_arrived(flow, payload + f.header, fresh_data);  // RCCC's receiver (uec_cc.cpp)
  maybe_free_flow(flow);
}

void Simulator::acknowledge(std::uint32_t flow, std::uint32_t seq, std::uint32_t before, bool fresh,
                            bool ecn) {
  Flow& f = flows_[flow];
  // The reliable transport acknowledges at once a packet that opens a gap, fills (part of) one
  // with later packets already there, or came twice (RFC 5681, 4.2): the sender's loss
  // detection needs them. A lossless fabric's RC responder has no such rule (nothing is lost;
  // adaptive routing's reordering is its NIC's business), only the message's end and ack_every.
  const std::uint32_t beyond = f.received - (fresh ? 1u : 0u) - before;
  const std::uint32_t cum = f.got.empty() ? f.received : f.contiguous;
  // With UEC's SACK bitmap an ACK reports the held packets whatever their order, so only a
  // duplicate, or a packet the bitmap of the next ACK could not reach, is acknowledged at once.
  // Held packets stay within reach: the cumulative point only grows.
  const bool sack = sack_bitmap(f);
  const bool in_order =
      !reliable(f) || (sack ? fresh && seq < cum + kSackBits : seq == before && beyond == 0);
  // DCTCP's receiver acknowledges at once when the CE mark changes, so that each ACK's echo
  // stands for every packet it covers (RFC 8257, 3.2); NSCC's ACKs coalesced over a bitmap too.
  if (reliable(f) && (cfg_.congestion == CongestionControl::Ecn || sack) && f.rx_unacked > 0 &&
      ecn != f.rx_ce) {
    send_control(flow, f.rx_ce ? kEcn : 0, f.rx_last, before, seq);
    f.rx_unacked = 0;
  }
  f.rx_ce = ecn;
  f.rx_last = seq;
  ++f.rx_unacked;
  const bool due = f.received == f.packets || !in_order ||
                   (cfg_.ack_every != 0 && f.rx_unacked >= cfg_.ack_every);
  if (due) {
    send_control(flow, ecn ? kEcn : 0, seq, cum);
    f.rx_unacked = 0;
    f.ack_deadline = -1;
  } else if (reliable(f) && f.rx_unacked == 1) {
    // The held ACK goes out at the latest after the delayed-ACK timer (RFC 1122, 4.2.3.2). One
    // timer event per flow at a time, moved on when it fires early: an event per held ACK, 40 ms
    // ahead, kept a million stale events in the queue at 8,192 hosts. A deadline still set
    // (the ACK sent on a CE change left it) is the earlier one and stays.
    if (f.ack_deadline < 0) f.ack_deadline = later(now_, cfg_.ack_delay.picoseconds());
    if (f.ack_timer_at < 0) {
      f.ack_timer_at = f.ack_deadline;
      events_.push(f.ack_deadline, EventKind::AckTimer, flow, f.ack_gen);
    }
  }
}

void Simulator::on_ack_timer(std::uint32_t flow, std::uint32_t gen) {
  Flow& f = flows_[flow];
  if (gen != f.ack_gen) return;  // the slot's former transfer
  f.ack_timer_at = -1;
  if (f.ack_deadline < 0 || f.receiver_done) return;
  if (now_ < f.ack_deadline) {  // set again since: sleep until then
    f.ack_timer_at = f.ack_deadline;
    events_.push(f.ack_deadline, EventKind::AckTimer, flow, gen);
    return;
  }
  f.ack_deadline = -1;
  if (f.rx_unacked == 0) return;
  send_control(flow, f.rx_ce ? kEcn : 0, f.rx_last, f.got.empty() ? f.received : f.contiguous);
  f.rx_unacked = 0;
}

void Simulator::send_control(std::uint32_t flow, std::uint8_t flags, std::uint32_t seq,
                             std::uint32_t cum, std::uint32_t unreported) {
  const std::uint32_t pkt = alloc_packet();
  Flow& f = flows_[flow];
  if (!(flags & (kCnp | kGrant | kNack)) && sack_bitmap(f)) {
    // The bitmap of the packets arrived in [cum, cum + 64) (bit i: cum + i), as PDS's SACK
    // carries it. `unreported` arrived but belongs to the next ACK (another CE mark).
    if (sack_.size() < packets_.size()) {
      grow_on_huge_pages(sack_, packets_.size());
      sack_.resize(packets_.size());
    }
    std::uint64_t bits = 0;
    const std::uint32_t end = std::min(f.packets, cum + kSackBits);
    for (std::uint32_t s = cum; s < end; ++s)
      if (f.got[s] && s != unreported) bits |= std::uint64_t{1} << (s - cum);
    sack_[pkt] = bits;
  }
  Packet& p = packets_[pkt];
  p.flow = flow;
  p.seq = seq;
  p.payload = cum;
  p.wire = static_cast<std::uint32_t>(flags & kCnp ? cfg_.cnp_wire.count() : cfg_.ack_wire.count());
  // Over the reverse routes, sprayed as the data are; an ordered (ROD) flow's control packets
  // keep its one entropy, so ECMP hashes them onto one reverse path (uec_delivery.cpp).
  std::uint32_t pick = 0;
  if (f.ack_paths.count > 1) pick = rod(f) ? rod_ack_path(f) : f.ack_cursor++ % f.ack_paths.count;
  const PathRef& path = paths_[f.ack_paths.first + pick];
  place(p, path);
  p.lane = p.in_lane = f.lane;
  p.flags = static_cast<std::uint8_t>(kCtl | flags);
  p.tail = 0;
  p.next = kNil;
  ++f.in_network;  // the flow's slot is kept until its control packets are through
  ++stats_.control_sent;
  const std::uint32_t link = arena_[p.at];
  enqueue(link, cfg_.control_priority ? 0u : p.lane + 1u, pkt);
  try_transmit(link);
}

void Simulator::receiver_complete(std::uint32_t flow) {
  Flow& f = flows_[flow];
  f.receiver_done = true;
  f.sender_done = true;  // the sender learns within an RTT; it sends nothing new meanwhile
  ++f.timer_gen;
  ring_remove(flow);
  stats_.flows.add(f.src, f.dst, f.bytes, Time::ps(f.start), Time::ps(now_));
  programs_.transfer_done(f.transfer, now_, f.fabric);
}

void Simulator::maybe_free_flow(std::uint32_t flow) {
  Flow& f = flows_[flow];
  if (f.receiver_done && f.in_network == 0 && f.transfer != kNil) {
    f.transfer = kNil;
    free_flows_.push_back(flow);
  }
}

void Simulator::on_control(std::uint32_t pkt) {
  const Packet& p = packets_[pkt];
  const std::uint32_t flow = p.flow, seq = p.seq, cum = p.payload;
  const std::uint8_t flags = p.flags;
  Flow& f = flows_[flow];
  const std::uint64_t sack = sack_bitmap(f) && !(flags & (kCnp | kGrant | kNack)) ? sack_[pkt] : 0;
  --f.in_network;
  free_packet(pkt);
  ++stats_.control_delivered;
  ++progress_;
  if (f.sender_done) {
    maybe_free_flow(flow);
    return;
  }
  if ((flags & kCnp) && cfg_.ib_cc) {  // a BECN (ib_cc.cpp)
    on_becn(flow);
    return;
  }
  if (flags & kCnp) {
    // DCQCN reaction point (Zhu et al. 2015, Algorithm 1).
    ++stats_.cnps;
    if (f.inject_link != kNil) {
      ++stats_.links.cnps[f.inject_link];
      stats_.link_series.count(f.inject_link, Time::ps(now_), PeriodEvents::Cnp);
    }
    f.target_rate = f.rate;
    f.rate = std::max(f.rate * (1 - f.alpha / 2), f.line_rate * cfg_.dcqcn_min_rate_fraction);
    f.alpha = (1 - cfg_.dcqcn_g) * f.alpha + cfg_.dcqcn_g;
    f.increase_stage = 0;
    f.last_cnp_seen = now_;
    if (!f.cc_timer_armed) {
      f.cc_timer_armed = true;
      events_.push(later(now_, cfg_.dcqcn_timer.picoseconds()), EventKind::CcTimer, flow,
                   f.timer_gen);
    }
    return;
  }
  if (flags & kGrant) {
    uec_on_credit(flow, cum);  // RCCC (uec_cc.cpp)
    return;
  }
  if (!reliable(f)) return;  // an RC ACK: the work request completes, nothing more to send
  on_ack(f, seq, cum, flags & kEcn, flags & kNack, sack);
  if (!f.sender_done && (f.retx_pending > 0 || f.next_new < f.packets)) {
    ring_add(flow);
    try_transmit(f.inject_link);
  }
}

void Simulator::on_cc_timer(std::uint32_t flow, std::uint32_t gen) {
  if (cfg_.ib_cc) return on_ib_cc_timer(flow, gen);
  Flow& f = flows_[flow];
  if (gen != f.timer_gen || f.sender_done) return;
  const std::int64_t period = cfg_.dcqcn_timer.picoseconds();
  if (f.last_cnp_seen < now_ - period) f.alpha *= 1 - cfg_.dcqcn_g;
  ++f.increase_stage;
  constexpr std::uint32_t kFastRecovery = 5;
  if (f.increase_stage > 2 * kFastRecovery) {
    f.target_rate += cfg_.dcqcn_rhai.bytes_per_second();
  } else if (f.increase_stage > kFastRecovery) {
    f.target_rate += cfg_.dcqcn_rai.bytes_per_second();
  }
  f.target_rate = std::min(f.target_rate, f.line_rate);
  f.rate = (f.rate + f.target_rate) / 2;
  if (f.line_rate - f.rate < 1e-6 * f.line_rate) {
    f.rate = f.target_rate = f.line_rate;
    f.cc_timer_armed = false;
    return;
  }
  events_.push(later(now_, period), EventKind::CcTimer, flow, gen);
}

}  // namespace lockstep::packet
