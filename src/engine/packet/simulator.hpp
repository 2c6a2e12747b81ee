#pragma once
// The packet engine's core (src/engine/packet/*.cpp; not a public API). One Simulator per run.
// Everything is indexed: packets in a pool, links and devices by their topology ids, flows in a
// recycled slot vector; events are plain structs in a radix heap ordered by (time, sequence)
// (event_queue.hpp). Source routes are spans of directed link ids in one arena; a packet walks its
// route by index, so forwarding does no lookup. The records it keeps are in packet.hpp (packets),
// link_state.hpp (links, devices, lanes) and flow.hpp (transfers and routes).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "buffers.hpp"
#include "event_queue.hpp"
#include "flow.hpp"
#include "huge_pages.hpp"
#include "link_state.hpp"
#include "lockstep/core/rng.hpp"
#include "lockstep/engine/engine.hpp"
#include "lockstep/engine/packet/packet_config.hpp"
#include "lockstep/engine/packet/packet_engine.hpp"
#include "packet.hpp"
#include "program_runner.hpp"
#include "uec.hpp"

namespace lockstep::packet {

class Simulator {
 public:
  Simulator(const PacketConfig& config, const EngineInput& input, PacketStats& stats);
  /// `progress`, when set, hears the share of the programs' ops done now and then.
  void run(ProgressHook* progress = nullptr);
  RunResult result();

  // Called by the program layer.
  // `label` is the sender's channel; a capped channel (channel_send_bandwidth) paces the
  // transfer's packets together with the channel's other sends, its bytes counting `cap_share`.
  void start_transfer(std::uint32_t transfer, DeviceId src, DeviceId dst, std::uint64_t bytes,
                      std::uint64_t label, std::int64_t ready_at, double cap_share = 1);
  void schedule_op_done(Rank r, OpIndex i, std::int64_t at);
  std::int64_t now() const { return now_; }
  const Topology& topology() const { return *topo_; }

 private:
  friend class ProgramRunner;
  // Set-up (link_setup.cpp), forwarding and flow control (simulator.cpp), PFC frames (pfc.cpp).
  void setup_links();
  void try_transmit(std::uint32_t link);
  /// `queue`: the egress queue the packet was taken from (its bytes are released from it).
  void start_tx(std::uint32_t link, std::uint32_t pkt, std::uint32_t ingress, std::uint32_t queue);
  void on_link_free(std::uint32_t link, std::uint32_t ingress);
  /// `in` is the link the packet arrives on, `out` the next one on its route (kNil at the
  /// destination): the event carries them so that their state loads alongside the packet's.
  void on_arrive(std::uint32_t pkt, std::uint32_t in, std::uint32_t out);
  /// The packet of `wire` bytes that came over (ingress, lane) has left `dev` by (link, queue).
  void release(std::uint32_t ingress, std::uint8_t lane, std::uint32_t wire, std::uint32_t dev,
               std::uint32_t link, std::uint32_t queue);
  bool admit(std::uint32_t dev, std::uint32_t out, std::uint32_t queue, std::uint32_t wire);
  /// PFC: the far end of `ingress` changed its XOFF state of `lane`; a PAUSE or RESUME frame goes
  /// out on the reverse link at its next packet boundary.
  void signal_pfc(std::uint32_t ingress, std::uint8_t lane);
  /// Puts one PFC frame with the pending lanes' changes on `link` (idle); false when none changed.
  bool send_pfc_frame(std::uint32_t link);
  /// `adaptive: switch`: the least-loaded output among the packet's equal-cost next hops at the
  /// switch it reached over `in` (moves the packet onto that path); `out` when there is no other.
  std::uint32_t adaptive_next_hop(Packet& p, std::uint32_t in, std::uint32_t out);
  void enqueue(std::uint32_t link, std::uint32_t q, std::uint32_t pkt);
  std::uint32_t dequeue(std::uint32_t link, std::uint32_t q);
  /// True when a packet of `wire` bytes may leave on (link, lane) now; collects credits that have
  /// come back and, when still short, arranges a wake-up for the next return.
  bool can_send(std::uint32_t link, std::uint8_t lane, std::uint32_t wire);
  /// Credits usable now without side effects (for the deadlock analysis).
  std::int64_t credits_due(std::size_t li) const;  // in blocks (LinkState::credit_shift)
  /// Prefetches a packet's first and last byte. A packet is 48 bytes, so half of them straddle
  /// two cache lines (those at 48 and 32 bytes into a line), and on_arrive reads both: its flags
  /// and wire size lie in the last 16 bytes. Prefetching the first alone left that line a miss
  /// at the arrival's first test (a third of on_arrive's samples in `perf`).
  void prefetch_packet(std::uint32_t pkt) const {
    const char* p = reinterpret_cast<const char*>(&packets_[pkt]);
    __builtin_prefetch(p);
    __builtin_prefetch(p + sizeof(Packet) - 1);
  }
  /// Prefetches both cache lines of a LaneState.
  void prefetch_lane(std::size_t li) const {
    const char* p = reinterpret_cast<const char*>(&lane_[li]);
    __builtin_prefetch(p);
    __builtin_prefetch(p + 64);
  }
  /// Adds the credits whose return time has come.
  void collect_credits(LaneState& lane);
  void return_credits(std::uint32_t link, std::uint8_t lane, std::uint32_t wire);
  std::uint32_t alloc_packet();
  void free_packet(std::uint32_t pkt);
  /// What a packet that reached its end carried, copied out: its slot is freed at once, and a
  /// packet sent in reply may take it.
  struct Arrived {
    std::uint32_t flow, seq, payload;
    std::uint8_t flags;
  };
  /// `pkt` reached its destination (receiver or sender): copies it out, takes it off the
  /// network, frees its slot and counts it in `delivered`.
  Arrived take_arrived(std::uint32_t pkt, std::uint64_t& delivered);
  std::size_t qidx(std::uint32_t link, std::uint32_t q) const { return link * queues_ + q; }
  std::size_t lidx(std::uint32_t link, std::uint8_t lane) const { return link * lanes_ + lane; }
  /// Credits a packet of `wire` bytes takes on `link`: whole blocks.
  std::int64_t credit_blocks(std::uint32_t link, std::uint32_t wire) const {
    const std::uint8_t shift = links_[link].credit_shift;
    return (static_cast<std::int64_t>(wire) + (std::int64_t{1} << shift) - 1) >> shift;
  }

  // Transport: the sender (transport.cpp), the receiver (receiver.cpp), control packets at the
  // sender (sender_feedback.cpp).
  std::uint32_t pick_injection(std::uint32_t link);
  std::uint32_t make_packet(std::uint32_t flow, std::uint32_t seq);
  bool next_seq(Flow& f, std::uint32_t& seq);
  std::uint32_t choose_path(Flow& f);
  void ring_add(std::uint32_t flow);
  void ring_remove(std::uint32_t flow);
  void wake_link(std::uint32_t link, std::int64_t at);
  void on_deliver(std::uint32_t pkt);
  /// The receiver's acknowledgement policy for a data packet that arrived (`before`: its
  /// cumulative point before this one).
  void acknowledge(std::uint32_t flow, std::uint32_t seq, std::uint32_t before, bool fresh,
                   bool ecn);
  /// Puts a control packet (`flags`: 0 for an ACK, kNack, kCnp, plus kEcn) on the reverse route.
  /// `unreported`: a packet arrived but left out of the ACK's SACK bitmap (kNil: none).
  void send_control(std::uint32_t flow, std::uint8_t flags, std::uint32_t seq, std::uint32_t cum,
                    std::uint32_t unreported = kNil);
  /// UEC's ACKs carry a SACK bitmap (PacketConfig::sack_bitmap) on the per-packet receiver.
  bool sack_bitmap(const Flow& f) const {
    return cfg_.sack_bitmap && reliable(f) && !f.got.empty();
  }
  static constexpr std::uint32_t kSackBits = 64;
  void on_ack_timer(std::uint32_t flow, std::uint32_t gen);
  /// A control packet reached the sender.
  void on_control(std::uint32_t pkt);
  /// `sack`: the ACK's SACK bitmap (bit i: packet cum + i arrived), 0 without one.
  void on_ack(Flow& f, std::uint32_t seq, std::uint32_t cum, bool ecn, bool nack,
              std::uint64_t sack = 0);
  /// One packet newly acknowledged: window and congestion control (`rtt`: the ACK's sample).
  void acked_one(Flow& f, std::uint32_t seq, double rtt, bool ecn);
  /// The link a packet came in over (kNil at its first hop).
  std::uint32_t ingress_of(const Packet& p) const { return p.in; }
  /// Sets a packet at its route's first link.
  static void place(Packet& p, const PathRef& path) {
    p.at = path.offset;
    p.hops = path.len;
    p.hop = 0;
    p.in = kNil;
    p.nxt = path.second;
  }
  void on_flow_timer(std::uint32_t flow, std::uint32_t gen);
  void on_cc_timer(std::uint32_t flow, std::uint32_t gen);
  // InfiniBand congestion control (ib_cc.cpp).
  void mark_fecn(Packet& p, std::uint32_t dev, std::uint32_t out, std::int64_t queued);
  void on_becn(std::uint32_t flow);
  void on_ib_cc_timer(std::uint32_t flow, std::uint32_t gen);
  void detect_losses(Flow& f);
  void congestion_signal(Flow& f, bool severe);
  void arm_rto(Flow& f);
  void receiver_complete(std::uint32_t flow);
  void maybe_free_flow(std::uint32_t flow);
  /// Acknowledged, windowed transport: on lossy fabrics, for transfers that use the fabric.
  bool reliable(const Flow& f) const { return reliable_ && f.fabric; }
  PathSet path_set(DeviceId src, DeviceId dst, std::uint64_t label);
  /// The flow's last new packet is out of its port at `sent`: the connection's next transfer
  /// may start, after its own overhead.
  void release_connection(std::uint32_t flow, std::int64_t sent);
  // The channel pacer (channel_pacer.cpp): attach a flow to its (GPU, channel)'s pacer; count it
  // among the channel's streaming connections (or stop); when its next packet may go; charge a
  // packet sent.
  void attach_pacer(Flow& f, std::uint64_t label, double cap_share, double eff);
  void pacer_streaming(Flow& f, bool streaming);
  double own_ps_per_byte(const Flow& f) const;
  std::int64_t pacer_ready(const Flow& f) const;
  void pacer_sent(Flow& f, std::uint32_t payload);

  // Ultra Ethernet (uec_cc.cpp, uec_delivery.cpp, uec_link.cpp).
  bool uec_nscc() const {
    return cfg_.congestion == CongestionControl::Nscc ||
           cfg_.congestion == CongestionControl::NsccRccc;
  }
  bool uec_rccc() const {
    return cfg_.congestion == CongestionControl::Rccc ||
           cfg_.congestion == CongestionControl::NsccRccc;
  }
  bool rod(const Flow& f) const { return cfg_.delivery == Delivery::Rod && reliable(f); }
  void uec_start(Flow& f, const PathRef& path);
  void uec_on_ack(Flow& f, double rtt, bool ecn);
  bool uec_quick_adapt(Flow& f);
  bool uec_may_send(const Flow& f, std::uint32_t seq, std::uint32_t wire) const;
  void uec_sent(Flow& f, std::uint32_t seq, std::uint32_t wire);
  /// RCCC at the receiver: a packet of `wire` bytes (as sent) arrived; grants what it frees.
  void uec_arrived(std::uint32_t flow, std::uint32_t wire, bool fresh);
  /// RCCC at the sender: a grant arrived saying `total` bytes (mod 2^32) granted so far.
  void uec_on_credit(std::uint32_t flow, std::uint32_t total);
  std::uint32_t rod_path(const Flow& f) const;
  std::uint32_t rod_ack_path(const Flow& f) const;  // an index into f.ack_paths
  /// ROD's receiver: true when the packet is taken as usual, false when it is discarded (trimmed,
  /// or past a gap), having NACKed the expected one.
  bool rod_accept(std::uint32_t flow, std::uint32_t seq, std::uint8_t flags);
  void rod_go_back(Flow& f, std::uint32_t seq);
  void setup_cables();
  /// Extra time the packet's transmission on `link` takes for link-level retry (0 without); a
  /// frame corrupted without LLR is marked to be discarded where it arrives.
  std::int64_t link_retry(std::uint32_t link, Packet& p, std::int64_t ser);
  bool discard_corrupted(std::uint32_t pkt, std::uint32_t in);

  // Watchdog (deadlock.cpp).
  void on_watchdog();
  /// Looks for a cycle of blocked links; with `force` (the run stalled) reports the blocked
  /// links even without a cycle. Fills stats_.deadlock; true when something was reported.
  bool find_deadlock(bool force);

  const PacketConfig& cfg_;
  const Topology* topo_;
  const EngineInput& input_;
  PacketStats& stats_;
  EventQueue events_;
  std::int64_t now_ = 0;
  bool past_range_ = false;    // the next event lay at kNever: the run's end is infinite
  std::int64_t watchdog_ = 0;  // cfg_.watchdog, or longer where one hop takes longer
  Rng rng_;
  // lanes_ = classes_ (a flow's lane: its channel modulo classes_) x levels_ (lane levels).
  std::uint32_t lanes_ = 1, queues_ = 2, classes_ = 1, levels_ = 1;
  bool lossy_ = false, reliable_ = false, multipath_ = false;
  // A transfer's bytes become fabric_efficiency_ or board_efficiency_ x its payload on the wire
  // (transport.cpp; set up in the constructor).
  double fabric_efficiency_ = 1, board_efficiency_ = 1;

  std::vector<LinkState> links_;
  std::vector<DeviceState> devices_;
  Buffers buffers_;              // `buffers: {model: as_built}` (buffers.cpp)
  std::int64_t max_wire_ = 0;    // the largest packet on any link
  std::vector<Fifo> fifos_;      // link x (control + lanes)
  std::vector<LaneState> lane_;  // link x lane (link_state.hpp)
  std::vector<double> link_bytes_;
  // Per link, what every hop updates for the telemetry in one 40-byte record (copied into
  // link_bytes_ and stats_.links when the run ends): as five arrays they were five cache misses
  // per hop at 8,192 hosts. `first` is kNever until the link sends. `bytes` are wire bytes,
  // `payload` the transfers' own bytes in the data packets (their inflation undone).
  struct LinkTally {
    double bytes = 0;
    double payload = 0;
    std::int64_t first = kNever, last = 0;
    double peak_queue = 0;
  };
  std::vector<LinkTally> tally_;
  void flush_tallies();
  // Both lines of the link's queue histogram: a queue of 32 KiB or more counts in the second
  // (buckets 16-31), where a fifth of on_arrive's samples waited in `perf` (UEC, 1,024 hosts).
  void prefetch_tally(std::uint32_t link) const {
    __builtin_prefetch(&tally_[link], 1);
    const std::uint32_t* hist = &stats_.links.queue_hist[link * LinkCounters::kQueueBuckets];
    __builtin_prefetch(hist, 1);
    __builtin_prefetch(hist + 16, 1);
  }
  // Per directed link: the bytes each input of the far device may have queued at one of its
  // outputs while this link's credits still cover its round trip (the credits beyond it, shared
  // by the far device's inputs); kNever where nothing limits it (no credits). setup_links.
  std::vector<std::int64_t> incast_room_;
  PacketPool packets_;
  // The SACK bitmap of each control packet in flight, by packet slot (only under sack_bitmap;
  // kept apart so that the packets every hop reads stay 40 bytes).
  std::vector<std::uint64_t> sack_;
  std::uint64_t in_network_ = 0;
  std::vector<Flow> flows_;
  // The lines of a Flow that a packet reaching its end reads (delivery and acknowledgement at
  // the receiver, or the ACK's handling at the sender: counters, reverse routes, window and the
  // per-packet arrays' handles). In `perf` (UEC, 1,024 hosts) the flow's record was a miss in
  // take_arrived, on_deliver, on_ack and send_control.
  void prefetch_flow(std::uint32_t flow) const {
    const char* f = reinterpret_cast<const char*>(&flows_[flow]);
    for (std::size_t at = 0; at < sizeof(Flow); at += 64) __builtin_prefetch(f + at, 1);
  }
  std::vector<std::uint32_t> free_flows_;
  PerPacketArena per_packet_;  // the flows' per-packet arrays

  std::vector<DirLinkId> arena_;
  std::vector<PathRef> paths_;
  std::unordered_map<RouteKey, PathSet, RouteKeyHash> route_cache_;
  // Transfers of one connection go out in order, as a queue pair's work requests: the one
  // sending new packets and the last one waiting (chained by Flow::conn_next).
  struct Connection {
    std::uint32_t sending = kNil, last = kNil;
  };
  std::unordered_map<RouteKey, Connection, RouteKeyHash> connections_;
  // One pacer per (sending GPU, channel) under EngineOptions::channel_send_bandwidth: the time
  // from which the channel may put its next packet on the wire (one thread block's speed, shared
  // by its concurrent sends as in the flow engine) and the weight (cap_share) of its connections
  // streaming now, which sets each one's guaranteed share (pacer_ready).
  struct ChannelPacer {
    std::int64_t free = 0;
    double active_weight = 0;
  };
  std::vector<ChannelPacer> channel_pacers_;
  // Per connection (sender, receiver, channel) under the same limit: the time from which its
  // max-min share lets it send (channel_pacer.cpp). Kept across the connection's transfers, so
  // a new transfer does not start with a fresh allowance.
  std::vector<std::int64_t> connection_free_;
  std::unordered_map<RouteKey, std::uint32_t, RouteKeyHash> connection_pacer_;
  std::unordered_map<std::uint64_t, std::uint32_t> channel_pacer_;
  std::unique_ptr<Router> own_router_;
  const Router* router_ = nullptr;
  std::vector<PathShare> scratch_paths_;
  std::vector<RcccReceiver> rccc_;   // by destination device, once RCCC has a flow
  std::vector<std::uint8_t> cable_;  // per directed link: a cable (loss_rate applies); uec_link

  std::uint64_t progress_ = 0, progress_at_watchdog_ = 0;
  bool congestion_seen_ = false;  // any pause or credit stall yet (gates deadlock analysis)
  bool watchdog_armed_ = false;
  bool stopped_ = false;
  ProgramRunner programs_;
};

}  // namespace lockstep::packet
