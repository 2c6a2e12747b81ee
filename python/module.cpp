// lockstep._lockstep: the commands' library calls (lockstep/api/commands.hpp) for Python. Options
// arrive as (name, text) pairs, names in the CLI's spelling with underscores (nodes,
// gpus_per_node, min_bytes; `fault` and `jitter` may repeat), already turned into text by
// python/lockstep/__init__.py; results leave as the JSON text the commands print with
// --format json, which the package parses into dicts. InputError becomes lockstep.InputError (a
// ValueError) with the CLI's message; any other C++ exception a RuntimeError.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "lockstep/api/commands.hpp"
#include "lockstep/core/error.hpp"
#include "lockstep/report/inference.hpp"
#include "lockstep/report/json.hpp"
#include "lockstep/report/progress.hpp"
#include "lockstep/report/run.hpp"
#include "lockstep/report/training.hpp"
#include "lockstep/scenario/scenario.hpp"

namespace py = pybind11;
using namespace lockstep;

namespace {

using Options = std::vector<std::pair<std::string, std::string>>;

// The simulations' memory guard, as --max-memory and --max-events give it.
struct Budget {
  std::string max_memory;
  double max_events = kDefaultMaxEvents;
  bool take(const std::string& key, const std::string& value) {
    if (key == "max_memory") {
      max_memory = value;
      return true;
    }
    if (key == "max_events") {
      max_events = ArgNode::scalar(value, "--max-events").as_double(1, 1e300);
      return true;
    }
    return false;
  }
  MemoryBudget get() const { return api::memory_budget(max_memory, max_events, false); }
};

[[noreturn]] void not_an_option(const std::string& key, const char* command) {
  throw InputError(api::flag_of(key),
                   std::string("not an option of lockstep.") + command + "() (docs/python.md)");
}

std::string topo(const Options& options) {
  ClusterFlags flags;
  std::string builder, scenario;
  for (const auto& [key, value] : options) {
    if (key == "builder") builder = value;
    if (key == "scenario") scenario = value;
  }
  ArgNode cluster;
  if (!builder.empty()) {
    // As `lockstep topo --builder NAME --KEY VALUE ...`: every other option is the builder's.
    cluster = ArgNode::map("--builder " + builder);
    for (const auto& [key, value] : options) {
      const std::string path = key == "builder" ? "--builder" : api::flag_of(key);
      cluster.set(key, ArgNode::scalar(value, path));
    }
  } else if (!scenario.empty()) {
    if (options.size() > 1)
      not_an_option(options[0].first == "scenario" ? options[1].first : options[0].first,
                    "topo with a scenario");
    cluster = load_scenario(scenario).cluster;
  } else {
    // The preset options collective() and train() take (system, fabric, nodes, ...).
    for (const auto& [key, value] : options)
      if (!api::set_cluster_flag(flags, key, value)) not_an_option(key, "topo");
    cluster = preset_flag_args(flags);
  }
  return report::json_text(report::inventory_to_json(api::topo(cluster)));
}

// The collective() options that are the sweep's (scenario spelling, as the CLI's sweep map).
const std::set<std::string> kSweepKeys = {"op",        "algo",        "proto", "min_bytes",
                                          "max_bytes", "step_factor", "type",  "channels",
                                          "engine",    "skew"};

std::string collective(const Options& options) {
  ClusterFlags flags;
  Budget budget;
  ArgNode sweep = ArgNode::map("flags");
  ArgNode faults = ArgNode::list("--fault");
  for (const auto& [key, value] : options) {
    if (key == "fault") {
      faults.push(ArgNode::scalar(value, "--fault"));
    } else if (kSweepKeys.count(key)) {
      sweep.set(key, ArgNode::scalar(value, api::flag_of(key)));
    } else if (!api::set_cluster_flag(flags, key, value) && !budget.take(key, value)) {
      not_an_option(key, "collective");
    }
  }
  if (!faults.items().empty()) sweep.set("faults", std::move(faults));
  const auto run = api::run_collective(flags, sweep, budget.get(), false);
  nlohmann::ordered_json out;
  out["title"] = run->title;
  out["sweeps"] = report::sweeps_to_json(run->sweeps);
  return report::json_text(out);
}

std::string train(const Options& options) {
  api::TrainRequest request;
  Budget budget;
  std::set<std::string> job_keys;
  for (const auto& [key, help] : api::train_job_options()) job_keys.insert(key);
  for (const auto& [key, value] : options) {
    if (key == "fault") {
      request.faults.push_back(value);
    } else if (key == "jitter") {
      request.jitter.push_back(value);
    } else if (key == "pxn") {
      request.pxn = value;
    } else if (key == "force") {
      request.force = ArgNode::scalar(value, "--force").as_bool();
    } else if (job_keys.count(key)) {
      request.job.emplace_back(key, value);
    } else if (!api::set_cluster_flag(request.cluster, key, value) && !budget.take(key, value)) {
      not_an_option(key, "train");
    }
  }
  request.budget = budget.get();
  const auto run = api::run_train(request);
  return report::json_text(
      report::training_to_json(report::training_record(run->result, run->config)));
}

// `lockstep serve SCENARIO`: the scenario's inference job on its cluster (the preset options
// override the cluster as on the command line).
std::string serve(const Options& options) {
  api::ServeRequest request;
  Budget budget;
  for (const auto& [key, value] : options) {
    if (key == "trace") {
      request.trace = value;
    } else if (key == "pxn") {
      request.pxn = value;
    } else if (key == "force") {
      request.force = ArgNode::scalar(value, "--force").as_bool();
    } else if (!api::set_cluster_flag(request.cluster, key, value) && !budget.take(key, value)) {
      not_an_option(key, "serve");
    }
  }
  if (request.cluster.scenario.empty()) {
    throw InputError("scenario",
                     "lockstep.serve() needs scenario=FILE with a job: {type: inference}");
  }
  request.budget = budget.get();
  const auto run = api::run_serve(request);
  return report::json_text(report::inference_to_json(run->result, run->config));
}

// The scenario's name, after reading and checking it as every command does.
std::string load(const std::string& path) {
  return load_scenario(path).name;
}

std::string run_scenario(const std::string& path, const std::string& max_memory) {
  const report::RunInput input = api::run_input(path, LOCKSTEP_VERSION);
  admit(report::estimate_run(input), api::memory_budget(max_memory, kDefaultMaxEvents, false),
        "try fewer nodes, smaller max_bytes or global_batch, or the analytical engine");
  report::Progress progress(false, report::count_steps(input));
  return report::results_json_text(report::run_scenario(input, progress).results);
}

}  // namespace

PYBIND11_MODULE(_lockstep, m) {
  m.doc() = "lockstep's commands in process (docs/python.md); use the lockstep package";
  py::register_exception<InputError>(m, "InputError", PyExc_ValueError);
  const auto release = py::call_guard<py::gil_scoped_release>();
  m.def("topo", &topo, py::arg("options"), release);
  m.def("collective", &collective, py::arg("options"), release);
  m.def("train", &train, py::arg("options"), release);
  m.def("serve", &serve, py::arg("options"), release);
  m.def("load", &load, py::arg("path"), release);
  m.def("run_scenario", &run_scenario, py::arg("path"), py::arg("max_memory") = "", release);
  m.attr("version") = LOCKSTEP_VERSION;
}
