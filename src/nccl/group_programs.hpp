#pragma once
// Internal to the nccl layer: the programs of one collective run at once by several groups of
// GPUs (every data-parallel group of a training step), as one program set. Group j's ranks follow
// group j - 1's; each group's ops are its own program set's, with peers and NetReduce groups
// moved to the group's ranks. Nothing is copied: op() reads the group's set.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "lockstep/collective/program.hpp"

namespace lockstep::nccl_detail {

class GroupPrograms final : public ProgramSet {
 public:
  /// One program set per group, in rank order (groups may share a set).
  explicit GroupPrograms(std::vector<std::shared_ptr<const ProgramSet>> sets);

  Rank num_ranks() const override { return first_.back(); }
  OpIndex num_ops(Rank r) const override;
  Op op(Rank r, OpIndex i) const override;
  BufferSizes buffers(Rank r) const override;
  DataType data_type() const override { return sets_.front()->data_type(); }
  std::span<const Rank> group(std::uint32_t id) const override { return groups_[id]; }
  std::uint32_t num_groups() const override { return static_cast<std::uint32_t>(groups_.size()); }
  std::string label() const override { return sets_.front()->label(); }
  // Every group runs the same algorithm: what one needs, all need. No symmetry is claimed (the
  // groups' GPUs need not be alike) and channels are not split (nothing would be gained).
  Lookahead lookahead() const override { return sets_.front()->lookahead(); }
  OpIndex longest_program() const override;

 private:
  struct Local {
    std::size_t set = 0;  // the group
    Rank rank = 0;        // rank in the group's set
  };
  Local local(Rank r) const;

  std::vector<std::shared_ptr<const ProgramSet>> sets_;
  std::vector<Rank> first_;                 // first rank of each group, then the total
  std::vector<std::uint32_t> first_group_;  // first NetReduce group of each group
  std::vector<std::vector<Rank>> groups_;   // NetReduce groups, members as ranks of this set
};

// Programs whose late ranks start late (stragglers: `slow-gpu:rank=R,delay=D` in a collective):
// a late rank's program begins with a Compute op of its delay, on which every op that waited on
// nothing now waits; its other ops move up one index. The other ranks' programs are unchanged,
// so they wait on the late one wherever the algorithm makes them. No symmetry is claimed (the
// late rank has none) and channels are not split: engines run every rank.
class LateStart final : public ProgramSet {
 public:
  /// `delay[r]` is rank r's late start, or nullopt for a rank on time.
  LateStart(const ProgramSet& inner, std::vector<std::optional<Time>> delay);

  Rank num_ranks() const override { return inner_.num_ranks(); }
  OpIndex num_ops(Rank r) const override { return inner_.num_ops(r) + (delay_[r] ? 1 : 0); }
  Op op(Rank r, OpIndex i) const override;
  BufferSizes buffers(Rank r) const override { return inner_.buffers(r); }
  DataType data_type() const override { return inner_.data_type(); }
  std::span<const Rank> group(std::uint32_t id) const override { return inner_.group(id); }
  std::uint32_t num_groups() const override { return inner_.num_groups(); }
  std::string label() const override { return inner_.label(); }
  Lookahead lookahead() const override { return inner_.lookahead(); }
  OpIndex longest_program() const override { return inner_.longest_program() + 1; }
  PeriodicRegion periodic_region(Rank r, OpIndex i) const override;

 private:
  const ProgramSet& inner_;
  std::vector<std::optional<Time>> delay_;
};

}  // namespace lockstep::nccl_detail
