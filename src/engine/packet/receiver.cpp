// The receiver side of the packet engine's transport: a data packet's delivery (duplicates,
// reordering, the per-packet bitmap), the acknowledgement policy (ACK every N, at once on a gap
// or a CE change, the delayed-ACK timer) and the control packets it sends back (ACK with UEC's
// SACK bitmap, NACK, CNP) over the reverse route; and a transfer's completion at its receiver.
//
// ACKs, NACKs and CNPs are packets: they take the reverse route through the same queues, buffers
// and flow control as data (docs/packet-engine.md "Control packets").
#include <algorithm>

#include "simulator.hpp"

namespace lockstep::packet {

void Simulator::on_deliver(std::uint32_t pkt) {
  const auto [flow, seq, payload, flags] = take_arrived(pkt, stats_.packets_delivered);
  Flow& f = flows_[flow];
  // The reverse route the next ACK takes (its PathRef was a miss in send_control in `perf`).
  if (f.ack_paths.count != 0)
    __builtin_prefetch(&paths_[f.ack_paths.first + f.ack_cursor % f.ack_paths.count]);
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
  const std::uint32_t link = f.ack_link != kNil ? f.ack_link : arena_[p.at];
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

}  // namespace lockstep::packet
