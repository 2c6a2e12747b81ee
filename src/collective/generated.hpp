#pragma once
// Internal to the collective layer: the pieces algorithms are built from.
//  - ProgramBuilder appends ops to one rank's program with readable helpers (send/recv/...)
//  - GeneratedProgramSet generates one rank's program on demand and keeps a bounded,
//    direct-mapped cache of generated ranks, so memory stays O(cache x program length) however
//    many ranks there are.
//  - Range helpers turn element ranges into byte ranges.
#include <cstdint>
#include <initializer_list>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "lockstep/collective/collective.hpp"
#include "lockstep/collective/program.hpp"

namespace lockstep::collective_detail {

inline constexpr OpIndex kNoOp = 0xffffffffu;

/// A byte range of `count` elements starting at element `first` of `buffer`.
inline BufferRange elems(Buffer buffer, std::uint64_t first, std::uint64_t count,
                         std::size_t elem_size) {
  return BufferRange{buffer, first * elem_size, count * elem_size};
}

/// An element range [first, first + count).
struct Span {
  std::uint64_t first = 0;
  std::uint64_t count = 0;
  /// Part i of `parts` near-equal contiguous parts of this span.
  Span part(std::uint64_t parts, std::uint64_t i) const {
    return {first + block_start(count, parts, i), block_size(count, parts, i)};
  }
};

class ProgramBuilder {
 public:
  explicit ProgramBuilder(std::vector<Op>& out, std::size_t elem_size)
      : ops_(out), elem_size_(elem_size) {}

  /// Appends `op` with the given dependencies (kNoOp entries are skipped; more than kMaxDeps
  /// real dependencies are joined through zero-length Compute ops).
  OpIndex add(Op op, std::span<const OpIndex> deps);
  OpIndex add(Op op, std::initializer_list<OpIndex> deps = {}) {
    return add(op, std::span<const OpIndex>(deps.begin(), deps.size()));
  }
  /// One op index that completes after all `deps` (kNoOp when there are none).
  OpIndex join(std::span<const OpIndex> deps);

  BufferRange range(Buffer b, Span s) const { return elems(b, s.first, s.count, elem_size_); }
  OpIndex send(Rank peer, Buffer b, Span s, std::uint16_t ch, std::initializer_list<OpIndex> d) {
    return add(make_send(peer, range(b, s), ch), d);
  }
  OpIndex recv(Rank peer, Buffer b, Span s, RecvMode m, std::uint16_t ch,
               std::initializer_list<OpIndex> d) {
    return add(make_recv(peer, range(b, s), m, ch), d);
  }
  std::size_t elem_size() const { return elem_size_; }
  OpIndex size() const { return static_cast<OpIndex>(ops_.size()); }

 private:
  std::vector<Op>& ops_;
  std::size_t elem_size_;
};

/// A ProgramSet whose rank programs are produced by generate() on demand.
class GeneratedProgramSet : public ProgramSet {
 public:
  GeneratedProgramSet(const CollectiveSpec& spec, std::string label);
  Rank num_ranks() const override { return spec_.ranks; }
  OpIndex num_ops(Rank r) const override;
  Op op(Rank r, OpIndex i) const override;
  DataType data_type() const override { return spec_.type; }
  std::string label() const override { return label_; }
  std::span<const Rank> group(std::uint32_t id) const override { return groups_[id]; }
  std::uint32_t num_groups() const override { return static_cast<std::uint32_t>(groups_.size()); }
  // Generated programs (direct, doubling, PAT, in-network reduction, hierarchical) lay out what
  // runs at once one part after another unless they say otherwise (the chain does).
  Lookahead lookahead() const override { return Lookahead::Program; }

 protected:
  /// Appends rank r's whole program to `b`. Must be deterministic.
  virtual void generate(Rank r, ProgramBuilder& b) const = 0;
  std::uint32_t add_group(std::vector<Rank> members);
  const CollectiveSpec& spec() const { return spec_; }
  std::size_t elem_size() const { return size_of(spec_.type); }

 private:
  struct Slot {
    Rank rank = 0xffffffffu;
    std::vector<Op> ops;
  };
  const std::vector<Op>& program(Rank r) const;  // caller holds mutex_

  CollectiveSpec spec_;
  std::string label_;
  std::vector<std::vector<Rank>> groups_;
  mutable std::mutex mutex_;
  mutable std::vector<Slot> cache_;
};

// Factories, one per algorithm family (each validates its own op support).
std::unique_ptr<ProgramSet> make_ring(const CollectiveSpec& spec);
std::unique_ptr<ProgramSet> make_chain(const CollectiveSpec& spec);
std::unique_ptr<ProgramSet> make_tree(const CollectiveSpec& spec);
std::unique_ptr<ProgramSet> make_halving_doubling(const CollectiveSpec& spec);
std::unique_ptr<ProgramSet> make_recursive_doubling(const CollectiveSpec& spec);
std::unique_ptr<ProgramSet> make_direct(const CollectiveSpec& spec);
std::unique_ptr<ProgramSet> make_hierarchical(const CollectiveSpec& spec);
std::unique_ptr<ProgramSet> make_net_reduce(const CollectiveSpec& spec);
std::unique_ptr<ProgramSet> make_pat(const CollectiveSpec& spec);
std::unique_ptr<ProgramSet> make_torus_ring(const CollectiveSpec& spec);  // torus_all_reduce.cpp

/// Hamiltonian cycles of a fully connected node of g GPUs, as local indices starting at 0: the
/// g - 1 edge-disjoint ones when a search finds them, else rotations (ring.cpp). Channel c of a
/// ring over a mesh walks cycle c mod size() (CollectiveSpec::mesh_rings).
const std::vector<std::vector<std::uint32_t>>& mesh_cycles(std::uint64_t g);

/// Buffers for the layout documented in collective.hpp (scratch = 0; algorithms add their own).
BufferSizes standard_buffers(const CollectiveSpec& spec, Rank r);
/// Number of pipelining iterations so that one iteration's piece of a `span_elems` span is at
/// most `chunk` bytes (default_chunk when spec.chunk is 0; 0 = no pipelining).
std::uint64_t pipeline_depth(const CollectiveSpec& spec, std::uint64_t span_elems,
                             std::uint64_t default_chunk);

}  // namespace lockstep::collective_detail
