// 'lockstep collective': nccl-tests for clusters you don't own. One row per size with the
// algorithm and protocol NCCL would pick, time, algbw and busbw, from the NCCL model (analytical)
// or a timing engine run of the algorithm's programs (flow, packet).
#include <fmt/format.h>

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cluster_options.hpp"
#include "command.hpp"
#include "lockstep/api/commands.hpp"
#include "lockstep/api/moe.hpp"
#include "lockstep/core/error.hpp"
#include "lockstep/report/collective_rows.hpp"
#include "lockstep/report/json.hpp"
#include "lockstep/report/nccl_tests.hpp"
#include "lockstep/report/progress.hpp"
#include "lockstep/report/trace.hpp"
#include "memory_options.hpp"
#include "nccl_tests_options.hpp"

namespace lockstep::cli {
namespace {

struct Flags {
  ClusterFlags cluster;
  std::string op, algo, proto, min_bytes, max_bytes, step_factor, type, channels, engine, skew, nvb,
      pxn;
  std::vector<std::string> faults;
  std::string binary;  // positional: all_reduce_perf
  std::string format = "table";
  std::string trace;
  bool quiet = false, force = false;
  MemoryFlags memory;
  NcclTestsFlags nccl_tests;
  api::MoeRequest moe;  // --op moe_dispatch | moe_combine: its own flags (--tokens, ...)
};

// --fault flags as a scenario's `faults:` list.
ArgNode fault_list(const Flags& f) {
  ArgNode list = ArgNode::list("--fault");
  for (const auto& text : f.faults) list.push(ArgNode::scalar(text, "--fault"));
  return list;
}

// CLI flags become an ArgNode so that they go through the same validation as scenario files.
ArgNode sweep_args(const Flags& f) {
  ArgNode m = ArgNode::map("flags");
  auto put = [&](const char* key, const std::string& value, const char* flag) {
    if (!value.empty()) m.set(key, ArgNode::scalar(value, flag));
  };
  put("op", f.op, "--op");
  put("algo", f.algo, "--algo");
  put("proto", f.proto, "--proto");
  put("min_bytes", f.min_bytes, "--min-bytes");
  put("max_bytes", f.max_bytes, "--max-bytes");
  put("step_factor", f.step_factor, "--step-factor");
  put("type", f.type, "--type");
  put("channels", f.channels, "--channels");
  put("engine", f.engine, "--engine");
  put("skew", f.skew, "--skew");
  put("nvb", f.nvb, "--nvb");
  put("pxn", f.pxn, "--pxn");
  if (!f.faults.empty()) m.set("faults", fault_list(f));
  put_nccl_tests_sweep(f.nccl_tests, m);
  return m;
}

// nccl-tests' header for a sweep (its flags, or their defaults where they change nothing).
report::NcclTestsHeader nccl_tests_header(const NcclTestsFlags& nt, const CollectiveSweep& s,
                                          const NcclCluster& cluster) {
  report::NcclTestsHeader h;
  h.program = std::string(to_string(s.op)) + "_perf";
  auto number = [](const std::string& text, long fallback) {
    return text.empty() ? fallback : std::stol(text);
  };
  h.threads = number(nt.nthreads, 1);
  h.gpus = number(nt.ngpus, static_cast<long>(cluster.gpus_per_node) / h.threads);
  h.min_bytes = s.min_bytes.count();
  h.max_bytes = s.max_bytes.count();
  h.step = s.step_bytes > 0 ? fmt::format("{}(bytes)", s.step_bytes)
                            : fmt::format("{:g}(factor)", s.step_factor);
  h.warmup = number(nt.warmup, 1);
  h.iters = number(nt.iters, 20);
  h.agg_iters = number(nt.agg_iters, 1);
  h.graph = number(nt.cudagraph, 0);
  h.ranks = cluster.ranks();
  h.gpus_per_node = cluster.gpus_per_node;
  h.gpu = cluster.gpu;
  return h;
}

// The rows once per reduction op of -o (nccl-tests prints a block per op; the time is the same:
// NCCL's kernels reduce at the speed of their copies whatever the op), "none" for ops without.
std::vector<report::Sweep> per_redop(const report::Sweep& sweep, const NcclTestsFlags& nt) {
  if (sweep.rows.empty() || sweep.rows.front().redop == "none") return {sweep};
  std::vector<report::Sweep> out;
  for (const std::string& redop : nccl_tests_ops(nt)) {
    report::Sweep copy = sweep;
    for (auto& r : copy.rows) r.redop = redop;
    out.push_back(std::move(copy));
  }
  return out;
}

// Where the op has a root (broadcast, reduce): -r, checked against the ranks; else -1.
int root_of(const NcclTestsFlags& nt, CollectiveOp op, std::uint32_t ranks) {
  if (op != CollectiveOp::Broadcast && op != CollectiveOp::Reduce) return -1;
  if (nt.root.empty()) return 0;
  long root = -1;
  try {
    root = std::stol(nt.root);
  } catch (const std::exception&) {
  }
  if (root < 0 || root >= static_cast<long>(ranks) || std::to_string(root) != nt.root)
    throw InputError("-r", fmt::format("'{}' is not a rank (0 .. {})", nt.root, ranks - 1));
  return static_cast<int>(root);
}

void apply_nccl_tests_gpus(Flags& f) {
  const std::string gpus = nccl_tests_gpus_per_node(f.nccl_tests);
  if (gpus.empty()) return;
  if (!f.cluster.gpus_per_node.empty() && f.cluster.gpus_per_node != gpus) {
    throw InputError("-g", fmt::format("-t x -g is {} GPUs per node, --gpus-per-node {}: give one",
                                       gpus, f.cluster.gpus_per_node));
  }
  f.cluster.gpus_per_node = gpus;
}

// --op moe_dispatch | moe_combine: one dispatch or combine over every GPU (docs/moe-dispatch.md).
void run_moe(const Flags& f) {
  api::MoeRequest r = f.moe;
  r.cluster = f.cluster;
  r.op = f.op;
  r.engine = f.engine;
  if (f.format != "table" && f.format != "json")
    throw InputError("--format", "an MoE op prints a table or json");
  const std::optional<api::MoeCollectiveRun> done = api::run_moe_collective(r, f.memory.budget());
  if (!done) return;
  const MoeSpec& s = done->spec;
  const MoeTraffic& t = done->traffic;
  const double sec = done->run.time.seconds(), ranks = s.ranks;
  const double net_GBps = sec > 0 ? done->run.network_bytes / ranks / sec / 1e9 : 0;
  const double nvl_GBps = sec > 0 ? done->run.nvlink_bytes / ranks / sec / 1e9 : 0;
  if (f.format == "json") {
    fmt::print(
        "{{\"op\": \"{}\", \"kernel\": \"{}\", \"engine\": \"{}\", \"ranks\": {}, "
        "\"ranks_per_node\": {}, \"tokens\": {}, \"hidden\": {}, \"topk\": {}, "
        "\"experts\": {}, \"max_nodes\": {}, \"imbalance\": {}, \"token_bytes\": {}, "
        "\"p_node\": {:.6f}, "
        "\"p_rank\": {:.6f}, \"network_message_bytes\": {}, \"nvlink_message_bytes\": {}, "
        "\"time_us\": {:.3f}, \"network_bytes\": {:.0f}, \"nvlink_bytes\": {:.0f}, "
        "\"network_GBps_per_rank\": {:.2f}, \"nvlink_GBps_per_rank\": {:.2f}}}\n",
        to_string(done->phase), to_string(s.kernel), done->engine, s.ranks, s.ranks_per_node,
        s.tokens, s.hidden, s.topk, s.experts, s.max_nodes, s.imbalance, t.token_bytes,
        moe_node_probability(s), moe_rank_probability(s), t.network_message, t.nvlink_message,
        done->run.time.microseconds(), done->run.network_bytes, done->run.nvlink_bytes, net_GBps,
        nvl_GBps);
    return;
  }
  fmt::print("# lockstep collective: {} ({} kernel) on {}, engine {}\n", to_string(done->phase),
             to_string(s.kernel), done->title, done->engine);
  fmt::print(
      "# {} tokens per rank x hidden {}, top-{} of {} experts{}, {} B per token ({}), "
      "EP {} = {} nodes x {} GPUs\n",
      s.tokens, s.hidden, s.topk, s.experts,
      s.max_nodes ? fmt::format(" on at most {} nodes", s.max_nodes) : "", t.token_bytes,
      done->phase == MoePhase::Dispatch && s.fp8_dispatch ? "FP8 + scales" : "BF16", s.ranks,
      s.nodes(), s.ranks_per_node);
  fmt::print(
      "# a token reaches a given node with P = {:.4f}, a given GPU with P = {:.4f}{}\n",
      moe_node_probability(s), moe_rank_probability(s),
      s.imbalance != 1 ? fmt::format("; rank 0's experts take {}x the mean", s.imbalance) : "");
  fmt::print("{:>12} {:>16} {:>16} {:>14} {:>14}\n", "time_us", "net_MB_per_rank",
             "nvl_MB_per_rank", "net_GBps_rank", "nvl_GBps_rank");
  fmt::print("{:>12.2f} {:>16.3f} {:>16.3f} {:>14.2f} {:>14.2f}\n", done->run.time.microseconds(),
             done->run.network_bytes / ranks / 1e6, done->run.nvlink_bytes / ranks / 1e6, net_GBps,
             nvl_GBps);
}

bool is_moe_op(const std::string& op) {
  return op == "moe_dispatch" || op == "moe_combine";
}

void run(Flags f) {
  if (!f.binary.empty()) {
    if (!f.op.empty()) throw InputError("--op", "give --op or the op's name, not both");
    f.op = f.binary;
  }
  if (is_moe_op(f.op)) return run_moe(f);
  for (const auto& [value, flag] :
       {std::pair{f.moe.tokens, "--tokens"}, std::pair{f.moe.hidden, "--hidden"},
        std::pair{f.moe.topk, "--topk"}, std::pair{f.moe.experts, "--experts"},
        std::pair{f.moe.kernel, "--kernel"}, std::pair{f.moe.max_nodes, "--max-nodes"},
        std::pair{f.moe.chunks, "--chunks"}, std::pair{f.moe.imbalance, "--imbalance"}})
    if (!value.empty()) throw InputError(flag, "only with --op moe_dispatch or moe_combine");
  apply_nccl_tests_gpus(f);
  nccl_tests_ops(f.nccl_tests);  // an unknown -o fails before anything runs
  const std::vector<std::string> notes = nccl_tests_notes(f.nccl_tests);
  if (!f.quiet)
    for (const std::string& note : notes) fmt::print(stderr, "lockstep: note: {}\n", note);
  // The trace draws the links the flow and packet engines sampled; its place is checked first.
  if (!f.trace.empty()) {
    const std::filesystem::path path(f.trace);
    std::error_code ec;
    if (!path.has_filename() || std::filesystem::is_directory(path, ec))
      throw InputError("--trace", "'" + f.trace + "' is a directory");
    if (!f.force && std::filesystem::exists(path, ec) && !report::is_lockstep_trace(path))
      throw InputError("--trace", "'" + f.trace +
                                      "' exists and is not a trace lockstep wrote; give --force "
                                      "to replace it");
  }
  const auto check_before_rows = [&f](const std::vector<CollectiveSweep>& sweeps,
                                      const NcclCluster& cluster) {
    for (const auto& s : sweeps) {
      root_of(f.nccl_tests, s.op, cluster.ranks());
      if (!f.trace.empty() && s.engine == "analytical")
        throw InputError("--trace",
                         "needs --engine flow or packet (the analytical engine has no "
                         "link traffic over time)");
    }
  };
  const std::optional<api::CollectiveRun> done =
      api::run_collective(f.cluster, sweep_args(f), f.memory.budget(),
                          !f.quiet && report::Progress::stderr_is_terminal(),
                          nccl_tests_types(f.nccl_tests), check_before_rows);
  if (!done) return;  // a dry run
  // JSON is one document: the list of sweeps, as a variant's `collectives` in results.json.
  std::vector<report::Sweep> json;
  // -d all is one nccl-tests log of every type's rows, as nccl-tests prints it.
  const bool one_log = f.format == "nccl-tests" && f.nccl_tests.datatype == "all";
  std::vector<report::NcclTestsBlock> log_blocks;
  for (std::size_t i = 0; i < done->specs.size(); ++i) {
    const CollectiveSweep& s = done->specs[i];
    const std::vector<report::Sweep> records = per_redop(done->sweeps[i], f.nccl_tests);
    if (f.format == "nccl-tests") {
      const int root = root_of(f.nccl_tests, s.op, done->cluster.ranks());
      for (const auto& r : records) log_blocks.push_back({r.rows, root});
      if (!one_log || i + 1 == done->specs.size()) {
        fmt::print("{}", report::format_nccl_tests(
                             nccl_tests_header(f.nccl_tests, s, done->cluster), log_blocks));
        log_blocks.clear();
      }
      continue;
    }
    for (const report::Sweep& sweep : records) {
      if (f.format == "json") {
        json.push_back(sweep);
        continue;
      }
      if (f.format == "table") {
        std::string faults;
        for (const FaultSpec& fault : s.faults) faults += (faults.empty() ? "" : ", ") + fault.text;
        fmt::print("# lockstep collective: {}{} on {}, engine {}{}\n", to_string(s.op),
                   s.op == CollectiveOp::AllToAllV ? fmt::format(" (skew {})", s.skew) : "",
                   done->title, s.engine, faults.empty() ? "" : ", faults " + faults);
      }
      fmt::print("{}", report::format_collective_rows(sweep, f.format));
    }
  }
  if (f.format == "json") fmt::print("{}", report::json_text(report::sweeps_to_json(json)));
  if (!f.trace.empty()) {
    report::write_collective_trace(done->sweeps, f.trace);
    if (f.format == "table") fmt::print("# trace {}\n", f.trace);
  }
}

// Errors at --gpus-per-node name -g when -g (and -t) gave it.
void run_naming_g(const Flags& f) {
  try {
    run(f);
  } catch (const InputError& e) {
    if (e.field() != "--gpus-per-node" || nccl_tests_gpus_per_node(f.nccl_tests).empty()) throw;
    throw InputError("-g", e.bare_message() + " (-t x -g is the GPUs per node)", e.where());
  }
}

const RegisterCommand kCollective(30, [](CLI::App& root) {
  auto* cmd = root.add_subcommand(
      "collective", "Predict nccl-tests output (time, algbw, busbw per size) for a cluster");
  auto f = std::make_shared<Flags>();
  add_cluster_options(*cmd, f->cluster);
  cmd->add_option("--scenario", f->cluster.scenario,
                  "a scenario file (cluster, collectives, engine)");
  cmd->add_option("--op", f->op,
                  "all_reduce | all_gather | reduce_scatter | broadcast | reduce | alltoall | "
                  "alltoallv | sendrecv | moe_dispatch | moe_combine; nccl-tests' allreduce, "
                  "allgather, reducescatter and *_perf names too");
  cmd->add_option("binary", f->binary,
                  "the op as nccl-tests' binary names it, instead of --op: lockstep collective "
                  "all_reduce_perf -b 8 -e 128M -f 2 -g 8");
  cmd->add_option("--algo", f->algo,
                  "auto | ring | tree | nvls | nvls_tree | collnet | halving_doubling | direct | "
                  "pat | hierarchical | torus_ring");
  cmd->add_option("--skew", f->skew,
                  "alltoallv: Zipf exponent of the receivers' shares (default 0: alltoall's)");
  cmd->add_option("--proto", f->proto, "auto | ll | ll128 | simple");
  cmd->add_option("--min-bytes", f->min_bytes, "smallest size (default 8)");
  cmd->add_option("--max-bytes", f->max_bytes, "largest size (default 8GiB)");
  cmd->add_option("--step-factor", f->step_factor, "size multiplier per row (default 2)");
  cmd->add_option("--type", f->type, "element type (default float)");
  cmd->add_option("--channels", f->channels, "NCCL channels (default: as NCCL picks)");
  cmd->add_option("--nvb", f->nvb,
                  "false: NCCL_NVB_DISABLE=1, no ring hop through a GPU's NVLinks (default true)");
  cmd->add_option("--pxn", f->pxn,
                  "false: NCCL_PXN_DISABLE=1, alltoall / sendrecv leave by the sender's own NIC, "
                  "not over NVLink to the receiver's rail (default true)");
  cmd->add_option("--engine", f->engine, "analytical | flow | packet (default analytical)");
  cmd->add_option("--fault", f->faults,
                  "fault (repeatable): degraded-link:link=L,x=F | failed-link:link=L | "
                  "slow-gpu:rank=R,delay=D (rank R starts D late); L an index of topo --emit's "
                  "links or A-B device names (nic3-leaf3)");
  cmd->add_option("--format", f->format,
                  "table | csv | json | nccl-tests (nccl-tests' own layout, docs/nccl-tests.md)")
      ->check(CLI::IsMember({"table", "csv", "json", "nccl-tests"}));
  cmd->add_option("--trace", f->trace,
                  "flow | packet engine: write the largest size's busiest links as Perfetto "
                  "counter tracks here (utilisation, queue depth, PFC, ECN, drops)");
  cmd->add_flag("--force", f->force, "replace a --trace file that lockstep did not write");
  cmd->add_flag("--quiet,-q", f->quiet, "no progress bar (drawn on stderr only when a terminal)");
  cmd->add_option("--tokens", f->moe.tokens, "moe_*: tokens per rank (default 4096)");
  cmd->add_option("--hidden", f->moe.hidden, "moe_*: elements per token (default 7168)");
  cmd->add_option("--topk", f->moe.topk, "moe_*: experts per token (default 8)");
  cmd->add_option("--experts", f->moe.experts,
                  "moe_*: routed experts, a multiple of the GPUs (default 256)");
  cmd->add_option("--kernel", f->moe.kernel,
                  "moe_*: normal (NVLink forwarding) | low_latency (straight to each expert)");
  cmd->add_option("--max-nodes", f->moe.max_nodes,
                  "moe_*: node-limited routing, a token's experts on at most this many nodes");
  cmd->add_option("--chunks", f->moe.chunks,
                  "moe_* normal kernel: pieces of a network message forwarded as they arrive (4)");
  cmd->add_option("--imbalance", f->moe.imbalance,
                  "moe_*: tokens of the busiest rank's experts over the mean (default 1)");
  cmd->add_flag("--bf16-dispatch", f->moe.bf16_dispatch, "moe_dispatch: BF16 instead of FP8");
  add_memory_options(*cmd, f->memory);
  add_nccl_tests_options(*cmd, f->nccl_tests);
  cmd->callback([f] { run_naming_g(*f); });
});

}  // namespace
}  // namespace lockstep::cli
