// The channel speed limit of the packet engine (EngineOptions::channel_send_bandwidth): how one
// NCCL channel's budget on a GPU is divided among the connections it streams at once.
//
// Why a guaranteed share plus a shared clock (docs/packet-engine.md "Channel pacer"): NCCL's tree
// kernel (all_reduce.h runTreeSplit) gives the climb and the descent their own threads of the
// block, each group paced only by its own peers' credits, so a climb held up by a busy cable
// does not hand its threads to the descent, and the descent does not stall the climb; a group
// that has nothing to do leaves the block's time to the other. The flow engine states the same
// as one max-min constraint per (rank, channel): every streaming connection i of weight w_i (its
// cap_share, 1 / Op::fan_out) rises to the common rate r with sum w_i r = cap, r = cap / W (W the
// streaming weight), unless something else holds it lower, and the others then take what it
// leaves. The packet pacer therefore lets a packet go when either clock allows it:
//   - the connection's own clock, at its max-min share r = cap / W (a byte takes W / cap of its
//     time), so whatever its port and credits did meanwhile, it is never below that share; this
//     clock has no slack (a connection back from waiting gets one packet, not a burst), so the
//     shares' sum never passes cap;
//   - the channel's shared clock, at cap in weighted bytes (a byte takes w_i / cap), which every
//     packet advances, so the unused shares go to whoever can send, and the total stays at cap:
//     own-clock sends add up to sum w_i r = cap, and greedy sends need the shared clock not
//     ahead of now by more than its slack.
// The shared clock lets its packets run kPacerSlackPackets behind it and catch up (a packet that
// finds its port busy when its turn comes does not lose that turn for good).
#include <algorithm>

#include "simulator.hpp"

namespace lockstep::packet {

namespace {
constexpr double kPacerSlackPackets = 8;
}  // namespace

void Simulator::attach_pacer(Flow& f, std::uint64_t label, double cap_share, double eff) {
  const EngineOptions& o = input_.options;
  const double cap = o.channel_send_bandwidth.bytes_per_second();
  if (cap <= 0) return;
  const std::uint64_t key = std::uint64_t{f.src} << 16 | (label & 0xFFFF);
  const auto [it, added] =
      channel_pacer_.try_emplace(key, static_cast<std::uint32_t>(channel_pacers_.size()));
  if (added) channel_pacers_.emplace_back();
  f.pacer = it->second;
  // The channel's limit is in the wire bytes of transfer_efficiency (EngineOptions), so a byte
  // inflated by `eff` instead takes eff / transfer_efficiency of its time there.
  f.pacer_ps_per_byte = 1e12 * cap_share * eff / o.transfer_efficiency / cap;
  f.pacer_slack = static_cast<std::int64_t>(
      kPacerSlackPackets * static_cast<double>(cfg_.payload.count()) * f.pacer_ps_per_byte);
  f.pacer_weight = cap_share;
  const auto [own, fresh] = connection_pacer_.try_emplace(
      RouteKey{f.src, f.dst, label}, static_cast<std::uint32_t>(connection_free_.size()));
  if (fresh) connection_free_.push_back(0);
  f.own_pacer = own->second;
}

void Simulator::pacer_streaming(Flow& f, bool streaming) {
  if (f.pacer == kNil) return;
  ChannelPacer& c = channel_pacers_[f.pacer];
  c.active_weight = std::max(0.0, c.active_weight + (streaming ? f.pacer_weight : -f.pacer_weight));
}

double Simulator::own_ps_per_byte(const Flow& f) const {
  const double weight = std::max(channel_pacers_[f.pacer].active_weight, f.pacer_weight);
  return f.pacer_ps_per_byte / f.pacer_weight * weight;
}

std::int64_t Simulator::pacer_ready(const Flow& f) const {
  if (f.pacer == kNil) return f.ready_at;
  const std::int64_t shared = channel_pacers_[f.pacer].free - f.pacer_slack;
  const std::int64_t own = connection_free_[f.own_pacer];
  return std::max(f.ready_at, std::min(shared, own));
}

void Simulator::pacer_sent(Flow& f, std::uint32_t payload) {
  if (f.pacer == kNil) return;
  std::int64_t& free = channel_pacers_[f.pacer].free;
  free = later(std::max(free, now_), static_cast<std::int64_t>(payload * f.pacer_ps_per_byte));
  std::int64_t& own = connection_free_[f.own_pacer];
  own = later(std::max(own, now_), static_cast<std::int64_t>(payload * own_ps_per_byte(f)));
}

}  // namespace lockstep::packet
