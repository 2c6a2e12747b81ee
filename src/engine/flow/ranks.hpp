#pragma once
// The simulated ranks running their programs (internal; docs/flow-engine.md "Executing
// programs"). With classes, simulated rank c is class c's representative (class_map.hpp).
//
// Each rank has a cursor and an issue window: ops [base, loaded) sit in a ring buffer of
// window-size op slots, base being the oldest unfinished op. An op starts when the ops it depends
// on have finished; it waits for them through an intrusive list of dependents kept in the slot of
// the op it waits for. A Compute or Copy/Reduce op ends after its time (an OpDone event); a Send or
// Recv is posted to its connection (Connections), a NetReduce to its group's round (NetReduce);
// those end when their transfers have arrived (finish_op).
//
// Owns the cursors, the op slots and the per-op times (record_ops). Relies on the programs, the
// class map, the events, Connections and NetReduce; once the attempt has found an asymmetry it
// loads and starts no more ops.
#include <array>
#include <cstdint>
#include <vector>

#include "asymmetry.hpp"
#include "class_map.hpp"
#include "events.hpp"
#include "lockstep/collective/program.hpp"
#include "lockstep/engine/engine.hpp"

namespace lockstep::flow_detail {

class Connections;
class NetReduce;

struct RankState {
  OpIndex num_ops = 0;
  OpIndex base = 0;    // oldest unfinished op
  OpIndex loaded = 0;  // ops [base, loaded) sit in the window
  Time finish;
  bool done = false;
};

// What the engine reads of an op after loading it (its dependencies are linked at load). A
// whole-program window holds millions of slots (1.8 M at 1,024 GPUs for an NVLS tree), most
// touched again long after loading, so a slot is kept to one cache line.
struct IssuedOp {
  std::uint64_t src_bytes = 0;  // Send, Copy, Reduce; NetReduce: up
  std::uint64_t dst_or_ps = 0;  // Recv and NetReduce (down): bytes; Compute: duration in ps
  std::uint32_t peer = 0;       // rank for Send/Recv, group for NetReduce
  std::uint16_t channel = 0;
  OpKind kind = OpKind::Compute;
  std::uint8_t fan_out = 1;  // Send: Op::fan_out
  explicit IssuedOp(const Op& op = {})
      : src_bytes(op.src.bytes),
        dst_or_ps(op.kind == OpKind::Compute ? static_cast<std::uint64_t>(op.duration.picoseconds())
                                             : op.dst.bytes),
        peer(op.peer),
        channel(op.channel),
        kind(op.kind),
        fan_out(op.fan_out) {}
  std::uint64_t dst_bytes() const { return dst_or_ps; }
  Time duration() const { return Time::ps(static_cast<std::int64_t>(dst_or_ps)); }
};

enum class SlotState : std::uint8_t { Waiting, Running, Done };

// A dependent link encodes (dependent op j - d) * kMaxDeps + dep number, relative so that it fits
// 32 bits (a window holds at most 2^24 ops) and survives moving every op index on (fast-forward).
inline constexpr std::uint32_t kNoLink = ~std::uint32_t{0};

struct Slot {
  IssuedOp op;
  SlotState state = SlotState::Done;
  std::uint8_t unfinished = 0;  // dependencies not done yet
  // NetReduce: the k-th NetReduce op a rank loads for a group joins the group's k-th round
  // (FIFO per member, like send/recv matching), whatever order the ops start in.
  std::uint32_t net_round = 0;
  std::uint32_t first_dependent = kNoLink;  // head of the list of ops waiting for this one
  std::array<std::uint32_t, kMaxDeps> next_dependent{};  // this op's place in earlier ops' lists
};
static_assert(sizeof(Slot) <= 64);

// An op of a simulated rank waiting for its partner (a send for its recv, a member for its
// group's round).
struct PostedOp {
  Rank rank;
  OpIndex op;
  std::uint64_t bytes = 0;  // kept here so matching does not revisit the other rank's slot
};

class Ranks {
 public:
  Ranks(const ProgramSet& programs, const ClassMap& map, const EngineOptions& options,
        std::uint32_t window_size, Events& events, Connections& connections, NetReduce& net_reduce,
        const Asymmetry& asymmetry);

  // Moves rank r's window on past its finished ops, loading (and starting) the ops it reaches.
  void advance(Rank r);
  void finish_op(Rank r, OpIndex i);

  const IssuedOp& op(Rank r, OpIndex i) const { return slot_of(r, i).op; }
  std::uint32_t net_round(Rank r, OpIndex i) const { return slot_of(r, i).net_round; }
  const RankState& cursor(Rank r) const { return rank_[r]; }
  Rank count() const { return static_cast<Rank>(rank_.size()); }
  std::uint32_t window_size() const { return window_size_; }
  bool all_done() const { return finished_ == rank_.size(); }
  std::vector<OpTiming>& op_times(Rank r) { return op_times_[r]; }
  // Names the first rank that cannot go on and why.
  [[noreturn]] void report_deadlock() const;

 private:
  friend class SteadyState;  // writes the cursors and slots and moves them on (fast-forward)
  Slot& slot_of(Rank r, OpIndex i) {
    return slots_[static_cast<std::size_t>(r) * window_size_ + i % window_size_];
  }
  const Slot& slot_of(Rank r, OpIndex i) const {
    return slots_[static_cast<std::size_t>(r) * window_size_ + i % window_size_];
  }
  void load(Rank r, OpIndex i);
  void start_op(Rank r, OpIndex i);

  const ProgramSet& programs_;
  const ClassMap map_;  // copies: read at every op
  const bool record_ops_;
  const Bandwidth copy_bandwidth_;
  Events& events_;
  Connections& connections_;
  NetReduce& net_reduce_;
  const Asymmetry& asymmetry_;
  std::uint32_t window_size_;
  std::vector<RankState> rank_;
  std::vector<Slot> slots_;
  std::vector<std::vector<OpTiming>> op_times_;  // record_ops only
  std::vector<OpIndex> release_scratch_;
  Rank finished_ = 0;
};

}  // namespace lockstep::flow_detail
