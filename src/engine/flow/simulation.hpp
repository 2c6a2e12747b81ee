#pragma once
// One run of the flow engine over the classes of a ClassMap (internal). With one rank per class
// every rank is simulated; otherwise simulated rank c is the class's representative and stands
// for all its members (ProgramSet::symmetry_period, local_symmetry; class_map.hpp), and a
// transfer between classes stands for all its members'.
#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <unordered_map>
#include <utility>
#include <vector>

#include "asymmetry.hpp"
#include "class_map.hpp"
#include "event_queue.hpp"
#include "flat_index.hpp"
#include "lockstep/core/slot_pool.hpp"
#include "lockstep/engine/engine.hpp"
#include "lockstep/engine/flow/flow_engine.hpp"
#include "lockstep/engine/flow/maxmin.hpp"
#include "route_table.hpp"

namespace lockstep::flow_detail {

class Simulation final : public LinkLoadView {
 public:
  Simulation(const EngineInput& input, const FlowEngineConfig& config, PathCache& paths,
             const ClassMap& classes);
  // The result, or nothing when the classes turned out not to hold (asymmetry() says why).
  std::optional<RunResult> run();
  Asymmetry asymmetry() const { return asymmetry_; }
  double load(DirLinkId link) const override { return solver_.weight(link); }
  std::uint64_t transfers() const { return transfers_done_; }
  std::uint64_t components() const { return components_; }
  std::uint32_t fast_forwards() const { return ff_jumps_; }
  std::uint64_t skipped_ops() const { return ff_skipped_ops_; }

 private:
  enum class SlotState : std::uint8_t { Waiting, Running, Done };
  enum class EventKind : std::uint8_t { OpDone, FlowDone, Delivered, TransferStart };
  struct Event {
    Time time;
    std::uint64_t seq;
    std::uint32_t id;
    std::uint32_t aux;
    EventKind kind;
  };
  struct EventLater {
    bool operator()(const Event& a, const Event& b) const {
      return a.time != b.time ? a.time > b.time : a.seq > b.seq;
    }
  };
  struct RankState {
    OpIndex num_ops = 0;
    OpIndex base = 0;    // oldest unfinished op
    OpIndex loaded = 0;  // ops [base, loaded) sit in the window
    Time finish;
    bool done = false;
  };
  struct Pending {
    Rank rank;
    OpIndex op;
    std::uint64_t bytes = 0;  // kept here so matching does not revisit the other rank's slot
  };
  // One connection (src class, receiver as its representative sees it, channel): unmatched sends
  // and recvs, and the matched transfers waiting for the connection, which streams one transfer at
  // a time.
  struct MatchQueue {
    std::vector<Pending> sends, recvs;
    std::size_t send_head = 0, recv_head = 0;
    std::vector<std::uint32_t> backlog;
    std::size_t backlog_head = 0;
    bool busy = false;
  };
  enum class TransferKind : std::uint8_t { PointToPoint, NetUp, NetDown };
  struct Transfer {
    TransferKind kind = TransferKind::PointToPoint;
    Rank src = 0, dst = 0;  // simulated ranks (NetUp/NetDown: the member)
    OpIndex send_op = 0, recv_op = 0;
    std::uint32_t route = 0;
    std::uint32_t pending = 0;    // flows not yet delivered
    std::uint32_t group = 0;      // NetReduce group
    std::uint32_t net_round = 0;  // which of the group's NetReduce rounds (see Slot::net_round)
    std::uint32_t member = 0;     // NetDown: index of the member in its round's arrivals
    std::uint32_t queue = kNone;  // connection (point-to-point only)
    std::uint16_t channel = 0;    // point-to-point: the connection's channel
    std::uint32_t streaming = 0;  // flows still in their bandwidth phase
    double wire_bytes = 0;        // per member
  };
  struct Flow {
    std::uint32_t transfer = 0;
    std::uint32_t share = 0;
    MaxMinSolver::VarId var = 0;
    MaxMinSolver::ConsId cap = kNone;  // its (sender, channel) speed limit, if any
    double remaining = 0;
    double rate = 0;
    Time updated;
    std::uint32_t generation = 0;
    bool live = false;
  };
  struct NetReduceState {
    std::vector<Pending> arrived;
    std::uint32_t up_pending = 0;
    std::vector<bool> down_arrived;  // per arrived member: its result has come down
    std::uint32_t members_left = 0;  // members whose op has not finished
  };
  // The rounds of one NetReduce group begun and not finished: round k's state is
  // net_states_[ring[k % ring.size()]] while first <= k < end, kNone once it has finished
  // (rounds finish out of order; first moves past finished ones). With a whole-program window
  // thousands of rounds are open at once; states are pooled, so they allocate nothing after
  // warm-up.
  struct GroupRounds {
    std::uint32_t first = 0, end = 0;
    std::vector<std::uint32_t> ring;
  };
  // Round `round` of `group`, begun here if it is new. The reference lasts until the next
  // round is begun.
  NetReduceState& net_round(std::uint32_t group, std::uint32_t round);
  void finish_net_round(std::uint32_t group, std::uint32_t round);
  // Whether NetReduce group `group` is exactly the members of class `cls`: then the class's op
  // stands for the whole group's, and the group is complete when the class joins it.
  bool group_is_class(Rank cls, std::uint32_t group);
  static constexpr Rank kUnknownClass = kNone - 1;
  std::vector<Rank> group_class_;  // per group: its class, kNone, or kUnknownClass
  // The switch a group reduces at: the highest on the path from its first to its last member.
  DeviceId net_root(std::uint32_t group);
  // A NetUp or NetDown transfer of a round's member over `route`.
  std::uint32_t net_transfer(TransferKind kind, const Pending& member, std::uint32_t group,
                             std::uint32_t round, std::uint32_t index, std::uint64_t bytes,
                             std::uint32_t route);

  // Program execution. Each simulated rank has a ring buffer of window_size_ op slots; an op
  // waits for its unfinished dependencies through an intrusive list of dependents kept in the
  // slot of the op d it waits for. An entry encodes (dependent op j - d) * kMaxDeps + dep number,
  // relative so that it fits 32 bits (a window holds at most 2^24 ops) and survives moving every
  // op index on (fast-forward).
  static constexpr std::uint32_t kNoLink = ~std::uint32_t{0};
  // What the engine reads of an op after loading it (its dependencies are linked at load). A
  // whole-program window holds millions of slots (1.8 M at 1,024 GPUs for an NVLS tree), most
  // touched again long after loading, so a slot is kept to one cache line.
  struct IssuedOp {
    std::uint64_t src_bytes = 0;  // Send, Copy, Reduce; NetReduce: up
    std::uint64_t dst_or_ps = 0;  // Recv and NetReduce (down): bytes; Compute: duration in ps
    std::uint32_t peer = 0;       // rank for Send/Recv, group for NetReduce
    std::uint16_t channel = 0;
    OpKind kind = OpKind::Compute;
    explicit IssuedOp(const Op& op = {})
        : src_bytes(op.src.bytes),
          dst_or_ps(op.kind == OpKind::Compute
                        ? static_cast<std::uint64_t>(op.duration.picoseconds())
                        : op.dst.bytes),
          peer(op.peer),
          channel(op.channel),
          kind(op.kind) {}
    std::uint64_t dst_bytes() const { return dst_or_ps; }
    Time duration() const { return Time::ps(static_cast<std::int64_t>(dst_or_ps)); }
  };
  struct Slot {
    IssuedOp op;
    SlotState state = SlotState::Done;
    std::uint8_t unfinished = 0;  // dependencies not done yet
    // NetReduce: the k-th NetReduce op a rank loads for a group joins the group's k-th round
    // (FIFO per member, like send/recv matching), whatever order the ops start in.
    std::uint32_t net_round = 0;
    std::uint32_t first_dependent = kNoLink;
    std::array<std::uint32_t, kMaxDeps> next_dependent{};
  };
  static_assert(sizeof(Slot) <= 64);
  Slot& slot_of(Rank r, OpIndex i) {
    return slots_[static_cast<std::size_t>(r) * window_size_ + i % window_size_];
  }
  const IssuedOp& slot(Rank r, OpIndex i) { return slot_of(r, i).op; }
  void advance(Rank r);
  void load(Rank r, OpIndex i);
  void start_op(Rank r, OpIndex i);
  void finish_op(Rank r, OpIndex i);
  void post(Rank r, OpIndex i, const IssuedOp& op);
  void post_net_reduce(Rank r, OpIndex i, const IssuedOp& op);

  // Transfers and flows.
  // `to` and `channel` are the receiver's rank and the channel as the sender's representative
  // sees them.
  void match(const Pending& send, const Pending& recv, Rank to, std::uint16_t channel,
             std::uint32_t queue);
  void launch(std::uint32_t t);
  void stream_done(std::uint32_t t);
  std::uint32_t new_transfer();
  void begin_transfer(std::uint32_t t);
  Time trailing_overhead(std::uint32_t t) const;
  void flow_done(std::uint32_t f, std::uint32_t generation);
  void delivered(std::uint32_t t);
  void complete_transfer(std::uint32_t t);
  // member == kNone: one of the round's up transfers is done; else that member's result arrived.
  void net_member_done(std::uint32_t group, std::uint32_t round, std::uint32_t member);
  void apply_rates();
  // The solver variable of flow f over its share's constraints (and its channel cap).
  MaxMinSolver::VarId add_variable(std::uint32_t f);
  // Live flows of routes whose constraints changed get variables over the new ones.
  void readd_retargeted();
  // Per class route, the summed rate of its live flows (bytes/s per member).
  void add_route_rate(std::uint32_t route, double delta);
  // False when a real link of an uneven orbit is over its capacity: a collision among a class's
  // members limits a flow (uneven_orbits.cpp).
  bool uneven_orbits_feasible(std::span<const std::uint32_t> changed_routes) const;
  void relax_uneven_orbits();
  // The solver constraint of simulated rank r's channel (EngineOptions::channel_send_bandwidth),
  // created the first time one of its sends streams. A class's constraint stands for each
  // member's own: a member's send crosses only its own rank's, with coefficient 1.
  MaxMinSolver::ConsId channel_cap(Rank r, std::uint16_t channel);
  void settle(Flow& flow);
  void push(Time at, EventKind kind, std::uint32_t id, std::uint32_t aux = 0);
  void dispatch(const Event& e);
  void record_rate(const Flow& flow, double delta_rate);
  [[noreturn]] void report_deadlock();
  void fill_link_series(RunResult& result);

  // Steady-state fast-forward (fast_forward.cpp). At the end of every instant where simulated
  // rank 0 has just reached the start of a period of its periodic region, the whole state is
  // written as a canonical word list relative to rank 0's oldest op and the current time. When
  // it equals an earlier one, the cycle between them repeats exactly and is replayed
  // arithmetically as often as every rank's region allows.
  struct PeriodMark {
    std::uint64_t hash = 0;
    Time time;
    OpIndex origin = 0;  // rank 0's oldest unfinished op
    std::uint64_t events = 0;
    std::int32_t saved = -1;  // index into ff_saved_, or -1
  };
  struct SavedState {
    std::uint32_t mark = 0;  // index into ff_marks_ of the snapshot it holds
    bool keep = false;       // one of the first or a power-of-two-th: never evicted
    std::vector<std::uint64_t> words;
    std::vector<double> carried;  // per route, wire bytes per member so far
    std::size_t rate_log = 0;
    std::uint64_t transfers_done = 0;
  };
  void fast_forward_check();
  void reset_fast_forward();
  void canonical_state(std::vector<std::uint64_t>& out, OpIndex origin);
  // A cheap function of the canonical state (cursors, live events' distances and kinds): equal
  // states have equal signatures, so the full state is written only when a signature repeats.
  std::uint64_t signature(OpIndex origin) const;
  std::uint64_t transfer_key(std::uint32_t t, OpIndex origin) const;
  void save_state(PeriodMark& mark, bool keep);
  bool try_skip(const PeriodMark& a, const SavedState& saved);
  void shift_state(OpIndex ops, Time dt);

  const EngineInput& in_;
  const FlowEngineConfig& config_;
  const Topology& topo_;
  const ProgramSet& programs_;
  Rank ranks_;
  Rank classes_;
  ClassMap map_;
  std::uint32_t window_size_;
  RouteTable routes_;
  PathCache& paths_;
  MaxMinSolver solver_;

  // Set by whatever finds the classes distinguishable; from then on no op starts and the run loop
  // ends the attempt.
  Asymmetry asymmetry_ = Asymmetry::None;
  bool gave_up() const { return asymmetry_ != Asymmetry::None; }

  Time now_;
  std::uint64_t seq_ = 0;
  EventQueue<Event> queue_;       // later instants
  std::vector<Event> current_;    // the events of now_ queued before it began
  std::vector<Event> instant_;    // events of now_ pushed during it, in order (see push)
  std::vector<Event> ff_events_;  // scratch: the pending events, for fast-forward
  std::vector<RankState> rank_;
  std::vector<Slot> slots_;
  std::vector<std::vector<OpTiming>> op_times_;
  // Connection from class src_class's representative to rank `to` (as it sees them).
  std::uint32_t queue(Rank src_class, Rank to, std::uint16_t channel);
  FlatIndex queue_index_;  // (src class, to, channel) -> queues_
  std::vector<MatchQueue> queues_;
  std::vector<Transfer> transfers_;
  std::vector<std::uint32_t> free_transfers_;
  std::vector<Flow> flows_;
  std::vector<std::uint32_t> free_flows_;
  std::vector<std::uint32_t> flow_of_var_;
  FlatIndex cap_index_;  // (simulated rank, channel) -> solver constraint
  std::vector<MaxMinSolver::Use> uses_scratch_;
  std::vector<double> route_rate_;
  std::vector<std::uint32_t> uneven_scratch_;
  std::vector<double>
      relaxed_capacity_;  // per directed link: a relaxed stand-in's own capacity, or -1
  static std::uint64_t net_key(std::uint32_t a, std::uint32_t b) {
    return (static_cast<std::uint64_t>(a) << 32) | b;
  }
  std::vector<GroupRounds> net_groups_;  // by group (sized at the first NetReduce)
  std::vector<NetReduceState> net_states_;
  std::vector<std::uint32_t> free_net_states_;
  std::uint64_t net_rounds_open_ = 0;  // rounds begun and not finished, over all groups
  std::unordered_map<std::uint64_t, std::uint32_t> net_rounds_loaded_;  // by net_key(rank, group)
  std::unordered_map<std::uint32_t, DeviceId> net_root_;                // by group
  std::vector<double> link_bytes_;
  struct RateChange {
    DirLinkId link;
    Time at;
    double delta;  // bytes/s
  };
  std::vector<RateChange> rate_log_;
  std::uint64_t events_ = 0;
  std::uint64_t transfers_done_ = 0;
  std::uint64_t components_ = 0;
  Rank finished_ranks_ = 0;
  std::vector<OpIndex> release_scratch_;
  std::vector<Pending> net_done_scratch_;

  bool ff_enabled_ = false;
  OpIndex ff_last_base_ = 0;
  OpIndex ff_region_first_ = 0;
  std::uint32_t ff_stride_ = 1;  // snapshot every stride-th period boundary
  std::vector<PeriodMark> ff_marks_;
  std::unordered_map<std::uint64_t, std::uint32_t> ff_by_hash_;  // hash -> latest mark
  std::vector<SavedState> ff_saved_;
  std::vector<std::uint64_t> ff_words_;
  std::vector<std::pair<std::uint64_t, std::uint32_t>> ff_sort_;
  std::vector<char> ff_free_;
  std::vector<DirLinkId> ff_links_;
  std::uint32_t ff_jumps_ = 0;
  std::uint64_t ff_skipped_ops_ = 0;
};

}  // namespace lockstep::flow_detail
