#pragma once
// Transfers in flight in a flow-engine run (internal; docs/flow-engine.md "Timing of one
// transfer").
//
// A transfer is a matched send/recv (or one member's leg of an in-network reduction: up to the
// root switch or down from it) over a class route. It starts after the per-message overhead
// (launch), streams one flow per path share of its route (Flows), each share's bytes arrive a
// path latency after its flow has streamed, and when every share has arrived the transfer is
// complete: its ops finish (Ranks) or its NetReduce round hears of it (NetReduce).
//
// Owns the transfer records and the bytes carried per link (link_bytes, an output). Relies on the
// options, the router (adaptive routing), the events, the route table, Flows, Ranks,
// Connections and NetReduce; records Asymmetry::Paths when a class route cannot be built.
#include <cstdint>
#include <vector>

#include "asymmetry.hpp"
#include "class_map.hpp"
#include "events.hpp"
#include "lockstep/engine/engine.hpp"
#include "ranks.hpp"
#include "route_table.hpp"

namespace lockstep::flow_detail {

class Connections;
class Flows;
class NetReduce;

enum class TransferKind : std::uint8_t { PointToPoint, NetUp, NetDown };

struct Transfer {
  TransferKind kind = TransferKind::PointToPoint;
  Rank src = 0, dst = 0;  // simulated ranks (NetUp/NetDown: the member)
  OpIndex send_op = 0, recv_op = 0;
  std::uint32_t route = 0;
  std::uint32_t pending = 0;    // shares not yet delivered
  std::uint32_t group = 0;      // NetReduce group
  std::uint32_t net_round = 0;  // which of the group's NetReduce rounds (see Slot::net_round)
  std::uint32_t member = 0;     // NetDown: index of the member in its round's arrivals
  std::uint32_t queue = kNone;  // connection (point-to-point only)
  std::uint16_t channel = 0;    // point-to-point: the connection's channel
  std::uint32_t streaming = 0;  // flows still in their bandwidth phase
  double wire_bytes = 0;        // per member
};

class Transfers {
 public:
  static constexpr std::uint32_t kNoTransfer = kNone;

  Transfers(const EngineInput& input, const ClassMap& map, Events& events, RouteTable& routes,
            Flows& flows, Ranks& ranks, Connections& connections, NetReduce& net_reduce,
            const LinkLoadView& load, Asymmetry& asymmetry);

  // A matched send and recv on connection `queue` (`to` and `channel` as the sender's
  // representative sees them), or kNoTransfer when its class route cannot be built.
  std::uint32_t point_to_point(const PostedOp& send, const PostedOp& recv, Rank to,
                               std::uint16_t channel, std::uint32_t queue);
  // A NetReduce member's leg up to or down from the root switch over `route`.
  std::uint32_t net_leg(TransferKind kind, const PostedOp& member, std::uint32_t group,
                        std::uint32_t round, std::uint32_t index, std::uint64_t bytes,
                        std::uint32_t route);
  // Starts t after the per-message overhead (or at once when it is paid after the bytes).
  void launch(std::uint32_t t) {
    const EngineOptions& o = in_.options;
    if (o.per_message_overhead > Time::zero() && !o.overhead_as_latency) {
      events_.push(events_.now() + o.per_message_overhead, EventKind::TransferStart, t);
    } else {
      begin(t);
    }
  }
  // Starts t's flows now (a TransferStart event, or a NetReduce leg).
  void begin(std::uint32_t t);
  // A flow of t has streamed its last byte: the share arrives after its path latency.
  void streamed(std::uint32_t t, std::uint32_t share);
  // A share of t has arrived.
  void delivered(std::uint32_t t) {
    if (--transfers_[t].pending == 0) complete(t);
  }

  std::uint32_t route(std::uint32_t t) const { return transfers_[t].route; }
  std::uint64_t completed() const { return done_; }  // point-to-point transfers
  std::vector<double>& link_bytes() { return link_bytes_; }

 private:
  friend class SteadyState;  // writes the live transfers and moves their op indices on
  std::uint32_t new_transfer();
  Time trailing_overhead(std::uint32_t t) const;
  void complete(std::uint32_t t);

  const EngineInput& in_;
  const ClassMap& map_;
  Events& events_;
  RouteTable& routes_;
  Flows& flows_;
  Ranks& ranks_;
  Connections& connections_;
  NetReduce& net_reduce_;
  const LinkLoadView& load_;
  Asymmetry& asymmetry_;
  std::vector<Transfer> transfers_;
  std::vector<std::uint32_t> free_;
  std::uint64_t done_ = 0;
  std::vector<double> link_bytes_;  // per directed link, from released one-off routes
};

}  // namespace lockstep::flow_detail
