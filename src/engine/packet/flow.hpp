#pragma once
// The packet engine's transfers (not a public API): a flow's sender and receiver state, and the
// source routes it is sprayed or hashed over (spans of the route arena, cached per connection).
#include <cstddef>
#include <cstdint>

#include "huge_pages.hpp"
#include "lockstep/core/rng.hpp"
#include "lockstep/topology/graph.hpp"
#include "packet.hpp"
#include "uec.hpp"

namespace lockstep::packet {

struct PathRef {
  std::uint32_t offset = 0;
  std::uint16_t len = 0;
  bool on_board = true;  // every link a board trace (NVLink, xGMI, PCIe): it stays in a server
  // Its second link (kNil for one hop), which a new packet needs: no arena read at injection.
  std::uint32_t second = kNil;
  // On board: the payload of its engine packets, whole packets of its media (transport.cpp).
  std::uint32_t board_payload = 0;
  std::int64_t latency = 0;  // one-way idle latency of a small packet (for ACK/CNP delivery)
  double min_bw = 0;         // bytes/s, bottleneck of the path
};

struct RouteKey {
  DeviceId src, dst;
  std::uint64_t label;
  bool operator==(const RouteKey&) const = default;
};
struct RouteKeyHash {
  std::size_t operator()(const RouteKey& k) const {
    return static_cast<std::size_t>(mix64((std::uint64_t{k.src} << 32 | k.dst) ^ mix64(k.label)));
  }
};

struct PathSet {
  std::uint32_t first = 0;  // index into paths_
  std::uint32_t count = 0;
};

/// One transfer (a matched send/recv) on the wire, sender and receiver state together.
struct Flow {
  std::uint32_t transfer = kNil;
  DeviceId src = kNone, dst = kNone;
  std::uint32_t inject_link = kNil;
  std::uint32_t next = kNil, prev = kNil;  // ring of flows on inject_link
  PathSet paths;
  std::uint32_t spray_cursor = 0;
  std::uint8_t lane = 0;
  // Whether the transfer leaves its server (a path link that is a cable): only then is it a
  // message of the fabric's transport, with its headers, host costs and window.
  bool fabric = true;
  std::uint32_t header = 0;  // bytes per packet: the fabric's, or 0 for an on-board copy
  // The first link of its reverse routes (every one leaves the receiver's NIC port; kNil for an
  // on-board copy): a control packet is queued there without reading the route arena.
  std::uint32_t ack_link = kNil;
  std::uint64_t label = 0;         // with src and dst: its connection (one NCCL channel, one QP)
  std::uint32_t conn_next = kNil;  // the connection's next transfer, waiting for this one
  std::int64_t setup = 0;          // per-message overhead and host cost, paid before packet 1
  bool in_ring = false;
  bool sender_done = false;
  bool receiver_done = false;
  std::uint64_t bytes = 0;  // payload bytes on the wire
  std::uint32_t packets = 0;
  std::uint32_t payload = 0;  // per packet: the fabric's MTU, or the board medium's packet
  std::uint32_t last_payload = 0;
  std::int64_t start = 0;
  std::int64_t ready_at = 0;  // host cost and rate pacing: no packet before this
  // The sender's channel speed limit (EngineOptions::channel_send_bandwidth): its pacer in
  // Simulator::channel_pacers_ (kNil: none) and the ps of the channel's time a byte on the wire
  // takes (its share of the transfer's bytes, 1 / Op::fan_out, at the channel's speed).
  std::uint32_t pacer = kNil;
  double pacer_ps_per_byte = 0;
  std::int64_t pacer_slack = 0;
  // Its weight among the channel's connections (cap_share) and its connection's own clock at
  // its max-min share of the channel (Simulator::connection_free_, pacer_ready).
  double pacer_weight = 0;
  std::uint32_t own_pacer = kNil;
  std::uint32_t next_new = 0;
  std::uint32_t in_network = 0;  // packets of this flow in the pool
  // Receiver.
  std::uint32_t received = 0;
  std::uint32_t contiguous = 0;
  std::int64_t last_cnp = -1;
  // Acknowledgements: the reverse routes, packets arrived since the last ACK (the latest one and
  // whether they were ECN-marked), the delayed-ACK timer: its generation (the slot's transfer),
  // when the held ACK is due and when its one pending event fires (-1: none).
  PathSet ack_paths;
  std::uint32_t ack_cursor = 0;
  std::uint32_t rx_unacked = 0;
  std::uint32_t rx_last = 0;
  std::uint32_t ack_gen = 0;
  std::int64_t ack_deadline = -1;
  std::int64_t ack_timer_at = -1;
  bool rx_ce = false;
  // Reliable transport (lossy fabrics) and windows.
  std::uint32_t inflight = 0;
  std::uint32_t acked = 0;
  std::uint32_t lowest_unacked = 0;
  std::uint32_t scan = 0;  // loss detection cursor
  std::uint32_t retx_cursor = 0;
  std::uint32_t retx_pending = 0;
  std::uint32_t highest_acked = 0;
  std::uint32_t recovery_point = 0;
  bool in_recovery = false;
  double cwnd = 0;  // packets
  double ssthresh = 1e18;
  double srtt = 0, rttvar = 0;
  std::int64_t rto = 0;
  std::int64_t rto_deadline = -1;
  std::int64_t last_decrease = -1;
  std::uint32_t timer_gen = 0;
  // Transfers the slot has held: RCCC's receiver lists name a flow by slot and incarnation.
  std::uint32_t incarnation = 0;
  bool timer_pending = false;
  std::uint32_t marked_in_window = 0, acks_in_window = 0, window_end = 0;
  double ecn_alpha = 0;
  // DCQCN.
  double rate = 0, target_rate = 0, line_rate = 0, alpha = 1;
  std::uint32_t increase_stage = 0;
  bool cc_timer_armed = false;
  std::int64_t last_cnp_seen = -1;
  std::uint32_t ccti = 0;  // IB CC: congestion control table index (ib_cc.cpp)
  // Per packet, in the Simulator's PerPacketArena (huge_pages.hpp):
  PerPacket<std::uint8_t> state;    // the sender's (lossy / multipath)
  PerPacket<std::uint8_t> got;      // the receiver's
  PerPacket<std::int64_t> sent_at;  // latest transmission (reliable only)
  UecFlow uec;                      // NSCC, RCCC and ROD state (uec.hpp)
};

enum class PacketState : std::uint8_t { Unsent, Inflight, Lost, Acked };

}  // namespace lockstep::packet
