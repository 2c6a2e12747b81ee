#include "lockstep/api/commands.hpp"

#include <fmt/format.h>

#include <filesystem>

#include "lockstep/config/args_file.hpp"
#include "lockstep/core/error.hpp"
#include "lockstep/core/units.hpp"
#include "lockstep/engine/packet/packet_config.hpp"
#include "lockstep/nccl/sweep.hpp"
#include "lockstep/report/collective_rows.hpp"
#include "lockstep/report/output.hpp"
#include "lockstep/report/progress.hpp"
#include "lockstep/report/trace.hpp"
#include "lockstep/scenario/collective_sweep.hpp"
#include "lockstep/scenario/engines.hpp"
#include "lockstep/scenario/memory_estimate.hpp"
#include "lockstep/scenario/scenario.hpp"
#include "lockstep/workload/model.hpp"
#include "lockstep/workload/training.hpp"

namespace lockstep::api {

MemoryBudget memory_budget(const std::string& max_memory, double max_events, bool dry_run) {
  MemoryBudget b;
  b.bytes = max_memory.empty()
                ? default_memory_budget()
                : static_cast<double>(parse_bytes(max_memory, "--max-memory").count());
  b.max_events = max_events;
  b.dry_run = dry_run;
  return b;
}

bool set_cluster_flag(ClusterFlags& flags, const std::string& key, const std::string& value) {
  using Field = std::string ClusterFlags::*;
  static const std::pair<const char*, Field> kFields[] = {
      {"scenario", &ClusterFlags::scenario},
      {"system", &ClusterFlags::system},
      {"fabric", &ClusterFlags::fabric},
      {"nodes", &ClusterFlags::nodes},
      {"gpus_per_node", &ClusterFlags::gpus_per_node},
      {"nics_per_node", &ClusterFlags::nics_per_node},
      {"nic_speed", &ClusterFlags::nic_speed},
      {"domain_nodes", &ClusterFlags::domain_nodes},
      {"routing", &ClusterFlags::routing},
      {"qps_per_connection", &ClusterFlags::qps_per_connection},
  };
  for (const auto& [name, field] : kFields) {
    if (key != name) continue;
    // The CLI refuses an empty value too: it would read as "not given".
    if (value.empty()) throw InputError(flag_of(key), "is empty");
    flags.*field = value;
    return true;
  }
  if (key == "sharp") {
    flags.sharp = ArgNode::scalar(value, "--sharp").as_bool();
    return true;
  }
  return false;
}

Inventory topo(const ArgNode& cluster) {
  // Closed form: no graph is built.
  return ClusterSource(cluster).build(BuildOptions{.want_graph = false}).inventory;
}

namespace {

// The scenario's `collectives:` unless the flags name a sweep themselves; --engine overrides the
// scenario's `engine:`, --fault the sweeps' faults.
std::vector<CollectiveSweep> sweeps_of(const ArgNode& flags,
                                       const std::optional<Scenario>& scenario,
                                       const std::vector<std::string>& types) {
  std::vector<CollectiveSweep> sweeps;
  const bool flags_name_sweep =
      flags.has("op") || flags.has("algo") || flags.has("min_bytes") || flags.has("max_bytes");
  const std::string engine_flag = flags.has("engine") ? flags.find("engine")->text() : "";
  if (scenario && scenario->collectives && !flags_name_sweep) {
    const std::string engine = !engine_flag.empty() ? engine_flag
                               : scenario->engine   ? parse_engine_name(*scenario->engine)
                                                    : std::string("analytical");
    sweeps = parse_collectives_section(*scenario->collectives, engine);
    if (const ArgNode* faults = flags.find("faults")) {
      ArgNode m = ArgNode::map("flags");
      m.set("faults", *faults);
      const std::vector<FaultSpec> parsed = parse_collective_sweep(m).faults;
      for (auto& s : sweeps) s.faults = parsed;
    }
  } else {
    CollectiveSweep s = parse_collective_sweep(flags);
    if (engine_flag.empty() && scenario && scenario->engine)
      s.engine = parse_engine_name(*scenario->engine);
    if (types.size() > 1) {
      for (const std::string& type : types) {
        s.type = nccl_tests_type(type);
        sweeps.push_back(s);
      }
    } else {
      sweeps.push_back(s);
    }
  }
  if (scenario)
    for (auto& s : sweeps) s.packet = scenario->packet;
  return sweeps;
}

}  // namespace

std::optional<CollectiveRun> run_collective(const ClusterFlags& flags, const ArgNode& sweep_args,
                                            const MemoryBudget& budget, bool progress_bar,
                                            const std::vector<std::string>& types,
                                            const CollectiveCheck& check) {
  const std::optional<Scenario> scenario = load_cluster_scenario(flags, "--scenario");
  ArgNode args = sweep_args;
  if (flags.sharp && !args.has("sharp")) args.set("sharp", ArgNode::scalar("true", "--sharp"));
  CollectiveRun run;
  run.specs = sweeps_of(args, scenario, types);
  const ClusterSource source(scenario ? &*scenario : nullptr, flags);
  // Every engine runs on the graph, the analytical one included (it prices the NCCL model on
  // it). NCCL sees a preset through the preset's own figures, other clusters through the graph;
  // a preset too large to build as a graph gets the NCCL model alone, unless faults need one.
  bool need_graph = !source.preset();
  for (const auto& s : run.specs)
    need_graph = need_graph || s.engine != "analytical" || !s.faults.empty();
  // The estimate from the inventory (closed form), before the graph and the engines allocate.
  const Inventory inventory = source.build(BuildOptions{.want_graph = false}).inventory;
  RunEstimate estimate;
  estimate.add("lockstep", kBaseBytes);
  add_graph_estimate(estimate, inventory.gpus);
  add_sweeps_estimate(estimate, run.specs, inventory.gpus, inventory.diameter_switch_hops + 1);
  if (!admit(estimate, budget, "try fewer --nodes, a smaller --max-bytes, or --engine analytical"))
    return std::nullopt;
  std::optional<Topology> graph = source.build().graph;
  if (!graph && need_graph)
    source.build_args().fail("the cluster is too large to build as a graph for this engine");
  run.cluster = source.preset() ? nccl_cluster(*source.preset()) : nccl_cluster(*graph);
  const NcclCluster& cluster = run.cluster;
  run.title = source.title(graph ? &*graph : nullptr);
  if (check) check(run.specs, cluster);  // before any row runs
  // A bar with an ETA on stderr while the flow or packet engine runs the rows (one step each;
  // the analytical engine is instant), as `run` draws.
  std::size_t rows = 0;
  bool slow = false;
  for (const auto& s : run.specs) {
    rows += s.sizes(cluster.ranks()).size();
    slow = slow || s.engine != "analytical";
  }
  report::Progress progress(slow && progress_bar, rows);
  for (const auto& s : run.specs) {
    progress.begin(fmt::format("{} on {}", to_string(s.op), s.engine));
    const auto row_done = [&progress](std::size_t, std::size_t) { progress.advance(); };
    const auto result =
        run_collective_sweep(s, cluster, graph ? &*graph : nullptr, row_done, progress.hook());
    progress.finish();
    run.sweeps.push_back(report::sweep_record(s, result));
  }
  return run;
}

const std::vector<std::pair<std::string, std::string>>& train_job_options() {
  static const std::vector<std::pair<std::string, std::string>> options = {
      {"model", fmt::format("a preset ({}) or key=value fields: preset=llama3-8b,layers=8 "
                            "(docs/scenario-job.md)",
                            fmt::join(model_preset_names(), ", "))},
      {"tp", "tensor-parallel degree"},
      {"cp", "context-parallel degree (ring attention; world = tp x cp x pp x dp)"},
      {"pp", "pipeline stages"},
      {"dp", "data-parallel replicas"},
      {"ep", "expert-parallel degree (MoE; ep x etp divides tp x cp x dp)"},
      {"etp", "expert tensor-parallel degree (MoE; divides tp, default tp)"},
      {"moe_imbalance",
       "tokens of the busiest expert-parallel rank / the mean (default 1, at most ep)"},
      {"zero", "ZeRO stage 0 | 1 (default: distributed optimizer) | 2 | 3"},
      {"fsdp", "true: shard like ZeRO-3 (FSDP)"},
      {"sequence_parallel", "true | false (default true)"},
      {"interleave", "virtual stages per rank (interleaved 1F1B)"},
      {"attention_kernel",
       "flash (default) | unfused: Megatron's pre-FlashAttention core, scores through HBM "
       "(efficiency kernels)"},
      {"pipeline", "1f1b (default) | dualpipe: DeepSeek-V3's bidirectional pipeline (even pp)"},
      {"communication_sms",
       "SMs the all-to-all kernels hold beside DualPipe's compute (DeepSeek-V3: 20 of 132; "
       "default 0)"},
      {"microbatch_group_size_per_vp_stage",
       "interleaved: micro-batches per group through each chunk (N, default pp)"},
      {"account_for_embedding_in_pipeline_split",
       "true: the embedding counts as a layer in the pipeline split (first stage one fewer)"},
      {"account_for_loss_in_pipeline_split",
       "true: the output layer and loss count as a layer (last stage one fewer)"},
      {"global_batch", "sequences per iteration"},
      {"micro_batch", "sequences per micro-batch (default 1)"},
      {"seq", "tokens per sequence (default: the model's)"},
      {"efficiency", "fraction of the peak for every kernel (0.5), or kernels: the kernel model"},
      {"peak_tflops", "override the GPU's peak dense BF16 TFLOP/s"},
      {"precision", "bf16 | fp8 | fp4: the layers' weight GEMMs (default bf16)"},
      {"hbm", "override the GPU's memory, e.g. 80GB"},
      {"recompute", "none | selective | full (true = full, false = none; default none)"},
      {"recompute_modules",
       "selective recompute of core_attn (default), mlp, moe, moe_act, layernorm, mla_up_proj, "
       "shared_experts, e.g. layernorm,mla_up_proj"},
      {"lora_rank", "LoRA fine-tuning: adapters of this rank, frozen base (default 0: full)"},
      {"lora_targets", "attention (default: QKV and output projection) | attention_mlp"},
      {"bucket", "DP gradient bucket, e.g. 256MiB (default 40M parameters)"},
      {"overlap_dp", "true | false: overlap gradient reduction with backward (default true)"},
      {"grad_reduce_in_fp32", "true | false: FP32 (default) or BF16 gradient buffer and reduction"},
      {"optimizer", "moments=fp32 (default) | moments=bf16: AdamW's moments (DeepSeek-V3's BF16)"},
      {"tp_comm_overlap",
       "true | false: TP all-gather / reduce-scatter beside their GEMMs (false)"},
      {"tp_comm_overlap_sms",
       "SMs the overlapped reduce-scatters take from the GEMMs they drain (Transformer Engine's "
       "16)"},
      {"overlap_param_gather",
       "true | false: ZeRO-1/2 parameter gather in the next forward (false)"},
      {"optimizer_step",
       "true | false: the optimizer step's time, 38 B per shard parameter (true)"},
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
  return options;
}

std::string flag_of(const std::string& key) {
  std::string flag = "--" + key;
  for (char& ch : flag)
    if (ch == '_') ch = '-';
  return flag;
}

bool job_pxn(const std::string& flag, const std::optional<Scenario>& scenario) {
  if (!flag.empty()) return ArgNode::scalar(flag, "--pxn").as_bool();
  return scenario ? collectives_pxn(scenario->collectives) : true;
}

namespace {

ArgNode job_args(const TrainRequest& r, std::optional<ArgNode> base) {
  ArgNode job = base ? std::move(*base) : ArgNode::map("flags");
  for (const auto& [key, value] : r.job) job.set(key, ArgNode::scalar(value, flag_of(key)));
  auto list = [&](const char* key, const std::vector<std::string>& values, const char* flag) {
    if (values.empty()) return;
    ArgNode l = ArgNode::list(flag);
    for (const auto& v : values) l.push(ArgNode::scalar(v, flag));
    job.set(key, std::move(l));
  };
  list("jitter", r.jitter, "--jitter");
  list("faults", r.faults, "--fault");
  return job;
}

}  // namespace

std::optional<TrainRun> run_train(const TrainRequest& r) {
  const std::optional<Scenario> scenario = load_cluster_scenario(r.cluster, "a scenario file");
  std::optional<ArgNode> base;
  if (scenario) {
    if (!scenario->job) {
      throw InputError("job", "the scenario has no job: section", {r.cluster.scenario});
    }
    base = *scenario->job;
    if (scenario->seed_given && !base->has("seed")) {
      base->set("seed", ArgNode::scalar(std::to_string(scenario->seed), "seed"));
    }
  }
  const ArgNode job = job_args(r, base);
  TrainRun run{.config = parse_train_config(job)};
  run.config.pxn = job_pxn(r.pxn, scenario);
  const TrainConfig& config = run.config;
  // The trace's place is checked before the simulation: inside the scenario's folder when the
  // file names it, not a file of the user's, in a writable directory.
  std::optional<report::StagedOutput> trace_out;
  std::filesystem::path trace_path;
  if (!config.trace_path.empty()) {
    if (r.handle_interrupt) report::install_interrupt_handler();
    const ArgNode& node = job.at("trace");
    trace_path = node.where().known() ? report::resolve_scenario_output(node)
                                      : std::filesystem::path(config.trace_path);
    std::error_code ec;
    if (!trace_path.has_filename() || std::filesystem::is_directory(trace_path, ec))
      node.fail("'" + trace_path.string() + "' is a directory");
    if (!r.force && std::filesystem::exists(trace_path, ec) &&
        !report::is_lockstep_trace(trace_path)) {
      node.fail("'" + trace_path.string() +
                "' exists and is not a trace lockstep wrote; give --force to replace it");
    }
    trace_out.emplace(trace_path.has_parent_path() ? trace_path.parent_path() : ".", node.path(),
                      node.where());
  }
  const ClusterSource source(scenario ? &*scenario : nullptr, r.cluster);
  std::optional<Topology> topo;
  auto build = [&] {
    topo = source.build().graph;
    if (!topo) source.args().fail("the cluster is too large to build as a graph");
  };
  SimulateOptions options;
  // A job that may expand in full is small (at most kFullExpansionGpus GPUs): its graph is
  // built first so that the estimate counts each collective's ops in NCCL's plans, as
  // simulate_training does when it decides the expansion.
  CollectiveOpCount count;
  if (counts_collectives_on_cluster(config)) {
    build();
    // Its groups are planned on the cluster's GPUs: a job of another size is counted in single
    // rings here and refused when it runs (simulate_training's check).
    if (topo->gpus().size() == config.par.world()) count = collective_op_count(*topo, options.nccl);
  }
  RunEstimate estimate;
  estimate.add("lockstep", kBaseBytes);
  add_graph_estimate(estimate, config.par.world());
  add_training_estimate(estimate, config, !config.trace_path.empty(), count, options.busiest_links);
  if (!admit(estimate, r.budget,
             "try a smaller --global-batch or larger --micro-batch, fewer GPUs, or --expansion "
             "reduced"))
    return std::nullopt;
  if (!topo) build();
  options.record_timeline = !config.trace_path.empty();
  if (scenario && scenario->packet) {
    packet_config_for_topology(&*scenario->packet, topo->traits().fabric);  // before simulating
    options.engines = scenario_engines(scenario->packet);
  }
  // A bar with an ETA on stderr while the steps run (as `run` draws).
  report::Progress progress(r.progress, config.noisy() ? 1 + config.trials : 1);
  options.on_step = [&progress](std::uint32_t done, std::uint32_t total) {
    if (done > 0) progress.advance();
    if (done < total)
      progress.begin(done == 0 ? "noise-free step"
                               : fmt::format("trial {} of {}", done, total - 1));
  };
  options.progress = progress.hook();
  run.result = simulate_training(*topo, config, options);
  progress.finish();
  if (trace_out) {
    trace_out->add(trace_path.filename().string(), report::training_trace_json(run.result));
    trace_out->commit();
    run.trace_path = trace_path.string();
  }
  run.topology = std::move(*topo);
  return run;
}

report::RunInput run_input(const std::string& path, const std::string& lockstep_version) {
  // Read once: the scenario may be a pipe (`lockstep run <(...)`), empty on a second read.
  std::string text = read_text_file(path, "scenario");
  const Scenario scenario = parse_scenario(text, path);
  return report::run_input(scenario, std::move(text), path, lockstep_version);
}

}  // namespace lockstep::api
