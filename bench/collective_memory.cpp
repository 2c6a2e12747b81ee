// How much memory a collective's per-rank programs take at scale, and how fast they enumerate.
// A 131,072-rank ring all-reduce has 4(n-1) = 524,284 ops per rank, 6.9e10 in all: materialised
// at sizeof(Op) bytes each that would be terabytes; the lazy ring computes op(rank, i) on demand.
// Prints heap bytes held by each program set (glibc mallinfo2), the time to enumerate one rank's
// program, and the process's peak resident memory.
#include <fmt/format.h>
#include <malloc.h>
#include <sys/resource.h>

#include <chrono>
#include <cstdint>

#include "lockstep/collective/collective.hpp"

namespace {

std::size_t heap_in_use() {
  return mallinfo2().uordblks;
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
