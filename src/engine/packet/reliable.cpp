// Reliable delivery over lossy fabrics (TCP and Ultra Ethernet): selective ACKs, loss detection
// by reordering distance (a packet counts as lost once `reorder_threshold` later packets have been
// acknowledged -- the SACK form of TCP's three duplicate ACKs), NACKs for trimmed packets,
// retransmission timeouts with exponential back-off, and the window controllers.
#include <algorithm>
#include <bit>
#include <cmath>

#include "simulator.hpp"

namespace lockstep::packet {

namespace {
constexpr auto kInflight = static_cast<std::uint8_t>(PacketState::Inflight);
constexpr auto kLost = static_cast<std::uint8_t>(PacketState::Lost);
constexpr auto kAcked = static_cast<std::uint8_t>(PacketState::Acked);
constexpr double kDctcpGain = 1.0 / 16;  // DCTCP's g (Alizadeh et al., SIGCOMM 2010)
constexpr double kSwiftBeta = 0.8;       // Swift's multiplicative-decrease gain (SIGCOMM 2020)
constexpr double kMaxDecrease = 0.5;     // never cut more than half per RTT
constexpr int kMaxBackoff = 6;           // RTO doubles at most 2^6 times
}  // namespace

void Simulator::arm_rto(Flow& f) {
  if (f.inflight == 0 && f.retx_pending == 0) {
    f.rto_deadline = -1;
    return;
  }
  f.rto_deadline = later(now_, f.rto);
  if (!f.timer_pending) {
    f.timer_pending = true;
    const auto id = static_cast<std::uint32_t>(&f - flows_.data());
    events_.push(f.rto_deadline, EventKind::FlowTimer, id, f.timer_gen);
  }
}

void Simulator::on_flow_timer(std::uint32_t flow, std::uint32_t gen) {
  Flow& f = flows_[flow];
  if (gen != f.timer_gen) return;
  f.timer_pending = false;
  if (f.sender_done || f.rto_deadline < 0) return;
  if (now_ < f.rto_deadline) {  // re-armed since: sleep until the new deadline
    f.timer_pending = true;
    events_.push(f.rto_deadline, EventKind::FlowTimer, flow, gen);
    return;
  }
  ++stats_.timeouts;
  for (std::uint32_t s = f.lowest_unacked; s < f.next_new; ++s) {
    if (f.state[s] == kInflight) {
      f.state[s] = kLost;
      --f.inflight;
      ++f.retx_pending;
    }
  }
  f.retx_cursor = f.lowest_unacked;
  f.ssthresh = std::max(f.cwnd / 2, 2.0);
  f.cwnd = 1;
  f.last_decrease = now_;
  f.rto = std::min(later(f.rto, f.rto), (cfg_.rto_min * (1 << kMaxBackoff)).picoseconds());
  arm_rto(f);
  ring_add(flow);
  try_transmit(f.inject_link);
}

void Simulator::congestion_signal(Flow& f, bool loss) {
  if (uec_nscc()) {  // NSCC's quick adapt (uec_cc.cpp)
    if (loss) uec_quick_adapt(f);
    return;
  }
  // At most one decrease per round trip, as TCP's fast recovery and Swift do.
  const auto rtt = static_cast<std::int64_t>(f.srtt);
  if (f.last_decrease >= 0 && now_ - f.last_decrease < rtt) return;
  f.last_decrease = now_;
  if (cfg_.congestion == CongestionControl::Reno || loss) {
    f.ssthresh = std::max(f.cwnd / 2, 2.0);
    f.cwnd = f.ssthresh;
  }
}

void Simulator::detect_losses(Flow& f) {
  if (f.highest_acked < cfg_.reorder_threshold) return;
  const std::uint32_t limit = f.highest_acked - cfg_.reorder_threshold + 1;
  f.scan = std::max(f.scan, f.lowest_unacked);
  bool lost = false;
  for (; f.scan < limit; ++f.scan) {
    if (f.state[f.scan] == kInflight) {
      // With trimming a NACK reports each trimmed packet, and one resent since the acknowledged
      // packet left is not lost by distance (RACK's rule, RFC 8985): no second copy of it.
      if (cfg_.trimming && f.sent_at[f.scan] > f.sent_at[f.highest_acked]) continue;
      f.state[f.scan] = kLost;
      --f.inflight;
      ++f.retx_pending;
      f.retx_cursor = std::min(f.retx_cursor, f.scan);
      lost = true;
    }
  }
  if (lost) congestion_signal(f, true);
}

void Simulator::acked_one(Flow& f, std::uint32_t seq, double rtt, bool ecn) {
  std::uint8_t& st = f.state[seq];
  if (st == kInflight) --f.inflight;
  if (st == kLost) --f.retx_pending;
  st = kAcked;
  ++f.acked;
  f.highest_acked = std::max(f.highest_acked, seq);
  // The window grows per packet acknowledged, not per ACK (appropriate byte counting, RFC 3465),
  // so that coalesced ACKs do not slow it.
  switch (cfg_.congestion) {
    case CongestionControl::Reno:
      f.cwnd += f.cwnd < f.ssthresh ? 1.0 : 1.0 / f.cwnd;
      break;
    case CongestionControl::Ecn: {
      ++f.acks_in_window;
      if (ecn) ++f.marked_in_window;
      if (seq >= f.window_end) {  // one window (about one RTT) of ACKs seen
        const double frac =
            static_cast<double>(f.marked_in_window) / static_cast<double>(f.acks_in_window);
        f.ecn_alpha = (1 - kDctcpGain) * f.ecn_alpha + kDctcpGain * frac;
        if (f.marked_in_window > 0) f.cwnd = std::max(1.0, f.cwnd * (1 - f.ecn_alpha / 2));
        f.marked_in_window = f.acks_in_window = 0;
        f.window_end = f.next_new;
      }
      f.cwnd += 1.0 / f.cwnd;
      break;
    }
    case CongestionControl::Delay: {
      const PathRef& path = paths_[f.paths.first];
      // The idle round trip: the data packet out, its ACK back, each serialised once at the
      // path's bottleneck (cut-through).
      const double base =
          2.0 * static_cast<double>(path.latency) +
          static_cast<double>(cfg_.payload.count() + f.header + cfg_.ack_wire.count()) * 1e12 /
              path.min_bw;
      const double target = base + static_cast<double>(cfg_.delay_target.picoseconds());
      if (rtt < target) {
        f.cwnd += 1.0 / f.cwnd;
      } else if (f.last_decrease < 0 || now_ - f.last_decrease >= static_cast<std::int64_t>(rtt)) {
        f.last_decrease = now_;
        f.cwnd = std::max(
            1.0, f.cwnd * std::max(1 - kSwiftBeta * (rtt - target) / rtt, 1 - kMaxDecrease));
      }
      break;
    }
    case CongestionControl::Nscc:
    case CongestionControl::NsccRccc:
      uec_on_ack(f, rtt, ecn);
      break;
    case CongestionControl::None:
    case CongestionControl::Dcqcn:
    case CongestionControl::Rccc:
      break;
  }
}

void Simulator::on_ack(Flow& f, std::uint32_t seq, std::uint32_t cum, bool ecn, bool nack,
                       std::uint64_t sack) {
  if (nack) {  // a trimmed packet: resend it at once, and treat it as a congestion signal
    std::uint8_t& st = f.state[seq];
    if (st == kInflight) {
      st = kLost;
      --f.inflight;
      ++f.retx_pending;
      f.retx_cursor = std::min(f.retx_cursor, seq);
      congestion_signal(f, true);
      if (rod(f)) rod_go_back(f, seq);  // ROD resends everything from the NACKed packet
    }
    return;
  }
  // RTT estimate and RTO (RFC 6298), from the packet whose arrival sent this ACK, unless it was
  // acknowledged before (a duplicate ACK). The sample is from its latest transmission (Karn's
  // ambiguity is ignored).
  double rtt = f.srtt;
  if (f.state[seq] != kAcked) {
    rtt = static_cast<double>(now_ - f.sent_at[seq]);
    if (f.srtt == 0) {
      f.srtt = rtt;
      f.rttvar = rtt / 2;
    } else {
      f.rttvar = 0.75 * f.rttvar + 0.25 * std::abs(f.srtt - rtt);
      f.srtt = 0.875 * f.srtt + 0.125 * rtt;
    }
    f.rto = std::max(cfg_.rto_min.picoseconds(), static_cast<std::int64_t>(f.srtt + 4 * f.rttvar));
  }
  // Every packet below the cumulative point, and the one that sent the ACK (its SACK block).
  for (std::uint32_t s = f.lowest_unacked; s < cum && s < f.packets; ++s)
    if (f.state[s] != kAcked) acked_one(f, s, rtt, ecn);
  if (f.state[seq] != kAcked) acked_one(f, seq, rtt, ecn);
  for (; sack != 0; sack &= sack - 1) {  // UEC's SACK bitmap: bit i is packet cum + i
    const std::uint32_t s = cum + static_cast<std::uint32_t>(std::countr_zero(sack));
    if (s < f.packets && f.state[s] != kAcked) acked_one(f, s, rtt, ecn);
  }
  while (f.lowest_unacked < f.packets && f.state[f.lowest_unacked] == kAcked) ++f.lowest_unacked;
  detect_losses(f);
  if (f.acked == f.packets) {
    f.sender_done = true;
    f.rto_deadline = -1;
    return;
  }
  arm_rto(f);
}

}  // namespace lockstep::packet
