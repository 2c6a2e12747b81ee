// The sender side of control packets: an ACK or NACK goes to the reliable transport
// (reliable.cpp), a CNP to DCQCN's reaction point (and its rate-increase timer, here) or, with
// InfiniBand congestion control, as a BECN to ib_cc.cpp, an RCCC grant to uec_cc.cpp.
#include <algorithm>

#include "simulator.hpp"

namespace lockstep::packet {

void Simulator::on_control(std::uint32_t pkt) {
  // A control packet's payload field carries the receiver's cumulative point.
  const auto [flow, seq, cum, flags] = take_arrived(pkt, stats_.control_delivered);
  Flow& f = flows_[flow];
  // The freed slot keeps its SACK bitmap until a new packet takes it (none has yet).
  const std::uint64_t sack = sack_bitmap(f) && !(flags & (kCnp | kGrant | kNack)) ? sack_[pkt] : 0;
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
