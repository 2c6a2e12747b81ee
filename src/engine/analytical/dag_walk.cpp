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

// What the walk reads of an op: 16 bytes where an Op takes 80 (its buffers and dependencies are
// not needed once the dependents are listed). `amount` is the bytes moved or touched, or a
// Compute's duration in picoseconds.
struct Slim {
  OpKind kind;
  RecvMode mode;
  std::uint16_t channel;
  std::uint32_t peer;
  std::int64_t amount;
};

// Per-op state lives in flat arrays over all ranks (op i of rank r at base_[r] + i): at 131,072
// ranks a vector per rank and field cost more than the ops of a short program.
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
  void make_ready(Rank r, OpIndex i);
  std::uint64_t at(Rank r, OpIndex i) const { return base_[r] + i; }
  std::uint64_t bytes(Rank r, OpIndex i) const {
    return static_cast<std::uint64_t>(ops_[at(r, i)].amount);
  }
  [[noreturn]] void report_stuck() const;

  const ProgramSet& progs_;
  DagCosts& costs_;
  std::vector<std::uint64_t> base_;  // per rank, and the total last
  std::vector<Slim> ops_;
  std::vector<Time> ready_;  // the latest end of the dependencies finished so far
  std::vector<Time> end_;
  std::vector<std::uint8_t> waiting_;       // unfinished dependencies (at most kMaxDeps)
  std::vector<std::uint64_t> dep_offsets_;  // CSR of dependents: op k's at [offsets[k], [k+1])
  std::vector<OpIndex> dependents_;         // of the same rank
  std::vector<std::uint32_t> seq_;          // send/recv/netreduce sequence number
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
  static_assert(kMaxDeps < 256, "waiting_ counts dependencies in a byte");
  const Rank n = progs_.num_ranks();
  base_.assign(n + 1u, 0);
  for (Rank r = 0; r < n; ++r) base_[r + 1] = base_[r] + progs_.num_ops(r);
  const std::uint64_t total = base_[n];
  ops_.resize(total);
  ready_.assign(total, Time::zero());
  end_.assign(total, kUnknown);
  waiting_.assign(total, 0);
  seq_.assign(total, 0);
  dep_offsets_.assign(total + 1, 0);
  std::vector<Op> program;
  std::vector<std::uint32_t> fill;
  std::unordered_map<std::uint64_t, std::uint32_t> counters;
  for (Rank r = 0; r < n; ++r) {
    const OpIndex m = progs_.num_ops(r);
    program.clear();
    for (OpIndex i = 0; i < m; ++i) program.push_back(progs_.op(r, i));
    // Dependents per op, as offsets from the rank's first: counted, summed, then filled.
    std::vector<std::uint32_t> count(m + 1u, 0);
    counters.clear();
    for (OpIndex i = 0; i < m; ++i) {
      const Op& op = program[i];
      Slim& slim = ops_[at(r, i)];
      slim = Slim{op.kind, op.mode, op.channel, op.peer,
                  op.kind == OpKind::Compute ? op.duration.picoseconds()
                                             : static_cast<std::int64_t>(op.bytes())};
      for (OpIndex d : op.dependencies()) {
        if (d >= i)
          throw InputError("programs",
                           fmt::format("rank {} op {} depends on later op {}", r, i, d));
        ++count[d + 1];
        ++waiting_[at(r, i)];
      }
      // FIFO sequence numbers: the k-th send to (peer, channel) meets the k-th recv from it.
      if (op.kind != OpKind::Send && op.kind != OpKind::Recv && op.kind != OpKind::NetReduce)
        continue;
      // Disjoint fields (a NetReduce's peer is a group, which must not share a counter with
      // the sends or receives of the rank of the same number on a neighbouring channel).
      const std::uint64_t key = (std::uint64_t{op.peer} << 24) | (std::uint64_t{op.channel} << 8) |
                                static_cast<std::uint64_t>(op.kind);
      seq_[at(r, i)] = counters[key]++;
    }
    for (OpIndex i = 0; i < m; ++i) count[i + 1] += count[i];
    const std::uint64_t first = dependents_.size();
    for (OpIndex i = 0; i <= m; ++i) dep_offsets_[at(r, i)] = first + count[i];
    dependents_.resize(first + count[m]);
    fill.assign(count.begin(), count.end() - 1);
    for (OpIndex i = 0; i < m; ++i)
      for (OpIndex d : program[i].dependencies()) dependents_[first + fill[d]++] = i;
  }
}

void Walk::make_ready(Rank r, OpIndex i) {
  if (ordered_) {
    timed_.emplace(ready_[at(r, i)], r, i);
  } else {
    work_.emplace_back(r, i);
  }
}

void Walk::finish(Rank r, OpIndex i, Time end) {
  const std::uint64_t k = at(r, i);
  end_[k] = end;
  for (std::uint64_t j = dep_offsets_[k]; j < dep_offsets_[k + 1]; ++j) {
    const std::uint64_t d = at(r, dependents_[j]);
    ready_[d] = std::max(ready_[d], end);
    if (--waiting_[d] == 0) make_ready(r, dependents_[j]);
  }
}

void Walk::post(bool is_send, Rank r, OpIndex i) {
  const Slim& op = ops_[at(r, i)];
  const Rank src = is_send ? r : op.peer, dst = is_send ? op.peer : r;
  const MatchKey key{src, dst, op.channel, seq_[at(r, i)]};
  PendingMatch& m = matches_[key];
  (is_send ? m.send : m.recv) = Endpoint{r, i, ready_[at(r, i)]};
  if (m.send.ready == kUnknown || m.recv.ready == kUnknown) return;
  const std::uint64_t sent = bytes(m.send.rank, m.send.op);
  const std::uint64_t received = bytes(m.recv.rank, m.recv.op);
  if (sent != received)
    throw InputError("programs",
                     fmt::format("rank {} op {} sends {} bytes but rank {} op {} "
                                 "receives {}",
                                 m.send.rank, m.send.op, sent, m.recv.rank, m.recv.op, received));
  const Time ready = std::max(m.send.ready, m.recv.ready);
  Time end = ready + costs_.transfer(src, dst, op.channel, sent, ready);
  if (ops_[at(m.recv.rank, m.recv.op)].mode == RecvMode::Reduce) end += costs_.local(received);
  const Endpoint sender = m.send, receiver = m.recv;
  matches_.erase(key);
  finish(sender.rank, sender.op, end);
  finish(receiver.rank, receiver.op, end);
}

void Walk::post_net_reduce(Rank r, OpIndex i) {
  const Slim& op = ops_[at(r, i)];
  const std::uint64_t key = (std::uint64_t{op.peer} << 32) ^ seq_[at(r, i)];
  GroupRound& round = rounds_[key];
  round.latest = std::max(round.latest, ready_[at(r, i)]);
  round.members.emplace_back(r, i);
  if (++round.arrived < progs_.group(op.peer).size()) return;
  std::vector<std::pair<Rank, std::uint64_t>> members;
  members.reserve(round.members.size());
  for (const auto& [m, mi] : round.members) members.emplace_back(m, bytes(m, mi));
  const Time end = round.latest + costs_.net_reduce(op.peer, members);
  const auto done = std::move(round.members);
  rounds_.erase(key);
  for (const auto& [m, mi] : done) finish(m, mi, end);
}

void Walk::start(Rank r, OpIndex i) {
  const Slim& op = ops_[at(r, i)];
  switch (op.kind) {
    case OpKind::Compute:
      finish(r, i, ready_[at(r, i)] + Time::ps(op.amount));
      break;
    case OpKind::Copy:
    case OpKind::Reduce:
      finish(r, i, ready_[at(r, i)] + costs_.local(bytes(r, i)));
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
  for (Rank r = 0; r + 1 < base_.size(); ++r) {
    for (OpIndex i = 0; at(r, i) < base_[r + 1]; ++i) {
      if (end_[at(r, i)] != kUnknown) continue;
      const Slim& op = ops_[at(r, i)];
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
  const Rank n = progs_.num_ranks();
  for (Rank r = 0; r < n; ++r)
    for (OpIndex i = 0; at(r, i) < base_[r + 1]; ++i)
      if (waiting_[at(r, i)] == 0) make_ready(r, i);
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
  out.rank_finish.assign(n, Time::zero());
  for (Rank r = 0; r < n; ++r) {
    for (std::uint64_t k = base_[r]; k < base_[r + 1]; ++k) {
      if (end_[k] == kUnknown) report_stuck();
      out.rank_finish[r] = std::max(out.rank_finish[r], end_[k]);
    }
    out.makespan = std::max(out.makespan, out.rank_finish[r]);
  }
  if (record_ops) {
    out.ops.resize(n);
    for (Rank r = 0; r < n; ++r) {
      out.ops[r].reserve(base_[r + 1] - base_[r]);
      for (std::uint64_t k = base_[r]; k < base_[r + 1]; ++k)
        out.ops[r].push_back(OpTiming{ready_[k], end_[k]});
    }
  }
  return out;
}

}  // namespace

DagResult walk_dag(const ProgramSet& programs, DagCosts& costs, bool record_ops) {
  return Walk(programs, costs).execute(record_ops);
}

}  // namespace lockstep::analytical_detail
