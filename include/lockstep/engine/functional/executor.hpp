#pragma once
// The functional executor: runs every rank's program in one process on real buffers, to prove
// that a collective algorithm computes the right answer (an all-reduce really sums).
//
// Semantics (the same the timing engines assume):
//  - an op may run once the ops it depends on have finished; independent ops of one rank may
//    run in any order (Schedule::Reverse picks the most recently enabled op first, a different
//    legal interleaving that exposes missing dependencies);
//  - sends are eager: a send reads its source range when it runs and never waits for the
//    receiver; the k-th send from a to b on channel c is matched to the k-th recv at b from a on
//    channel c (program order), and their sizes must be equal;
//  - a NetReduce op completes when the k-th NetReduce of every member of its group is ready;
//    each member's dst receives the element-wise sum of all members' src. When src and dst
//    sizes differ (NVLS reduce-scatter / multicast all-gather), offsets are positions: every
//    src is added in at its own positions and every dst receives the sum at its positions;
// Errors in the programs are InputErrors with one line naming ranks and ops: a deadlock (no op
// can run while some remain), a send/recv size mismatch, a message nobody receives, a range
// outside its buffer.
//
//   auto programs = make_collective(spec);
//   std::vector<RankBuffers> buffers = allocate_buffers(*programs);
//   FunctionalResult r = execute(*programs, buffers);   // r.steps, r.ranks[0].bytes_sent
// verify.hpp fills the inputs and checks the outputs of a collective.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "lockstep/collective/program.hpp"

namespace lockstep {

enum class Schedule : std::uint8_t { Forward, Reverse };

struct FunctionalOptions {
  bool move_data = true;  // false: only match messages, count bytes and steps
  Schedule schedule = Schedule::Forward;
  bool track_causality = false;     // per-rank set of ranks it heard from (n <= 4096)
  std::uint64_t max_ops = 8000000;  // refuse larger program sets (memory ~100 B per op)
};

/// One rank's memory. Output aliases Input when the programs say in_place.
struct RankBuffers {
  std::vector<std::byte> input, output, scratch;
  bool in_place = false;
  std::vector<std::byte>& out() { return in_place ? input : output; }
  const std::vector<std::byte>& out() const { return in_place ? input : output; }
};

/// Per-rank summary of what its program did.
struct RankStats {
  std::uint64_t ops = 0;
  std::uint64_t sends = 0, recvs = 0, copies = 0, reduces = 0, computes = 0, net_reduces = 0;
  std::uint64_t bytes_sent = 0, bytes_received = 0;
  std::uint64_t net_reduce_bytes = 0;  // bytes contributed to in-network reductions
  std::uint32_t steps = 0;  // longest chain of messages (latency terms) ending at this rank
};

/// Counts ops and bytes of one rank by reading its program (no execution; cheap and lazy-safe).
RankStats summarize_rank(const ProgramSet& programs, Rank r);

struct FunctionalResult {
  std::vector<RankStats> ranks;
  std::uint32_t steps = 0;  // max over ranks: the number of message latencies on the critical path
  std::uint64_t ops = 0;    // total ops executed
  // With track_causality: heard[r] holds ranks whose first op causally precedes r's finish,
  // as bits (word w, bit b = rank 64w + b).
  std::vector<std::vector<std::uint64_t>> heard;
};

/// Allocates zeroed buffers sized by programs.buffers(r).
std::vector<RankBuffers> allocate_buffers(const ProgramSet& programs);

/// Runs the programs. `buffers` (from allocate_buffers, filled with inputs) is read and written
/// when options.move_data; it may be empty otherwise. Throws InputError on broken programs.
FunctionalResult execute(const ProgramSet& programs, std::vector<RankBuffers>& buffers,
                         const FunctionalOptions& options = {});

}  // namespace lockstep
