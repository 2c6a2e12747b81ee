#include "lockstep/collective/program.hpp"

#include <algorithm>
#include <stdexcept>

namespace lockstep {

OpIndex ProgramSet::longest_program() const {
  const Rank n = num_ranks();
  const Rank period = symmetry_period();
  const Rank span = period > 0 && n % period == 0 ? period : n;
  OpIndex longest = 0;
  for (Rank r = 0; r < span; ++r) longest = std::max(longest, num_ops(r));
  return longest;
}

void Op::add_dep(OpIndex i) {
  if (num_deps >= kMaxDeps) throw std::logic_error("Op::add_dep: more than kMaxDeps dependencies");
  deps[num_deps++] = i;
}

Op make_send(Rank peer, BufferRange src, std::uint16_t channel) {
  Op op;
  op.kind = OpKind::Send;
  op.peer = peer;
  op.src = src;
  op.channel = channel;
  return op;
}

Op make_recv(Rank peer, BufferRange dst, RecvMode mode, std::uint16_t channel) {
  Op op;
  op.kind = OpKind::Recv;
  op.peer = peer;
  op.dst = dst;
  op.mode = mode;
  op.channel = channel;
  return op;
}

Op make_copy(BufferRange src, BufferRange dst) {
  Op op;
  op.kind = OpKind::Copy;
  op.src = src;
  op.dst = dst;
  return op;
}

Op make_reduce(BufferRange src, BufferRange dst) {
  Op op;
  op.kind = OpKind::Reduce;
  op.src = src;
  op.dst = dst;
  return op;
}

Op make_compute(Time duration) {
  Op op;
  op.kind = OpKind::Compute;
  op.duration = duration;
  return op;
}

Op make_net_reduce(std::uint32_t group, BufferRange src, BufferRange dst) {
  Op op;
  op.kind = OpKind::NetReduce;
  op.peer = group;
  op.src = src;
  op.dst = dst;
  return op;
}

const char* to_string(OpKind kind) {
  switch (kind) {
    case OpKind::Send:
      return "send";
    case OpKind::Recv:
      return "recv";
    case OpKind::Copy:
      return "copy";
    case OpKind::Reduce:
      return "reduce";
    case OpKind::Compute:
      return "compute";
    case OpKind::NetReduce:
      return "net_reduce";
  }
  return "?";
}

std::size_t size_of(DataType t) {
  switch (t) {
    case DataType::Int8:
    case DataType::Uint8:
      return 1;
    case DataType::Bf16:
      return 2;
    case DataType::Int32:
    case DataType::Uint32:
    case DataType::Float32:
      return 4;
    case DataType::Int64:
    case DataType::Float64:
      return 8;
  }
  return 1;
}

const char* to_string(DataType t) {
  switch (t) {
    case DataType::Int8:
      return "int8";
    case DataType::Uint8:
      return "uint8";
    case DataType::Int32:
      return "int32";
    case DataType::Uint32:
      return "uint32";
    case DataType::Int64:
      return "int64";
    case DataType::Float32:
      return "float";
    case DataType::Float64:
      return "double";
    case DataType::Bf16:
      return "bfloat16";
  }
  return "?";
}

std::span<const Rank> ProgramSet::group(std::uint32_t) const {
  return {};
}

MaterializedProgramSet::MaterializedProgramSet(Rank ranks, DataType type)
    : programs_(ranks), buffers_(ranks), type_(type) {}

OpIndex MaterializedProgramSet::add(Rank r, const Op& op) {
  programs_[r].push_back(op);
  return static_cast<OpIndex>(programs_[r].size() - 1);
}

std::uint32_t MaterializedProgramSet::add_group(std::vector<Rank> members) {
  groups_.push_back(std::move(members));
  return static_cast<std::uint32_t>(groups_.size() - 1);
}

}  // namespace lockstep
