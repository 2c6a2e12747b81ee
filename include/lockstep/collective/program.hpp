#pragma once
// The intermediate representation every workload compiles to: one program per rank, a list of
// operations each of which may start once the earlier operations it names (deps) have finished.
// Sends and receives between a pair of ranks on one channel match in FIFO order (like MPI's
// non-overtaking rule): the k-th send from a to b on channel c meets the k-th recv at b from a on
// channel c, and both must name the same number of bytes.
//
// Programs are reached through ProgramSet::op(rank, index), which a set may generate on demand,
// so a ring over 131,072 ranks never holds its O(N^2) operations in memory at once.
#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "lockstep/core/units.hpp"

namespace lockstep {

using Rank = std::uint32_t;
using OpIndex = std::uint32_t;

enum class OpKind : std::uint8_t {
  Send,       // send src range to `peer` on `channel`
  Recv,       // receive from `peer` on `channel` into dst range (copy or reduce)
  Copy,       // local copy src -> dst (memory-bandwidth bound)
  Reduce,     // local dst += src, element-wise (kernel time from `bytes`)
  Compute,    // opaque compute for `duration` (a training layer, a kernel); moves no data
  NetReduce,  // in-network reduction: every member of group `peer` contributes src and receives
              // the element-wise sum in dst (InfiniBand SHARP, NVLink SHARP / NVLS)
};

/// "send", "recv", "copy", "reduce", "compute", "net_reduce" (for messages and reports).
const char* to_string(OpKind kind);

enum class RecvMode : std::uint8_t { Copy, Reduce };

/// Which per-rank buffer a range lies in. Collectives read Input and write Output (the same
/// memory for in-place operations); Scratch is temporary space an algorithm may use.
enum class Buffer : std::uint8_t { Input, Output, Scratch };

struct BufferRange {
  Buffer buffer = Buffer::Input;
  std::uint64_t offset = 0;  // bytes
  std::uint64_t bytes = 0;
};

inline constexpr std::size_t kMaxDeps = 4;

struct Op {
  OpKind kind = OpKind::Compute;
  RecvMode mode = RecvMode::Copy;
  std::uint16_t channel = 0;
  std::uint32_t peer = 0;  // rank for Send/Recv, group id for NetReduce
  BufferRange src;         // Send, Copy, Reduce, NetReduce
  BufferRange dst;         // Recv, Copy, Reduce, NetReduce
  Time duration;           // Compute
  std::uint8_t num_deps = 0;
  // Send: the number of peers this op's data goes to at once, this op among them (a tree's
  // broadcast to its children: one thread block loads each line once and stores it to every
  // child). Against the sender's channel speed limit (EngineOptions::channel_send_bandwidth)
  // each of those sends counts 1 / fan_out of its bytes.
  std::uint8_t fan_out = 1;
  std::array<OpIndex, kMaxDeps> deps{};  // indices of earlier ops of the same rank

  /// Bytes this op moves or touches (src for Send/Copy/Reduce/NetReduce, dst for Recv).
  std::uint64_t bytes() const { return kind == OpKind::Recv ? dst.bytes : src.bytes; }
  std::span<const OpIndex> dependencies() const { return {deps.data(), num_deps}; }
  void add_dep(OpIndex i);  // throws std::logic_error past kMaxDeps (use a Compute{0} join)
};

// Convenience constructors.
Op make_send(Rank peer, BufferRange src, std::uint16_t channel = 0);
Op make_recv(Rank peer, BufferRange dst, RecvMode mode, std::uint16_t channel = 0);
Op make_copy(BufferRange src, BufferRange dst);
Op make_reduce(BufferRange src, BufferRange dst);
Op make_compute(Time duration);
Op make_net_reduce(std::uint32_t group, BufferRange src, BufferRange dst);

/// Element types for the functional executor (timing engines only read byte counts).
enum class DataType : std::uint8_t { Int8, Uint8, Int32, Uint32, Int64, Float32, Float64, Bf16 };
std::size_t size_of(DataType t);
const char* to_string(DataType t);

/// Per-rank buffer sizes in bytes.
struct BufferSizes {
  std::uint64_t input = 0;
  std::uint64_t output = 0;
  std::uint64_t scratch = 0;
  bool in_place = false;  // Input and Output are the same memory
};

/// Ops [first_op, end()) of one rank's program: `repeats` repetitions of `period_ops` ops
/// (ProgramSet::periodic_region).
struct PeriodicRegion {
  OpIndex first_op = 0;
  OpIndex period_ops = 0;  // 0: no region
  OpIndex repeats = 0;
  OpIndex end() const { return first_op + period_ops * repeats; }
};

/// How far ahead of its oldest unfinished op a rank must be able to issue ops for the program to
/// run as written: every channel at once and pipeline chunks in flight, as NCCL runs them (an
/// engine with an issue window sizes it from this; docs/flow-engine.md).
enum class Lookahead : std::uint8_t {
  Unstated,  // nothing promised (step programs, hand-built sets): an engine's default
  // Channels interleaved step by step, each op waiting only on ops a step or so before it (ring,
  // chain): a window of a few steps of every channel runs them together.
  Step,
  // Work that runs at once lies far apart in the op list: channels laid out one after another,
  // or a tree's chunks, whose results come back 2 x depth steps after they went up. Only a
  // window over the whole program (longest_program()) runs it as written.
  Program,
};

/// All ranks' programs. Implementations may generate ops lazily; op() must be cheap and pure.
class ProgramSet {
 public:
  virtual ~ProgramSet() = default;
  virtual Rank num_ranks() const = 0;
  virtual OpIndex num_ops(Rank r) const = 0;
  virtual Op op(Rank r, OpIndex i) const = 0;
  virtual BufferSizes buffers(Rank r) const = 0;
  virtual DataType data_type() const { return DataType::Float32; }
  /// Members of a NetReduce group, in rank order.
  virtual std::span<const Rank> group(std::uint32_t id) const;
  virtual std::uint32_t num_groups() const { return 0; }
  /// Translation symmetry, so that an engine may simulate symmetric ranks once (DESIGN.md, "Scale
  /// comes from structure"; docs/flow-engine.md). A period p > 0 promises: num_ranks() % p == 0,
  /// and for every rank r and op index i, num_ops and buffers of (r + p) % n equal those of r and
  /// op((r + p) % n, i) equals op(r, i) except for buffer offsets, with every Send/Recv peer q
  /// replaced by (q + p) % n and every NetReduce group replaced by the group whose members are
  /// its members moved by p (which must exist: a rail's CollNet group is its own translate, a
  /// node's NVLS group moves to the next node's). Ranks r, r + p, r + 2p, ... then form one
  /// class. 0 (the default) promises nothing. A ring over n ranks has period 1; per-rank noise or
  /// a per-rank program difference must return 0 (or a period that respects it).
  virtual Rank symmetry_period() const { return 0; }
  /// Channels under the translation above: op((r + p) % n, i) uses channel
  /// (c + symmetry_channel_shift()) % symmetry_channel_modulus() where op(r, i) uses c, and
  /// (n / p) x shift is a multiple of the modulus. A shift of 0 (the default) leaves channels
  /// alone (the channel-split NVLS tree, whose blocks of p ranks are channels, shifts them:
  /// CollectiveSpec::split_channels).
  virtual std::uint16_t symmetry_channel_shift() const { return 0; }
  virtual std::uint32_t symmetry_channel_modulus() const { return 1; }
  /// Rotation inside nodes, on top of the translation above (docs/flow-engine.md "Class
  /// aggregation"). A value g > 1 promises: symmetry_period() is 0 (the rotation alone: a tree
  /// has no translation) or a multiple of g, n is a multiple of g, and with
  /// sigma(x) = x - x % g + (x + 1) % g applied to ranks and to channel numbers alike, op(sigma(r),
  /// i) equals op(r, i) in everything a timing engine reads, except that every Send/Recv peer q
  /// becomes sigma(q) and every channel c becomes sigma(c) (or stays c, see below). A NetReduce op
  /// keeps its group, which must then be exactly the node's g ranks. A ring whose channel c + 1
  /// enters each node one GPU further on than channel c is the example. 0 or 1 promises nothing.
  virtual Rank local_symmetry() const { return 0; }
  /// Whether sigma above moves channel numbers (true) or leaves them (false: every GPU of a node
  /// uses the same channels, as in NVLS tree, where GPU l only talks to GPU l of other nodes).
  virtual bool local_symmetry_moves_channels() const { return true; }
  /// Repetition in time, so that an engine may skip a steady state (docs/flow-engine.md,
  /// "Steady-state fast-forward"). The region of rank r's program that contains op i, or a region
  /// with period_ops == 0 (the default) when i lies in none. A region promises, for every op index
  /// j with first_op <= j and j + period_ops < end(): op(r, j + period_ops) equals op(r, j) in
  /// everything a timing engine reads (kind, peer, channel, byte counts, duration) with every
  /// dependency d replaced by d + period_ops; only buffer positions and the recv mode may differ.
  /// Ring steps are the example: step s + 1 of a reduce-scatter repeats step s.
  virtual PeriodicRegion periodic_region(Rank /*r*/, OpIndex /*i*/) const { return {}; }
  /// A short label for reports, e.g. "all_reduce/ring".
  virtual std::string label() const { return "program"; }

  // --- What engines may derive their settings from (never from who built the programs) ---
  /// See Lookahead. Collective algorithms state theirs (collective.hpp).
  virtual Lookahead lookahead() const { return Lookahead::Unstated; }
  /// The op count of the longest rank's program. The default reads num_ops of every rank, or of
  /// one symmetry period's ranks (symmetry_period: translated ranks have equal lengths).
  virtual OpIndex longest_program() const;
  /// The same programs with their channels split into ranks, or null when they cannot be: rank
  /// c x num_ranks() + r runs only channel c of rank r's program, placed where rank r is, with
  /// channel c's copies of its peers and NetReduce groups. The channels share nothing but links,
  /// so a timing engine may run the split set instead (same times, no per-op timings of the
  /// original ranks), e.g. to simulate one channel for all of them (symmetry_period). Only the
  /// split set's timing means anything: data are not what one rank's program computes.
  virtual std::unique_ptr<ProgramSet> split_channels() const { return nullptr; }
};

/// Programs held in memory, one vector per rank; for small runs, tests and training steps.
class MaterializedProgramSet : public ProgramSet {
 public:
  explicit MaterializedProgramSet(Rank ranks, DataType type = DataType::Float32);
  Rank num_ranks() const override { return static_cast<Rank>(programs_.size()); }
  OpIndex num_ops(Rank r) const override { return static_cast<OpIndex>(programs_[r].size()); }
  Op op(Rank r, OpIndex i) const override { return programs_[r][i]; }
  BufferSizes buffers(Rank r) const override { return buffers_[r]; }
  DataType data_type() const override { return type_; }
  std::span<const Rank> group(std::uint32_t id) const override { return groups_[id]; }
  std::uint32_t num_groups() const override { return static_cast<std::uint32_t>(groups_.size()); }
  std::string label() const override { return label_; }

  /// Appends an op to rank r's program and returns its index.
  OpIndex add(Rank r, const Op& op);
  void set_buffers(Rank r, BufferSizes sizes) { buffers_[r] = sizes; }
  std::uint32_t add_group(std::vector<Rank> members);
  void set_label(std::string label) { label_ = std::move(label); }
  std::vector<Op>& program(Rank r) { return programs_[r]; }

 private:
  std::vector<std::vector<Op>> programs_;
  std::vector<BufferSizes> buffers_;
  std::vector<std::vector<Rank>> groups_;
  DataType type_;
  std::string label_ = "program";
};

}  // namespace lockstep
