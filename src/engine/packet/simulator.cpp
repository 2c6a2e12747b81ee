// The packet engine's core: links (serialisation + propagation), switch buffers and output
// queues, link-level flow control (credits, PFC thresholds, drop-tail) and the event loop. Set-up
// is in link_setup.cpp, PFC's frames in pfc.cpp, the transport in transport.cpp (sender),
// receiver.cpp and sender_feedback.cpp, programs in program_runner.cpp.
#include "simulator.hpp"

#include <algorithm>
#include <cmath>

#include "lockstep/core/error.hpp"

namespace lockstep::packet {

std::uint32_t Simulator::alloc_packet() {
  ++in_network_;
  return packets_.take();
}

void Simulator::free_packet(std::uint32_t pkt) {
  --in_network_;
  packets_.give(pkt);
}

Simulator::Arrived Simulator::take_arrived(std::uint32_t pkt, std::uint64_t& delivered) {
  const Packet& p = packets_[pkt];
  const Arrived a{p.flow, p.seq, p.payload, p.flags};
  --flows_[a.flow].in_network;
  free_packet(pkt);
  ++delivered;
  ++progress_;
  return a;
}

void Simulator::enqueue(std::uint32_t link, std::uint32_t q, std::uint32_t pkt) {
  Fifo& f = fifos_[qidx(link, q)];
  Packet& p = packets_[pkt];
  p.next = kNil;
  if (f.tail == kNil) {
    f.head = pkt;
  } else {
    packets_[f.tail].next = pkt;
  }
  f.tail = pkt;
  f.bytes += p.wire;
}

std::uint32_t Simulator::dequeue(std::uint32_t link, std::uint32_t q) {
  Fifo& f = fifos_[qidx(link, q)];
  const std::uint32_t pkt = f.head;
  f.head = packets_[pkt].next;
  if (f.head == kNil) f.tail = kNil;
  f.bytes -= packets_[pkt].wire;
  return pkt;
}

bool Simulator::can_send(std::uint32_t link, std::uint8_t lane, std::uint32_t wire) {
  const LinkState& s = links_[link];
  if (s.paused & (1u << lane)) return false;
  if (s.control != LinkControl::Credit) return true;
  LaneState& r = lane_[lidx(link, lane)];
  const std::int64_t need = credit_blocks(link, wire);
  // Credits in hand are enough: the returns need not be looked at (collecting them only adds).
  if (r.credits < need) collect_credits(r);
  if (r.credits >= need) {
    r.waiting = false;
    return true;
  }
  r.waiting = true;
  if (!r.wake_pending && !r.returns.empty()) {
    r.wake_pending = true;
    events_.push(r.returns.front_time(), EventKind::CreditReturn, link, lane);
  }
  return false;
}

void Simulator::collect_credits(LaneState& r) {
  while (!r.returns.empty() && r.returns.front_time() <= now_) {
    r.credits += r.returns.front_wire();
    r.returns.pop_front();
  }
}

void Simulator::return_credits(std::uint32_t link, std::uint8_t lane, std::uint32_t wire) {
  const std::int64_t at = later(now_, links_[link].latency);
  LaneState& r = lane_[lidx(link, lane)];
  collect_credits(r);  // keeps the list about one link latency long
  r.returns.push_back(at, static_cast<std::uint32_t>(credit_blocks(link, wire)));
  if (r.waiting && !r.wake_pending) {
    r.wake_pending = true;
    events_.push(at, EventKind::CreditReturn, link, lane);
  }
}

void Simulator::try_transmit(std::uint32_t link) {
  LinkState& s = links_[link];
  if (s.busy || stopped_) return;
  // A PFC frame for the far end's ingress goes first (send_pfc_frame).
  if (s.pfc_pending != 0 && send_pfc_frame(link)) return;
  // The control queue first (trimmed headers, and ACKs, NACKs and CNPs under control_priority):
  // strict priority, within the credits of the packet's lane on a credit-controlled link.
  if (const std::uint32_t head = fifos_[qidx(link, 0)].head; head != kNil) {
    const Packet& p = packets_[head];
    if (!(s.paused & (1u << p.lane)) &&
        (s.control != LinkControl::Credit || can_send(link, p.lane, p.wire))) {
      const std::uint32_t pkt = dequeue(link, 0);
      start_tx(link, pkt, ingress_of(packets_[pkt]), 0);
      return;
    }
  }
  for (std::uint32_t k = 0; k < lanes_; ++k) {
    const auto lane = static_cast<std::uint8_t>((s.rr_lane + k) % lanes_);
    const Fifo& f = fifos_[qidx(link, lane + 1u)];
    if (f.head == kNil) continue;
    if (!can_send(link, lane, packets_[f.head].wire)) {
      if (!(s.paused & (1u << lane))) {
        ++stats_.credit_stalls;
        ++stats_.links.credit_stalls[link];
        congestion_seen_ = true;
      }
      continue;
    }
    s.rr_lane = static_cast<std::uint8_t>((lane + 1) % lanes_);
    const std::uint32_t pkt = dequeue(link, lane + 1u);
    start_tx(link, pkt, ingress_of(packets_[pkt]), lane + 1u);
    return;
  }
  if (s.inject != kNil) {
    const std::uint32_t pkt = pick_injection(link);
    if (pkt != kNil) start_tx(link, pkt, kNil, packets_[pkt].lane + 1u);
  }
}

void Simulator::start_tx(std::uint32_t link, std::uint32_t pkt, std::uint32_t ingress,
                         std::uint32_t queue) {
  LinkState& s = links_[link];
  Packet& p = packets_[pkt];
  const std::int64_t ser = Time::from_ps(p.wire * s.ps_per_byte).picoseconds();
  // Link-level retry replays a corrupted frame: it leaves `retry` later (uec_link.cpp).
  const std::int64_t retry = link_retry(link, p, ser);
  // Cut-through: a packet cannot finish leaving before its last bit has arrived.
  const std::int64_t end = later(std::max(later(now_, ser), p.tail), retry);
  if (s.control == LinkControl::Credit &&
      (lane_[lidx(link, p.lane)].credits -= credit_blocks(link, p.wire)) < 0)
    ++stats_.negative_credits;
  s.busy = true;
  s.cur_ingress = ingress;
  s.cur_wire = p.wire;
  s.cur_in_lane = p.in_lane;
  // The queue the packet left, whose booked bytes release() returns: an ACK under
  // control_priority was booked on queue 0 (on_arrive), like a trimmed header.
  s.cur_queue = static_cast<std::uint8_t>(queue);
  s.last_tx = now_;
  LinkTally& tally = tally_[link];
  tally.bytes += p.wire;
  if (!(p.flags & (kCtl | kTrimmed)))
    tally.payload += p.payload * ((p.flags & kFabric) ? fabric_efficiency_ : board_efficiency_);
  tally.first = std::min(tally.first, now_);
  tally.last = end;
  stats_.link_series.add_span(link, Time::ps(end - ser), Time::ps(end), p.wire);
  ++progress_;
  const std::int64_t tail = later(end, s.latency);
  std::int64_t arrive = tail;
  if (p.hop + 1 < p.hops) {
    arrive = later(cfg_.cut_through ? later(later(now_, retry), s.latency) : tail, s.far_latency);
  } else if (!(p.flags & kCtl)) {
    // The last hop: the receiver's record of this packet (Flow::got) loads while the packet is
    // on the wire; on_deliver waited for it (60% of its samples, UEC at 8,192 hosts in `perf`).
    const Flow& f = flows_[p.flow];
    if (!f.got.empty()) __builtin_prefetch(&f.got[p.seq], 1);
  }
  p.tail = tail;
  // The packet next in line, as a hint: run() prefetches it with the event (a miss behind the
  // queue's otherwise). It is whatever heads the queue when the link is free.
  const std::uint32_t following = fifos_[qidx(link, s.cur_queue)].head;
  events_.push(end, EventKind::LinkFree, link, ingress, following);
  // At the last hop the arena position is not needed (nothing follows): the event carries the
  // flow instead, whose record the delivery reads (run() prefetches it).
  events_.push(arrive, EventKind::Arrive, pkt, link, p.nxt, p.nxt == kNil ? p.flow : p.at);
  if (!watchdog_armed_) {
    watchdog_armed_ = true;
    events_.push(later(now_, watchdog_), EventKind::Watchdog, 0);
  }
}

void Simulator::on_link_free(std::uint32_t link, std::uint32_t ingress) {
  if (ingress != kNil) {
    __builtin_prefetch(&links_[ingress]);
    prefetch_lane(lidx(ingress, 0));
  }
  LinkState& s = links_[link];
  s.busy = false;
  if (s.cur_ingress != kNil)
    release(s.cur_ingress, s.cur_in_lane, s.cur_wire, s.src, link, s.cur_queue);
  try_transmit(link);
}

void Simulator::release(std::uint32_t ingress, std::uint8_t lane, std::uint32_t wire,
                        std::uint32_t dev, std::uint32_t link, std::uint32_t queue) {
  // The device's own count serves the shared model only (admit); as built, its switch's pool.
  if (!buffers_.on()) devices_[dev].used -= wire;
  LaneState& r = lane_[lidx(ingress, lane)];
  r.ingress_bytes -= wire;
  const LinkState& in = links_[ingress];  // it arrives at `dev`
  bool resume = in.control == LinkControl::Pfc && r.ingress_bytes <= in.xon;
  if (buffers_.on() && !in.to_endpoint) {
    if (in.control == LinkControl::Lossy) buffers_.remove_egress(dev, qidx(link, queue), wire);
    if (in.control == LinkControl::Pfc) {
      // A static Xoff keeps its Xon (pfc.xon, or two packets below it); else the dynamic one.
      const std::int64_t static_xon =
          cfg_.pfc_xoff.count() != 0 ? std::max<std::int64_t>(in.xon, 1) : 0;
      resume = buffers_.remove_ingress(dev, lidx(ingress, lane), wire, static_xon, 2 * max_wire_);
    }
  }
  if (in.control == LinkControl::Credit) {
    return_credits(ingress, lane, wire);
  } else if (in.control == LinkControl::Pfc && r.xoff_sent && resume) {
    r.xoff_sent = 0;
    ++stats_.pfc_resumes;
    signal_pfc(ingress, lane);
  }
}

bool Simulator::admit(std::uint32_t dev, std::uint32_t out, std::uint32_t queue,
                      std::uint32_t wire) {
  if (buffers_.on()) return buffers_.admit(dev, qidx(out, queue), wire);
  const DeviceState& d = devices_[dev];
  if (d.used + wire > d.buffer) return false;
  std::int64_t queued = 0;
  for (std::uint32_t q = 0; q < queues_; ++q) queued += fifos_[qidx(out, q)].bytes;
  // Dynamic threshold (Choudhury & Hahne): one queue may hold alpha x the free buffer.
  return static_cast<double>(queued + wire) <=
         cfg_.dynamic_threshold * static_cast<double>(d.buffer - d.used);
}

void Simulator::on_arrive(std::uint32_t pkt, std::uint32_t in, std::uint32_t out) {
  // At 8,192 hosts each of these is a cache miss; start them all before the packet arrives.
  const LinkState& inl = links_[in];
  if (out != kNil) {
    __builtin_prefetch(&links_[out]);
    __builtin_prefetch(&fifos_[qidx(out, 0)]);
    buffers_.prefetch(qidx(out, 0));
    prefetch_lane(lidx(in, 0));
  }
  Packet& p = packets_[pkt];
  if ((p.flags & kCorrupt) && discard_corrupted(pkt, in)) return;
  if (out == kNil) {
    // The destination consumes at once: credits go straight back.
    if (inl.control == LinkControl::Credit) return_credits(in, p.lane, p.wire);
    if (p.flags & kCtl) {
      on_control(pkt);
    } else {
      on_deliver(pkt);
    }
    return;
  }
  const std::uint32_t dev = inl.dst;
  if (cfg_.switch_adaptive) out = adaptive_next_hop(p, in, out);
  // Lane change at turns: a packet that came down and goes up again takes the next lane level
  // (the top one is kept beyond it), so that each level's routes only climb then descend.
  const std::uint8_t in_lane = p.lane;
  p.in_lane = in_lane;
  if (levels_ > 1 && inl.turn == kDown && links_[out].turn == kUp && p.lane + classes_ < lanes_) {
    p.lane = static_cast<std::uint8_t>(p.lane + classes_);
    ++stats_.lane_changes;
  }
  const bool control = p.flags & kCtl;
  std::uint32_t q = p.flags & kTrimmed || (control && cfg_.control_priority) ? 0u : p.lane + 1u;
  // A trimmed header passes on (it is what was left where its packet did not fit).
  if (inl.control == LinkControl::Lossy && !(p.flags & kTrimmed) && !admit(dev, out, q, p.wire)) {
    if (control || !cfg_.trimming) {
      ++(control ? stats_.control_drops : stats_.drops);
      ++stats_.links.drops[out];
      stats_.link_series.count(out, Time::ps(now_), PeriodEvents::Drop);
      stats_.links.dropped_bytes[out] += p.wire;
      Flow& f = flows_[p.flow];
      --f.in_network;
      const std::uint32_t flow = p.flow;
      free_packet(pkt);
      maybe_free_flow(flow);
      return;
    }
    ++stats_.trims;
    ++stats_.links.trims[out];
    stats_.link_series.count(out, Time::ps(now_), PeriodEvents::Trim);
    p.flags |= kTrimmed;
    // What is left is the header, which has arrived: the cut payload no longer holds the output
    // until its last bit would have come in (else a stream of trims starves the data queue).
    p.tail = std::min(p.tail, now_);
    const auto header = static_cast<std::uint32_t>(cfg_.header.count());
    stats_.links.dropped_bytes[out] += p.wire - std::min(p.wire, header);
    p.wire = header;
    q = 0;
  }
  if (!buffers_.on()) devices_[dev].used += p.wire;  // as in release
  LaneState& lane = lane_[lidx(in, in_lane)];
  lane.ingress_bytes += p.wire;
  bool xoff = inl.control == LinkControl::Pfc && lane.ingress_bytes > inl.xoff;
  if (buffers_.on()) {
    if (inl.control == LinkControl::Lossy) buffers_.add_egress(dev, qidx(out, q), p.wire);
    if (inl.control == LinkControl::Pfc) {
      xoff = buffers_.add_ingress(dev, lidx(in, in_lane), p.wire, lane.xoff_sent,
                                  static_cast<std::int64_t>(cfg_.pfc_xoff.count()));
    }
  }
  if (inl.control == LinkControl::Pfc && !lane.xoff_sent && xoff) {
    lane.xoff_sent = 1;
    ++stats_.pfc_pauses;
    ++stats_.links.pauses[in];
    stats_.link_series.count(in, Time::ps(now_), PeriodEvents::Pause);
    congestion_seen_ = true;
    signal_pfc(in, in_lane);
  }
  ++p.hop;
  ++p.at;
  // The arena line was prefetched with the event (run()).
  p.in = in;
  p.nxt = p.hop + 1 < p.hops ? arena_[p.at + 1] : kNil;
  Fifo& f = fifos_[qidx(out, q)];
  if (cfg_.ecn && q != 0 && !control && !inl.to_endpoint && inl.control != LinkControl::Credit) {
    const bool own = buffers_.on();  // the switch model's thresholds (buffers.cpp)
    const auto kmin =
        own ? buffers_.pool(dev).ecn_kmin : static_cast<std::int64_t>(cfg_.ecn_kmin.count());
    const auto kmax =
        own ? buffers_.pool(dev).ecn_kmax : static_cast<std::int64_t>(cfg_.ecn_kmax.count());
    const double pmax = own ? buffers_.pool(dev).ecn_pmax : cfg_.ecn_pmax;
    bool mark = f.bytes > kmax;
    if (!mark && f.bytes > kmin) {
      const double prob =
          pmax * static_cast<double>(f.bytes - kmin) / static_cast<double>(kmax - kmin);
      mark = rng_.uniform() < prob;
    }
    if (mark && !(p.flags & kEcn)) {
      p.flags |= kEcn;
      ++stats_.ecn_marks;
      ++stats_.links.ecn_marks[out];
      stats_.link_series.count(out, Time::ps(now_), PeriodEvents::EcnMark);
    }
  }
  if (cfg_.ib_cc && q != 0 && !control) mark_fecn(p, dev, out, f.bytes);
  enqueue(out, q, pkt);
  const double depth = static_cast<double>(f.bytes);
  LinkTally& tally = tally_[out];
  if (depth > tally.peak_queue) tally.peak_queue = depth;
  stats_.links.note_queue(out, depth);
  stats_.link_series.note_queue(out, Time::ps(now_), depth);
  try_transmit(out);
}

void Simulator::flush_tallies() {
  for (std::size_t l = 0; l < tally_.size(); ++l) {
    const LinkTally& t = tally_[l];
    link_bytes_[l] = t.bytes;
    stats_.links.wire_bytes[l] = t.bytes;
    stats_.links.bytes[l] = t.payload;
    stats_.links.peak_queue[l] = t.peak_queue;
    if (t.first == kNever) continue;
    stats_.links.first_sent[l] = Time::ps(t.first);
    stats_.links.last_sent[l] = Time::ps(t.last);
  }
}

void Simulator::run(ProgressHook* progress) {
  programs_.start_ready_ops(now_);
  while (!events_.empty() && !stopped_) {
    stats_.peak_pending_events =
        std::max<std::uint64_t>(stats_.peak_pending_events, events_.size());
    const Event e = events_.pop();
    // Every event left lies past Time's range (the queue is in time order): so does the end.
    if (e.time == kNever) {
      past_range_ = true;
      break;
    }
    now_ = e.time;
    ++stats_.events;
    if (progress && stats_.events % kProgressPoll == 0)
      progress->fraction(programs_.ops_done_share());
    // The run is bound by cache misses on packets and links scattered over large arrays: start
    // loading what the next event will touch while this one is handled.
    if (const Event* next = events_.peek()) {
      if (next->kind() == EventKind::Arrive) {
        prefetch_packet(next->a);
        __builtin_prefetch(&links_[next->b]);
        // The input's lane, whose buffered bytes the arrival counts (a sixth of on_arrive).
        __builtin_prefetch(&lane_[lidx(next->b, 0)], 1);
        if (next->c != kNil) {
          __builtin_prefetch(&arena_[next->d + 1]);
          prefetch_tally(next->c);
          // The output's credits, which can_send compares first (a tenth of the run was that
          // load at 8,192 hosts in `perf`).
          __builtin_prefetch(&lane_[lidx(next->c, 0)]);
          // Its egress queue's counter in a switch's shared buffer, which `admit` reads first
          // (5% of a UEC run at 8,192 hosts in `perf`).
          buffers_.prefetch(qidx(next->c, 0));
        } else {
          prefetch_flow(next->d);
        }
      } else if (next->kind() == EventKind::LinkFree) {
        __builtin_prefetch(&links_[next->a]);
        __builtin_prefetch(&fifos_[qidx(next->a, 1)]);
        __builtin_prefetch(&tally_[next->a], 1);
        __builtin_prefetch(&lane_[lidx(next->a, 0)]);
        buffers_.prefetch(qidx(next->a, 0));  // remove_egress's counter
        if (next->c != kNil) prefetch_packet(next->c);
        if (next->b != kNil) {
          __builtin_prefetch(&links_[next->b]);
          prefetch_lane(lidx(next->b, 0));
        }
      }
    }
    switch (e.kind()) {
      case EventKind::LinkFree:
        on_link_free(e.a, e.b);
        break;
      case EventKind::Arrive:
        on_arrive(e.a, e.b, e.c);
        break;
      case EventKind::CreditReturn:
        lane_[lidx(e.a, static_cast<std::uint8_t>(e.b))].wake_pending = false;
        try_transmit(e.a);
        break;
      case EventKind::Pfc: {
        const std::size_t li = lidx(e.a, static_cast<std::uint8_t>(e.b));
        if (e.c) {
          links_[e.a].paused |= static_cast<std::uint16_t>(1u << e.b);
          lane_[li].pause_start = now_;
        } else {
          links_[e.a].paused &= static_cast<std::uint16_t>(~(1u << e.b));
          stats_.links.paused[e.a] += Time::ps(now_ - lane_[li].pause_start);
          stats_.link_series.add_paused(e.a, Time::ps(lane_[li].pause_start), Time::ps(now_));
          try_transmit(e.a);
        }
        break;
      }
      case EventKind::Wake:
        if (e.b == links_[e.a].wake_gen) {
          links_[e.a].wake_at = -1;
          try_transmit(e.a);
        }
        break;
      case EventKind::AckTimer:
        on_ack_timer(e.a, e.b);
        break;
      case EventKind::FlowTimer:
        on_flow_timer(e.a, e.b);
        break;
      case EventKind::CcTimer:
        on_cc_timer(e.a, e.b);
        break;
      case EventKind::OpDone:
        programs_.op_done(e.a, e.b, now_);
        break;
      case EventKind::Watchdog:
        on_watchdog();
        break;
    }
    programs_.start_ready_ops(now_);
  }
  flush_tallies();
  stats_.peak_headroom = buffers_.peak_headroom;
  stats_.headroom_overflows = buffers_.headroom_overflows;
  stats_.makespan = past_range_ ? Time::infinite() : Time::ps(now_);
  stats_.peak_packets = packets_.size();
  if (past_range_) return;
  // Nothing left to happen but work remains: a buffer deadlock or a program that cannot run.
  if (!stats_.deadlock.detected && !programs_.all_done() && in_network_ > 0) find_deadlock(true);
  if (stats_.deadlock.detected) {
    if (cfg_.throw_on_deadlock) throw InputError("engine", stats_.deadlock.describe(*topo_));
    return;
  }
  if (!programs_.all_done()) throw InputError("programs", programs_.describe_stuck());
}

}  // namespace lockstep::packet
