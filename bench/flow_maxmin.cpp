// Max-min solver benchmark at three sizes: flows of 4 random links each over L links arrive and
// leave one at a time (each arrival/departure followed by an incremental solve), as in the flow
// engine. Prints operations per second and the mean component size re-solved.
//
//   bench_flow_maxmin
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <vector>

#include "lockstep/core/rng.hpp"
#include "lockstep/engine/flow/maxmin.hpp"

namespace {

using lockstep::MaxMinSolver;

void run(std::size_t links, std::size_t live_flows, std::size_t operations) {
  lockstep::Rng rng(42);
  MaxMinSolver solver(std::vector<double>(links, 5e10));
  std::vector<MaxMinSolver::VarId> live;
  std::vector<MaxMinSolver::Use> uses(4);
  auto add_one = [&] {
    for (auto& u : uses) u = {static_cast<std::uint32_t>(rng.below(links)), 1.0};
    // Distinct constraints per variable.
    for (std::size_t i = 1; i < uses.size(); ++i)
      for (std::size_t j = 0; j < i; ++j)
        if (uses[i].cons == uses[j].cons) uses[i].cons = (uses[i].cons + 1 + i) % links;
    live.push_back(solver.add(uses));
  };
  while (live.size() < live_flows) add_one();
  solver.solve();
  const auto t0 = std::chrono::steady_clock::now();
  std::size_t changed = 0;
  for (std::size_t op = 0; op < operations; ++op) {
    const std::size_t victim = rng.below(live.size());
    solver.remove(live[victim]);
    live[victim] = live.back();
    live.pop_back();
    solver.solve();
    changed += solver.changed().size();
    add_one();
    solver.solve();
    changed += solver.changed().size();
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  std::printf(
      "links %8zu flows %8zu: %9.0f arrivals+departures/s, %6.1f rates changed per solve, "
      "peak %.0f MiB\n",
      links, live_flows, 2.0 * static_cast<double>(operations) / s,
      static_cast<double>(changed) / (2.0 * static_cast<double>(operations)),
      static_cast<double>(u.ru_maxrss) / 1024.0);
  std::fflush(stdout);
}

}  // namespace

int main() {
  run(1'000, 100, 20'000);      // a rack: sparse, tiny components
  run(100'000, 5'000, 20'000);  // a large fabric: mostly independent flows
  run(100, 200, 1'000);         // heavy sharing: one component of every flow per solve
  return 0;
}
