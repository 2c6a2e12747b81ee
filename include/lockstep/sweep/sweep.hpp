#pragma once
// `lockstep sweep grid.yaml`: one base scenario run at many points, each point a set of dotted
// scenario keys and values (job.tp, cluster.fabric, engine, collectives.0.max_bytes ...) applied
// as a variant is (report/variants.hpp). docs/sweeps.md.
//
//   SweepPlan plan = load_sweep("grid.yaml", text, LOCKSTEP_VERSION);  // every point checked
//   for (point not finished in out/points): write point_file_text(plan, point) there
//   RunResults merged = merge_points(plan, read every point file);
//
// Each point's results are kept in out/points/<id>.json with a manifest (the lockstep version,
// the base scenario's hash, the point's keys and values): a rerun skips a point whose file
// matches, and reruns one whose base or values changed.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "lockstep/report/csv.hpp"
#include "lockstep/report/results.hpp"
#include "lockstep/report/run.hpp"
#include "lockstep/report/variants.hpp"

namespace lockstep::sweep {

struct SweepPoint {
  report::VariantSpec spec;  // name "job.tp=2, cluster.fabric=ib-ndr" and the values
  std::string values_json;   // the keys and their values, whole, as canonical JSON text
  std::string id;            // FNV-1a 64 of values_json in hex: the point file's stem
};

struct SweepPlan {
  std::string path;               // the sweep file, as given
  std::string text;               // its text
  std::string title;              // `name:`, else the sweep file's stem
  std::string base_path;          // the base scenario, resolved against the sweep file's folder
  std::string base_hash;          // FNV-1a 64 of the base scenario's text, in hex
  report::RunInput base;          // the base scenario's sections
  std::vector<std::string> keys;  // every key the points set, in first-seen order
  std::vector<SweepPoint> points;
};

/// FNV-1a 64-bit of `text` as 16 hex digits: a change detector (not a security hash).
std::string fnv1a_hex(std::string_view text);

/// Reads a sweep file and its base scenario. Throws InputError with file:line:column for a
/// missing or unknown key, a base that declares `variants:`, grid and points both or neither,
/// an empty list, a key no section has, duplicate points.
SweepPlan parse_sweep(std::string_view text, const std::string& path,
                      const std::string& lockstep_version);

/// Checks every point before any runs (its sections parsed, its cluster built, its sweeps and
/// job checked against it): the first bad point is an InputError "in point 'NAME': ...".
void check_points(const SweepPlan& plan);

/// The point's input: the base with the point's values substituted.
report::RunInput point_input(const SweepPlan& plan, const SweepPoint& point);

/// Runs one point (quietly) and returns its file's text: the manifest and the variant record.
std::string run_point(const SweepPlan& plan, const SweepPoint& point);

/// Whether `file` holds this point's results for this base and lockstep version.
bool point_finished(const SweepPlan& plan, const SweepPoint& point,
                    const std::filesystem::path& file);

/// The variant record of a point file (run_point's text).
report::Variant read_point(const std::string& text);

/// Every point as one RunResults: the points as variants (in the sweep's order) named by their
/// key=value, the keys as the variant keys, the "why" sentences compared across all points.
report::RunResults merge_points(const SweepPlan& plan, std::vector<report::Variant> variants);

/// sweep.csv: one row per point, its name, one column per key, then the summary's columns.
report::CsvTable sweep_table(const SweepPlan& plan, const report::RunResults& merged);

/// Runs the points of `pending` (indices into plan.points) on this machine, `jobs` at a time in
/// forked processes (one in this process when jobs is 1), each writing
/// `points_dir/<id>.json`. The first point that fails is rethrown (InputError with its message)
/// once the running ones have finished. `done` is called after each point, in this process.
void run_points_locally(const SweepPlan& plan, const std::vector<std::size_t>& pending,
                        unsigned jobs, const std::filesystem::path& points_dir,
                        const std::function<void(std::size_t)>& done);

/// Writes `text` as `points_dir/<id>.json` atomically.
void write_point_file(const std::filesystem::path& points_dir, const SweepPoint& point,
                      const std::string& text);

}  // namespace lockstep::sweep
