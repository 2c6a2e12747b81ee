// Ultra Ethernet 1.0 delivery modes (PDS). RUD, reliable unordered delivery, is the engine's
// sprayed reliable transport (receiver.cpp, reliable.cpp: a per-packet bitmap at the receiver,
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

std::uint32_t Simulator::rod_ack_path(const Flow& f) const {
  // The reverse direction's hash: destination and source swapped.
  const std::uint64_t h = mix64((std::uint64_t{f.dst} << 32 | f.src) ^ mix64(f.label));
  return static_cast<std::uint32_t>(h % f.ack_paths.count);
}

bool Simulator::rod_accept(std::uint32_t flow, std::uint32_t seq, std::uint8_t flags) {
  Flow& f = flows_[flow];
  if (seq < f.contiguous) return true;  // a duplicate: acknowledged again as one
  if (seq == f.contiguous && !(flags & kTrimmed)) return true;
  // A trimmed packet or one past a gap. The expected packet is NACKed: at once when its own
  // header arrives trimmed, once per gap otherwise (the packets behind a loss all see it). The
  // NACK is a control packet on the reverse route (receiver.cpp's send_control).
  const bool own_trim = seq == f.contiguous;
  if (own_trim || f.uec.nacked != f.contiguous) {
    f.uec.nacked = f.contiguous;
    ++stats_.nacks;
    send_control(flow, kNack, f.contiguous, f.contiguous);
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
