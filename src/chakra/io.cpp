// Chakra trace files: length-delimited protobuf messages (a base-128 varint length, then the
// message), GlobalMetadata first, then one Node per message (docs/chakra.md "Files").
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include "et_def.pb.h"
#include "google/protobuf/stubs/logging.h"
#include "lockstep/chakra/trace.hpp"
#include "lockstep/core/error.hpp"

namespace lockstep::chakra {
namespace {

namespace pb = lockstep::chakra::pb;

[[noreturn]] void fail(const std::string& file, const std::string& what) {
  throw InputError("", fmt::format("{}: {}", file, what));
}

/// An integer attribute in any of the schema's integer (or bool) cases; false when another.
bool integer_of(const pb::AttributeProto& a, std::int64_t& out) {
  using A = pb::AttributeProto;
  switch (a.value_case()) {
    case A::kInt32Val:
      out = a.int32_val();
      return true;
    case A::kInt64Val:
      out = a.int64_val();
      return true;
    case A::kUint32Val:
      out = a.uint32_val();
      return true;
    case A::kUint64Val:
      out = static_cast<std::int64_t>(a.uint64_val());
      return true;
    case A::kSint32Val:
      out = a.sint32_val();
      return true;
    case A::kSint64Val:
      out = a.sint64_val();
      return true;
    case A::kFixed32Val:
      out = a.fixed32_val();
      return true;
    case A::kFixed64Val:
      out = static_cast<std::int64_t>(a.fixed64_val());
      return true;
    case A::kSfixed32Val:
      out = a.sfixed32_val();
      return true;
    case A::kSfixed64Val:
      out = a.sfixed64_val();
      return true;
    case A::kBoolVal:
      out = a.bool_val() ? 1 : 0;
      return true;
    case A::kDoubleVal:
    case A::kFloatVal: {
      const double v = a.value_case() == A::kDoubleVal ? a.double_val() : a.float_val();
      if (!(v >= 0 && v < 9.2e18) || v != std::floor(v)) return false;
      out = static_cast<std::int64_t>(v);
      return true;
    }
    default:
      return false;
  }
}

struct Attrs {
  std::map<std::string, const pb::AttributeProto*> by_name;
  const pb::AttributeProto* find(const char* name) const {
    auto it = by_name.find(name);
    return it == by_name.end() ? nullptr : it->second;
  }
};

Node convert(const pb::Node& n, const std::string& file) {
  Node out;
  out.id = n.id();
  out.name = n.name();
  out.type = static_cast<std::uint32_t>(n.type());
  out.data_deps.assign(n.data_deps().begin(), n.data_deps().end());
  out.ctrl_deps.assign(n.ctrl_deps().begin(), n.ctrl_deps().end());
  Attrs attrs;
  for (const auto& a : n.attr()) attrs.by_name.emplace(a.name(), &a);
  const std::string where = fmt::format("node {} '{}'", n.id(), n.name());
  // A named attribute as a non-negative integer; `required` ones must be there.
  auto integer = [&](const char* name, bool required, std::int64_t& v) {
    const auto* a = attrs.find(name);
    if (!a) {
      if (required) fail(file, fmt::format("{}: no attribute {}", where, name));
      return false;
    }
    if (!integer_of(*a, v) || v < 0)
      fail(file, fmt::format("{}: attribute {} is not a non-negative integer", where, name));
    return true;
  };
  std::int64_t v = 0;
  if (integer("is_cpu_op", false, v)) out.cpu = v != 0;
  switch (n.type()) {
    case pb::COMP_NODE: {
      out.kind = out.cpu ? NodeKind::Skipped : NodeKind::Compute;
      out.has_duration = n.duration_micros() > 0;
      out.duration = Time::us(static_cast<double>(n.duration_micros()));
      if (integer("lockstep_duration_ps", false, v)) {
        out.has_duration = true;
        out.duration = Time::ps(v);
      }
      if (!out.duration.is_finite()) {
        fail(file, fmt::format("{}: duration past lockstep's time range ({})", where, kTimeRange));
      }
      if (const auto* a = attrs.find("num_ops")) {
        std::int64_t ops = 0;
        if (integer_of(*a, ops) && ops >= 0) {
          out.flops = static_cast<double>(ops);
        } else if (a->value_case() == pb::AttributeProto::kDoubleVal && a->double_val() >= 0) {
          out.flops = a->double_val();
        } else {
          fail(file, fmt::format("{}: attribute num_ops is not a non-negative number", where));
        }
      }
      break;
    }
    case pb::COMM_COLL_NODE: {
      if (out.cpu) break;
      integer("comm_type", true, v);
      out.comm_type = static_cast<std::uint32_t>(v);
      if (out.comm_type == pb::BARRIER) break;  // no data: a synchronisation lockstep skips
      if (!op_of_comm_type(out.comm_type, out.op)) {
        fail(file, fmt::format("{}: comm_type {} is not all-reduce, reduce, all-gather, "
                               "broadcast, all-to-all or reduce-scatter",
                               where, out.comm_type));
      }
      out.kind = NodeKind::Collective;
      integer("comm_size", true, v);
      out.size = Bytes(static_cast<std::uint64_t>(v));
      if (const auto* a = attrs.find("pg_name")) {
        if (a->value_case() == pb::AttributeProto::kStringVal) {
          out.group = a->string_val();
        } else if (integer_of(*a, v)) {
          out.group = std::to_string(v);
        } else {
          fail(file, fmt::format("{}: attribute pg_name is not a string", where));
        }
      }
      break;
    }
    case pb::COMM_SEND_NODE:
    case pb::COMM_RECV_NODE: {
      if (out.cpu) break;
      const bool send = n.type() == pb::COMM_SEND_NODE;
      out.kind = send ? NodeKind::Send : NodeKind::Recv;
      integer(send ? "comm_dst" : "comm_src", true, v);
      out.peer = static_cast<std::uint32_t>(std::min<std::int64_t>(v, 0xFFFFFFFF));
      integer("comm_size", true, v);
      out.size = Bytes(static_cast<std::uint64_t>(v));
      if (integer("comm_tag", false, v)) out.tag = v;
      break;
    }
    default:
      break;  // memory, metadata, storage, batch, checkpoint: kept for their deps
  }
  return out;
}

/// Reads a base-128 varint at `pos`; false when the data end inside it or it overflows 64 bits.
bool read_varint(const std::string& data, std::size_t& pos, std::uint64_t& value) {
  value = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (pos >= data.size()) return false;
    const auto byte = static_cast<unsigned char>(data[pos++]);
    value |= static_cast<std::uint64_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) return true;
  }
  return false;
}

}  // namespace

std::uint32_t comm_type_of(CollectiveOp op) {
  switch (op) {
    case CollectiveOp::AllReduce:
      return pb::ALL_REDUCE;
    case CollectiveOp::Reduce:
      return pb::REDUCE;
    case CollectiveOp::AllGather:
      return pb::ALL_GATHER;
    case CollectiveOp::Broadcast:
      return pb::BROADCAST;
    case CollectiveOp::AllToAll:
    case CollectiveOp::AllToAllV:
      return pb::ALL_TO_ALL;
    case CollectiveOp::ReduceScatter:
      return pb::REDUCE_SCATTER;
    case CollectiveOp::Barrier:
      return pb::BARRIER;
    case CollectiveOp::SendRecv:
      break;
  }
  throw std::logic_error("chakra: send/recv is not a collective type");
}

bool op_of_comm_type(std::uint32_t comm_type, CollectiveOp& op) {
  switch (comm_type) {
    case pb::ALL_REDUCE:
      op = CollectiveOp::AllReduce;
      return true;
    case pb::REDUCE:
      op = CollectiveOp::Reduce;
      return true;
    case pb::ALL_GATHER:
      op = CollectiveOp::AllGather;
      return true;
    case pb::BROADCAST:
      op = CollectiveOp::Broadcast;
      return true;
    case pb::ALL_TO_ALL:
      op = CollectiveOp::AllToAll;
      return true;
    // REDUCE_SCATTER_BLOCK is PyTorch's reduce_scatter_tensor: the same NCCL call.
    case pb::REDUCE_SCATTER:
    case pb::REDUCE_SCATTER_BLOCK:
      op = CollectiveOp::ReduceScatter;
      return true;
    default:
      return false;
  }
}

std::vector<std::filesystem::path> trace_files(const std::string& prefix_or_dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path dir;
  std::string prefix;
  const bool is_dir = fs::is_directory(prefix_or_dir, ec);
  if (is_dir) {
    dir = prefix_or_dir;
  } else {
    const fs::path p(prefix_or_dir);
    dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
    prefix = p.filename().string();
  }
  static const std::regex kName(R"((.*)\.(\d{1,9})\.et)");
  std::map<std::uint32_t, fs::path> by_rank;
  std::string seen_prefix;
  if (fs::is_directory(dir, ec)) {
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
      const std::string name = entry.path().filename().string();
      std::smatch m;
      if (!entry.is_regular_file(ec) || !std::regex_match(name, m, kName)) continue;
      if (!is_dir && m[1].str() != prefix) continue;
      if (is_dir && !seen_prefix.empty() && m[1].str() != seen_prefix) {
        throw InputError("", fmt::format("{}: holds traces of two prefixes ('{}' and '{}'); name "
                                         "one as <dir>/<prefix>",
                                         prefix_or_dir, seen_prefix, m[1].str()));
      }
      seen_prefix = m[1].str();
      by_rank[static_cast<std::uint32_t>(std::stoul(m[2].str()))] = entry.path();
    }
  }
  if (by_rank.empty()) {
    throw InputError("", fmt::format("{}: no Chakra trace files ({})", prefix_or_dir,
                                     is_dir ? "<prefix>.<rank>.et in the directory"
                                            : "<prefix>.<rank>.et beside it"));
  }
  std::vector<fs::path> files;
  for (const auto& [rank, path] : by_rank) {
    if (rank != files.size()) {
      throw InputError("", fmt::format("{}: rank {}'s file is missing (found up to rank {})",
                                       prefix_or_dir, files.size(), by_rank.rbegin()->first));
    }
    files.push_back(path);
  }
  return files;
}

RankTrace read_trace_file(const std::filesystem::path& path, std::uint32_t rank) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(path.string(), "cannot be read");
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return read_trace_bytes(buffer.str(), path.string(), rank);
}

RankTrace read_trace_bytes(const std::string& data, const std::string& file, std::uint32_t rank) {
  RankTrace trace;
  trace.rank = rank;
  trace.file = file;
  // libprotobuf logs a malformed string field (invalid UTF-8) to stderr before the parse fails;
  // the failure is reported below as one line naming the file and the message, so keep it quiet.
  const google::protobuf::LogSilencer quiet;
  std::size_t pos = 0;
  bool metadata = true;
  std::size_t index = 0;
  while (pos < data.size()) {
    const std::size_t start = pos;
    std::uint64_t length = 0;
    if (!read_varint(data, pos, length)) {
      fail(trace.file, fmt::format("truncated varint at byte {} (message {})", start, index));
    }
    if (length > data.size() - pos) {
      fail(trace.file, fmt::format("message {} at byte {} claims {} bytes, {} remain", index, start,
                                   length, data.size() - pos));
    }
    const char* bytes = data.data() + pos;
    const int size = static_cast<int>(length);
    if (metadata) {
      pb::GlobalMetadata meta;
      if (!meta.ParseFromArray(bytes, size))
        fail(trace.file, fmt::format("message 0 at byte {} is not a GlobalMetadata", start));
      trace.version = meta.version();
      metadata = false;
    } else {
      pb::Node node;
      if (!node.ParseFromArray(bytes, size))
        fail(trace.file, fmt::format("message {} at byte {} is not a Node", index, start));
      trace.nodes.push_back(convert(node, trace.file));
    }
    pos += length;
    ++index;
  }
  if (metadata) fail(trace.file, "empty (no GlobalMetadata)");
  return trace;
}

std::vector<RankTrace> read_traces(const std::string& prefix_or_dir) {
  std::vector<RankTrace> out;
  const auto files = trace_files(prefix_or_dir);
  for (std::uint32_t r = 0; r < files.size(); ++r) out.push_back(read_trace_file(files[r], r));
  return out;
}

std::filesystem::path write_trace_file(const RankTrace& trace, const std::filesystem::path& dir,
                                       const std::string& prefix) {
  const std::filesystem::path path = dir / fmt::format("{}.{}.et", prefix, trace.rank);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw InputError("", fmt::format("{}: cannot be written", path.string()));
  auto put = [&out](const google::protobuf::MessageLite& m) {
    const std::string body = m.SerializeAsString();
    std::uint64_t n = body.size();
    do {
      const auto byte = static_cast<unsigned char>((n & 0x7f) | (n > 0x7f ? 0x80 : 0));
      out.put(static_cast<char>(byte));
      n >>= 7;
    } while (n > 0);
    out.write(body.data(), static_cast<std::streamsize>(body.size()));
  };
  pb::GlobalMetadata meta;
  meta.set_version(trace.version.empty() ? "0.0.4" : trace.version);
  put(meta);
  for (const Node& n : trace.nodes) {
    pb::Node m;
    m.set_id(n.id);
    m.set_name(n.name);
    m.set_type(static_cast<pb::NodeType>(n.type));
    for (auto d : n.data_deps) m.add_data_deps(d);
    for (auto d : n.ctrl_deps) m.add_ctrl_deps(d);
    auto attr = [&m](const char* name) {
      auto* a = m.add_attr();
      a->set_name(name);
      return a;
    };
    attr("is_cpu_op")->set_bool_val(n.cpu);
    switch (n.kind) {
      case NodeKind::Compute: {
        // duration_micros is whole microseconds (rounded); the picoseconds keep lockstep's own
        // round trip exact.
        const auto ps = n.duration.picoseconds();
        m.set_duration_micros(static_cast<std::uint64_t>((ps + 500'000) / 1'000'000));
        attr("lockstep_duration_ps")->set_uint64_val(static_cast<std::uint64_t>(ps));
        if (n.flops > 0) attr("num_ops")->set_uint64_val(static_cast<std::uint64_t>(n.flops));
        break;
      }
      case NodeKind::Collective:
        attr("comm_type")->set_int64_val(comm_type_of(n.op));
        attr("comm_size")->set_int64_val(static_cast<std::int64_t>(n.size.count()));
        attr("pg_name")->set_string_val(n.group);
        break;
      case NodeKind::Send:
      case NodeKind::Recv:
        attr(n.kind == NodeKind::Send ? "comm_dst" : "comm_src")->set_int64_val(n.peer);
        attr("comm_size")->set_int64_val(static_cast<std::int64_t>(n.size.count()));
        attr("comm_tag")->set_int64_val(n.tag);
        break;
      case NodeKind::Skipped:
        break;
    }
    put(m);
  }
  if (!out) throw InputError("", fmt::format("{}: write failed", path.string()));
  return path;
}

}  // namespace lockstep::chakra
