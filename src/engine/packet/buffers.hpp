#pragma once
// Switch buffers as built (`buffers: {model: as_built}`; docs/packet-engine.md "Buffers as
// built"). A switch chip stores packets in cells of one buffer. Each egress queue (lossy
// fabrics) or ingress priority group (PFC) first uses its own reserve; the rest of the buffer,
// less every lossless group's PFC headroom, is a pool the queues share under Choudhury and
// Hahne's dynamic threshold ("Dynamic queue length thresholds for shared-memory packet
// switches", IEEE/ACM ToN 6(2), 1998): a queue may hold alpha x the pool still free. A group
// that passes its threshold sends XOFF; what arrives after that (the bytes in flight on the
// cable) goes to its headroom, sized by the 802.1Qbb delay model.
#include <cstdint>
#include <vector>

#include "lockstep/engine/packet/packet_config.hpp"
#include "lockstep/topology/graph.hpp"

namespace lockstep::packet {

/// A PFC frame on the wire: a MAC Control frame of the minimum frame size, 64 B (IEEE 802.3
/// clause 31, its PFC opcode 0x0101 in Annex 31D, added by IEEE 802.1Qbb), plus the 8 B preamble
/// and SFD and the 12 B inter-frame gap. One frame carries all eight priorities' states.
inline constexpr std::uint32_t kPfcFrameWire = 84;

/// One switch's buffer.
struct SwitchPool {
  std::int64_t shared = 0;  // the pool the dynamic thresholds share (bytes)
  std::int64_t used = 0;    // bytes of it in use
  std::int64_t cell = 1;    // a packet takes whole cells
  std::int64_t reserved_queue = 0, reserved_pg = 0;
  double alpha = 1, ingress_alpha = 1;
  std::int64_t ecn_kmin = 0, ecn_kmax = 0;
  double ecn_pmax = 0;
};

/// One ingress priority group (a link's lane at its far switch) under PFC.
struct PriorityGroup {
  std::int64_t bytes = 0;       // charged to its reserve and the shared pool
  std::int64_t headroom = 0;    // charged to its headroom: arrived after its XOFF, not yet gone
  std::int64_t since_xoff = 0;  // every byte that arrived since its XOFF (gone or not)
};

class Buffers {
 public:
  /// Sizes every switch's pool and every lossless link's headroom; throws InputError
  /// (packet.buffers) where reserves and headroom exceed a switch's buffer.
  void setup(const PacketConfig& cfg, const Topology& topo, std::uint32_t queues,
             std::uint32_t lanes, std::int64_t max_wire);
  bool on() const { return on_; }
  SwitchPool& pool(std::uint32_t dev) { return pools_[dev]; }
  const SwitchPool& pool(std::uint32_t dev) const { return pools_[dev]; }
  /// Bytes a packet of `wire` bytes takes in `dev`'s buffer: whole cells.
  std::int64_t cells(std::uint32_t dev, std::uint32_t wire) const;

  /// Lossy fabrics: whether a packet may join egress queue `queue` (link x queue index) of
  /// `dev`: within the queue's reserve, or, after joining, the queue's use of the shared pool is
  /// at most alpha x the pool then free. For one queue alone in an empty pool it stops at
  /// alpha / (1 + alpha) x the pool.
  bool admit(std::uint32_t dev, std::size_t queue, std::uint32_t wire) const;
  void add_egress(std::uint32_t dev, std::size_t queue, std::uint32_t wire);
  void remove_egress(std::uint32_t dev, std::size_t queue, std::uint32_t wire);
  /// Starts loading egress queue `queue`'s counter (Simulator::run, a hop ahead).
  void prefetch(std::size_t queue) const {
    if (on_) __builtin_prefetch(&queue_bytes_[queue], 1);
  }

  /// PFC: a packet arrives in group `pg` (link x lane) of `dev`, whose XOFF is `paused` already.
  /// Returns true when the group now passes its XOFF threshold (a static `xoff` when positive,
  /// else ingress_alpha x the free pool beyond its reserve).
  bool add_ingress(std::uint32_t dev, std::size_t pg, std::uint32_t wire, bool paused,
                   std::int64_t xoff);
  /// The packet leaves: its cells return to the group's headroom first (so that it is free for
  /// the next PAUSE), then to the pool. True when the paused group may resume: its headroom
  /// empty and its bytes at or below `xon` when positive, else `xon_gap` below its dynamic
  /// threshold.
  bool remove_ingress(std::uint32_t dev, std::size_t pg, std::uint32_t wire, std::int64_t xon,
                      std::int64_t xon_gap);
  std::int64_t headroom_size(std::uint32_t link) const { return headroom_[link]; }
  /// Bytes still booked on the egress queues, each queue's count taken as its magnitude: 0 once
  /// every queue has drained, unless a packet was released from a queue it was not booked on.
  std::int64_t egress_booked() const;
  const PriorityGroup& group(std::size_t pg) const { return pg_[pg]; }

  // Headroom: the most bytes that reached one group between its XOFF and its XON (what the
  // headroom must hold when nothing leaves: the bytes in flight), and the packets that found
  // its headroom full (a switch drops them; the engine keeps and counts them, as its lossless
  // runs have no retransmission).
  std::int64_t peak_headroom = 0;
  std::uint64_t headroom_overflows = 0;

 private:
  /// The part of a counter's bytes beyond its reserve, which the shared pool holds.
  static std::int64_t shared_part(std::int64_t bytes, std::int64_t reserve) {
    return bytes > reserve ? bytes - reserve : 0;
  }

  bool on_ = false;
  std::vector<SwitchPool> pools_;          // per device
  std::vector<std::int64_t> queue_bytes_;  // link x queue (egress)
  std::vector<PriorityGroup> pg_;          // link x lane (ingress at the link's far switch)
  std::vector<std::int64_t> headroom_;     // per link: each of its lanes' headroom
  std::uint32_t lanes_ = 1;
};

/// The PFC headroom of one (port, priority) by the delay model of IEEE 802.1Qbb-2011 Annex N
/// with no PHY or MAC response delay (the engine has none): what the upstream sends between
/// the XOFF crossing and the PAUSE's arrival, `rate` x (2 x `latency` + the switch's
/// `switch_latency` before it counts an arriving packet), plus one largest packet at each end
/// (the one on the reverse link the PAUSE waits behind, the one on the wire when it lands) and
/// the PAUSE frame's own transmission (kPfcFrameWire at the link's rate).
std::int64_t pfc_headroom(Bandwidth rate, Time latency, Time switch_latency, std::int64_t max_wire);

}  // namespace lockstep::packet
