// How much memory a collective's per-rank programs take at scale, and how fast they enumerate.
// A 131,072-rank ring all-reduce has 4(n-1) = 524,284 ops per rank, 6.9e10 in all: materialised
// at sizeof(Op) bytes each that would be terabytes; the lazy ring computes op(rank, i) on demand.
// Prints the heap bytes each program set holds after one rank's program was enumerated (counted
// by the replaced global operator new/delete below), the time per op of that enumeration, and
// the process's peak resident memory.
#include <fmt/format.h>
#include <sys/resource.h>

#include <atomic>
#include <chrono>
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

std::size_t heap_in_use() {
  return g_live_bytes.load();
}

long peak_rss_kib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

void measure(lockstep::CollectiveOp op, lockstep::Algorithm algo, lockstep::Rank n,
             std::uint32_t ranks_per_node) {
  using namespace lockstep;
  CollectiveSpec s;
  s.op = op;
  s.algorithm = algo;
  s.ranks = n;
  s.bytes = Bytes::gib(1);
  s.type = DataType::Float32;
  s.ranks_per_node = ranks_per_node;
  const std::size_t before = heap_in_use();
  const auto t0 = std::chrono::steady_clock::now();
  const auto p = make_collective(s);
  const auto t1 = std::chrono::steady_clock::now();
  // Enumerate one whole rank's program (in the middle of the ring).
  const Rank r = n / 2;
  const OpIndex ops = p->num_ops(r);
  std::uint64_t bytes = 0;
  for (OpIndex i = 0; i < ops; ++i) bytes += p->op(r, i).bytes();
  const auto t2 = std::chrono::steady_clock::now();
  const std::size_t held = heap_in_use() - before;
  const double materialised = static_cast<double>(ops) * n * sizeof(Op);
  fmt::print(
      "{:<28} ranks={:<7} build={:8.3f} ms  heap={:>10} B  rank {} ops={} ({:.1f} ns/op, "
      "{} B touched)  materialised would be {:.3g} GB\n",
      p->label(), n, std::chrono::duration<double, std::milli>(t1 - t0).count(), held, r, ops,
      std::chrono::duration<double, std::nano>(t2 - t1).count() / ops, bytes, materialised / 1e9);
}

}  // namespace

int main() {
  using lockstep::Algorithm;
  using lockstep::CollectiveOp;
  measure(CollectiveOp::AllReduce, Algorithm::Ring, 131072, 0);
  measure(CollectiveOp::AllReduce, Algorithm::Ring, 131072, 8);
  measure(CollectiveOp::AllGather, Algorithm::Ring, 131072, 8);
  measure(CollectiveOp::AllReduce, Algorithm::Tree, 131072, 0);
  measure(CollectiveOp::AllReduce, Algorithm::HalvingDoubling, 131072, 0);
  measure(CollectiveOp::AllReduce, Algorithm::Hierarchical, 131072, 8);
  fmt::print("peak resident memory: {} MiB\n", peak_rss_kib() / 1024);
  return 0;
}
