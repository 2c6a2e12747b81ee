// Google Benchmark: the flow engine's max-min solver under churn. L links carry F live flows of
// 4 random distinct links each; one iteration is one departure and one arrival, each followed by
// an incremental solve, as in the flow engine. Three sizes:
//   links:1000/flows:100      a rack: sparse, tiny components
//   links:100000/flows:5000   a large fabric: mostly independent flows
//   links:100/flows:200       heavy sharing: one component of every flow per solve
// Counters: ops/s (arrivals + departures per second), changed (rates changed per solve),
// peak_MiB (peak resident memory of this benchmark).
//
//   bench_flow_maxmin [--benchmark_filter=REGEX] [--benchmark_format=json] ...
#include <benchmark/benchmark.h>

#include <vector>

#include "../process_usage.hpp"
#include "lockstep/core/rng.hpp"
#include "lockstep/engine/flow/maxmin.hpp"

namespace {

using lockstep::MaxMinSolver;

// Live flows over `links` links of 50 GB/s, each flow on 4 distinct random links.
class Churn {
 public:
  explicit Churn(std::size_t links) : links_(links), solver_(std::vector<double>(links, 5e10)) {}

  void add_one() {
    for (auto& u : uses_) u = {static_cast<std::uint32_t>(rng_.below(links_)), 1.0};
    for (std::size_t i = 1; i < uses_.size(); ++i)
      for (std::size_t j = 0; j < i; ++j)
        if (uses_[i].cons == uses_[j].cons) uses_[i].cons = (uses_[i].cons + 1 + i) % links_;
    live_.push_back(solver_.add(uses_));
  }

  void remove_one() {
    const std::size_t victim = rng_.below(live_.size());
    solver_.remove(live_[victim]);
    live_[victim] = live_.back();
    live_.pop_back();
  }

  /// Solves and returns how many rates changed.
  std::size_t solve() {
    solver_.solve();
    return solver_.changed().size();
  }

  std::size_t live() const { return live_.size(); }

 private:
  std::size_t links_;
  lockstep::Rng rng_{42};
  MaxMinSolver solver_;
  std::vector<MaxMinSolver::VarId> live_;
  std::vector<MaxMinSolver::Use> uses_ = std::vector<MaxMinSolver::Use>(4);
};

void BM_MaxMinChurn(benchmark::State& state) {
  lockstep::bench::reset_peak_rss();
  Churn churn(static_cast<std::size_t>(state.range(0)));
  while (churn.live() < static_cast<std::size_t>(state.range(1))) churn.add_one();
  churn.solve();
  std::size_t changed = 0;
  for (auto _ : state) {
    churn.remove_one();
    changed += churn.solve();
    churn.add_one();
    changed += churn.solve();
  }
  using benchmark::Counter;
  state.counters["ops/s"] = Counter(2, Counter::kIsIterationInvariantRate);
  state.counters["changed"] = Counter(static_cast<double>(changed) / 2, Counter::kAvgIterations);
  state.counters["peak_MiB"] = lockstep::bench::peak_rss_mib();
}
BENCHMARK(BM_MaxMinChurn)
    ->ArgNames({"links", "flows"})
    ->Args({1'000, 100})
    ->Args({100'000, 5'000})
    ->Args({100, 200});

}  // namespace

BENCHMARK_MAIN();
