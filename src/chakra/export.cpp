// A training step's programs as Chakra traces: the step builder runs with a collective factory
// that records each collective and stands one marked op in for its programs, so that every
// collective of the step becomes one node per member.
#include "lockstep/chakra/export.hpp"

#include <fmt/format.h>

#include <map>
#include <regex>
#include <stdexcept>

#include "lockstep/core/error.hpp"
#include "lockstep/workload/step_builder.hpp"
#include "lockstep/workload/training.hpp"

namespace lockstep::chakra {
namespace {

constexpr std::uint32_t kComp = 4, kSend = 5, kRecv = 6, kColl = 7;  // Chakra NodeType

struct Recorded {
  CollectiveOp op;
  Bytes bytes;
  std::string group;
};

/// The parallel dimension of a collective of `role`, as train's breakdown counts it.
const char* dimension(OpRole role) {
  switch (role) {
    case OpRole::TpComm:
      return "tp";
    case OpRole::EpComm:
      return "ep";
    case OpRole::CpComm:
      return "cp";
    default:  // DP buckets, ZeRO gathers and the gradient norm: train's exposed DP
      return "dp";
  }
}

std::string node_name(const OpTag& tag) {
  std::string name = to_string(tag.role);
  if (tag.layer != 0xFFFFFFFFu) name += fmt::format(" layer {}", tag.layer);
  if (tag.micro != 0xFFFFFFFFu) name += fmt::format(" micro-batch {}", tag.micro);
  return name;
}

}  // namespace

std::vector<RankTrace> export_training(const Topology& topology, const TrainConfig& config) {
  const StepPlan plan = training_plan(topology, config);
  std::vector<Recorded> calls;
  StepBuildOptions o;
  o.full = true;
  o.collectives = default_collective_factory();
  o.group_collectives = [&calls](CollectiveOp op, Bytes bytes,
                                 const std::vector<std::uint32_t>& globals) {
    // The marker: a zero-time op whose scratch offset is 1 + the collective's index.
    const std::uint64_t k = calls.size();
    calls.push_back({op, bytes, fmt::format("{}", fmt::join(globals, ","))});
    auto set = std::make_shared<MaterializedProgramSet>(static_cast<Rank>(globals.size()));
    for (Rank r = 0; r < globals.size(); ++r) {
      Op marker = make_compute(Time::zero());
      marker.src = {Buffer::Scratch, k + 1, 0};
      set->add(r, marker);
    }
    return PlannedCollective{std::move(set), Time::zero()};
  };
  const StepPrograms step = build_step_programs(config, plan, o);
  const ProgramSet& programs = *step.programs;
  // Each process group named by its dimension and its order of first use in that dimension
  // ("tp0", "tp1", "dp0"), so that a reader classes its time as train does.
  std::vector<const char*> dims(calls.size(), "dp");
  for (Rank r = 0; r < programs.num_ranks(); ++r) {
    for (OpIndex i = 0; i < programs.num_ops(r); ++i) {
      const Op op = programs.op(r, i);
      if (op.kind == OpKind::Compute && op.src.buffer == Buffer::Scratch && op.src.offset > 0)
        dims.at(op.src.offset - 1) = dimension(step.tags[r][i].role);
    }
  }
  std::map<std::pair<std::string, std::string>, std::string> names;  // (dim, ranks) -> name
  std::map<std::string, std::size_t> used;
  for (std::size_t k = 0; k < calls.size(); ++k) {
    auto [it, fresh] = names.try_emplace({dims[k], calls[k].group});
    if (fresh) it->second = fmt::format("{}{}", dims[k], used[dims[k]]++);
    calls[k].group = it->second;
  }
  std::vector<RankTrace> traces(programs.num_ranks());
  for (Rank r = 0; r < programs.num_ranks(); ++r) {
    const std::uint32_t global = step.global_rank[r];
    RankTrace& t = traces[global];
    t.rank = global;
    t.nodes.reserve(programs.num_ops(r));
    for (OpIndex i = 0; i < programs.num_ops(r); ++i) {
      const Op op = programs.op(r, i);
      Node n;
      n.id = i;
      n.name = node_name(step.tags[r][i]);
      for (OpIndex d : op.dependencies()) n.data_deps.push_back(d);
      if (op.kind == OpKind::Compute && op.src.buffer == Buffer::Scratch && op.src.offset > 0) {
        const Recorded& c = calls.at(op.src.offset - 1);
        n.type = kColl;
        n.kind = NodeKind::Collective;
        n.op = c.op;
        n.size = c.bytes;
        n.group = c.group;
        n.name += fmt::format(" {}", to_string(c.op));
      } else if (op.kind == OpKind::Compute) {
        n.type = kComp;
        n.kind = NodeKind::Compute;
        n.has_duration = true;
        n.duration = op.duration;
      } else if (op.kind == OpKind::Send || op.kind == OpKind::Recv) {
        const bool send = op.kind == OpKind::Send;
        n.type = send ? kSend : kRecv;
        n.kind = send ? NodeKind::Send : NodeKind::Recv;
        n.peer = step.global_rank[op.peer];
        n.size = Bytes(op.bytes());
        n.tag = op.channel;
      } else {
        throw std::logic_error(
            fmt::format("chakra export: a {} op in a step program", to_string(op.kind)));
      }
      t.nodes.push_back(std::move(n));
    }
  }
  return traces;
}

void write_traces(const std::vector<RankTrace>& traces, const std::filesystem::path& dir,
                  const std::string& prefix) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir, ec)) {
    throw InputError("", fmt::format("{}: cannot be created as a directory", dir.string()));
  }
  // A previous export of more ranks would leave files a reader takes for ranks of this one.
  const std::regex mine(R"(\.\d+\.et)");
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(prefix, 0) == 0 && std::regex_match(name.substr(prefix.size()), mine))
      fs::remove(entry.path(), ec);
  }
  for (const RankTrace& t : traces) write_trace_file(t, dir, prefix);
}

}  // namespace lockstep::chakra
