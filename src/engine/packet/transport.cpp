// The sending NIC of the packet engine: routes and transfers (a connection's messages in turn),
// segmentation of transfers into packets, round-robin injection at line rate and path choice
// (single path, spraying, adaptive). The receiver and its ACKs, NACKs and CNPs are in
// receiver.cpp; the sender's reaction to them in sender_feedback.cpp (DCQCN), reliable.cpp
// (loss detection, windows) and uec_cc.cpp (NSCC, RCCC).
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
      ref.on_board = ref.on_board && on_board(m);
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
  // The payload efficiency NCCL's model assumes (fabric_efficiency_, board_efficiency_): through
  // the fabric its network one less the headers this engine adds itself, on the board its NVLink
  // one (370.8 of 450 GB/s on H100), as the flow engine runs network and NVLink links. A fabric
  // transfer's NVLink hops (a GPU relaying to its NIC) take the network's figure too; NVLink is
  // never their bottleneck.
  const double eff = f.fabric ? fabric_efficiency_ : board_efficiency_;
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
  if (f.fabric) {
    f.ack_paths = path_set(dst, src, label);
    f.ack_link = arena_[paths_[f.ack_paths.first].offset];
  }
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
  p.flags = f.fabric ? kFabric : 0;
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

}  // namespace lockstep::packet
