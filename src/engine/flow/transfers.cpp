#include "transfers.hpp"

#include "connections.hpp"
#include "flows.hpp"
#include "lockstep/core/slot_pool.hpp"
#include "net_reduce.hpp"

namespace lockstep::flow_detail {

Transfers::Transfers(const EngineInput& input, const ClassMap& map, Events& events,
                     RouteTable& routes, Flows& flows, Ranks& ranks, Connections& connections,
                     NetReduce& net_reduce, const LinkLoadView& load, Asymmetry& asymmetry)
    : in_(input),
      map_(map),
      events_(events),
      routes_(routes),
      flows_(flows),
      ranks_(ranks),
      connections_(connections),
      net_reduce_(net_reduce),
      load_(load),
      asymmetry_(asymmetry),
      link_bytes_(input.topology->num_directed_links(), 0.0) {}

std::uint32_t Transfers::new_transfer() {
  const std::uint32_t t = take_slot(transfers_, free_);
  transfers_[t] = Transfer{};
  return t;
}

std::uint32_t Transfers::point_to_point(const PostedOp& send, const PostedOp& recv, Rank to,
                                        std::uint16_t channel, std::uint32_t queue) {
  const Rank sender = send.rank;
  std::uint32_t route;
  if (in_.router->policy() == RoutingPolicy::Adaptive) {
    route = routes_.load_route(*in_.router, in_.placement[map_.real(sender)], in_.placement[to],
                               channel, load_);
  } else {
    route = routes_.class_route(sender, to, channel);
    if (route == RouteTable::kNoRoute) {
      record(asymmetry_, Asymmetry::Paths);
      return kNoTransfer;
    }
    // Two link orbits met: live flows on the routes that moved get their new constraints.
    if (routes_.any_retargeted()) flows_.readd(routes_.take_retargeted());
  }
  const std::uint32_t t = new_transfer();
  Transfer& tr = transfers_[t];
  tr.src = sender;
  tr.dst = recv.rank;
  tr.send_op = send.op;
  tr.recv_op = recv.op;
  tr.wire_bytes = static_cast<double>(send.bytes) / in_.options.transfer_efficiency;
  tr.route = route;
  tr.queue = queue;
  tr.channel = channel;
  return t;
}

std::uint32_t Transfers::net_leg(TransferKind kind, const PostedOp& member, std::uint32_t group,
                                 std::uint32_t round, std::uint32_t index, std::uint64_t bytes,
                                 std::uint32_t route) {
  const std::uint32_t t = new_transfer();
  Transfer& tr = transfers_[t];
  tr.kind = kind;
  tr.src = tr.dst = member.rank;
  tr.send_op = tr.recv_op = member.op;
  tr.group = group;
  tr.net_round = round;
  tr.member = index;
  tr.wire_bytes = static_cast<double>(bytes) / in_.options.transfer_efficiency;
  tr.route = route;
  return t;
}

// The per-message overhead when it is charged as latency after the bytes (point-to-point only:
// in-network reductions pay none).
Time Transfers::trailing_overhead(std::uint32_t t) const {
  return in_.options.overhead_as_latency && transfers_[t].kind == TransferKind::PointToPoint
             ? in_.options.per_message_overhead
             : Time::zero();
}

void Transfers::begin(std::uint32_t t) {
  Transfer& tr = transfers_[t];
  const ClassRoute& route = routes_[tr.route];
  tr.pending = static_cast<std::uint32_t>(route.shares.size());
  tr.streaming = 0;
  // A sender's channel limit (EngineOptions::channel_send_bandwidth) binds its own sends only.
  // A send whose data goes to fan_out peers at once (Op::fan_out) counts 1 / fan_out there.
  const bool capped = in_.options.channel_send_bandwidth.bytes_per_second() > 0 &&
                      tr.kind == TransferKind::PointToPoint;
  const double cap_share = capped ? 1.0 / ranks_.op(tr.src, tr.send_op).fan_out : 1.0;
  for (std::uint32_t s = 0; s < route.shares.size(); ++s) {
    const ShareRoute& share = route.shares[s];
    const double bytes = tr.wire_bytes * share.fraction;
    if (share.uses.empty() || bytes <= 0) {
      events_.push(events_.now() + share.latency + trailing_overhead(t), EventKind::Delivered, t);
      continue;
    }
    flows_.start(t, tr.route, s, bytes, capped ? flows_.channel_cap(tr.src, tr.channel) : kNone,
                 cap_share);
    ++tr.streaming;
  }
  if (tr.streaming == 0 && tr.queue != kNone) connections_.stream_done(tr.queue);
}

void Transfers::streamed(std::uint32_t t, std::uint32_t share) {
  Transfer& tr = transfers_[t];
  events_.push(events_.now() + routes_[tr.route].shares[share].latency + trailing_overhead(t),
               EventKind::Delivered, t);
  if (--tr.streaming == 0 && tr.queue != kNone) connections_.stream_done(tr.queue);
}

void Transfers::complete(std::uint32_t t) {
  const Transfer tr = transfers_[t];
  free_.push_back(t);
  routes_[tr.route].carried += tr.wire_bytes;
  routes_.release(tr.route, link_bytes_);
  switch (tr.kind) {
    case TransferKind::PointToPoint:
      ++done_;
      ranks_.finish_op(tr.src, tr.send_op);
      ranks_.finish_op(tr.dst, tr.recv_op);
      break;
    case TransferKind::NetUp:
      net_reduce_.member_done(tr.group, tr.net_round, kNone);
      break;
    case TransferKind::NetDown:
      net_reduce_.member_done(tr.group, tr.net_round, tr.member);
      break;
  }
}

}  // namespace lockstep::flow_detail
