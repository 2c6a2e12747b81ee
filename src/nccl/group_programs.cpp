#include "group_programs.hpp"

#include <algorithm>

namespace lockstep::nccl_detail {

GroupPrograms::GroupPrograms(std::vector<std::shared_ptr<const ProgramSet>> sets)
    : sets_(std::move(sets)) {
  first_.push_back(0);
  for (const auto& set : sets_) {
    first_group_.push_back(static_cast<std::uint32_t>(groups_.size()));
    for (std::uint32_t id = 0; id < set->num_groups(); ++id) {
      std::vector<Rank> members;
      for (Rank m : set->group(id)) members.push_back(first_.back() + m);
      groups_.push_back(std::move(members));
    }
    first_.push_back(first_.back() + set->num_ranks());
  }
}

GroupPrograms::Local GroupPrograms::local(Rank r) const {
  const auto next = std::upper_bound(first_.begin(), first_.end(), r);
  const auto set = static_cast<std::size_t>(next - first_.begin() - 1);
  return {set, r - first_[set]};
}

OpIndex GroupPrograms::num_ops(Rank r) const {
  const Local l = local(r);
  return sets_[l.set]->num_ops(l.rank);
}

Op GroupPrograms::op(Rank r, OpIndex i) const {
  const Local l = local(r);
  Op op = sets_[l.set]->op(l.rank, i);
  if (op.kind == OpKind::Send || op.kind == OpKind::Recv) op.peer += first_[l.set];
  if (op.kind == OpKind::NetReduce) op.peer += first_group_[l.set];
  return op;
}

BufferSizes GroupPrograms::buffers(Rank r) const {
  const Local l = local(r);
  return sets_[l.set]->buffers(l.rank);
}

OpIndex GroupPrograms::longest_program() const {
  OpIndex longest = 0;
  const ProgramSet* previous = nullptr;
  for (const auto& set : sets_) {
    if (set.get() != previous) longest = std::max(longest, set->longest_program());
    previous = set.get();
  }
  return longest;
}

LateStart::LateStart(const ProgramSet& inner, std::vector<std::optional<Time>> delay)
    : inner_(inner), delay_(std::move(delay)) {
  delay_.resize(inner.num_ranks());
}

Op LateStart::op(Rank r, OpIndex i) const {
  if (!delay_[r]) return inner_.op(r, i);
  if (i == 0) return make_compute(*delay_[r]);
  Op op = inner_.op(r, i - 1);
  for (std::uint8_t d = 0; d < op.num_deps; ++d) ++op.deps[d];
  if (op.num_deps == 0) op.add_dep(0);
  return op;
}

PeriodicRegion LateStart::periodic_region(Rank r, OpIndex i) const {
  if (!delay_[r]) return inner_.periodic_region(r, i);
  if (i == 0) return {};
  PeriodicRegion region = inner_.periodic_region(r, i - 1);
  if (region.period_ops == 0) return region;
  // An op that waited on nothing now waits on op 0 in every period, which breaks the promise
  // that deps move with the period: no region then (the engine simulates those ops in full).
  for (OpIndex j = region.first_op; j < region.first_op + region.period_ops; ++j)
    if (inner_.op(r, j).num_deps == 0) return {};
  ++region.first_op;
  return region;
}

}  // namespace lockstep::nccl_detail
