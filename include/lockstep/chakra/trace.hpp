#pragma once
// Chakra execution traces (MLCommons), in and out (docs/chakra.md): one file per rank,
// `<prefix>.<rank>.et`, a stream of length-delimited protobuf messages, a GlobalMetadata and then
// the rank's nodes, which form a DAG through their data and control dependencies.
//
//   std::vector<RankTrace> ranks = read_traces("traces/llama");  // or a directory
//   ChakraResult r = simulate_traces(ranks, topology, "flow");
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "lockstep/collective/collective.hpp"
#include "lockstep/core/units.hpp"

namespace lockstep::chakra {

/// What lockstep does with a node (from its NodeType and attributes).
enum class NodeKind : std::uint8_t {
  Compute,     // COMP_NODE on the GPU: its duration, or its FLOPs at the GPU's peak
  Collective,  // COMM_COLL_NODE: the NCCL model on the members' GPUs
  Send,        // COMM_SEND_NODE: a point-to-point transfer to `peer`
  Recv,        // COMM_RECV_NODE: its match, from `peer`
  Skipped,     // CPU ops, memory and metadata nodes, barriers: zero time, dependencies kept
};

struct Node {
  std::uint64_t id = 0;
  std::string name;
  std::uint32_t type = 0;  // Chakra NodeType as read
  NodeKind kind = NodeKind::Skipped;
  std::vector<std::uint64_t> data_deps, ctrl_deps;
  // Compute: the measured time (duration_micros, or lockstep's own picosecond attribute
  // `lockstep_duration_ps`, which wins when present), and the FLOPs (num_ops).
  bool has_duration = false;
  Time duration;
  double flops = 0;
  bool cpu = false;  // is_cpu_op
  // Collective: NCCL's op and nccl-tests size S (comm_size), process group (pg_name; "" = all).
  CollectiveOp op = CollectiveOp::AllReduce;
  std::uint32_t comm_type = 0;
  Bytes size;
  std::string group;
  // Send / Recv: the other rank (comm_dst for a send, comm_src for a receive) and comm_tag.
  std::uint32_t peer = 0;
  std::int64_t tag = 0;
};

struct RankTrace {
  std::uint32_t rank = 0;
  std::string file;  // as read or written, for messages
  std::string version;
  std::vector<Node> nodes;
};

/// Chakra's CollectiveCommType for an op lockstep can price, and the reverse (false when the
/// type is not one of all-reduce, reduce, all-gather, broadcast, all-to-all, reduce-scatter).
std::uint32_t comm_type_of(CollectiveOp op);
bool op_of_comm_type(std::uint32_t comm_type, CollectiveOp& op);

/// The files of a trace: `<prefix>.<rank>.et` for ranks 0..n-1, or every `*.<rank>.et` of a
/// directory (one prefix). InputError naming the path when none or a rank is missing.
std::vector<std::filesystem::path> trace_files(const std::string& prefix_or_dir);
/// Reads one rank's file. InputError "<file>: ..." for a truncated varint or message, a message
/// that does not parse, or a node of a kind lockstep prices with missing attributes.
RankTrace read_trace_file(const std::filesystem::path& file, std::uint32_t rank);
/// The same for a file's contents (`file` names it in messages).
RankTrace read_trace_bytes(const std::string& data, const std::string& file, std::uint32_t rank);
std::vector<RankTrace> read_traces(const std::string& prefix_or_dir);
/// Writes `trace` as `<dir>/<prefix>.<rank>.et` (metadata, then the nodes in order).
std::filesystem::path write_trace_file(const RankTrace& trace, const std::filesystem::path& dir,
                                       const std::string& prefix);

}  // namespace lockstep::chakra
