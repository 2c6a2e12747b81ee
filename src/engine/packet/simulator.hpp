#pragma once
// The packet engine's core (src/engine/packet/*.cpp; not a public API). One Simulator per run.
// Everything is indexed: packets in a pool, links and devices by their topology ids, flows in a
// recycled slot vector; events are plain structs in a radix heap ordered by (time, sequence)
// (event_queue.hpp). Source routes are spans of directed link ids in one arena; a packet walks its
// route by index, so forwarding does no lookup.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "buffers.hpp"
#include "event_queue.hpp"
#include "huge_pages.hpp"
#include "lockstep/core/rng.hpp"
#include "lockstep/engine/engine.hpp"
#include "lockstep/engine/packet/packet_config.hpp"
#include "lockstep/engine/packet/packet_engine.hpp"
#include "program_runner.hpp"
#include "uec.hpp"

namespace lockstep::packet {

inline constexpr std::uint32_t kNil = 0xFFFFFFFFu;

// Times are plain picoseconds here, never negative. Past Time's range an event lands at kNever,
// Time::infinite(), where the run ends; nothing wraps. For non-negative times the saturating sum
// is Time's sum (core/units.hpp): kNever plus anything stays kNever.
inline constexpr std::int64_t kNever = Time::infinite().picoseconds();
inline std::int64_t later(std::int64_t t, std::int64_t delay) {
  std::int64_t sum = 0;
  return __builtin_add_overflow(t, delay, &sum) ? kNever : sum;
}

// kCtl marks a control packet (ACK, or NACK / CNP / RCCC grant with those flags; kEcn on an
// ACK echoes the congestion marks of the packets it acknowledges). A control packet carries no
// payload: its `payload` field holds the receiver's cumulative point (every packet below it has
// arrived; a grant's: the bytes granted to the flow so far) and `seq` the packet whose arrival
// sent it. kCorrupt: a frame that failed its FCS on a cable (uec_link.cpp).
enum PacketFlag : std::uint8_t {
  kEcn = 1,
  kTrimmed = 2,
  kCtl = 4,
  kNack = 8,
  kCnp = 16,
  kCorrupt = 32,
  kGrant = 64,
};
enum HopTurn : std::uint8_t { kUp = 1, kDown = 2 };

/// 48 bytes: the run is bound by cache misses on packets, so keep them small.
struct Packet {
  std::int64_t tail = 0;  // when its last bit reaches the device it is at (cut-through bound)
  std::uint32_t flow = kNil;
  std::uint32_t seq = 0;
  // Its position in the route arena: the link it is queued for or travelling on. (Not the
  // path's index: finding the link it came in over and the next one would then read the
  // path's PathRef first, a dependent cache miss per hop at 8,192 hosts.)
  std::uint32_t at = 0;
  // The links before and after `at` on its route (kNil at either end), copied from the arena
  // when it arrives: leaving, it needs both, and reading the arena then was a cache miss behind
  // the packet's own (half of try_transmit at 8,192 hosts, the arena line long evicted).
  std::uint32_t in = kNil;
  std::uint32_t nxt = kNil;
  std::uint32_t next = kNil;  // intrusive FIFO link
  std::uint32_t wire = 0;     // bytes on the wire
  std::uint32_t payload = 0;
  std::uint16_t hop = 0;  // index in the route of the link it is queued for / travelling on
  std::uint16_t hops = 0;
  std::uint8_t lane = 0;     // on the link it is queued for / travelling on
  std::uint8_t in_lane = 0;  // on the link it arrived over (its buffer there is released)
  std::uint8_t flags = 0;
};

/// The packets in flight, in slabs of 2^17 (6 MiB: three 2 MiB pages, huge_pages.hpp) that never
/// move, with a free list through Packet::next (last freed, first reused). A vector doubling as
/// it grew held up to twice the packets at their peak, and both copies while it moved them; its
/// free list was a second vector (8 MiB at 8,192 hosts). A slot is found by one shift into a
/// table of slab pointers, which stays in cache (16 entries at 2 M packets).
class PacketPool {
 public:
  Packet& operator[](std::uint32_t i) { return slabs_[i >> kShift][i & kMask]; }
  const Packet& operator[](std::uint32_t i) const { return slabs_[i >> kShift][i & kMask]; }
  /// Slots ever used: the peak number of packets at once.
  std::uint32_t size() const { return size_; }
  std::uint32_t take() {
    if (free_ != 0xFFFFFFFFu) {
      const std::uint32_t i = free_;
      free_ = (*this)[i].next;
      return i;
    }
    if ((size_ & kMask) == 0) add_slab();
    // Constructed on first use: a slab's untouched pages take no memory (a small run, one slab).
    new (&(*this)[size_]) Packet{};
    return size_++;
  }
  void give(std::uint32_t i) {
    (*this)[i].next = free_;
    free_ = i;
  }

 private:
  static constexpr std::uint32_t kShift = 17, kMask = (1u << kShift) - 1;
  static constexpr std::size_t kSlabBytes = sizeof(Packet) << kShift;
  static_assert(kSlabBytes % kHugePage == 0);
  static_assert(std::is_trivially_destructible_v<Packet>);  // slabs are freed, not destroyed
  struct Free {
    void operator()(Packet* p) const { std::free(p); }
  };
  void add_slab() {
    void* raw = std::aligned_alloc(kHugePage, kSlabBytes);
    if (raw == nullptr) throw std::bad_alloc();
    advise_huge_pages(raw, kSlabBytes);
    slabs_.emplace_back(static_cast<Packet*>(raw));
  }
  std::vector<std::unique_ptr<Packet[], Free>> slabs_;
  std::uint32_t size_ = 0;
  std::uint32_t free_ = 0xFFFFFFFFu;
};

struct Fifo {
  std::uint32_t head = kNil;
  std::uint32_t tail = kNil;
  std::int64_t bytes = 0;
};

/// What stops a link's transmitter from overrunning the device at its far end.
enum class LinkControl : std::uint8_t { Sink, Credit, Pfc, Lossy };

// What every hop reads of a link (the packet's links in, out, and the one it leaves) in its first
// cache line, the rest in the second: at 8,192 hosts each is a miss, and the 104 bytes as they
// were laid out before straddled two or three lines at random offsets.
struct alignas(64) LinkState {
  double ps_per_byte = 0;
  std::int64_t latency = 0;
  std::int64_t last_tx = 0;      // when its latest packet started (the deadlock watch)
  std::int64_t far_latency = 0;  // the far device's port-to-port latency (DeviceState::latency)
  std::uint32_t src = kNil, dst = kNil;  // devices
  // The packet being serialised (buffer release and credit return happen when it is done).
  std::uint32_t cur_ingress = kNil;
  std::uint32_t cur_wire = 0;
  std::uint32_t inject = kNil;  // ring of flows injecting here (endpoint links)
  std::uint16_t paused = 0;     // PFC: lanes paused by the far end (bit mask)
  // PFC frames this link carries for the opposite link (its far end's ingress): the lanes whose
  // XOFF / XON state changed since the last frame, and the state that frame put on the wire.
  std::uint16_t pfc_pending = 0;
  LinkControl control = LinkControl::Sink;
  bool busy = false;
  // Between two fabric switches: whether the hop climbs (kUp) or descends (kDown) in the order
  // of (tier, device id); a packet changes lane level where a kDown hop meets a kUp hop.
  std::uint8_t turn = 0;
  // Credits count blocks of 2^credit_shift bytes: 64 B on InfiniBand cables (IBTA Vol. 1,
  // 7.9.4), bytes on board links; a packet takes ceil(wire / block) of them.
  std::uint8_t credit_shift = 0;
  std::uint8_t rr_lane = 0;
  std::uint8_t cur_in_lane = 0;  // its lane on the link it came in over
  std::uint8_t cur_queue = 0;    // the output queue it left (0 control, else lane + 1)
  bool to_endpoint = false;      // the far device is a GPU (DeviceState::endpoint)
  // Second line: injection, and PFC's thresholds for this link's ingress at the far end and
  // its frames (a PFC fabric's arrival reads xoff here; last_tx, which every packet's start
  // writes, stays in the first).
  std::int64_t xoff = 0, xon = 0;
  std::int64_t wake_at = -1;
  std::uint32_t inject_count = 0;
  std::uint32_t wake_gen = 0;
  std::uint16_t pfc_sent = 0;
};
static_assert(sizeof(LinkState) == 128 && offsetof(LinkState, xoff) == 64);

struct DeviceState {
  std::int64_t buffer = 0;  // shared buffer capacity (bytes), lossy admission
  std::int64_t used = 0;
  std::int64_t latency = 0;  // switch port-to-port latency
  bool endpoint = false;     // a GPU: sources and sinks traffic, never forwards
};

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
  std::uint32_t header = 0;        // bytes per packet: the fabric's, or 0 for an on-board copy
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

/// Credits on their way back to a transmitter, oldest first: a few inline (about as many as
/// one link latency holds at line rate, so the usual case needs no other memory), the rest
/// in an overflow ring that grows by doubling when full. (A vector appended to and consumed from
/// the front kept every return a busy link ever had until 4,096 were consumed: 49 MB of the
/// 333 MB heap at 8,192 hosts; the ring holds what is in flight, rounded up to a power of two.)
class CreditReturns {
 public:
  bool empty() const { return count_ == 0; }
  std::int64_t front_time() const { return at_[head_]; }
  std::uint32_t front_wire() const { return wire_[head_]; }
  void push_back(std::int64_t at, std::uint32_t wire) {
    if (count_ == kInline || ring_count_ > 0) {
      if (ring_count_ == ring_size()) grow();
      ring_[(ring_head_ + ring_count_) & (ring_size() - 1)] = {at, wire};
      ++ring_count_;
      return;
    }
    const auto i = static_cast<std::uint8_t>((head_ + count_) % kInline);
    at_[i] = at;
    wire_[i] = wire;
    ++count_;
  }
  void pop_front() {
    head_ = static_cast<std::uint8_t>((head_ + 1) % kInline);
    --count_;
    // Keep the inline part in front: refill it from the ring, which stays in order behind.
    while (count_ < kInline && ring_count_ > 0) {
      const auto i = static_cast<std::uint8_t>((head_ + count_) % kInline);
      at_[i] = ring_[ring_head_].at;
      wire_[i] = ring_[ring_head_].wire;
      ++count_;
      ring_head_ = (ring_head_ + 1) & (ring_size() - 1);
      --ring_count_;
    }
  }
  /// Calls f(at, wire) for each return, oldest first, while f returns true.
  template <class F>
  void for_each(F f) const {
    for (std::uint8_t k = 0; k < count_; ++k)
      if (!f(at_[(head_ + k) % kInline], wire_[(head_ + k) % kInline])) return;
    for (std::uint32_t k = 0; k < ring_count_; ++k) {
      const Entry& e = ring_[(ring_head_ + k) & (ring_size() - 1)];
      if (!f(e.at, e.wire)) return;
    }
  }
  /// Entries the ring can hold without growing (0 until the inline part first overflows).
  std::uint32_t ring_size() const { return ring_ ? std::uint32_t{1} << ring_log2_ : 0; }

 private:
  struct Entry {
    std::int64_t at;
    std::uint32_t wire;
  };
  void grow() {
    const std::uint32_t n = ring_size();
    const std::uint8_t log2 = ring_ ? static_cast<std::uint8_t>(ring_log2_ + 1) : 3;
    auto bigger = std::make_unique<Entry[]>(std::size_t{1} << log2);
    for (std::uint32_t k = 0; k < ring_count_; ++k) bigger[k] = ring_[(ring_head_ + k) & (n - 1)];
    ring_ = std::move(bigger);
    ring_log2_ = log2;
    ring_head_ = 0;
  }
  static constexpr std::uint8_t kInline = 5;
  std::uint8_t head_ = 0, count_ = 0;
  std::uint8_t ring_log2_ = 0;
  std::uint32_t ring_head_ = 0, ring_count_ = 0;
  std::int64_t at_[kInline] = {};
  std::uint32_t wire_[kInline] = {};
  std::unique_ptr<Entry[]> ring_;  // a pointer, not a vector: LaneState stays two cache lines
};

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
  // Topology and buffers (simulator.cpp).
  void setup_links();
  void try_transmit(std::uint32_t link);
  void start_tx(std::uint32_t link, std::uint32_t pkt, std::uint32_t ingress);
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
  struct LaneState;
  void prefetch_lane(std::size_t li) const {  // both cache lines of a LaneState
    const char* p = reinterpret_cast<const char*>(&lane_[li]);
    __builtin_prefetch(p);
    __builtin_prefetch(p + 64);
  }
  /// Adds the credits whose return time has come.
  void collect_credits(LaneState& lane);
  void return_credits(std::uint32_t link, std::uint8_t lane, std::uint32_t wire);
  std::uint32_t alloc_packet();
  void free_packet(std::uint32_t pkt);
  std::size_t qidx(std::uint32_t link, std::uint32_t q) const { return link * queues_ + q; }
  std::size_t lidx(std::uint32_t link, std::uint8_t lane) const { return link * lanes_ + lane; }
  /// Credits a packet of `wire` bytes takes on `link`: whole blocks.
  std::int64_t credit_blocks(std::uint32_t link, std::uint32_t wire) const {
    const std::uint8_t shift = links_[link].credit_shift;
    return (static_cast<std::int64_t>(wire) + (std::int64_t{1} << shift) - 1) >> shift;
  }

  // Transport (transport.cpp).
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

  std::vector<LinkState> links_;
  std::vector<DeviceState> devices_;
  Buffers buffers_;            // `buffers: {model: as_built}` (buffers.cpp)
  std::int64_t max_wire_ = 0;  // the largest packet on any link
  std::vector<Fifo> fifos_;    // link x (control + lanes)
  // Everything kept per link x lane, in two adjacent cache lines: at 8,192 hosts the per-link
  // state no longer fits in cache, and each hop touched four separate arrays (and the heap
  // block of a vector of credit returns) for it.
  struct alignas(64) LaneState {
    std::int64_t credits = 0;        // transmitter's view
    std::int64_t ingress_bytes = 0;  // buffered at the far end
    bool waiting = false;            // the transmitter wants credits it does not have
    bool wake_pending = false;       // a CreditReturn event is scheduled
    std::uint8_t xoff_sent = 0;      // receiver side of PFC: PAUSE sent, no RESUME yet
    // Credits on their way back, in time order (a link's latency is fixed). They are collected
    // lazily when the transmitter is short of credits or more come back; an event is scheduled
    // only for a transmitter that is waiting for them, which saves one event per packet per hop.
    CreditReturns returns;
    std::int64_t pause_start = -1;
  };
  static_assert(sizeof(LaneState) == 128);
  std::vector<LaneState> lane_;  // link x lane
  std::vector<double> link_bytes_;
  // Per link, what every hop updates for the telemetry in one 32-byte record (copied into
  // link_bytes_ and stats_.links when the run ends): as four arrays they were four cache misses
  // per hop at 8,192 hosts. `first` is kNever until the link sends.
  struct LinkTally {
    double bytes = 0;
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
