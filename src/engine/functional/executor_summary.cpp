// The parts of executor.hpp that read a program set without running it: per-rank op counts and
// byte totals, and buffer allocation.
#include "lockstep/engine/functional/executor.hpp"

namespace lockstep {

RankStats summarize_rank(const ProgramSet& programs, Rank r) {
  RankStats s;
  s.ops = programs.num_ops(r);
  for (OpIndex i = 0; i < s.ops; ++i) {
    const Op op = programs.op(r, i);
    switch (op.kind) {
      case OpKind::Send:
        ++s.sends;
        s.bytes_sent += op.src.bytes;
        break;
      case OpKind::Recv:
        ++s.recvs;
        s.bytes_received += op.dst.bytes;
        break;
      case OpKind::Copy:
        ++s.copies;
        break;
      case OpKind::Reduce:
        ++s.reduces;
        break;
      case OpKind::Compute:
        ++s.computes;
        break;
      case OpKind::NetReduce:
        ++s.net_reduces;
        s.net_reduce_bytes += op.src.bytes;
        break;
    }
  }
  return s;
}

std::vector<RankBuffers> allocate_buffers(const ProgramSet& programs) {
  std::vector<RankBuffers> out(programs.num_ranks());
  for (Rank r = 0; r < programs.num_ranks(); ++r) {
    const BufferSizes s = programs.buffers(r);
    out[r].in_place = s.in_place;
    out[r].input.assign(s.input, std::byte{0});
    if (!s.in_place) out[r].output.assign(s.output, std::byte{0});
    out[r].scratch.assign(s.scratch, std::byte{0});
  }
  return out;
}

}  // namespace lockstep
