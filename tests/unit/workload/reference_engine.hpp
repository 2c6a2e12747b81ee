#pragma once
// A contention-free reference executor for the workload tests: every transfer of S bytes takes
// latency + S / bandwidth from the moment both its send and its matching receive are ready, and
// compute ops take their duration. With it the expected iteration times of small training steps
// can be derived by hand; the real engines are held to physics by their own tests.
#include <deque>
#include <map>
#include <stdexcept>
#include <tuple>
#include <vector>

#include "lockstep/engine/engine.hpp"

namespace lockstep::testing {

class ReferenceEngine final : public Engine {
 public:
  ReferenceEngine(Time latency, Bandwidth bandwidth) : latency_(latency), bandwidth_(bandwidth) {}
  std::string_view name() const override { return "reference"; }

  RunResult run(const EngineInput& in) override {
    const ProgramSet& p = *in.programs;
    const Rank n = p.num_ranks();
    std::vector<std::vector<Op>> ops(n);
    std::vector<std::vector<Time>> ready(n), end(n);
    std::vector<std::vector<int>> missing(n);
    std::vector<std::vector<std::vector<OpIndex>>> dependents(n);
    using Key = std::tuple<Rank, Rank, std::uint16_t>;
    std::map<Key, std::vector<OpIndex>> sends, recvs;  // in program order per (src, dst, channel)
    std::vector<std::vector<std::size_t>> slot(n);     // position of a send/recv in its queue
    std::deque<std::pair<Rank, OpIndex>> work;
    for (Rank r = 0; r < n; ++r) {
      const OpIndex count = p.num_ops(r);
      ready[r].assign(count, Time::zero());
      end[r].assign(count, Time::infinite());
      missing[r].assign(count, 0);
      dependents[r].resize(count);
      slot[r].assign(count, 0);
      for (OpIndex i = 0; i < count; ++i) {
        ops[r].push_back(p.op(r, i));
        const Op& op = ops[r].back();
        missing[r][i] = op.num_deps;
        for (OpIndex d : op.dependencies()) dependents[r][d].push_back(i);
        if (op.kind == OpKind::Send) {
          auto& q = sends[{r, op.peer, op.channel}];
          slot[r][i] = q.size();
          q.push_back(i);
        } else if (op.kind == OpKind::Recv) {
          auto& q = recvs[{op.peer, r, op.channel}];
          slot[r][i] = q.size();
          q.push_back(i);
        }
        if (op.num_deps == 0) work.emplace_back(r, i);
      }
    }
    std::vector<std::vector<char>> is_ready(n);
    for (Rank r = 0; r < n; ++r) is_ready[r].assign(ops[r].size(), 0);
    auto finish = [&](Rank r, OpIndex i, Time t) {
      end[r][i] = t;
      for (OpIndex d : dependents[r][i]) {
        ready[r][d] = std::max(ready[r][d], t);
        if (--missing[r][d] == 0) work.emplace_back(r, d);
      }
    };
    std::size_t done = 0;
    while (!work.empty()) {
      auto [r, i] = work.front();
      work.pop_front();
      const Op& op = ops[r][i];
      is_ready[r][i] = 1;
      if (op.kind == OpKind::Send || op.kind == OpKind::Recv) {
        const bool send = op.kind == OpKind::Send;
        const Rank src = send ? r : op.peer, dst = send ? op.peer : r;
        const auto& partner_queue =
            send ? recvs[{src, dst, op.channel}] : sends[{src, dst, op.channel}];
        if (slot[r][i] >= partner_queue.size()) throw std::runtime_error("unmatched send/recv");
        const Rank pr = send ? dst : src;
        const OpIndex pi = partner_queue[slot[r][i]];
        if (!is_ready[pr][pi]) continue;  // the partner completes the pair when it is ready
        const Time start = std::max(ready[r][i], ready[pr][pi]);
        const Time t = start + latency_ + transfer_time(Bytes(op.bytes()), bandwidth_);
        finish(r, i, t);
        finish(pr, pi, t);
        done += 2;
      } else {
        finish(r, i, ready[r][i] + (op.kind == OpKind::Compute ? op.duration : Time::zero()));
        ++done;
      }
    }
    RunResult result;
    result.rank_finish.assign(n, Time::zero());
    std::size_t total = 0;
    for (Rank r = 0; r < n; ++r) {
      total += ops[r].size();
      for (Time t : end[r]) {
        if (t == Time::infinite()) throw std::runtime_error("deadlock in reference engine");
        result.rank_finish[r] = std::max(result.rank_finish[r], t);
      }
      result.makespan = std::max(result.makespan, result.rank_finish[r]);
    }
    if (done != total) throw std::runtime_error("deadlock in reference engine");
    if (in.options.record_ops) {
      result.ops.resize(n);
      for (Rank r = 0; r < n; ++r) {
        for (OpIndex i = 0; i < ops[r].size(); ++i) {
          const Op& op = ops[r][i];
          Time start = ready[r][i];
          if (op.kind == OpKind::Send || op.kind == OpKind::Recv) {
            start = end[r][i] - latency_ - transfer_time(Bytes(op.bytes()), bandwidth_);
          }
          result.ops[r].push_back({start, end[r][i]});
        }
      }
    }
    return result;
  }

 private:
  Time latency_;
  Bandwidth bandwidth_;
};

}  // namespace lockstep::testing
