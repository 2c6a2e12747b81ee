// Ultra Ethernet 1.0 delivery modes (PDS). RUD, reliable unordered delivery, is the engine's
// sprayed reliable transport (transport.cpp, reliable.cpp: a per-packet bitmap at the receiver,
// selective ACKs). ROD, reliable ordered delivery, keeps a flow on one path and accepts packets
// only in order: the receiver discards a packet past a gap and NACKs the one it expects, and the
// sender goes back to it, resending everything it had sent since (go-back-N).
#include "simulator.hpp"

namespace lockstep::packet {

namespace {
constexpr auto kInflight = static_cast<std::uint8_t>(PacketState::Inflight);
constexpr auto kLost = static_cast<std::uint8_t>(PacketState::Lost);
}  // namespace

std::uint32_t Simulator::rod_path(const Flow& f) const {
  // One of the equal-cost paths for the whole flow, by its entropy (source, destination and
  // connection), as ECMP would hash it.
  const std::uint64_t h = mix64((std::uint64_t{f.src} << 32 | f.dst) ^ mix64(f.label));
  return f.paths.first + static_cast<std::uint32_t>(h % f.paths.count);
}

bool Simulator::rod_accept(std::uint32_t flow, const Packet& p, std::int64_t back) {
  Flow& f = flows_[flow];
  if (p.seq < f.contiguous) return true;  // a duplicate: acknowledged again as one
  if (p.seq == f.contiguous && !(p.flags & kTrimmed)) return true;
  // A trimmed packet or one past a gap. The expected packet is NACKed: at once when its own
  // header arrives trimmed, once per gap otherwise (the packets behind a loss all see it).
  const bool own_trim = p.seq == f.contiguous;
  if (own_trim || f.uec.nacked != f.contiguous) {
    f.uec.nacked = f.contiguous;
    ++stats_.nacks;
    events_.push(back, EventKind::Control, flow, f.contiguous, f.incarnation << 8 | kCtlUecNack);
  }
  if (!own_trim) ++stats_.out_of_order_discards;
  return false;
}

void Simulator::rod_go_back(Flow& f, std::uint32_t seq) {
  for (std::uint32_t s = seq; s < f.next_new; ++s) {
    if (f.state[s] != kInflight) continue;
    f.state[s] = kLost;
    --f.inflight;
    ++f.retx_pending;
  }
  f.retx_cursor = std::min(f.retx_cursor, seq);
}

}  // namespace lockstep::packet
