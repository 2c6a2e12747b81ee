#include "ranks.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string>

#include "connections.hpp"
#include "lockstep/core/error.hpp"
#include "net_reduce.hpp"

namespace lockstep::flow_detail {

Ranks::Ranks(const ProgramSet& programs, const ClassMap& map, const EngineOptions& options,
             std::uint32_t window_size, Events& events, Connections& connections,
             NetReduce& net_reduce, const Asymmetry& asymmetry)
    : programs_(programs),
      map_(map),
      record_ops_(options.record_ops),
      copy_bandwidth_(options.local_copy_bandwidth),
      events_(events),
      connections_(connections),
      net_reduce_(net_reduce),
      asymmetry_(asymmetry),
      rank_(map.classes()) {
  OpIndex longest = 1;
  for (Rank r = 0; r < count(); ++r) {
    rank_[r].num_ops = programs_.num_ops(map_.real(r));
    longest = std::max(longest, rank_[r].num_ops);
  }
  window_size_ = std::min<std::uint32_t>(window_size, longest);
  slots_.resize(static_cast<std::size_t>(count()) * window_size_);
  if (record_ops_) {
    op_times_.resize(count());
    for (Rank r = 0; r < count(); ++r) op_times_[r].resize(rank_[r].num_ops);
  }
}

void Ranks::advance(Rank r) {
  RankState& rs = rank_[r];
  // Loading can finish ops at once (load), which moves the base on and may open the window.
  do {
    while (rs.base < rs.loaded && slot_of(r, rs.base).state == SlotState::Done) ++rs.base;
    while (rs.loaded < rs.num_ops && rs.loaded < rs.base + window_size_) {
      load(r, rs.loaded++);
      if (asymmetry_ != Asymmetry::None) return;  // the attempt is over: load nothing more
    }
  } while (rs.base < rs.loaded && slot_of(r, rs.base).state == SlotState::Done);
  if (!rs.done && rs.base == rs.num_ops) {
    rs.done = true;
    rs.finish = events_.now();
    ++finished_;
  }
}

void Ranks::load(Rank r, OpIndex i) {
  Slot& s = slot_of(r, i);
  const Op op = programs_.op(map_.real(r), i);
  s.op = IssuedOp(op);
  if ((op.kind == OpKind::Send || op.kind == OpKind::Recv) && op.peer >= map_.ranks()) {
    throw InputError("programs",
                     fmt::format("rank {} op {} ({}) names peer rank {} of {}", map_.real(r), i,
                                 to_string(op.kind), op.peer, map_.ranks()));
  }
  s.state = SlotState::Waiting;
  s.unfinished = 0;
  s.first_dependent = kNoLink;
  if (op.kind == OpKind::NetReduce) {
    s.net_round = net_reduce_.load(r, op.peer);
    if (s.net_round == NetReduce::kNotAClass) {
      // Asymmetry::Group: the attempt is over; the op never starts.
      s.state = SlotState::Running;
      return;
    }
  }
  const RankState& rs = rank_[r];
  for (std::uint32_t k = 0; k < op.num_deps; ++k) {
    const OpIndex d = op.deps[k];
    if (d >= i) {
      throw InputError("programs", fmt::format("rank {} op {} depends on op {}, which is not "
                                               "earlier in the program",
                                               map_.real(r), i, d));
    }
    if (d < rs.base) continue;
    Slot& dep = slot_of(r, d);
    if (dep.state == SlotState::Done) continue;
    ++s.unfinished;
    s.next_dependent[k] = dep.first_dependent;
    dep.first_dependent = static_cast<std::uint32_t>((i - d) * kMaxDeps + k);
  }
  if (s.unfinished != 0) return;
  if (op.kind == OpKind::Compute && op.duration == Time::zero()) {
    // Nothing to wait for and nothing to do (programs pad their blocks to a common length with
    // these, a quarter of a 1,024-GPU NVLS tree's ops): done as issued. No op can wait for it
    // yet, as later ops are loaded after it.
    s.state = SlotState::Done;
    if (record_ops_) op_times_[r][i] = OpTiming{events_.now(), events_.now()};
    return;
  }
  s.state = SlotState::Running;
  start_op(r, i);
}

void Ranks::start_op(Rank r, OpIndex i) {
  if (asymmetry_ != Asymmetry::None) return;  // the attempt is over: start nothing more
  const Time now = events_.now();
  if (record_ops_) op_times_[r][i].start = now;
  const IssuedOp& op = slot_of(r, i).op;
  switch (op.kind) {
    case OpKind::Compute:
      events_.push(now + op.duration(), EventKind::OpDone, r, i);
      break;
    case OpKind::Copy:
    case OpKind::Reduce: {
      const Bandwidth bw = copy_bandwidth_;
      const Time d = bw.bytes_per_second() > 0 && op.src_bytes > 0
                         ? transfer_time(Bytes(op.src_bytes), bw)
                         : Time::zero();
      events_.push(now + d, EventKind::OpDone, r, i);
      break;
    }
    case OpKind::Send:
    case OpKind::Recv:
      connections_.post(r, i, op);
      break;
    case OpKind::NetReduce:
      net_reduce_.post(r, i, op);
      break;
  }
}

void Ranks::finish_op(Rank r, OpIndex i) {
  Slot& s = slot_of(r, i);
  s.state = SlotState::Done;
  if (record_ops_) op_times_[r][i].end = events_.now();
  // Release the ops that waited for this one, in program order (the list holds them newest
  // first): the order in which sends and recvs post decides FIFO matching.
  const std::size_t first = release_scratch_.size();
  for (std::uint32_t link = s.first_dependent; link != kNoLink;) {
    const auto j = static_cast<OpIndex>(i + link / kMaxDeps);
    Slot& dependent = slot_of(r, j);
    link = dependent.next_dependent[link % kMaxDeps];
    if (--dependent.unfinished == 0) release_scratch_.push_back(j);
  }
  s.first_dependent = kNoLink;
  std::sort(release_scratch_.begin() + static_cast<std::ptrdiff_t>(first), release_scratch_.end());
  for (std::size_t k = first; k < release_scratch_.size(); ++k) {
    const OpIndex j = release_scratch_[k];
    slot_of(r, j).state = SlotState::Running;
    start_op(r, j);
  }
  release_scratch_.resize(first);
  advance(r);
}

void Ranks::report_deadlock() const {
  Rank stuck = 0;
  for (Rank r = 0; r < count(); ++r) stuck += rank_[r].done ? 0 : 1;
  for (Rank r = 0; r < count(); ++r) {
    const RankState& rs = rank_[r];
    if (rs.done) continue;
    const IssuedOp& op = slot_of(r, rs.base).op;
    std::string what;
    switch (op.kind) {
      case OpKind::Send:
        what = fmt::format("send to rank {} on channel {}, never matched", op.peer, op.channel);
        break;
      case OpKind::Recv:
        what = fmt::format("recv from rank {} on channel {}, never matched", op.peer, op.channel);
        break;
      case OpKind::NetReduce:
        what = fmt::format("net_reduce in group {}, not every member joined", op.peer);
        break;
      default:
        what = "waiting for its dependencies";
    }
    throw InputError(
        "programs",
        fmt::format("deadlock: rank {} op {} ({}); {} simulated rank(s) unfinished (issue window "
                    "{} ops)",
                    map_.real(r), rs.base, what, stuck, window_size_));
  }
  throw InputError("programs", "deadlock");
}

}  // namespace lockstep::flow_detail
