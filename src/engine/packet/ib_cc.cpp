// InfiniBand congestion control (`ib_cc`), as IBTA Vol. 1 Annex A10 describes it: a switch port
// whose queue passes its threshold sets FECN in the packets it forwards; the destination channel
// adapter returns a BECN to the source; the source raises the flow's index into its congestion
// control table (CCTI) by CCTI_Increase (1) up to CCTI_Limit, and the table entry is the delay it
// puts between the flow's packets; a CCTI_Timer per service level lowers the index by one each
// period. What the annex leaves to the subnet manager (the threshold's meaning, the table's
// entries, the timer) are settings here: a linear table (entry i = i packet times, so rate /
// (1 + i), the shape Gran et al. used on real switches, "First experiences with congestion
// control in InfiniBand hardware", IPDPS 2010) and the defaults of packet_config.hpp, named
// assumptions in docs/packet-engine.md. BECNs travel as the engine's other notifications
// (receiver.cpp, sender_feedback.cpp); FECN reuses the packet's ECN bit and the counters ecn_marks
// and cnps.
#include "simulator.hpp"

namespace lockstep::packet {

void Simulator::mark_fecn(Packet& p, std::uint32_t dev, std::uint32_t out, std::int64_t queued) {
  if (p.flags & kEcn || queued <= static_cast<std::int64_t>(cfg_.ib_cc_threshold.count())) return;
  if (topo_->device(dev).kind != DeviceKind::Switch) return;
  p.flags |= kEcn;
  ++stats_.ecn_marks;
  ++stats_.links.ecn_marks[out];
  stats_.link_series.count(out, Time::ps(now_), PeriodEvents::EcnMark);
}

void Simulator::on_becn(std::uint32_t flow) {
  Flow& f = flows_[flow];
  ++stats_.cnps;
  if (f.inject_link != kNil) {
    ++stats_.links.cnps[f.inject_link];
    stats_.link_series.count(f.inject_link, Time::ps(now_), PeriodEvents::Cnp);
  }
  f.ccti = std::min(f.ccti + 1, cfg_.ib_cc_limit);
  f.rate = f.line_rate / (1 + f.ccti);
  if (!f.cc_timer_armed) {
    f.cc_timer_armed = true;
    events_.push(later(now_, cfg_.ib_cc_timer.picoseconds()), EventKind::CcTimer, flow,
                 f.timer_gen);
  }
}

void Simulator::on_ib_cc_timer(std::uint32_t flow, std::uint32_t gen) {
  Flow& f = flows_[flow];
  if (gen != f.timer_gen || f.sender_done) return;
  if (f.ccti > 0) --f.ccti;
  f.rate = f.line_rate / (1 + f.ccti);
  if (f.ccti == 0) {
    f.cc_timer_armed = false;
    return;
  }
  events_.push(later(now_, cfg_.ib_cc_timer.picoseconds()), EventKind::CcTimer, flow, gen);
}

}  // namespace lockstep::packet
