// `lockstep sweep`: reading the sweep file, checking and running its points, keeping each
// point's results in a file with a manifest, and merging them into one report.
#include "lockstep/sweep/sweep.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "lockstep/config/args_file.hpp"
#include "lockstep/config/yaml_reader.hpp"
#include "lockstep/core/error.hpp"
#include "lockstep/report/json.hpp"
#include "lockstep/report/json_read.hpp"
#include "lockstep/report/output.hpp"
#include "lockstep/report/progress.hpp"
#include "lockstep/report/why.hpp"
#include "lockstep/scenario/scenario.hpp"

namespace lockstep::sweep {
namespace {

using Json = nlohmann::ordered_json;

// The version of a point file's layout; a file of another version is run again.
constexpr int kPointFileVersion = 1;

Json canonical(const ArgNode& node) {
  switch (node.kind()) {
    case ArgNode::Kind::Map: {
      Json out = Json::object();
      for (const auto& key : node.keys()) out[key] = canonical(node.at(key));
      return out;
    }
    case ArgNode::Kind::List: {
      Json out = Json::array();
      for (const auto& item : node.items()) out.push_back(canonical(item));
      return out;
    }
    default:
      return node.text();
  }
}

// Runs `fn`, naming the point in any InputError it throws.
template <typename Fn>
auto for_point(const SweepPoint& point, Fn&& fn) -> decltype(fn()) {
  try {
    return fn();
  } catch (const InputError& e) {
    throw InputError(e.field(), fmt::format("in point '{}': {}", point.spec.name, e.bare_message()),
                     e.where());
  }
}

std::string read_file(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

std::string fnv1a_hex(std::string_view text) {
  // FNV-1a 64 (Fowler, Noll, Vo; IETF draft-eastlake-fnv): offset basis and prime.
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : text) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return fmt::format("{:016x}", h);
}

SweepPlan parse_sweep(std::string_view text, const std::string& path,
                      const std::string& lockstep_version) {
  const ArgNode root = parse_yaml_args(text, path);
  if (root.kind() != ArgNode::Kind::Map) {
    root.fail("a sweep file is a map: scenario: BASE.yaml, then grid: or points:");
  }
  static const std::vector<std::string> known{"version",  "name", "description",
                                              "scenario", "grid", "points"};
  for (const auto& key : root.keys()) {
    if (std::find(known.begin(), known.end(), key) == known.end()) {
      root.at(key).fail(
          fmt::format("unknown sweep key '{}' (expected one of {})", key, fmt::join(known, ", ")));
    }
  }
  if (const ArgNode* version = root.find("version"); version && version->text() != "1") {
    version->fail("unsupported sweep version (this lockstep reads version 1)");
  }
  SweepPlan plan;
  plan.path = path;
  plan.text = std::string(text);
  plan.title = root.get_string("name", std::filesystem::path(path).stem().string());
  const ArgNode* scenario = root.find("scenario");
  if (scenario == nullptr) {
    throw InputError("scenario", "missing 'scenario: BASE.yaml' (the scenario the points change)",
                     SourceLocation{path, 1, 1});
  }
  if (scenario->kind() != ArgNode::Kind::Scalar || scenario->text().empty()) {
    scenario->fail("expected the path of the base scenario (relative to the sweep file)");
  }
  plan.base_path = (std::filesystem::path(path).parent_path() / scenario->text()).string();
  if (!std::filesystem::is_regular_file(plan.base_path)) {
    scenario->fail(fmt::format("no scenario file '{}'", plan.base_path));
  }
  const std::string base_text = read_text_file(plan.base_path, "scenario");
  const Scenario base = parse_scenario(base_text, plan.base_path);
  if (base.variants) {
    scenario->fail(
        "the base scenario declares 'variants:' (a sweep's points take their place: move its keys "
        "into grid: or points:)");
  }
  plan.base_hash = fnv1a_hex(base_text);
  plan.base = report::run_input(base, base_text, plan.base_path, lockstep_version);

  const ArgNode* grid = root.find("grid");
  const ArgNode* points = root.find("points");
  if ((grid == nullptr) == (points == nullptr)) {
    const ArgNode& where = grid != nullptr ? *grid : root;
    where.fail(
        "expected one of 'grid:' (keys -> lists, every combination) or 'points:' (a list "
        "of maps of keys)");
  }
  if (grid != nullptr && grid->kind() != ArgNode::Kind::Map) {
    grid->fail("expected a map of dotted scenario keys to lists of values");
  }
  if (points != nullptr && points->kind() != ArgNode::Kind::List) {
    points->fail("expected a list of maps of dotted scenario keys to values");
  }
  // A grid is variants' map of lists and points their list of maps (report/variants.hpp), with
  // no shorthand: every key names its section.
  const ArgNode& section = grid != nullptr ? *grid : *points;
  const std::vector<report::VariantSpec> specs = report::parse_variants(section, plan.keys);
  std::map<std::string, std::string> seen;  // id -> name
  for (const report::VariantSpec& spec : specs) {
    SweepPoint point;
    Json values = Json::object();
    for (const auto& [key, value] : spec.values) {
      report::scenario_key_path(key, value, false);
      values[key] = canonical(value);
    }
    point.spec = spec;
    point.values_json = values.dump();
    point.id = fnv1a_hex(point.values_json);
    if (auto [it, fresh] = seen.emplace(point.id, spec.name); !fresh) {
      section.fail(fmt::format("points '{}' and '{}' set the same values", it->second, spec.name));
    }
    plan.points.push_back(std::move(point));
  }
  return plan;
}

report::RunInput point_input(const SweepPlan& plan, const SweepPoint& point) {
  return report::apply_variant(plan.base, point.spec);
}

void check_points(const SweepPlan& plan) {
  for (const SweepPoint& point : plan.points) {
    for_point(point, [&] { report::check_run_input(point_input(plan, point)); });
  }
}

std::string run_point(const SweepPlan& plan, const SweepPoint& point) {
  report::Progress quiet(false, 0);
  report::RunResults results = for_point(point, [&] {
                                 return report::run_scenario(point_input(plan, point), quiet);
                               }).results;
  report::Variant& v = results.variants.at(0);
  v.name = point.spec.name;
  v.substitutions = point.spec.shown;
  const Json file = {{"lockstep_sweep_point", kPointFileVersion},
                     {"lockstep_version", plan.base.lockstep_version},
                     {"base_scenario", plan.base_path},
                     {"base_hash", plan.base_hash},
                     {"point", point.spec.name},
                     {"values", Json::parse(point.values_json)},
                     {"variant", report::variant_to_json(v)}};
  return report::json_text(file);
}

bool point_finished(const SweepPlan& plan, const SweepPoint& point,
                    const std::filesystem::path& file) {
  if (!std::filesystem::is_regular_file(file)) return false;
  try {
    const Json j = Json::parse(read_file(file));
    return j.at("lockstep_sweep_point") == kPointFileVersion &&
           j.at("lockstep_version") == plan.base.lockstep_version &&
           j.at("base_hash") == plan.base_hash &&
           j.at("values") == Json::parse(point.values_json) && j.at("variant").is_object();
  } catch (const nlohmann::json::exception&) {
    return false;  // not a point file (or cut short): run the point again
  }
}

report::Variant read_point(const std::string& text) {
  return report::variant_from_json(Json::parse(text).at("variant"));
}

report::RunResults merge_points(const SweepPlan& plan, std::vector<report::Variant> variants) {
  report::RunResults r;
  r.title = plan.title;
  r.scenario_path = plan.path;
  r.scenario_text = fmt::format("{}\n# base scenario: {}\n{}", plan.text, plan.base_path,
                                plan.base.scenario_text);
  r.lockstep_version = plan.base.lockstep_version;
  r.seed = plan.base.seed;
  r.variant_keys = plan.keys;
  for (std::size_t i = 0; i < variants.size() && i < plan.points.size(); ++i) {
    // The plan names the point (a point file is found by its values, not its name).
    variants[i].name = plan.points[i].spec.name;
    variants[i].substitutions = plan.points[i].spec.shown;
  }
  r.variants = std::move(variants);
  report::explain(r);  // each point compared with the fastest of all, not with itself alone
  return r;
}

report::CsvTable sweep_table(const SweepPlan& plan, const report::RunResults& merged) {
  report::CsvTable summary;
  for (auto& table : report::results_tables(merged)) {
    if (table.name == "summary") summary = std::move(table);
  }
  report::CsvTable t{"sweep", {"point"}, {}};
  for (const auto& key : plan.keys) t.header.push_back(key);
  t.header.insert(t.header.end(), summary.header.begin() + 1, summary.header.end());
  for (std::size_t i = 0; i < summary.rows.size() && i < plan.points.size(); ++i) {
    std::vector<std::string> row{summary.rows[i][0]};
    for (const auto& key : plan.keys) {
      std::string value;
      for (const auto& [k, v] : plan.points[i].spec.shown) {
        if (k == key) value = v;
      }
      row.push_back(value);
    }
    row.insert(row.end(), summary.rows[i].begin() + 1, summary.rows[i].end());
    t.rows.push_back(std::move(row));
  }
  return t;
}

void write_point_file(const std::filesystem::path& points_dir, const SweepPoint& point,
                      const std::string& text) {
  report::StagedOutput out(points_dir);
  out.add(point.id + ".json", text);
  out.commit();
}

void run_points_locally(const SweepPlan& plan, const std::vector<std::size_t>& pending,
                        unsigned jobs, const std::filesystem::path& points_dir,
                        const std::function<void(std::size_t)>& done) {
  if (jobs <= 1) {
    for (std::size_t i : pending) {
      write_point_file(points_dir, plan.points[i], run_point(plan, plan.points[i]));
      done(i);
    }
    return;
  }
  // Processes, not threads: a point is a whole `lockstep run` with its own memory, and a crash
  // or an exhausted memory budget takes one point down, not the sweep. The parent starts no
  // thread, so fork() copies a single-threaded process. A child reports its error in a file.
  auto error_file = [&](std::size_t i) {
    return points_dir / fmt::format(".{}.error", plan.points[i].id);
  };
  std::map<pid_t, std::size_t> running;
  std::size_t next = 0;
  int failed_code = 0;
  std::string failed_message;
  std::fflush(stdout);
  std::fflush(stderr);
  while (next < pending.size() || !running.empty()) {
    while (failed_code == 0 && next < pending.size() && running.size() < jobs) {
      const std::size_t i = pending[next++];
      const pid_t pid = fork();
      if (pid < 0) throw std::runtime_error("fork failed: cannot start a point's process");
      if (pid == 0) {
        // Ctrl-C reaches the whole process group: the parent says what was left; a child just
        // stops (its temporary point file is removed by the next sweep, its process gone).
        std::signal(SIGINT, SIG_DFL);
        std::signal(SIGTERM, SIG_DFL);
        int code = 0;
        std::string message;
        try {
          write_point_file(points_dir, plan.points[i], run_point(plan, plan.points[i]));
        } catch (const InputError& e) {
          code = 2;
          message = e.what();
        } catch (const std::exception& e) {
          code = 1;
          message = e.what();
        }
        if (code != 0) std::ofstream(error_file(i)) << code << "\n" << message;
        _exit(code);
      }
      running.emplace(pid, i);
    }
    int status = 0;
    const pid_t pid = waitpid(-1, &status, 0);
    if (pid < 0) break;
    const auto it = running.find(pid);
    if (it == running.end()) continue;
    const std::size_t i = it->second;
    running.erase(it);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
      done(i);
      continue;
    }
    if (failed_code != 0) continue;
    std::ifstream in(error_file(i));
    if (in >> failed_code) {
      in.ignore(1);
      std::getline(in, failed_message);
    } else {
      failed_code = 1;
      failed_message = fmt::format("the process of point '{}' ended with status {}",
                                   plan.points[i].spec.name, status);
    }
    std::filesystem::remove(error_file(i));
  }
  if (failed_code == 2) throw InputError("", failed_message);
  if (failed_code != 0) throw std::runtime_error(failed_message);
}

}  // namespace lockstep::sweep
