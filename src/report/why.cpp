// The "why" section: sensitivity re-runs and the sentences generated from the numbers.
#include "lockstep/report/why.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "lockstep/core/error.hpp"
#include "lockstep/topology/device_names.hpp"
#include "lockstep/topology/faults.hpp"

namespace lockstep::report {
namespace {

// A link of the scale-out network: one end is a switch or a gateway (NIC-leaf, leaf-spine, ...).
// NVLink to an NVSwitch and the PCIe between a GPU and its NIC are not.
bool scale_out(const Topology& topo, const Link& link) {
  auto network = [&](DeviceId d) {
    const DeviceKind k = topo.device(d).kind;
    return k == DeviceKind::Switch || k == DeviceKind::Gateway;
  };
  return network(link.a) || network(link.b);
}

std::optional<double> step_us(const Topology& topo, const TrainConfig& config,
                              const EngineFactory& engines) {
  SimulateOptions options;
  options.engines = engines;
  // Faults count as noise: the one trial has them (a noise-free job's trial is its iteration).
  return simulate_training(topo, config, options).max.microseconds();
}

// A share with one decimal, or two significant digits below 0.1% (0.078%, not 0.1% or 0.0%).
std::string pct(double fraction) {
  if (fraction != 0 && std::abs(fraction) < 0.001) return fmt::format("{:.2g}%", 100 * fraction);
  return fmt::format("{:.1f}%", 100 * fraction);
}

std::string signed_pct(double fraction) {
  return (fraction < 0 ? "" : "+") + pct(fraction);
}

double part_us(const Training& t, const std::string& name) {
  for (const BreakdownPart& p : t.breakdown)
    if (p.name == name) return p.time_us;
  return 0;
}

// The parts the scale-out network can change: data-parallel, pipeline, expert and context
// parallel traffic (TP traffic too when a TP group spans nodes, said where it applies).
double fabric_us(const Training& t) {
  return part_us(t, "exposed_dp") + part_us(t, "exposed_pp") + part_us(t, "exposed_ep") +
         part_us(t, "exposed_cp");
}

std::string where_the_step_goes(const Training& t) {
  std::vector<BreakdownPart> parts = t.breakdown;
  std::stable_sort(parts.begin(), parts.end(), [](const BreakdownPart& a, const BreakdownPart& b) {
    return a.time_us > b.time_us;
  });
  std::string s =
      fmt::format("Of the {} step (noise-free): ", readable_time_us(t.iteration_time_us));
  for (std::size_t i = 0; i < parts.size(); ++i) {
    s += fmt::format("{}{} {} ({})", i ? ", " : "", part_words(parts[i].name),
                     pct(parts[i].time_us / t.iteration_time_us),
                     readable_time_us(parts[i].time_us));
  }
  if (!parts.empty()) {
    std::string dominant = part_words(parts.front().name);
    dominant[0] = static_cast<char>(std::toupper(dominant[0]));
    s += fmt::format(". {} dominates.", dominant);
  }
  return s;
}

std::string network_load(const Variant& v, const Training& t) {
  const std::uint64_t per_node = v.inventory.nodes ? v.inventory.gpus / v.inventory.nodes : 0;
  const bool tp_inside = per_node && t.parallel.tp <= per_node && per_node % t.parallel.tp == 0;
  std::string s = tp_inside
                      ? fmt::format(
                            "TP traffic (groups of {}) stays on the scale-up links inside each "
                            "{}-GPU node; the scale-out fabric carries the rest, whose exposed "
                            "part is {} of the step",
                            t.parallel.tp, per_node, pct(fabric_us(t) / t.iteration_time_us))
                      : fmt::format(
                            "TP groups of {} span nodes of {} GPUs, so TP traffic crosses the "
                            "scale-out fabric too",
                            t.parallel.tp, per_node);
  if (v.heatmap && !v.heatmap->links.empty()) {
    const LinkHeatmap& h = *v.heatmap;
    double peak = 0;
    for (const auto& series : h.utilisation)
      for (double u : series) peak = std::max(peak, u);
    s += fmt::format(
        "; the busiest link ({}) peaks at {} of its line rate (averaged over {} "
        "intervals)",
        h.links.front(), pct(peak), readable_time_us(h.bucket_us));
  }
  return s + ".";
}

std::string straggler_words(const Training& t) {
  if (!t.jitter) return "";
  const JitterStats& j = *t.jitter;
  return fmt::format(
      "Under jitter each GPU also waits {} per step on stragglers on average ({} of GPU time, "
      "{} trials).",
      readable_time_us(j.straggler_wait_us), pct(j.lockstep_waste_fraction), j.trials);
}

std::string comparison(const Variant& v, const Variant& best) {
  const Training &t = *v.training, &b = *best.training;
  const double delta = t.iteration_time_us - b.iteration_time_us;
  const double rel = delta / b.iteration_time_us;
  // The parts that changed, largest first, each named with its change.
  std::vector<std::pair<double, std::string>> changes;
  std::vector<std::string> names;
  for (const BreakdownPart& p : t.breakdown) names.push_back(p.name);
  for (const BreakdownPart& p : b.breakdown)
    if (std::find(names.begin(), names.end(), p.name) == names.end()) names.push_back(p.name);
  for (const std::string& name : names) {
    const double d = part_us(t, name) - part_us(b, name);
    if (std::abs(d) >= 1e-4 * b.iteration_time_us) changes.emplace_back(d, name);
  }
  std::stable_sort(changes.begin(), changes.end(), [](const auto& x, const auto& y) {
    return std::abs(x.first) > std::abs(y.first);
  });
  std::string diff;
  for (std::size_t i = 0; i < changes.size() && i < 3; ++i) {
    diff +=
        fmt::format("{}{} {}{}", i ? ", " : "", part_words(changes[i].second),
                    changes[i].first < 0 ? "-" : "+", readable_time_us(std::abs(changes[i].first)));
  }
  const std::string fabric = pct(fabric_us(b) / b.iteration_time_us);
  if (std::abs(rel) < 0.001) {
    std::string s = fmt::format(
        "{} equals {} within 0.1% (+{}) because the traffic that crosses the scale-out fabric "
        "(exposed PP / DP / EP / CP communication) is only {} of the step",
        v.name, best.name, readable_time_us(delta), fabric);
    if (v.heatmap && !v.heatmap->utilisation.empty()) {
      double peak = 0;
      for (const auto& series : v.heatmap->utilisation)
        for (double u : series) peak = std::max(peak, u);
      s += fmt::format(" and never loads a link above {} of its line rate", pct(peak));
    }
    return s + ".";
  }
  return fmt::format("{} is {} slower than {} (+{}){}.", v.name, pct(rel), best.name,
                     readable_time_us(delta), diff.empty() ? "" : ": " + diff);
}

std::string sensitivity_words(const Variant& v) {
  if (!v.sensitivity_baseline_us || v.sensitivity.empty()) return "";
  const double base = *v.sensitivity_baseline_us;
  std::string s =
      fmt::format("What if (re-run on the analytical engine, noise-free, baseline {}): ",
                  readable_time_us(base));
  for (std::size_t i = 0; i < v.sensitivity.size(); ++i) {
    const SensitivityCase& c = v.sensitivity[i];
    s += i ? "; " : "";
    if (c.iteration_time_us) {
      s += fmt::format("{}: {} ({})", c.description, readable_time_us(*c.iteration_time_us),
                       signed_pct(*c.iteration_time_us / base - 1));
    } else {
      s += fmt::format("{}: not run ({})", c.description, c.note);
    }
  }
  return s + ".";
}

}  // namespace

std::string readable_time_us(double us) {
  auto three = [](double x) {
    return x >= 100  ? fmt::format("{:.0f}", x)
           : x >= 10 ? fmt::format("{:.1f}", x)
                     : fmt::format("{:.2f}", x);
  };
  const double a = std::abs(us);
  const std::string sign = us < 0 ? "-" : "";
  if (a >= 1e6) return sign + three(a / 1e6) + " s";
  if (a >= 1e3) return sign + three(a / 1e3) + " ms";
  return sign + three(a) + " us";
}

std::string part_words(const std::string& part) {
  static const std::map<std::string, std::string> words = {
      {"compute", "compute"},
      {"exposed_tp", "exposed TP communication"},
      {"exposed_ep", "exposed EP communication"},
      {"exposed_cp", "exposed CP communication"},
      {"exposed_pp", "exposed PP communication"},
      {"exposed_dp", "exposed DP communication"},
      {"pipeline_bubble", "pipeline bubble"},
      {"imbalance", "waiting on other ranks"}};
  const auto it = words.find(part);
  return it == words.end() ? part : it->second;
}

void run_sensitivity(const Topology& topo, const TrainConfig& config, const EngineFactory& engines,
                     Variant& variant) {
  TrainConfig c = config;
  c.engine = "analytical";
  c.trials = 1;
  c.jitter.clear();
  c.link_jitter = 0;
  c.trace_ranks.clear();
  variant.sensitivity_baseline_us = step_us(topo, c, engines);

  SensitivityCase faster{"network_2x", "2x faster scale-out network", std::nullopt,
                         "every link to or between switches at twice its bandwidth"};
  const Topology fast = apply_link_faults(topo, {}, [&](Link& link) {
    if (scale_out(topo, link)) link.bandwidth = link.bandwidth * 2.0;
  });
  faster.iteration_time_us = step_us(fast, c, engines);
  variant.sensitivity.push_back(faster);

  SensitivityCase slow{"straggler_1.5x", "GPU 0 1.5x slower", std::nullopt,
                       "slow-gpu:rank=0,x=1.5 (rank 0: first pipeline stage)"};
  TrainConfig s = c;
  FaultSpec f;
  f.kind = FaultSpec::Kind::SlowGpu;
  f.rank = 0;
  f.factor = 1.5;
  f.text = "slow-gpu:rank=0,x=1.5";
  s.faults.push_back(f);
  slow.iteration_time_us = step_us(topo, s, engines);
  variant.sensitivity.push_back(slow);

  SensitivityCase spine{"failed_spine", "one spine switch failed", std::nullopt, ""};
  DeviceId first_spine = kNone;
  for (DeviceId d = 0; d < topo.num_devices() && first_spine == kNone; ++d) {
    const Device& dev = topo.device(d);
    if (dev.kind == DeviceKind::Switch && dev.tier == 1) first_spine = d;
  }
  if (first_spine == kNone) {
    spine.note = "the fabric has no spine tier";
  } else {
    const std::string name = DeviceNames(topo).name(first_spine);
    spine.description = fmt::format("{} failed", name);
    spine.note = fmt::format("every link of {} removed; routes go around it", name);
    std::vector<FaultSpec> faults;
    for (LinkId l = 0; l < topo.num_links(); ++l) {
      const Link& link = topo.link(l);
      if (link.a != first_spine && link.b != first_spine) continue;
      FaultSpec failed;
      failed.kind = FaultSpec::Kind::FailedLink;
      failed.link = l;
      failed.text = "failed spine";
      faults.push_back(failed);
    }
    try {
      spine.iteration_time_us = step_us(apply_link_faults(topo, faults), c, engines);
    } catch (const InputError& e) {
      spine.note = e.bare_message();
    }
  }
  variant.sensitivity.push_back(spine);
}

void explain(RunResults& results) {
  const Variant* best = nullptr;
  for (const Variant& v : results.variants) {
    if (v.training && (!best || v.training->iteration_time_us < best->training->iteration_time_us))
      best = &v;
  }
  for (Variant& v : results.variants) {
    if (!v.training) continue;
    const Training& t = *v.training;
    v.why.clear();
    v.why.push_back(where_the_step_goes(t));
    v.why.push_back(network_load(v, t));
    if (const std::string s = straggler_words(t); !s.empty()) v.why.push_back(s);
    if (best != &v && best != nullptr) v.why.push_back(comparison(v, *best));
    if (const std::string s = sensitivity_words(v); !s.empty()) v.why.push_back(s);
  }
}

}  // namespace lockstep::report
