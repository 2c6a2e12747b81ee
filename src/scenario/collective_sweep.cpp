// Collective sweeps from CLI flags and scenario sections alike (docs/scenario-collectives.md):
// every error names the key and its file:line:column.
#include "lockstep/scenario/collective_sweep.hpp"

#include <fmt/format.h>

#include <cmath>
#include <string>
#include <vector>

#include "lockstep/core/error.hpp"
#include "lockstep/engine/registry/registry.hpp"

namespace lockstep {

CollectiveOp parse_sweep_op(std::string_view name, std::string_view field) {
  // nccl-tests' binaries are lockstep's names with _perf (all_reduce_perf); its docs and users
  // also write them without underscores (allreduce).
  std::string s(name);
  if (s.size() > 5 && s.compare(s.size() - 5, 5, "_perf") == 0) s.resize(s.size() - 5);
  std::string squashed;
  for (char ch : s)
    if (ch != '_') squashed += ch;
  for (int i = 0; i < kNumCollectiveOps; ++i) {
    const auto op = static_cast<CollectiveOp>(i);
    std::string known;
    for (char ch : std::string(to_string(op)))
      if (ch != '_') known += ch;
    if (squashed == known) return op;
  }
  try {
    return parse_collective_op(name, field);
  } catch (const InputError& e) {
    throw InputError(std::string(field), e.bare_message() +
                                             "; nccl-tests' allreduce, allgather, reducescatter or "
                                             "*_perf names read too");
  }
}

CollectiveSweep parse_collective_sweep(const ArgNode& args) {
  if (args.kind() != ArgNode::Kind::Map) args.fail("expected a map (op, min_bytes, ...)");
  CollectiveSweep s;
  if (const ArgNode* op = args.find("op")) {
    try {
      s.op = parse_sweep_op(op->text(), op->path());
    } catch (const InputError& e) {
      op->fail(e.bare_message());
    }
    if (s.op == CollectiveOp::Barrier)
      op->fail(
          "the NCCL model covers all_reduce, all_gather, reduce_scatter, broadcast, reduce, "
          "alltoall, alltoallv and sendrecv");
  }
  auto read_choice = [&](const char* key, auto parse, auto& out) {
    const ArgNode* node = args.find(key);
    if (node == nullptr) return;
    try {
      out = parse(node->text(), node->path());
    } catch (const InputError& e) {
      node->fail(e.bare_message());
    }
  };
  read_choice("algo", nccl::parse_algorithm, s.algo);
  if (const ArgNode* n = args.find("algo")) {
    s.algo_field = n->path();
    s.algo_where = n->where();
  }
  read_choice("proto", nccl::parse_protocol, s.proto);
  if (const ArgNode* n = args.find("min_bytes")) {
    s.min_bytes = n->as_bytes();
    s.min_bytes_field = n->path();
    s.min_bytes_where = n->where();
  }
  if (const ArgNode* n = args.find("max_bytes")) {
    s.max_bytes = n->as_bytes();
    s.max_bytes_field = n->path();
    s.max_bytes_where = n->where();
  }
  if (s.min_bytes.count() == 0) args.at("min_bytes").fail("must be at least 1 byte");
  if (s.max_bytes < s.min_bytes) {
    const ArgNode* n = args.find("max_bytes");
    const std::string message = "max_bytes is smaller than min_bytes";
    if (n != nullptr) n->fail(message);
    args.fail(message);
  }
  s.step_factor = args.get_double("step_factor", s.step_factor, 1.0001, 1e6);
  if (const ArgNode* n = args.find("step_bytes")) {
    if (args.has("step_factor")) n->fail("give step_factor or step_bytes, not both");
    s.step_bytes = n->as_bytes().count();
    if (s.step_bytes == 0) n->fail("must be at least 1 byte");
    if ((s.max_bytes.as_double() - s.min_bytes.as_double()) / static_cast<double>(s.step_bytes) >
        4096)
      n->fail("the sweep has more than 4096 sizes; raise step_bytes");
  }
  if (const ArgNode* n = args.find("type"))
    s.type = nccl_tests_type(n->as_choice(nccl_tests_type_names()));
  s.channels = static_cast<std::uint32_t>(args.get_int("channels", 0, 1, nccl::kMaxChannels));
  s.sharp = args.get_bool("sharp", false);
  s.nvb = args.get_bool("nvb", true);
  s.pxn = args.get_bool("pxn", true);
  if (const ArgNode* n = args.find("skew")) {
    if (s.op != CollectiveOp::AllToAllV) n->fail("only alltoallv takes a skew");
    s.skew = args.get_double("skew", 0, 0, nccl::kMaxSkew);
  }
  if (const ArgNode* n = args.find("engine")) s.engine = n->as_choice(engine_names());
  s.faults = parse_faults(args.find("faults"));
  for (const FaultSpec& f : s.faults) {
    // A slow GPU computes slower; a collective's programs have no compute: NCCL reduces inside
    // its copy kernels, which the links bound (docs/scenario-collectives.md "Faults"). What a
    // collective sees of it is a late start (delay=).
    if (f.kind == FaultSpec::Kind::SlowGpu && !f.late)
      throw InputError(f.field,
                       fmt::format("'{}': a slow GPU slows compute, and a collective has none to "
                                   "slow (NCCL reduces inside its copy kernels, which the links "
                                   "bound); give its late start, slow-gpu:rank={},delay=D, or "
                                   "time it in a training step (lockstep train --fault)",
                                   f.text, f.placed() ? "R" : std::to_string(f.rank)),
                       f.where);
  }
  // Rows past 2^40 sizes would take forever and say nothing new.
  if (s.step_bytes == 0 &&
      std::log(s.max_bytes.as_double() / s.min_bytes.as_double()) / std::log(s.step_factor) > 4096)
    args.fail("the sweep has more than 4096 sizes; raise step_factor");
  args.check_all_used();
  return s;
}

std::vector<CollectiveSweep> parse_collectives_section(const ArgNode& section,
                                                       const std::string& engine) {
  std::vector<CollectiveSweep> out;
  auto one = [&](const ArgNode& n) {
    CollectiveSweep s = parse_collective_sweep(n);
    if (!n.has("engine")) s.engine = engine;
    out.push_back(s);
  };
  if (section.kind() == ArgNode::Kind::List) {
    for (const ArgNode& item : section.items()) one(item);
    if (out.empty()) section.fail("lists no collectives");
  } else {
    one(section);
  }
  return out;
}

bool collectives_pxn(const std::optional<ArgNode>& section) {
  if (!section) return true;
  const std::vector<CollectiveSweep> sweeps = parse_collectives_section(*section);
  const bool first = sweeps.front().pxn;
  for (std::size_t i = 1; i < sweeps.size(); ++i) {
    if (sweeps[i].pxn == first) continue;
    const ArgNode& sweep = section->items()[i];
    (sweep.find("pxn") ? *sweep.find("pxn") : sweep)
        .fail(fmt::format("the sweeps set pxn both ways ({} above); the job takes one, as "
                          "NCCL_PXN_DISABLE is one per process",
                          first));
  }
  return first;
}

std::string parse_engine_name(const ArgNode& section) {
  if (section.kind() == ArgNode::Kind::Scalar) return section.as_choice(engine_names());
  if (section.kind() != ArgNode::Kind::Map) section.fail("expected an engine name or a map");
  std::string name = section.at("name").as_choice(engine_names());
  section.check_all_used();
  return name;
}

}  // namespace lockstep
