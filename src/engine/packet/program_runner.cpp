// Program execution for the packet engine: an op starts once its dependencies have finished;
// the k-th send from a to b on channel c meets the k-th recv at b from a on c (ordinals fixed in
// program order, so the order in which ops become ready cannot mismatch them); a transfer starts
// when both sides are posted and ends, for both ops, when its last byte arrives.
#include "program_runner.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "lockstep/core/error.hpp"
#include "simulator.hpp"

namespace lockstep::packet {

namespace {

constexpr std::uint8_t kStarted = 254;
constexpr std::uint8_t kDone = 255;

std::uint64_t channel_key(Rank src, Rank dst, std::uint16_t channel) {
  return (std::uint64_t{src} << 40) ^ (std::uint64_t{dst} << 16) ^ channel;
}

}  // namespace

void ProgramRunner::init(Simulator& sim, const EngineInput& input) {
  sim_ = &sim;
  programs_ = input.programs;
  record_ops_ = input.options.record_ops;
  per_message_overhead_ = input.options.per_message_overhead;
  overhead_as_latency_ = input.options.overhead_as_latency;
  network_message_latency_ = input.options.network_message_latency;
  efficiency_ = input.options.transfer_efficiency;
  copy_bw_ = input.options.local_copy_bandwidth;
  if (!(efficiency_ > 0 && efficiency_ <= 1))
    throw InputError("options.transfer_efficiency", "must be within (0, 1]");
  const double net = input.options.network_transfer_efficiency;
  if (!(net >= 0 && net <= 1))
    throw InputError("options.network_transfer_efficiency", "must be within [0, 1]");
  const Rank n = programs_->num_ranks();
  const Topology& topo = sim.topology();
  if (!input.placement.empty()) {
    placement_.assign(input.placement.begin(), input.placement.end());
  } else {
    placement_.assign(topo.gpus().begin(), topo.gpus().end());
  }
  if (placement_.size() < n)
    throw InputError("placement",
                     fmt::format("{} ranks but only {} GPUs placed", n, placement_.size()));
  for (Rank r = 0; r < n; ++r) {
    if (placement_[r] >= topo.num_devices())
      throw InputError("placement",
                       fmt::format("rank {} placed on unknown device {}", r, placement_[r]));
  }
  ranks_.resize(n);
  if (record_ops_) op_times_.resize(n);
  ordinals_.resize(n);
  std::vector<std::pair<std::uint32_t, std::uint32_t>> edges;
  for (Rank r = 0; r < n; ++r) {
    RankState& rs = ranks_[r];
    rs.num_ops = programs_->num_ops(r);
    ops_total_ += rs.num_ops;
    rs.pending.assign(rs.num_ops, 0);
    ordinals_[r].assign(rs.num_ops, kNil);
    std::unordered_map<std::uint32_t, std::uint32_t> net_ordinal;  // per group, for this rank
    if (record_ops_) op_times_[r].assign(rs.num_ops, OpTiming{});
    edges.clear();
    for (OpIndex i = 0; i < rs.num_ops; ++i) {
      const Op op = programs_->op(r, i);
      rs.pending[i] = op.num_deps;
      for (OpIndex d : op.dependencies()) {
        if (d >= i)
          throw InputError("programs",
                           fmt::format("rank {} op {} depends on later op {}", r, i, d));
        edges.emplace_back(d, i);
      }
      if (op.kind == OpKind::Send || op.kind == OpKind::Recv) {
        if (op.peer >= n)
          throw InputError(
              "programs", fmt::format("rank {} op {} names peer {} of {} ranks", r, i, op.peer, n));
        const bool send = op.kind == OpKind::Send;
        Channel& ch = channels_[send ? channel_key(r, op.peer, op.channel)
                                     : channel_key(op.peer, r, op.channel)];
        auto& side = send ? ch.sends : ch.recvs;
        ordinals_[r][i] = static_cast<std::uint32_t>(side.size());
        side.push_back(Posted{r, i, op.bytes(), -1});
      } else if (op.kind == OpKind::NetReduce) {
        if (op.peer >= programs_->num_groups())
          throw InputError("programs",
                           fmt::format("rank {} op {} names unknown group {}", r, i, op.peer));
        ordinals_[r][i] = net_ordinal[op.peer]++;
      }
      if (rs.pending[i] == 0) rs.ready.push_back(i);
    }
    // Dependents in CSR form, so finishing an op touches only the ops waiting on it.
    rs.dep_offset.assign(rs.num_ops + 1, 0);
    for (const auto& e : edges) ++rs.dep_offset[e.first + 1];
    for (OpIndex i = 0; i < rs.num_ops; ++i) rs.dep_offset[i + 1] += rs.dep_offset[i];
    rs.dependents.resize(edges.size());
    std::vector<std::uint32_t> fill(rs.dep_offset.begin(), rs.dep_offset.end() - 1);
    for (const auto& e : edges) rs.dependents[fill[e.first]++] = e.second;
    if (rs.num_ops == 0) {
      ++ranks_done_;
    } else if (!rs.ready.empty()) {
      dirty_.push_back(r);
    }
  }
  for (const auto& [key, ch] : channels_) {
    const std::size_t k = std::min(ch.sends.size(), ch.recvs.size());
    for (std::size_t j = 0; j < k; ++j) {
      if (ch.sends[j].bytes != ch.recvs[j].bytes) {
        throw InputError("programs",
                         fmt::format("rank {} op {} sends {} B but rank {} op {} receives {} B",
                                     ch.sends[j].rank, ch.sends[j].op, ch.sends[j].bytes,
                                     ch.recvs[j].rank, ch.recvs[j].op, ch.recvs[j].bytes));
      }
    }
    if (ch.sends.size() != ch.recvs.size()) {
      const Posted& extra = ch.sends.size() > k ? ch.sends[k] : ch.recvs[k];
      throw InputError("programs", fmt::format("rank {} op {} ({}) has no matching {}", extra.rank,
                                               extra.op, ch.sends.size() > k ? "send" : "recv",
                                               ch.sends.size() > k ? "recv" : "send"));
    }
  }
  net_rounds_.clear();
  net_busy_until_.assign(n, Time::zero());
}

void ProgramRunner::start_ready_ops(std::int64_t now) {
  while (!dirty_.empty()) {
    scratch_.swap(dirty_);
    dirty_.clear();
    for (Rank r : scratch_) {
      RankState& rs = ranks_[r];
      std::sort(rs.ready.begin(), rs.ready.end());
      ready_copy_.swap(rs.ready);
      rs.ready.clear();
      for (OpIndex i : ready_copy_) start_op(r, i, now);
    }
    scratch_.clear();
  }
}

void ProgramRunner::start_op(Rank r, OpIndex i, std::int64_t now) {
  ranks_[r].pending[i] = kStarted;
  if (record_ops_) op_times_[r][i].start = Time::ps(now);
  const Op op = programs_->op(r, i);
  switch (op.kind) {
    case OpKind::Send:
    case OpKind::Recv:
      post(op.kind == OpKind::Send, r, i, op, now);
      break;
    case OpKind::Compute:
      sim_->schedule_op_done(r, i, (Time::ps(now) + op.duration).picoseconds());
      break;
    case OpKind::Copy:
    case OpKind::Reduce: {
      const Time t = copy_bw_.bytes_per_second() > 0 && op.bytes() > 0
                         ? transfer_time(Bytes(op.bytes()), copy_bw_)
                         : Time::zero();
      sim_->schedule_op_done(r, i, (Time::ps(now) + t).picoseconds());
      break;
    }
    case OpKind::NetReduce: {
      // In-network reduction is not packet-simulated: every member streams its bytes up to the
      // switch and the sum streams back, pipelined, once the last member has joined. A member's
      // rounds share its link: a round streams once the member's previous rounds have (rounds
      // posted together, as NVLS's chunks are, take their sum and not the time of one), with
      // the bytes inflated by the transfer efficiency as sends' are.
      const std::uint32_t g = op.peer;
      const std::uint64_t key = (static_cast<std::uint64_t>(g) << 32) | ordinals_[r][i];
      NetRound& round = net_rounds_[key];
      round.latest = std::max(round.latest, now);
      round.waiting.emplace_back(r, i);
      if (round.waiting.size() == programs_->group(g).size()) {
        const std::int64_t start = round.latest;
        const auto wire =
            static_cast<std::uint64_t>(std::ceil(static_cast<double>(op.bytes()) / efficiency_));
        for (const auto& [rank, idx] : round.waiting) {
          const Topology& topo = sim_->topology();
          const auto ports = topo.ports(placement_[rank]);
          Time t = Time::ps(start);
          if (!ports.empty()) {
            const Link& l = topo.link(Topology::link_of(ports.front().out));
            Time& busy = net_busy_until_[rank];
            busy = std::max(busy, Time::ps(start)) + transfer_time(Bytes(wire), l.bandwidth);
            t = busy + l.latency * 2;
          }
          sim_->schedule_op_done(rank, idx, t.picoseconds());
        }
        net_rounds_.erase(key);
      }
      break;
    }
  }
}

void ProgramRunner::post(bool is_send, Rank r, OpIndex i, const Op& op, std::int64_t now) {
  Channel& ch = channels_[is_send ? channel_key(r, op.peer, op.channel)
                                  : channel_key(op.peer, r, op.channel)];
  const std::uint32_t k = ordinals_[r][i];
  Posted& mine = is_send ? ch.sends[k] : ch.recvs[k];
  const Posted& other = is_send ? ch.recvs[k] : ch.sends[k];
  mine.posted = now;
  if (other.posted < 0) return;
  const Posted& send = is_send ? mine : other;
  const Posted& recv = is_send ? other : mine;
  const auto id = static_cast<std::uint32_t>(transfers_.size());
  Transfer t;
  t.src_rank = send.rank;
  t.dst_rank = recv.rank;
  t.send_op = send.op;
  t.recv_op = recv.op;
  t.bytes = send.bytes;
  t.start = now;
  t.src = placement_[send.rank];
  t.dst = placement_[recv.rank];
  transfers_.push_back(t);
  // The overhead is paid before the bytes, or after them as latency (EngineOptions), as in the
  // flow engine: then a connection's next message follows its last packet at once.
  const std::int64_t overhead = per_message_overhead_.picoseconds();
  const std::int64_t ready = later(now, overhead_as_latency_ ? 0 : overhead);
  if (t.src == t.dst) {  // same GPU: nothing crosses the fabric, the overhead is all
    sim_->schedule_op_done(t.src_rank, t.send_op, later(now, overhead));
    sim_->schedule_op_done(t.dst_rank, t.recv_op, later(now, overhead));
    return;
  }
  // The protocol's payload efficiency inflates what crosses the wire: the simulator applies it,
  // as it knows whether the transfer crosses the fabric (EngineOptions).
  // A send of data that goes to several peers at once counts its share of the sender's channel
  // limit (Op::fan_out): the send's op, whichever side was posted last.
  const std::uint8_t fan_out = is_send ? op.fan_out : programs_->op(send.rank, send.op).fan_out;
  sim_->start_transfer(id, t.src, t.dst, t.bytes, op.channel, ready, 1.0 / fan_out);
}

void ProgramRunner::transfer_done(std::uint32_t transfer, std::int64_t now, bool network) {
  const Transfer& t = transfers_[transfer];
  Time after = overhead_as_latency_ ? per_message_overhead_ : Time::zero();
  if (network) after += network_message_latency_;
  if (after > Time::zero()) {
    sim_->schedule_op_done(t.src_rank, t.send_op, later(now, after.picoseconds()));
    sim_->schedule_op_done(t.dst_rank, t.recv_op, later(now, after.picoseconds()));
    return;
  }
  finish_op(t.src_rank, t.send_op, now);
  finish_op(t.dst_rank, t.recv_op, now);
}

void ProgramRunner::op_done(Rank r, OpIndex i, std::int64_t now) {
  finish_op(r, i, now);
}

void ProgramRunner::finish_op(Rank r, OpIndex i, std::int64_t now) {
  RankState& rs = ranks_[r];
  if (record_ops_) op_times_[r][i].end = Time::ps(now);
  rs.pending[i] = kDone;
  ++rs.done;
  ++ops_done_;
  rs.finish = std::max(rs.finish, now);
  for (std::uint32_t k = rs.dep_offset[i]; k < rs.dep_offset[i + 1]; ++k) {
    const OpIndex j = rs.dependents[k];
    if (--rs.pending[j] == 0) {
      if (rs.ready.empty()) dirty_.push_back(r);
      rs.ready.push_back(j);
    }
  }
  if (rs.done == rs.num_ops) ++ranks_done_;
}

void ProgramRunner::fill_result(RunResult& out) const {
  out.rank_finish.resize(ranks_.size());
  out.makespan = Time::zero();
  for (std::size_t r = 0; r < ranks_.size(); ++r) {
    // A rank still busy when the run stopped at the end of Time's range finishes past it.
    const RankState& rs = ranks_[r];
    out.rank_finish[r] = rs.done == rs.num_ops ? Time::ps(rs.finish) : Time::infinite();
    out.makespan = std::max(out.makespan, out.rank_finish[r]);
  }
  if (record_ops_) out.ops = op_times_;
}

std::string ProgramRunner::describe_stuck() const {
  std::string msg = "programs cannot finish:";
  int shown = 0;
  for (Rank r = 0; r < ranks_.size() && shown < 4; ++r) {
    const RankState& rs = ranks_[r];
    if (rs.done == rs.num_ops) continue;
    // The first op that is not done and whose dependencies are all done is what blocks.
    for (OpIndex i = 0; i < rs.num_ops; ++i) {
      if (rs.pending[i] != kStarted) continue;
      const Op op = programs_->op(r, i);
      bool waiting = false;
      if (op.kind == OpKind::Send || op.kind == OpKind::Recv) {
        const bool send = op.kind == OpKind::Send;
        const auto it = channels_.find(send ? channel_key(r, op.peer, op.channel)
                                            : channel_key(op.peer, r, op.channel));
        const Posted& mine =
            send ? it->second.sends[ordinals_[r][i]] : it->second.recvs[ordinals_[r][i]];
        const Posted& other =
            send ? it->second.recvs[ordinals_[r][i]] : it->second.sends[ordinals_[r][i]];
        waiting = mine.posted >= 0 && other.posted < 0;
      } else if (op.kind == OpKind::NetReduce) {
        waiting = true;
      }
      if (!waiting) continue;
      msg += fmt::format(" rank {} op {} ({} peer {} channel {}) waits;", r, i, to_string(op.kind),
                         op.peer, op.channel);
      ++shown;
      break;
    }
  }
  if (shown == 0) msg += " no op can start (circular dependency)";
  return msg;
}

}  // namespace lockstep::packet
