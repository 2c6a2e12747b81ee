// Frames corrupted on a cable (PacketConfig::loss_rate, drawn per frame and hop from the run's
// seed) and UEC 1.0 link-level retry (LLR). Without LLR a corrupted frame fails its FCS at the
// far end and is discarded: the transport recovers it end to end. With LLR the link's
// transmitter keeps the frame in its replay buffer; the receiver NACKs the bad frame and the
// transmitter replays from it, so the frame arrives one link round trip and one more
// serialisation later, and the frames sent behind it in that round trip are replayed too
// (go-back-N on the link): the link carries nothing new for that long. The engine charges the
// replay to the corrupted frame (its transmission holds the link 2 x latency + serialisation
// longer per replay), which moves the frames behind it by the same amount.
#include "simulator.hpp"

namespace lockstep::packet {

void Simulator::setup_cables() {
  if (cfg_.loss_rate <= 0) return;
  cable_.assign(links_.size(), 0);
  for (DirLinkId d = 0; d < links_.size(); ++d) {
    cable_[d] = !on_board(topo_->link(Topology::link_of(d)).medium);
  }
}

std::int64_t Simulator::link_retry(std::uint32_t link, Packet& p, std::int64_t ser) {
  if (cable_.empty() || !cable_[link]) return 0;
  const LinkState& s = links_[link];
  std::int64_t extra = 0;
  while (rng_.uniform() < cfg_.loss_rate) {
    ++stats_.corrupted_frames;
    if (!cfg_.llr) {
      p.flags |= kCorrupt;
      break;
    }
    ++stats_.llr_replays;
    extra = later(extra, later(2 * s.latency, ser));
  }
  return extra;
}

bool Simulator::discard_corrupted(std::uint32_t pkt, std::uint32_t in) {
  Packet& p = packets_[pkt];
  if (!(p.flags & kCorrupt)) return false;
  // The far end drops the frame; its buffer slot (credit) is free again at once.
  if (links_[in].control == LinkControl::Credit) return_credits(in, p.lane, p.wire);
  ++(p.flags & kCtl ? stats_.control_drops : stats_.drops);
  ++stats_.links.drops[in];
  stats_.links.dropped_bytes[in] += p.wire;
  stats_.link_series.count(in, Time::ps(now_), PeriodEvents::Drop);
  const std::uint32_t flow = p.flow;
  --flows_[flow].in_network;
  free_packet(pkt);
  maybe_free_flow(flow);
  return true;
}

}  // namespace lockstep::packet
