// Contention-free execution of per-rank programs: a longest-path evaluation of the program DAG
// where each matched send/recv pair costs overhead + latency + bytes / bandwidth.
#include "lockstep/engine/analytical/analytical_engine.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <unordered_map>
#include <vector>

#include "lockstep/core/error.hpp"

namespace lockstep {
namespace {

constexpr Time kUnknown = Time::ps(-1);

// A transfer's fixed cost and bandwidth over the route between two devices.
struct PathCost {
  Time latency;
  double seconds_per_byte = 0;  // over the bottleneck, already divided by the efficiency
  std::vector<std::pair<DirLinkId, double>> hops;  // directed link, fraction of bytes
};

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

class Run {
 public:
  explicit Run(const EngineInput& in) : in_(in), topo_(*in.topology), progs_(*in.programs) {}

  RunResult execute();

 private:
  void load_programs();
  void start(Rank r, OpIndex i);
  void finish(Rank r, OpIndex i, Time end);
  void post(bool is_send, Rank r, OpIndex i);
  void post_net_reduce(Rank r, OpIndex i);
  Time transfer(Rank src, Rank dst, std::uint16_t channel, std::uint64_t bytes);
  const PathCost& path(DeviceId a, DeviceId b, std::uint16_t channel);
  Time local_time(std::uint64_t bytes) const;
  [[noreturn]] void report_stuck() const;

  const EngineInput& in_;
  const Topology& topo_;
  const ProgramSet& progs_;
  std::vector<std::vector<Op>> ops_;
  std::vector<std::vector<Time>> end_;
  std::vector<std::vector<std::uint32_t>> waiting_;      // unfinished deps per op
  std::vector<std::vector<std::uint32_t>> dep_offsets_;  // CSR of dependents per rank
  std::vector<std::vector<OpIndex>> dependents_;
  std::vector<std::vector<std::uint64_t>> seq_;  // send/recv/netreduce sequence number
  std::vector<std::pair<Rank, OpIndex>> work_;
  std::unordered_map<MatchKey, PendingMatch, MatchKeyHash> matches_;
  struct GroupRound {
    std::uint32_t arrived = 0;
    Time latest;
    std::vector<std::pair<Rank, OpIndex>> members;
  };
  std::unordered_map<std::uint64_t, GroupRound> rounds_;
  std::unordered_map<std::uint64_t, PathCost> paths_;
  std::vector<PathShare> scratch_;
  RunResult result_;
};

void Run::load_programs() {
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
      const std::uint64_t key = (std::uint64_t{op.peer} << 20) ^ (std::uint64_t{op.channel} << 2) ^
                                static_cast<std::uint64_t>(op.kind);
      seq_[r][i] = counters[key]++;
    }
  }
}

Time Run::local_time(std::uint64_t bytes) const {
  const double bw = in_.options.local_copy_bandwidth.bytes_per_second();
  if (bw <= 0 || bytes == 0) return Time::zero();
  return transfer_time(Bytes(bytes), in_.options.local_copy_bandwidth);
}

const PathCost& Run::path(DeviceId a, DeviceId b, std::uint16_t channel) {
  const std::uint64_t key = (std::uint64_t{a} << 40) ^ (std::uint64_t{b} << 12) ^ channel;
  const auto it = paths_.find(key);
  if (it != paths_.end()) return it->second;
  PathCost cost;
  in_.router->route(FlowKey{a, b, channel}, nullptr, scratch_);
  if (scratch_.empty())
    throw InputError("topology", fmt::format("no route from device {} to device {}", a, b));
  const double eff = in_.options.transfer_efficiency > 0 ? in_.options.transfer_efficiency : 1.0;
  for (const PathShare& share : scratch_) {
    Time latency;
    double bottleneck = 0;
    for (DirLinkId d : share.hops) {
      const Link& l = topo_.link(Topology::link_of(d));
      latency += l.latency;
      const double bw = l.bandwidth.bytes_per_second();
      bottleneck = bottleneck == 0 ? bw : std::min(bottleneck, bw);
      cost.hops.emplace_back(d, share.fraction);
    }
    // Parallel shares run side by side: the slowest share sets the time.
    cost.latency = std::max(cost.latency, latency);
    if (bottleneck > 0)
      cost.seconds_per_byte = std::max(cost.seconds_per_byte, share.fraction / (bottleneck * eff));
  }
  return paths_.emplace(key, std::move(cost)).first->second;
}

Time Run::transfer(Rank src, Rank dst, std::uint16_t channel, std::uint64_t bytes) {
  const DeviceId a = in_.placement[src], b = in_.placement[dst];
  const Time overhead = in_.options.per_message_overhead;
  if (a == b) return overhead + local_time(bytes);
  const PathCost& p = path(a, b, channel);
  for (const auto& [link, fraction] : p.hops) result_.link_bytes[link] += bytes * fraction;
  const double ps = std::ceil(static_cast<double>(bytes) * p.seconds_per_byte * 1e12 - 1e-6);
  return overhead + p.latency + Time::from_ps(std::max(0.0, ps));
}

void Run::finish(Rank r, OpIndex i, Time end) {
  end_[r][i] = end;
  for (std::uint32_t k = dep_offsets_[r][i]; k < dep_offsets_[r][i + 1]; ++k) {
    const OpIndex d = dependents_[r][k];
    if (--waiting_[r][d] == 0) work_.emplace_back(r, d);
  }
}

void Run::post(bool is_send, Rank r, OpIndex i) {
  const Op& op = ops_[r][i];
  const Rank src = is_send ? r : op.peer, dst = is_send ? op.peer : r;
  Time ready;
  for (OpIndex d : op.dependencies()) ready = std::max(ready, end_[r][d]);
  PendingMatch& m = matches_[MatchKey{src, dst, op.channel, seq_[r][i]}];
  (is_send ? m.send : m.recv) = Endpoint{r, i, ready};
  if (m.send.ready == kUnknown || m.recv.ready == kUnknown) return;
  const Op& s = ops_[m.send.rank][m.send.op];
  const Op& v = ops_[m.recv.rank][m.recv.op];
  if (s.bytes() != v.bytes())
    throw InputError("programs", fmt::format("rank {} op {} sends {} bytes but rank {} op {} "
                                             "receives {}",
                                             m.send.rank, m.send.op, s.bytes(), m.recv.rank,
                                             m.recv.op, v.bytes()));
  Time end = std::max(m.send.ready, m.recv.ready) + transfer(src, dst, op.channel, s.bytes());
  if (v.mode == RecvMode::Reduce) end += local_time(v.bytes());
  const Endpoint sender = m.send, receiver = m.recv;
  matches_.erase(MatchKey{src, dst, op.channel, seq_[r][i]});
  finish(sender.rank, sender.op, end);
  finish(receiver.rank, receiver.op, end);
}

// In-network reduction: every member pushes its bytes one hop up and gets the result back.
void Run::post_net_reduce(Rank r, OpIndex i) {
  const Op& op = ops_[r][i];
  Time ready;
  for (OpIndex d : op.dependencies()) ready = std::max(ready, end_[r][d]);
  GroupRound& round = rounds_[(std::uint64_t{op.peer} << 32) ^ seq_[r][i]];
  round.latest = std::max(round.latest, ready);
  round.members.emplace_back(r, i);
  const auto members = progs_.group(op.peer);
  if (++round.arrived < members.size()) return;
  Time slowest;
  const double eff = in_.options.transfer_efficiency > 0 ? in_.options.transfer_efficiency : 1.0;
  for (const auto& [m, mi] : round.members) {
    const auto ports = topo_.ports(in_.placement[m]);
    if (ports.empty()) throw InputError("topology", fmt::format("rank {} has no links", m));
    const Link& l = topo_.link(Topology::link_of(ports[0].out));
    const Bytes bytes(ops_[m][mi].bytes());
    slowest = std::max(slowest, l.latency * 2 + transfer_time(bytes, l.bandwidth * eff));
  }
  const Time end = round.latest + in_.options.per_message_overhead + slowest;
  const auto done = std::move(round.members);
  rounds_.erase((std::uint64_t{op.peer} << 32) ^ seq_[r][i]);
  for (const auto& [m, mi] : done) finish(m, mi, end);
}

void Run::start(Rank r, OpIndex i) {
  const Op& op = ops_[r][i];
  Time ready;
  for (OpIndex d : op.dependencies()) ready = std::max(ready, end_[r][d]);
  switch (op.kind) {
    case OpKind::Compute:
      finish(r, i, ready + op.duration);
      break;
    case OpKind::Copy:
    case OpKind::Reduce:
      finish(r, i, ready + local_time(op.bytes()));
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

void Run::report_stuck() const {
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

RunResult Run::execute() {
  if (in_.topology == nullptr || in_.programs == nullptr || in_.router == nullptr)
    throw InputError("engine", "the analytical engine needs a topology, programs and a router");
  if (in_.placement.size() < progs_.num_ranks())
    throw InputError("placement", fmt::format("{} ranks but {} placed GPUs", progs_.num_ranks(),
                                              in_.placement.size()));
  result_.link_bytes.assign(topo_.num_directed_links(), 0.0);
  load_programs();
  for (Rank r = 0; r < ops_.size(); ++r)
    for (OpIndex i = 0; i < ops_[r].size(); ++i)
      if (waiting_[r][i] == 0) work_.emplace_back(r, i);
  std::uint64_t events = 0;
  while (!work_.empty()) {
    const auto [r, i] = work_.back();
    work_.pop_back();
    start(r, i);
    ++events;
  }
  result_.rank_finish.assign(ops_.size(), Time::zero());
  for (Rank r = 0; r < ops_.size(); ++r) {
    for (OpIndex i = 0; i < ops_[r].size(); ++i) {
      if (end_[r][i] == kUnknown) report_stuck();
      result_.rank_finish[r] = std::max(result_.rank_finish[r], end_[r][i]);
    }
    result_.makespan = std::max(result_.makespan, result_.rank_finish[r]);
  }
  if (in_.options.record_ops) {
    result_.ops.resize(ops_.size());
    for (Rank r = 0; r < ops_.size(); ++r) {
      for (OpIndex i = 0; i < ops_[r].size(); ++i) {
        Time ready;
        for (OpIndex d : ops_[r][i].dependencies()) ready = std::max(ready, end_[r][d]);
        result_.ops[r].push_back(OpTiming{ready, end_[r][i]});
      }
    }
  }
  result_.events = events;
  return std::move(result_);
}

}  // namespace

RunResult AnalyticalEngine::run(const EngineInput& input) {
  return Run(input).execute();
}

std::unique_ptr<Engine> make_analytical_engine() {
  return std::make_unique<AnalyticalEngine>();
}

}  // namespace lockstep
