#include "generated.hpp"

#include <algorithm>

namespace lockstep::collective_detail {

OpIndex ProgramBuilder::add(Op op, std::span<const OpIndex> deps) {
  std::vector<OpIndex> real;
  real.reserve(deps.size());
  for (OpIndex d : deps)
    if (d != kNoOp) real.push_back(d);
  if (real.size() > kMaxDeps) {
    const OpIndex joined = join(real);
    real.assign(1, joined);
  }
  for (OpIndex d : real) op.add_dep(d);
  ops_.push_back(op);
  return static_cast<OpIndex>(ops_.size() - 1);
}

OpIndex ProgramBuilder::join(std::span<const OpIndex> deps) {
  std::vector<OpIndex> level;
  for (OpIndex d : deps)
    if (d != kNoOp) level.push_back(d);
  if (level.empty()) return kNoOp;
  // A tree of zero-length Compute ops, kMaxDeps inputs each.
  while (level.size() > 1) {
    std::vector<OpIndex> next;
    for (std::size_t i = 0; i < level.size(); i += kMaxDeps) {
      const std::size_t end = std::min(level.size(), i + kMaxDeps);
      if (end - i == 1) {
        next.push_back(level[i]);
        continue;
      }
      Op j = make_compute(Time::zero());
      for (std::size_t k = i; k < end; ++k) j.add_dep(level[k]);
      ops_.push_back(j);
      next.push_back(static_cast<OpIndex>(ops_.size() - 1));
    }
    level.swap(next);
  }
  return level[0];
}

namespace {
// 1024 cached ranks: every rank of a communicator up to 1024 stays generated; beyond that the
// cache bounds memory while an engine walking ranks in order still hits.
constexpr std::size_t kCacheSlots = 1024;
}  // namespace

GeneratedProgramSet::GeneratedProgramSet(const CollectiveSpec& spec, std::string label)
    : spec_(spec), label_(std::move(label)) {
  spec_.alltoallv.shrink_to_fit();
  cache_.resize(std::min<std::size_t>(kCacheSlots, spec.ranks));
}

const std::vector<Op>& GeneratedProgramSet::program(Rank r) const {
  Slot& slot = cache_[r % cache_.size()];
  if (slot.rank != r) {
    slot.ops.clear();
    ProgramBuilder b(slot.ops, elem_size());
    generate(r, b);
    slot.ops.shrink_to_fit();
    slot.rank = r;
  }
  return slot.ops;
}

OpIndex GeneratedProgramSet::num_ops(Rank r) const {
  std::lock_guard lock(mutex_);
  return static_cast<OpIndex>(program(r).size());
}

Op GeneratedProgramSet::op(Rank r, OpIndex i) const {
  std::lock_guard lock(mutex_);
  return program(r).at(i);
}

std::uint32_t GeneratedProgramSet::add_group(std::vector<Rank> members) {
  groups_.push_back(std::move(members));
  return static_cast<std::uint32_t>(groups_.size() - 1);
}

BufferSizes standard_buffers(const CollectiveSpec& spec, Rank r) {
  const std::uint64_t es = size_of(spec.type);
  const std::uint64_t e = spec.elements();
  const std::uint64_t n = spec.ranks;
  BufferSizes b;
  switch (spec.op) {
    case CollectiveOp::AllReduce:
    case CollectiveOp::Broadcast:
    case CollectiveOp::Reduce:
      b.input = b.output = e * es;
      b.in_place = true;
      break;
    case CollectiveOp::AllGather:
      b.input = block_size(e, n, r) * es;
      b.output = e * es;
      break;
    case CollectiveOp::ReduceScatter:
      b.input = e * es;
      b.output = block_size(e, n, r) * es;
      break;
    case CollectiveOp::AllToAll:
      b.input = e * es;
      b.output = n * block_size(e, n, r) * es;
      break;
    case CollectiveOp::AllToAllV:
      for (Rank j = 0; j < n; ++j) {
        b.input += spec.alltoallv[r][j];
        b.output += spec.alltoallv[j][r];
      }
      break;
    case CollectiveOp::SendRecv:
      b.input = b.output = e * es;
      break;
    case CollectiveOp::Barrier:
      break;
  }
  return b;
}

std::uint64_t pipeline_depth(const CollectiveSpec& spec, std::uint64_t span_elems,
                             std::uint64_t default_chunk) {
  const std::uint64_t chunk = spec.chunk.count() ? spec.chunk.count() : default_chunk;
  if (chunk == 0) return 1;
  const std::uint64_t chunk_elems = std::max<std::uint64_t>(1, chunk / size_of(spec.type));
  return std::max<std::uint64_t>(1, (span_elems + chunk_elems - 1) / chunk_elems);
}

}  // namespace lockstep::collective_detail
