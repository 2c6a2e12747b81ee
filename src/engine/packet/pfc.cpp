// PFC's frames (IEEE 802.1Qbb): a receiver's XOFF / XON change of a lane goes out as a PAUSE or
// RESUME frame on the reverse link, ahead of its queued packets (simulator.cpp decides when an
// ingress crosses its thresholds; buffers.cpp, as built, the dynamic ones).
#include <algorithm>

#include "simulator.hpp"

namespace lockstep::packet {

void Simulator::signal_pfc(std::uint32_t ingress, std::uint8_t lane) {
  const std::uint32_t back = ingress ^ 1u;  // the same cable, the other way
  links_[back].pfc_pending |= static_cast<std::uint16_t>(1u << lane);
  if (!links_[back].busy && !stopped_) send_pfc_frame(back);
}

bool Simulator::send_pfc_frame(std::uint32_t link) {
  LinkState& s = links_[link];
  const std::uint32_t ingress = link ^ 1u;
  // Only lanes whose state differs from what the last frame said: an XOFF lifted before its
  // frame could leave sends nothing.
  std::uint16_t changed = 0;
  for (std::uint32_t lane = 0; lane < lanes_; ++lane) {
    const auto bit = static_cast<std::uint16_t>(1u << lane);
    if (!(s.pfc_pending & bit)) continue;
    const bool xoff = lane_[lidx(ingress, static_cast<std::uint8_t>(lane))].xoff_sent != 0;
    if (xoff != ((s.pfc_sent & bit) != 0)) changed |= bit;
  }
  s.pfc_pending = 0;
  if (changed == 0) return false;
  // A MAC Control frame goes ahead of the queued packets (802.3 clause 31) once the packet on
  // the wire has left; it takes its bytes of the link's time and acts at the far end when its
  // last bit arrives.
  const std::int64_t ser = Time::from_ps(kPfcFrameWire * s.ps_per_byte).picoseconds();
  const std::int64_t end = later(now_, ser);
  s.busy = true;
  s.cur_ingress = kNil;
  s.last_tx = now_;
  LinkTally& tally = tally_[link];
  tally.bytes += kPfcFrameWire;
  tally.first = std::min(tally.first, now_);
  tally.last = end;
  stats_.link_series.add_span(link, Time::ps(now_), Time::ps(end), kPfcFrameWire);
  ++stats_.pfc_frames;
  ++progress_;
  events_.push(end, EventKind::LinkFree, link, kNil);
  const std::int64_t at = later(end, s.latency);
  for (std::uint32_t lane = 0; lane < lanes_; ++lane) {
    const auto bit = static_cast<std::uint16_t>(1u << lane);
    if (!(changed & bit)) continue;
    s.pfc_sent ^= bit;
    events_.push(at, EventKind::Pfc, ingress, lane, (s.pfc_sent & bit) ? 1u : 0u);
  }
  return true;
}

}  // namespace lockstep::packet
