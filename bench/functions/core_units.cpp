// Micro-benchmark of unit parsing (the scenario loader's hot spot for large from_file graphs).
#include <benchmark/benchmark.h>

#include "lockstep/core/units.hpp"

static void BM_ParseBandwidth(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(lockstep::parse_bandwidth("400Gbps"));
}
BENCHMARK(BM_ParseBandwidth);

BENCHMARK_MAIN();
