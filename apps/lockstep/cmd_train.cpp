// 'lockstep train': one training iteration of a model on a cluster, with its breakdown, MFU,
// cost, and Monte Carlo jitter statistics. Flags become the same ArgNode map a scenario's `job:`
// section is, so both go through parse_train_config (docs/scenario-job.md).
#include <fmt/format.h>

#include <filesystem>
#include <memory>
#include <optional>

#include "cluster_options.hpp"
#include "command.hpp"
#include "lockstep/chakra/export.hpp"
#include "lockstep/core/error.hpp"
#include "lockstep/engine/packet/packet_config.hpp"
#include "lockstep/report/json.hpp"
#include "lockstep/report/output.hpp"
#include "lockstep/report/progress.hpp"
#include "lockstep/report/trace.hpp"
#include "lockstep/report/training.hpp"
#include "lockstep/scenario/cluster_source.hpp"
#include "lockstep/scenario/engines.hpp"
#include "lockstep/scenario/memory_estimate.hpp"
#include "lockstep/scenario/scenario.hpp"
#include "lockstep/workload/model.hpp"
#include "lockstep/workload/training.hpp"
#include "memory_options.hpp"

namespace lockstep::cli {
namespace {

struct TrainFlags {
  ClusterFlags cluster;
  // Job keys, by their scenario names (flag spelling: --global-batch for global_batch).
  std::vector<std::pair<std::string, std::string>> job;
  std::vector<std::string> jitter, faults;
  std::string format = "text";
  bool force = false;
  bool quiet = false;
  std::string chakra_out;  // a directory for the step as Chakra traces
  MemoryFlags memory;
};

const std::vector<std::pair<std::string, std::string>> kJobFlags = {
    {"model", fmt::format("a preset ({}) or key=value fields: preset=llama3-8b,layers=8 "
                          "(docs/scenario-job.md)",
                          fmt::join(model_preset_names(), ", "))},
    {"tp", "tensor-parallel degree"},
    {"cp", "context-parallel degree (ring attention; world = tp x cp x pp x dp)"},
    {"pp", "pipeline stages"},
    {"dp", "data-parallel replicas"},
    {"ep", "expert-parallel degree (MoE; divides dp)"},
    {"moe_imbalance",
     "tokens of the busiest expert-parallel rank / the mean (default 1, at most ep)"},
    {"zero", "ZeRO stage 0 | 1 (default: distributed optimizer) | 2 | 3"},
    {"fsdp", "true: shard like ZeRO-3 (FSDP)"},
    {"sequence_parallel", "true | false (default true)"},
    {"interleave", "virtual stages per rank (interleaved 1F1B)"},
    {"global_batch", "sequences per iteration"},
    {"micro_batch", "sequences per micro-batch (default 1)"},
    {"seq", "tokens per sequence (default: the model's)"},
    {"efficiency", "fraction of the peak for every kernel (0.5), or kernels: the kernel model"},
    {"peak_tflops", "override the GPU's peak dense BF16 TFLOP/s"},
    {"precision", "bf16 | fp8 | fp4: the layers' weight GEMMs (default bf16)"},
    {"hbm", "override the GPU's memory, e.g. 80GB"},
    {"recompute", "none | selective | full (true = full, false = none; default none)"},
    {"bucket", "DP gradient bucket, e.g. 256MiB (default 40M parameters)"},
    {"overlap_dp", "true | false: overlap gradient reduction with backward (default true)"},
    {"tp_comm_overlap", "true | false: TP all-gather / reduce-scatter beside their GEMMs (false)"},
    {"overlap_param_gather", "true | false: ZeRO-1/2 parameter gather in the next forward (false)"},
    {"optimizer_step", "true | false: the optimizer step's time, 38 B per shard parameter (true)"},
    {"clip_grad", "gradient clipping norm; > 0 all-reduces the gradient norm (1.0), 0: off"},
    {"link_jitter", "relative std-dev of link latencies per trial, e.g. 0.1"},
    {"trials", "Monte Carlo trials (default 1)"},
    {"seed", "random seed (default 1)"},
    {"gpu_hour_usd", "price of one GPU-hour (default 2.5)"},
    {"engine", "flow | analytical | packet (default flow)"},
    {"expansion", "auto | reduced | full (default auto)"},
    {"trace", "write a Perfetto trace-event JSON here"},
    {"trace_ranks", "ranks to record, e.g. 0-7,64 (default 0-7)"},
    {"trace_detail", "layer (default: a slice per layer pass) | op (per kernel and collective)"},
};

std::string flag_of(const std::string& key) {
  std::string flag = "--" + key;
  for (char& ch : flag)
    if (ch == '_') ch = '-';
  return flag;
}

ArgNode job_args(const TrainFlags& f, std::optional<ArgNode> base) {
  ArgNode job = base ? std::move(*base) : ArgNode::map("flags");
  for (const auto& [key, value] : f.job) job.set(key, ArgNode::scalar(value, flag_of(key)));
  auto list = [&](const char* key, const std::vector<std::string>& values, const char* flag) {
    if (values.empty()) return;
    ArgNode l = ArgNode::list(flag);
    for (const auto& v : values) l.push(ArgNode::scalar(v, flag));
    job.set(key, std::move(l));
  };
  list("jitter", f.jitter, "--jitter");
  list("faults", f.faults, "--fault");
  return job;
}

void run(const TrainFlags& f) {
  const std::optional<Scenario> scenario = load_cluster_scenario(f.cluster, "a scenario file");
  std::optional<ArgNode> base;
  if (scenario) {
    if (!scenario->job) {
      throw InputError("job", "the scenario has no job: section", {f.cluster.scenario});
    }
    base = *scenario->job;
    if (scenario->seed_given && !base->has("seed")) {
      base->set("seed", ArgNode::scalar(std::to_string(scenario->seed), "seed"));
    }
  }
  const ArgNode job = job_args(f, base);
  const TrainConfig config = parse_train_config(job);
  // The trace's place is checked before the simulation: inside the scenario's folder when the
  // file names it, not a file of the user's, in a writable directory.
  std::optional<report::StagedOutput> trace_out;
  std::filesystem::path trace_path;
  if (!config.trace_path.empty()) {
    report::install_interrupt_handler();
    const ArgNode& node = job.at("trace");
    trace_path = node.where().known() ? report::resolve_scenario_output(node)
                                      : std::filesystem::path(config.trace_path);
    std::error_code ec;
    if (!trace_path.has_filename() || std::filesystem::is_directory(trace_path, ec))
      node.fail("'" + trace_path.string() + "' is a directory");
    if (!f.force && std::filesystem::exists(trace_path, ec) &&
        !report::is_lockstep_trace(trace_path)) {
      node.fail("'" + trace_path.string() +
                "' exists and is not a trace lockstep wrote; give --force to replace it");
    }
    trace_out.emplace(trace_path.has_parent_path() ? trace_path.parent_path() : ".", node.path(),
                      node.where());
  }
  RunEstimate estimate;
  estimate.add("lockstep", kBaseBytes);
  add_graph_estimate(estimate, config.par.world());
  add_training_estimate(estimate, config, !config.trace_path.empty());
  if (!admit(estimate, f.memory.budget(),
             "try a smaller --global-batch or larger --micro-batch, fewer GPUs, or --expansion "
             "reduced"))
    return;
  const ClusterSource source(scenario ? &*scenario : nullptr, f.cluster);
  std::optional<Topology> topo = source.build().graph;
  if (!topo) source.args().fail("the cluster is too large to build as a graph");
  SimulateOptions options;
  options.record_timeline = !config.trace_path.empty();
  if (scenario && scenario->packet) {
    packet_config_for_topology(&*scenario->packet, topo->traits().fabric);  // before simulating
    options.engines = scenario_engines(scenario->packet);
  }
  // A bar with an ETA on stderr while the steps run, when it is a terminal (as `run` draws).
  report::Progress progress(!f.quiet && report::Progress::stderr_is_terminal(),
                            config.noisy() ? 1 + config.trials : 1);
  options.on_step = [&progress](std::uint32_t done, std::uint32_t total) {
    if (done > 0) progress.advance();
    if (done < total)
      progress.begin(done == 0 ? "noise-free step"
                               : fmt::format("trial {} of {}", done, total - 1));
  };
  const TrainResult result = simulate_training(*topo, config, options);
  progress.finish();
  if (f.format == "json") {
    // The training object of results.json, from the same record.
    fmt::print(
        "{}", report::json_text(report::training_to_json(report::training_record(result, config))));
  } else {
    fmt::print("{}", report::format_training_text(result, config));
  }
  if (!f.chakra_out.empty()) {
    // The noise-free step, every rank, as ASTRA-sim reads it (docs/chakra.md "Export").
    chakra::write_traces(chakra::export_training(*topo, config), f.chakra_out, "step");
    if (f.format != "json") fmt::print("chakra traces      {}/step.<rank>.et\n", f.chakra_out);
  }
  if (trace_out) {
    trace_out->add(trace_path.filename().string(), report::training_trace_json(result));
    trace_out->commit();
    if (f.format != "json") fmt::print("trace              {}\n", trace_path.string());
  }
}

const RegisterCommand kTrain(40, [](CLI::App& root) {
  auto* cmd = root.add_subcommand(
      "train", "Simulate a training iteration: time breakdown, MFU, cost, jitter and stragglers");
  auto f = std::make_shared<TrainFlags>();
  cmd->add_option("scenario", f->cluster.scenario,
                  "a scenario file with cluster: and job: sections");
  add_cluster_options(*cmd, f->cluster);
  f->job.reserve(kJobFlags.size());
  for (const auto& [key, help] : kJobFlags) {
    cmd->add_option_function<std::string>(
        flag_of(key), [f, key = key](const std::string& v) { f->job.emplace_back(key, v); }, help);
  }
  cmd->add_option("--jitter", f->jitter,
                  "compute noise (repeatable): normal:5% | lognormal:0.1 | straggler:p=0.01,x=1.5");
  cmd->add_option(
      "--fault", f->faults,
      "fault (repeatable): slow-gpu:rank=R,x=X (or node=N,gpu=G or stage=S for rank=R) | "
      "degraded-link:link=L,x=F | "
      "failed-link:link=L; L an index of topo --emit's links or A-B device names "
      "(nic3-leaf3)");
  cmd->add_option("--format", f->format, "text | json")->check(CLI::IsMember({"text", "json"}));
  cmd->add_flag("--force", f->force, "replace a --trace file that lockstep did not write");
  cmd->add_flag("--quiet,-q", f->quiet, "no progress bar (drawn on stderr only when a terminal)");
  cmd->add_option("--chakra-out", f->chakra_out,
                  "write the noise-free step as Chakra traces DIR/step.<rank>.et (docs/chakra.md)");
  add_memory_options(*cmd, f->memory);
  cmd->callback([f] { run(*f); });
});

}  // namespace
}  // namespace lockstep::cli
