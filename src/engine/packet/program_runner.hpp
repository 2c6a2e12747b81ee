#pragma once
// The packet engine's program layer (not a public API): it runs the per-rank programs and asks
// the Simulator (simulator.hpp) to move each matched send's bytes as packets.
#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "lockstep/collective/program.hpp"
#include "lockstep/engine/engine.hpp"

namespace lockstep::packet {

/// Per transfer bookkeeping for the program layer.
struct Transfer {
  Rank src_rank = 0, dst_rank = 0;
  OpIndex send_op = 0, recv_op = 0;
  std::uint64_t bytes = 0;
  std::int64_t start = 0;
  DeviceId src = kNone, dst = kNone;
};

class Simulator;

/// Runs per-rank programs: dependencies, FIFO send/recv matching, local ops (program_runner.cpp).
class ProgramRunner {
 public:
  void init(Simulator& sim, const EngineInput& input);
  void start_ready_ops(std::int64_t now);
  void op_done(Rank r, OpIndex i, std::int64_t now);
  /// The transfer's last packet arrived at `now`; `network`: it crossed the fabric.
  void transfer_done(std::uint32_t transfer, std::int64_t now, bool network);
  bool all_done() const { return ranks_done_ == ranks_.size(); }
  /// The share of every rank's ops finished (a progress report's figure).
  double ops_done_share() const {
    return ops_total_ == 0 ? 1.0 : static_cast<double>(ops_done_) / static_cast<double>(ops_total_);
  }
  void fill_result(RunResult& out) const;
  std::string describe_stuck() const;
  const Transfer& transfer(std::uint32_t id) const { return transfers_[id]; }

 private:
  struct RankState {
    OpIndex num_ops = 0;
    OpIndex done = 0;
    std::vector<std::uint8_t> pending;  // unfinished deps per op; kStarted / kDone after
    std::vector<std::uint32_t> dep_offset, dependents;  // CSR: ops waiting on each op
    std::vector<OpIndex> ready;                         // ops whose deps are done, not started
    std::int64_t finish = 0;
  };
  struct Posted {
    Rank rank;
    OpIndex op;
    std::uint64_t bytes;
    std::int64_t posted;  // -1 until the op starts
  };
  struct Channel {  // one (src, dst, channel): sends and recvs by ordinal
    std::vector<Posted> sends, recvs;
  };
  void start_op(Rank r, OpIndex i, std::int64_t now);
  void post(bool is_send, Rank r, OpIndex i, const Op& op, std::int64_t now);
  void finish_op(Rank r, OpIndex i, std::int64_t now);

  Simulator* sim_ = nullptr;
  const ProgramSet* programs_ = nullptr;
  std::vector<DeviceId> placement_;
  std::vector<RankState> ranks_;
  std::vector<Rank> dirty_;  // ranks with ready ops
  std::size_t ranks_done_ = 0;
  std::uint64_t ops_done_ = 0, ops_total_ = 0;
  std::unordered_map<std::uint64_t, Channel> channels_;
  std::vector<std::vector<std::uint32_t>> ordinals_;  // per rank and op: index in its channel
  std::vector<Transfer> transfers_;
  // NetReduce: a rank's k-th NetReduce op on a group joins the group's round k (its ordinal in
  // ordinals_), so pipelined rounds never mix members of different rounds.
  struct NetRound {
    std::int64_t latest = 0;  // when the last member joined
    std::vector<std::pair<Rank, OpIndex>> waiting;
  };
  std::unordered_map<std::uint64_t, NetRound> net_rounds_;  // by (group << 32 | round)
  std::vector<Time> net_busy_until_;  // per rank: its link streams NetReduce until then
  std::vector<Rank> scratch_;
  std::vector<OpIndex> ready_copy_;
  std::vector<std::vector<OpTiming>> op_times_;
  bool record_ops_ = false;
  Time per_message_overhead_;
  bool overhead_as_latency_ = false;
  Time network_message_latency_;
  double efficiency_ = 1.0;
  Bandwidth copy_bw_;
};

}  // namespace lockstep::packet
