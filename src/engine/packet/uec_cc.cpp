// Ultra Ethernet 1.0 congestion control: NSCC (the sender's window from delay and ECN) and RCCC
// (the receiver's credit). docs/packet-engine.md section 4 says which constants come from
// where; the ones marked "assumption" there are the model's choices, not the specification's.
#include <algorithm>
#include <cmath>

#include "simulator.hpp"

namespace lockstep::packet {

namespace {
// NSCC. The multiplicative decrease removes gamma x (delay - target) / delay of the window, at
// most half per round trip (the cut that drains the excess queue in one RTT, as Swift's;
// assumption). Increases are in packets per round trip: proportional increase up to
// kProportional at an empty queue, fair increase kFair, and fast increase (one packet per ACK,
// a doubling per RTT) once a whole window of ACKs saw less than kEmptyQueue x target of delay.
constexpr double kGamma = 0.8;
constexpr double kMaxDecrease = 0.5;
constexpr double kProportional = 4;
constexpr double kFair = 1;
constexpr double kEmptyQueue = 1.0 / 8;
}  // namespace

NsccQuadrant nscc_quadrant(double delay, double target, bool ecn) {
  const bool high = delay >= target;
  if (!ecn) return high ? NsccQuadrant::FairIncrease : NsccQuadrant::ProportionalIncrease;
  return high ? NsccQuadrant::MultiplicativeDecrease : NsccQuadrant::NoChange;
}

NsccQuadrant nscc_on_ack(NsccWindow& w, const NsccParams& p, double rtt, bool ecn,
                         std::int64_t now) {
  // Quick adapt measures what one round trip (at the target delay) delivers.
  const auto period = static_cast<std::int64_t>(p.base_rtt + p.target);
  if (w.period_start < 0) w.period_start = now;
  if (now - w.period_start >= period) {
    w.acked_last = w.acked_now;
    w.acked_now = 0;
    w.period_start = now;
  }
  ++w.acked_now;
  const double delay = std::max(0.0, rtt - p.base_rtt);
  const NsccQuadrant q = nscc_quadrant(delay, p.target, ecn);
  w.empty_acks = delay < kEmptyQueue * p.target ? w.empty_acks + 1 : 0;
  switch (q) {
    case NsccQuadrant::ProportionalIncrease:
      if (w.empty_acks >= w.cwnd) {
        w.cwnd += 1;  // fast increase: the path has been idle for a whole window
      } else {
        w.cwnd += kProportional * (p.target - delay) / p.target / w.cwnd;
      }
      break;
    case NsccQuadrant::FairIncrease:
      w.cwnd += kFair / w.cwnd;
      break;
    case NsccQuadrant::MultiplicativeDecrease:
      if (w.last_decrease < 0 || now - w.last_decrease >= static_cast<std::int64_t>(rtt)) {
        w.last_decrease = now;
        w.cwnd *= std::max(1 - kGamma * (delay - p.target) / delay, 1 - kMaxDecrease);
      }
      break;
    case NsccQuadrant::NoChange:
      break;
  }
  w.cwnd = std::clamp(w.cwnd, 1.0, std::max(1.0, w.max_cwnd));
  return q;
}

bool nscc_quick_adapt(NsccWindow& w, const NsccParams& p, std::int64_t now) {
  if (w.last_decrease >= 0 &&
      now - w.last_decrease < static_cast<std::int64_t>(p.base_rtt + p.target))
    return false;
  w.last_decrease = now;
  // What the last round trip delivered is what the path can take now; before one round trip has
  // been measured, half the window.
  const double delivered = w.acked_last > 0 ? static_cast<double>(w.acked_last) : w.cwnd / 2;
  w.cwnd = std::max(1.0, std::min(w.cwnd, delivered));
  w.empty_acks = 0;
  return true;
}

void Simulator::uec_start(Flow& f, const PathRef& path) {
  if (!reliable(f)) return;
  const double wire = static_cast<double>(cfg_.payload.count() + f.header);
  UecFlow& u = f.uec;
  // The idle round trip: the packet out and its ACK back (a control packet on the wire), each
  // serialised once at the path's bottleneck (cut-through).
  u.params.base_rtt = 2.0 * static_cast<double>(path.latency) +
                      (wire + static_cast<double>(cfg_.ack_wire.count())) * 1e12 / path.min_bw;
  u.params.target = static_cast<double>(cfg_.delay_target.picoseconds());
  // Room for the path's bandwidth-delay product and twice the target queue (assumption).
  const double rate_ps = path.min_bw / 1e12;  // bytes per ps
  u.nscc.max_cwnd = std::ceil((u.params.base_rtt + 2 * u.params.target) * rate_ps / wire);
  u.nscc.cwnd = f.cwnd;
  if (uec_rccc()) {
    const auto total = static_cast<std::int64_t>(f.bytes + std::uint64_t{f.packets} * f.header);
    const auto bdp = static_cast<std::int64_t>(std::ceil(u.params.base_rtt * rate_ps));
    const std::int64_t initial = cfg_.rccc_initial_credit.count() != 0
                                     ? static_cast<std::int64_t>(cfg_.rccc_initial_credit.count())
                                     : bdp;
    u.credit = std::min(initial, total);
    u.owed = static_cast<std::uint64_t>(total - u.credit);
  }
}

void Simulator::uec_on_ack(Flow& f, double rtt, bool ecn) {
  f.uec.nscc.cwnd = f.cwnd;
  const NsccQuadrant q = nscc_on_ack(f.uec.nscc, f.uec.params, rtt, ecn, now_);
  ++stats_.nscc_quadrants[static_cast<std::size_t>(q)];
  f.cwnd = f.uec.nscc.cwnd;
}

bool Simulator::uec_quick_adapt(Flow& f) {
  f.uec.nscc.cwnd = f.cwnd;
  const bool acted = nscc_quick_adapt(f.uec.nscc, f.uec.params, now_);
  if (acted) ++stats_.nscc_quick_adapts;
  f.cwnd = f.uec.nscc.cwnd;
  return acted;
}

bool Simulator::uec_may_send(const Flow& f, std::uint32_t seq, std::uint32_t wire) const {
  // RCCC: new data needs credit; a retransmission replaces data already credited.
  return !uec_rccc() || !reliable(f) || seq < f.next_new || f.uec.credit >= wire;
}

void Simulator::uec_sent(Flow& f, std::uint32_t seq, std::uint32_t wire) {
  if (uec_rccc() && reliable(f) && seq == f.next_new) f.uec.credit -= wire;
}

void Simulator::uec_arrived(std::uint32_t flow, std::uint32_t wire, bool fresh) {
  Flow& f = flows_[flow];
  if (!uec_rccc() || !reliable(f)) return;
  if (rccc_.empty()) rccc_.resize(devices_.size());
  RcccReceiver& r = rccc_[f.dst];
  if (!f.uec.known) {
    // The first packet makes the flow known: its initial credit is out, the rest is owed.
    f.uec.known = true;
    r.outstanding += static_cast<std::int64_t>(f.packets) * f.header +
                     static_cast<std::int64_t>(f.bytes) - static_cast<std::int64_t>(f.uec.owed);
    if (f.uec.owed > 0) r.flows.push_back({flow, f.incarnation});
  }
  // Data that arrives for the first time returns its credit (a trimmed packet's data is still
  // to come, a duplicate's came before).
  if (fresh) r.outstanding = std::max<std::int64_t>(0, r.outstanding - wire);
  // Keep the receiver's line rate for one round trip at the target delay granted (the round
  // trip of a grant and its packet, and the target queue that absorbs their jitter, NSCC's
  // target): the line rate shared round robin among the flows that still need credit.
  const PathRef& path = paths_[f.paths.first];
  const double full = static_cast<double>(cfg_.payload.count() + f.header);
  const auto budget =
      static_cast<std::int64_t>((f.uec.params.base_rtt + f.uec.params.target) * path.min_bw / 1e12);
  while (!r.flows.empty()) {
    r.cursor %= r.flows.size();
    const RcccReceiver::Entry e = r.flows[r.cursor];
    Flow& g = flows_[e.flow];
    if (g.incarnation != e.incarnation || g.receiver_done || g.uec.owed == 0) {
      r.flows.erase(r.flows.begin() + static_cast<std::ptrdiff_t>(r.cursor));
      continue;
    }
    const auto grant = static_cast<std::uint32_t>(
        std::min<std::uint64_t>(g.uec.owed, static_cast<std::uint64_t>(full)));
    if (r.outstanding + grant > budget) break;
    r.outstanding += grant;
    g.uec.owed -= grant;
    ++r.cursor;
    ++stats_.credit_grants;
    // A control packet on the flow's reverse route, as large as an ACK (UET carries credit in
    // its ACK_CC packets, docs/packet-engine.md section 4).
    g.uec.granted += grant;
    send_control(e.flow, kGrant, 0, g.uec.granted);
  }
}

void Simulator::uec_on_credit(std::uint32_t flow, std::uint32_t total) {
  Flow& f = flows_[flow];
  // Modular difference: a grant overtaken by a later one on another path adds nothing.
  const auto more = static_cast<std::int32_t>(total - f.uec.grant_seen);
  if (more <= 0) return;
  f.uec.grant_seen = total;
  f.uec.credit += more;
  ring_add(flow);
  try_transmit(f.inject_link);
}

}  // namespace lockstep::packet
