// Google Benchmark: how much memory a collective's per-rank programs take at scale, and how fast
// they are built and enumerated. A 131,072-rank ring all-reduce has 4(n-1) = 524,284 ops per
// rank, 6.9e10 in all: materialised at sizeof(Op) bytes each that would be terabytes; the lazy
// ring computes op(rank, i) on demand. Two benchmarks per program set:
//   build/<set>       make_collective
//   enumerate/<set>   every op of one rank's program (rank n/2, in the middle of the ring)
// Counters of enumerate/: held_B, the heap bytes the program set holds once one rank's program
// was enumerated (counted by the replaced global operator new/delete below); ops, that rank's op
// count; op/s; materialised_GB, what sizeof(Op) bytes per op of every rank would take.
//
//   bench_collective_memory [--benchmark_filter=REGEX] [--benchmark_format=json] ...
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <new>

#include "lockstep/collective/collective.hpp"

namespace {
std::atomic<std::size_t> g_live_bytes{0};
constexpr std::size_t kHeader = alignof(std::max_align_t);
}  // namespace

// Every allocation carries its size in a header so that deletes can be subtracted.
void* operator new(std::size_t n) {
  auto* p = static_cast<unsigned char*>(std::malloc(n + kHeader));
  if (!p) throw std::bad_alloc();
  *reinterpret_cast<std::size_t*>(p) = n;
  g_live_bytes += n;
  return p + kHeader;
}
void operator delete(void* q) noexcept {
  if (!q) return;
  auto* p = static_cast<unsigned char*>(q) - kHeader;
  g_live_bytes -= *reinterpret_cast<std::size_t*>(p);
  std::free(p);
}
void operator delete(void* q, std::size_t) noexcept {
  operator delete(q);
}

namespace {

using namespace lockstep;

struct Case {
  const char* name;
  CollectiveOp op;
  Algorithm algo;
  std::uint32_t ranks_per_node;          // 0: flat
  std::array<std::uint32_t, 3> torus{};  // torus_ring's dims (32 x 64 x 64 = kRanks)
};

constexpr Rank kRanks = 131072;
constexpr Case kCases[] = {
    {"all_reduce/ring", CollectiveOp::AllReduce, Algorithm::Ring, 0},
    {"all_reduce/ring", CollectiveOp::AllReduce, Algorithm::Ring, 8},
    {"all_gather/ring", CollectiveOp::AllGather, Algorithm::Ring, 8},
    {"all_reduce/tree", CollectiveOp::AllReduce, Algorithm::Tree, 0},
    {"all_reduce/halving_doubling", CollectiveOp::AllReduce, Algorithm::HalvingDoubling, 0},
    {"all_reduce/hierarchical", CollectiveOp::AllReduce, Algorithm::Hierarchical, 8},
    {"all_reduce/torus_ring", CollectiveOp::AllReduce, Algorithm::TorusRing, 0, {32, 64, 64}},
    {"all_gather/torus_ring", CollectiveOp::AllGather, Algorithm::TorusRing, 0, {32, 64, 64}},
};

CollectiveSpec spec_of(const Case& c) {
  CollectiveSpec s;
  s.op = c.op;
  s.algorithm = c.algo;
  s.ranks = kRanks;
  s.bytes = Bytes::gib(1);
  s.type = DataType::Float32;
  s.ranks_per_node = c.ranks_per_node;
  if (c.algo == Algorithm::TorusRing) s.torus_dims.assign(c.torus.begin(), c.torus.end());
  return s;
}

std::uint64_t enumerate(const ProgramSet& p, Rank r) {
  std::uint64_t bytes = 0;
  for (OpIndex i = 0, n = p.num_ops(r); i < n; ++i) bytes += p.op(r, i).bytes();
  return bytes;
}

void BM_Build(benchmark::State& state, const Case& c) {
  const CollectiveSpec s = spec_of(c);
  for (auto _ : state) benchmark::DoNotOptimize(make_collective(s));
}

void BM_Enumerate(benchmark::State& state, const Case& c) {
  const std::size_t before = g_live_bytes.load();
  const auto p = make_collective(spec_of(c));
  const Rank r = kRanks / 2;
  benchmark::DoNotOptimize(enumerate(*p, r));  // what the program set caches stays held
  const std::size_t held = g_live_bytes.load() - before;
  for (auto _ : state) benchmark::DoNotOptimize(enumerate(*p, r));
  using benchmark::Counter;
  const auto ops = static_cast<double>(p->num_ops(r));
  state.counters["held_B"] = static_cast<double>(held);
  state.counters["ops"] = ops;
  state.counters["op/s"] = Counter(ops, Counter::kIsIterationInvariantRate);
  state.counters["materialised_GB"] = ops * kRanks * sizeof(Op) / 1e9;
}

}  // namespace

int main(int argc, char** argv) {
  for (const Case& c : kCases) {
    const std::string suffix =
        fmt::format("{}/ranks:{}/per_node:{}", c.name, kRanks, c.ranks_per_node);
    benchmark::RegisterBenchmark(("build/" + suffix).c_str(), BM_Build, c);
    benchmark::RegisterBenchmark(("enumerate/" + suffix).c_str(), BM_Enumerate, c)
        ->Unit(benchmark::kMillisecond);
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
