// The longest-path walk of per-rank programs (dag_walk.hpp): ops become ready when their
// dependencies end, transfers complete when both sides are ready, NetReduce rounds when every
// member has arrived.
#include "dag_walk.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <queue>
#include <tuple>

#include "lockstep/core/error.hpp"

namespace lockstep::analytical_detail {
namespace {

constexpr Time kUnknown = Time::ps(-1);

// Key of the k-th send from `src` to `dst` on `channel` (FIFO matching, program.hpp).
struct MatchKey {
  Rank src, dst;
  std::uint32_t channel;
  std::uint64_t seq;
  bool operator==(const MatchKey&) const = default;
};
struct MatchKeyHash {
  std::size_t operator()(const MatchKey& k) const {
    std::uint64_t h = k.src * 0x9E3779B97F4A7C15ull ^ (k.dst + 0x632BE59BD9B4E019ull);
    h = (h ^ (h >> 29)) * 0xBF58476D1CE4E5B9ull ^ (std::uint64_t{k.channel} << 40) ^ k.seq;
    return static_cast<std::size_t>(h ^ (h >> 31));
  }
};

struct Endpoint {
  Rank rank = 0;
  OpIndex op = 0;
  Time ready = kUnknown;
};
struct PendingMatch {
  Endpoint send, recv;
};

class Walk {
 public:
  Walk(const ProgramSet& programs, DagCosts& costs) : progs_(programs), costs_(costs) {}
  DagResult execute(bool record_ops);

 private:
  void load_programs();
  void start(Rank r, OpIndex i);
  void finish(Rank r, OpIndex i, Time end);
  void post(bool is_send, Rank r, OpIndex i);
  void post_net_reduce(Rank r, OpIndex i);
  Time ready_of(Rank r, OpIndex i) const;
  void make_ready(Rank r, OpIndex i);
  [[noreturn]] void report_stuck() const;

  const ProgramSet& progs_;
  DagCosts& costs_;
  std::vector<std::vector<Op>> ops_;
  std::vector<std::vector<Time>> end_;
  std::vector<std::vector<std::uint32_t>> waiting_;      // unfinished deps per op
  std::vector<std::vector<std::uint32_t>> dep_offsets_;  // CSR of dependents per rank
  std::vector<std::vector<OpIndex>> dependents_;
  std::vector<std::vector<std::uint64_t>> seq_;  // send/recv/netreduce sequence number
  std::vector<std::pair<Rank, OpIndex>> work_;
  // In time order (DagCosts::in_time_order): ready ops by (ready time, rank, op), so that equal
  // times start in a fixed order.
  using Timed = std::tuple<Time, Rank, OpIndex>;
  std::priority_queue<Timed, std::vector<Timed>, std::greater<>> timed_;
  bool ordered_ = false;
  std::unordered_map<MatchKey, PendingMatch, MatchKeyHash> matches_;
  struct GroupRound {
    std::uint32_t arrived = 0;
    Time latest;
    std::vector<std::pair<Rank, OpIndex>> members;
  };
  std::unordered_map<std::uint64_t, GroupRound> rounds_;
};

void Walk::load_programs() {
  const Rank n = progs_.num_ranks();
  ops_.resize(n);
  end_.resize(n);
  waiting_.resize(n);
  dep_offsets_.resize(n);
  dependents_.resize(n);
  seq_.resize(n);
  for (Rank r = 0; r < n; ++r) {
    const OpIndex m = progs_.num_ops(r);
    auto& ops = ops_[r];
    ops.reserve(m);
    for (OpIndex i = 0; i < m; ++i) ops.push_back(progs_.op(r, i));
    end_[r].assign(m, kUnknown);
    waiting_[r].assign(m, 0);
    auto& offsets = dep_offsets_[r];
    offsets.assign(m + 1, 0);
    for (OpIndex i = 0; i < m; ++i) {
      for (OpIndex d : ops[i].dependencies()) {
        if (d >= i)
          throw InputError("programs",
                           fmt::format("rank {} op {} depends on later op {}", r, i, d));
        ++offsets[d + 1];
        ++waiting_[r][i];
      }
    }
    for (OpIndex i = 0; i < m; ++i) offsets[i + 1] += offsets[i];
    dependents_[r].assign(offsets[m], 0);
    std::vector<std::uint32_t> fill(offsets.begin(), offsets.end() - 1);
    for (OpIndex i = 0; i < m; ++i)
      for (OpIndex d : ops[i].dependencies()) dependents_[r][fill[d]++] = i;
    // FIFO sequence numbers: the k-th send to (peer, channel) meets the k-th recv from it.
    std::unordered_map<std::uint64_t, std::uint64_t> counters;
    seq_[r].assign(m, 0);
    for (OpIndex i = 0; i < m; ++i) {
      const Op& op = ops[i];
      if (op.kind != OpKind::Send && op.kind != OpKind::Recv && op.kind != OpKind::NetReduce)
        continue;
      // Disjoint fields (a NetReduce's peer is a group, which must not share a counter with
      // the sends or receives of the rank of the same number on a neighbouring channel).
      const std::uint64_t key = (std::uint64_t{op.peer} << 24) | (std::uint64_t{op.channel} << 8) |
                                static_cast<std::uint64_t>(op.kind);
      seq_[r][i] = counters[key]++;
    }
  }
}

Time Walk::ready_of(Rank r, OpIndex i) const {
  Time ready;
  for (OpIndex d : ops_[r][i].dependencies()) ready = std::max(ready, end_[r][d]);
  return ready;
}

void Walk::make_ready(Rank r, OpIndex i) {
  if (ordered_) {
    timed_.emplace(ready_of(r, i), r, i);
  } else {
    work_.emplace_back(r, i);
  }
}

void Walk::finish(Rank r, OpIndex i, Time end) {
  end_[r][i] = end;
  for (std::uint32_t k = dep_offsets_[r][i]; k < dep_offsets_[r][i + 1]; ++k) {
    const OpIndex d = dependents_[r][k];
    if (--waiting_[r][d] == 0) make_ready(r, d);
  }
}

void Walk::post(bool is_send, Rank r, OpIndex i) {
  const Op& op = ops_[r][i];
  const Rank src = is_send ? r : op.peer, dst = is_send ? op.peer : r;
  const MatchKey key{src, dst, op.channel, seq_[r][i]};
  PendingMatch& m = matches_[key];
  (is_send ? m.send : m.recv) = Endpoint{r, i, ready_of(r, i)};
  if (m.send.ready == kUnknown || m.recv.ready == kUnknown) return;
  const Op& s = ops_[m.send.rank][m.send.op];
  const Op& v = ops_[m.recv.rank][m.recv.op];
  if (s.bytes() != v.bytes())
    throw InputError("programs", fmt::format("rank {} op {} sends {} bytes but rank {} op {} "
                                             "receives {}",
                                             m.send.rank, m.send.op, s.bytes(), m.recv.rank,
                                             m.recv.op, v.bytes()));
  const Time ready = std::max(m.send.ready, m.recv.ready);
  Time end = ready + costs_.transfer(src, dst, op.channel, s.bytes(), ready);
  if (v.mode == RecvMode::Reduce) end += costs_.local(v.bytes());
  const Endpoint sender = m.send, receiver = m.recv;
  matches_.erase(key);
  finish(sender.rank, sender.op, end);
  finish(receiver.rank, receiver.op, end);
}

void Walk::post_net_reduce(Rank r, OpIndex i) {
  const Op& op = ops_[r][i];
  const std::uint64_t key = (std::uint64_t{op.peer} << 32) ^ seq_[r][i];
  GroupRound& round = rounds_[key];
  round.latest = std::max(round.latest, ready_of(r, i));
  round.members.emplace_back(r, i);
  if (++round.arrived < progs_.group(op.peer).size()) return;
  std::vector<std::pair<Rank, std::uint64_t>> members;
  members.reserve(round.members.size());
  for (const auto& [m, mi] : round.members) members.emplace_back(m, ops_[m][mi].bytes());
  const Time end = round.latest + costs_.net_reduce(op.peer, members);
  const auto done = std::move(round.members);
  rounds_.erase(key);
  for (const auto& [m, mi] : done) finish(m, mi, end);
}

void Walk::start(Rank r, OpIndex i) {
  const Op& op = ops_[r][i];
  switch (op.kind) {
    case OpKind::Compute:
      finish(r, i, ready_of(r, i) + op.duration);
      break;
    case OpKind::Copy:
    case OpKind::Reduce:
      finish(r, i, ready_of(r, i) + costs_.local(op.bytes()));
      break;
    case OpKind::Send:
      post(true, r, i);
      break;
    case OpKind::Recv:
      post(false, r, i);
      break;
    case OpKind::NetReduce:
      post_net_reduce(r, i);
      break;
  }
}

void Walk::report_stuck() const {
  for (Rank r = 0; r < ops_.size(); ++r) {
    for (OpIndex i = 0; i < ops_[r].size(); ++i) {
      if (end_[r][i] != kUnknown) continue;
      const Op& op = ops_[r][i];
      const char* what = op.kind == OpKind::Send   ? "send to"
                         : op.kind == OpKind::Recv ? "recv from"
                                                   : "op with";
      throw InputError("programs", fmt::format("deadlock or unmatched transfer: rank {} op {} "
                                               "({} {}) never completes",
                                               r, i, what, op.peer));
    }
  }
  throw InputError("programs", "programs never complete");
}

DagResult Walk::execute(bool record_ops) {
  load_programs();
  ordered_ = costs_.in_time_order();
  for (Rank r = 0; r < ops_.size(); ++r)
    for (OpIndex i = 0; i < ops_[r].size(); ++i)
      if (waiting_[r][i] == 0) make_ready(r, i);
  DagResult out;
  while (!work_.empty() || !timed_.empty()) {
    Rank r = 0;
    OpIndex i = 0;
    if (ordered_) {
      std::tie(std::ignore, r, i) = timed_.top();
      timed_.pop();
    } else {
      std::tie(r, i) = work_.back();
      work_.pop_back();
    }
    start(r, i);
    ++out.events;
  }
  out.rank_finish.assign(ops_.size(), Time::zero());
  for (Rank r = 0; r < ops_.size(); ++r) {
    for (OpIndex i = 0; i < ops_[r].size(); ++i) {
      if (end_[r][i] == kUnknown) report_stuck();
      out.rank_finish[r] = std::max(out.rank_finish[r], end_[r][i]);
    }
    out.makespan = std::max(out.makespan, out.rank_finish[r]);
  }
  if (record_ops) {
    out.ops.resize(ops_.size());
    for (Rank r = 0; r < ops_.size(); ++r)
      for (OpIndex i = 0; i < ops_[r].size(); ++i)
        out.ops[r].push_back(OpTiming{ready_of(r, i), end_[r][i]});
  }
  return out;
}

}  // namespace

DagResult walk_dag(const ProgramSet& programs, DagCosts& costs, bool record_ops) {
  return Walk(programs, costs).execute(record_ops);
}

}  // namespace lockstep::analytical_detail
