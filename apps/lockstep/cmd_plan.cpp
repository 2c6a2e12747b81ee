// 'lockstep plan': compiles a collective to per-rank programs and prints what each rank does
// (ops, bytes sent and received, message steps); --verify runs the programs on real data with the
// functional executor and checks the result against a direct reference computation.
//   lockstep plan --op all_reduce --algo ring --ranks 8 --bytes 1MiB --channels 4 --verify
#include <fmt/format.h>

#include <charconv>
#include <map>
#include <optional>
#include <stdexcept>

#include "command.hpp"
#include "lockstep/collective/collective.hpp"
#include "lockstep/core/error.hpp"
#include "lockstep/engine/functional/executor.hpp"
#include "lockstep/engine/functional/verify.hpp"
#include "lockstep/scenario/memory_estimate.hpp"
#include "memory_options.hpp"

namespace lockstep::cli {
namespace {

struct PlanArgs {
  std::string op = "all_reduce", algo, bytes = "1MiB", chunk = "0", type = "float", torus;
  double skew = 0;
  Rank ranks = 8, root = 0;
  std::uint32_t channels = 1, ranks_per_node = 0;
  bool verify = false;
  MemoryFlags memory;
};

// Beyond these sizes the per-rank listing is abridged and whole-set passes are skipped.
constexpr Rank kListAll = 16;
constexpr std::uint64_t kMaxSummaryOps = 10'000'000;
constexpr double kMaxSkew = 100;

DataType parse_type(const std::string& name) {
  for (DataType t : {DataType::Int8, DataType::Uint8, DataType::Int32, DataType::Uint32,
                     DataType::Int64, DataType::Float32, DataType::Float64, DataType::Bf16})
    if (name == to_string(t)) return t;
  throw InputError("--type", fmt::format("unknown type '{}' (expected int8, uint8, int32, uint32, "
                                         "int64, float, double, bfloat16)",
                                         name));
}

// "4x4x4" -> {4, 4, 4}; empty: none.
std::vector<std::uint32_t> parse_torus_dims(const std::string& text) {
  std::vector<std::uint32_t> dims;
  for (std::size_t start = 0; !text.empty() && start <= text.size();) {
    const std::size_t x = std::min(text.find('x', start), text.size());
    std::uint32_t v = 0;
    const auto [ptr, ec] = std::from_chars(text.data() + start, text.data() + x, v);
    if (ec != std::errc() || ptr != text.data() + x || v == 0)
      throw InputError("--torus", fmt::format("expected sizes like 4x4x4, got '{}'", text));
    dims.push_back(v);
    start = x + 1;
  }
  return dims;
}

CollectiveSpec make_spec(const PlanArgs& a) {
  CollectiveSpec s;
  s.op = parse_collective_op(a.op, "--op");
  s.algorithm = a.algo.empty() ? algorithms_for(s.op).front() : parse_algorithm(a.algo, "--algo");
  s.ranks = a.ranks;
  s.bytes = parse_bytes(a.bytes, "--bytes");
  s.chunk = parse_bytes(a.chunk, "--chunk");
  s.type = parse_type(a.type);
  if (a.channels == 0 || a.channels > 64) throw InputError("--channels", "must be 1..64");
  s.channels = static_cast<std::uint16_t>(a.channels);
  s.root = a.root;
  s.ranks_per_node = a.ranks_per_node;
  // From the command line alltoallv gets the skewed matrix of --skew (0: alltoall's blocks).
  if (s.op == CollectiveOp::AllToAllV) {
    if (!(a.skew >= 0 && a.skew <= kMaxSkew))
      throw InputError("--skew", fmt::format("must be between 0 and {}", kMaxSkew));
    s.alltoallv = skewed_alltoallv(s.ranks, s.bytes, s.type, a.skew);
  }
  s.torus_dims = parse_torus_dims(a.torus);
  return s;
}

std::unique_ptr<ProgramSet> build(const CollectiveSpec& s) {
  static const std::map<std::string, std::string> kOption = {
      {"ranks", "--ranks"},  {"bytes", "--bytes"},     {"channels", "--channels"},
      {"root", "--root"},    {"algorithm", "--algo"},  {"ranks_per_node", "--ranks-per-node"},
      {"alltoallv", "--op"}, {"torus_dims", "--torus"}};
  try {
    return make_collective(s);
  } catch (const InputError& e) {
    const auto it = kOption.find(e.field());
    if (it == kOption.end()) throw;
    throw InputError(it->second, e.bare_message());
  }
}

void print_rank(Rank r, const RankStats& s, std::optional<std::uint32_t> steps) {
  fmt::print("{:>8} {:>9} {:>7} {:>7} {:>7} {:>6} {:>6} {:>14} {:>14} {:>6}\n", r, s.ops, s.sends,
             s.recvs, s.reduces, s.copies, s.net_reduces, to_string(Bytes(s.bytes_sent)),
             to_string(Bytes(s.bytes_received)), steps ? fmt::format("{}", *steps) : "-");
}

void run_plan(const PlanArgs& a) {
  // alltoallv's matrix is ranks^2 sizes: refused before make_spec allocates it.
  const MemoryBudget budget = a.memory.budget();
  RunEstimate estimate;
  estimate.add("lockstep", kBaseBytes);
  add_plan_matrix_estimate(estimate, parse_collective_op(a.op, "--op"), a.ranks);
  const std::string hint = "try fewer --ranks";
  // A dry run never builds a large matrix to count the executor's ops: the matrix dominates.
  constexpr double kDryRunBuildLimit = 1024.0 * 1024 * 1024;
  if (estimate.total() > budget.bytes ||
      (budget.dry_run && estimate.total() > kBaseBytes + kDryRunBuildLimit)) {
    admit(estimate, budget, hint);
    return;
  }
  const CollectiveSpec s = make_spec(a);
  const auto programs = build(s);
  const Rank n = s.ranks;
  std::uint64_t total_ops = 0;
  for (Rank r = 0; r < n && total_ops <= kMaxSummaryOps; ++r) total_ops += programs->num_ops(r);
  const bool whole_set = total_ops <= kMaxSummaryOps;
  const bool run_executor = whole_set && total_ops <= FunctionalOptions{}.max_ops;
  if (run_executor || a.verify) {
    const bool pairs = s.algorithm == Algorithm::Direct;
    add_plan_executor_estimate(estimate, total_ops, n, pairs);
  }
  if (!admit(estimate, budget, hint)) return;
  fmt::print("{}: {} ranks, {} of {} (nccl-tests size), {} channel(s), busbw factor {:.4g}\n",
             programs->label(), n, to_string(s.bytes), to_string(s.type), s.channels,
             busbw_factor(s.op, n));
  if (s.ranks_per_node)
    fmt::print("ring order: {} ranks per node, NVLink first, crossing nodes on one rail\n",
               s.ranks_per_node);

  std::optional<FunctionalResult> traced;
  if (run_executor) {
    std::vector<RankBuffers> none;
    FunctionalOptions o;
    o.move_data = false;
    traced = execute(*programs, none, o);
  }
  fmt::print("{:>8} {:>9} {:>7} {:>7} {:>7} {:>6} {:>6} {:>14} {:>14} {:>6}\n", "rank", "ops",
             "sends", "recvs", "reduces", "copies", "netred", "sent", "received", "steps");
  const auto show = [&](Rank r) {
    const RankStats st = traced ? traced->ranks[r] : summarize_rank(*programs, r);
    print_rank(r, st, traced ? std::optional<std::uint32_t>(st.steps) : std::nullopt);
  };
  if (n <= kListAll) {
    for (Rank r = 0; r < n; ++r) show(r);
  } else {
    for (Rank r = 0; r < 4; ++r) show(r);
    fmt::print("{:>8}\n", "...");
    for (Rank r = n - 4; r < n; ++r) show(r);
  }
  if (whole_set) {
    std::uint64_t sent = 0, received = 0;
    for (Rank r = 0; r < n; ++r) {
      const RankStats st = traced ? traced->ranks[r] : summarize_rank(*programs, r);
      sent += st.bytes_sent;
      received += st.bytes_received;
    }
    fmt::print("total: {} ops, {} sent, {} received", total_ops, to_string(Bytes(sent)),
               to_string(Bytes(received)));
    if (traced) fmt::print(", {} steps on the critical path", traced->steps);
    fmt::print("\n");
  } else {
    fmt::print("total: more than {} ops; whole-set totals skipped (per-rank figures above)\n",
               kMaxSummaryOps);
  }

  if (!a.verify) return;
  const VerifyReport v = verify_collective(s, *programs);
  if (!v.ok) throw std::runtime_error("verify: WRONG result: " + v.message);
  if (v.tolerance > 0)
    fmt::print("verify: correct (within {:.3g} x sum|x| of the exact sum)\n", v.tolerance);
  else
    fmt::print("verify: correct (exact)\n");
}

const RegisterCommand kPlan(30, [](CLI::App& root) {
  auto* cmd = root.add_subcommand(
      "plan", "Compile a collective to per-rank programs, summarise them, optionally verify");
  auto a = std::make_shared<PlanArgs>();
  cmd->add_option("--op", a->op,
                  "all_reduce | all_gather | reduce_scatter | broadcast | reduce | alltoall | "
                  "alltoallv | sendrecv | barrier");
  cmd->add_option("--algo", a->algo,
                  "ring | tree | chain | halving_doubling | recursive_doubling | direct | "
                  "hierarchical | netreduce | pat | nvls_tree | collnet | torus_ring (default: "
                  "the op's first)");
  cmd->add_option("--ranks", a->ranks, "number of ranks")->required();
  cmd->add_option("--bytes", a->bytes, "nccl-tests size, e.g. 1MiB");
  cmd->add_option("--channels", a->channels, "parallel rings / trees (NCCL channels)");
  cmd->add_option("--chunk", a->chunk, "pipelining chunk, 0 = algorithm default");
  cmd->add_option("--ranks-per-node", a->ranks_per_node, "scale-up domain size (0 = flat)");
  cmd->add_option("--root", a->root, "root rank of broadcast / reduce");
  cmd->add_option("--torus", a->torus,
                  "torus_ring: the torus's sizes, e.g. 4x4x4 (rank = x + X (y + Y z); default: "
                  "one ring of all ranks)");
  cmd->add_option("--skew", a->skew,
                  "alltoallv: Zipf exponent of the receivers' shares (0 = alltoall's blocks)");
  cmd->add_option("--type", a->type, "element type for --verify (default float)");
  cmd->add_flag("--verify", a->verify, "run the functional executor and check the result");
  add_memory_options(*cmd, a->memory);
  cmd->callback([a] { run_plan(*a); });
});

}  // namespace
}  // namespace lockstep::cli
