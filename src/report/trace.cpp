#include "lockstep/report/trace.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>

#include "lockstep/core/error.hpp"
#include "lockstep/report/output.hpp"

namespace lockstep::report {
namespace {

using nlohmann::json;

constexpr std::size_t kMaxCounterPoints = 2000;
// Every trace lockstep writes opens with these bytes (no other tool names itself there).
constexpr std::string_view kTraceHead = "{\"otherData\":{\"generator\":\"lockstep\",";

// Microseconds, rounded to the picosecond, as the trace-event format wants.
double micros(Time t) {
  return static_cast<double>(t.picoseconds()) / 1e6;
}

const char* stream_name(std::uint8_t stream) {
  switch (stream) {
    case 0:
      return "compute";
    case 1:
      return "data-parallel comm";
    case 2:
      return "pipeline sends";
    default:
      return "compute (DualPipe pair's backward)";
  }
}

// Events are written one per line as compact JSON text, a megabyte at a time when writing a
// file: a 256-GPU step has hundreds of thousands of slices, which a JSON tree of the whole
// document would hold several times over in memory.
class Out {
 public:
  explicit Out(std::ostream* sink) : sink_(sink) {}
  // The text to append one event to (after the separator from the previous one).
  std::string& event() {
    if (sink_ && text_.size() > (1u << 20)) {
      *sink_ << text_;
      text_.clear();
    }
    text_ += first_ ? "\n" : ",\n";
    first_ = false;
    return text_;
  }
  std::string& text() { return text_; }

 private:
  std::ostream* sink_;
  std::string text_;
  bool first_ = true;
};

void metadata(Out& out, const char* what, std::uint32_t pid, std::uint32_t tid, const json& args) {
  fmt::format_to(std::back_inserter(out.event()),
                 "{{\"ph\":\"M\",\"name\":\"{}\",\"pid\":{},\"tid\":{},\"ts\":0,\"args\":{}}}",
                 what, pid, tid, args.dump());
}

// Slice names and categories are lockstep's own words (no quote or backslash to escape).
void slice(Out& out, const TimelineSlice& s, bool slow) {
  // Colours from the trace viewer's reserved names: the slow GPU's kernels stand out, waits
  // are grey (chrome://tracing reads cname; Perfetto colours by name).
  const bool wait = s.category == "wait";
  const bool kernel = s.category == "forward" || s.category == "backward";
  const char* cname = wait             ? ",\"cname\":\"grey\""
                      : slow && kernel ? ",\"cname\":\"terrible\""
                                       : "";
  fmt::format_to(std::back_inserter(out.event()),
                 "{{\"ph\":\"X\",\"name\":\"{}\",\"cat\":\"{}\",\"pid\":{},\"tid\":{},\"ts\":{},"
                 "\"dur\":{}{}}}",
                 s.name, s.category, s.rank, s.stream, micros(s.start), micros(s.end - s.start),
                 cname);
}

// The packet engine's congestion events of a link, per bin of `per_bin` sample periods: a point
// for each bin that had any, then a zero where the next bin is quiet, so that summing a track's
// points gives the run's count. Only the kinds the link ever saw get a track (docs/telemetry.md).
void event_counters(Out& out, const LinkTrack& link, std::size_t per_bin, std::uint32_t pid) {
  static constexpr std::array<const char*, PeriodEvents::kKinds> kNames = {
      "pfc_pauses", "ecn_marks", "drops", "trims", "cnps", "retransmissions"};
  const std::vector<PeriodEvents> bins = coarsen_events(link.events, per_bin);
  std::array<bool, PeriodEvents::kKinds> seen{};
  bool paused = false;
  for (const PeriodEvents& e : bins) {
    for (std::size_t k = 0; k < seen.size(); ++k) seen[k] = seen[k] || e.count[k] > 0;
    paused = paused || e.paused_us > 0;
  }
  const std::string name = json(link.name).dump();
  const Time width = link.period * static_cast<std::int64_t>(per_bin);
  auto point = [&](std::uint32_t bin, const PeriodEvents* e) {
    std::string args;
    for (std::size_t k = 0; k < seen.size(); ++k)
      if (seen[k]) args += fmt::format(",\"{}\":{}", kNames[k], e ? e->count[k] : 0);
    if (paused) args += ",\"pfc_paused_us\":" + json(e ? e->paused_us : 0.0f).dump();
    args[0] = '{';
    fmt::format_to(std::back_inserter(out.event()),
                   "{{\"ph\":\"C\",\"name\":{},\"pid\":{},\"tid\":0,\"ts\":{},\"args\":{}}}}}",
                   name, pid, micros(width * static_cast<std::int64_t>(bin)), args);
  };
  if (!paused && std::none_of(seen.begin(), seen.end(), [](bool b) { return b; })) return;
  for (std::size_t i = 0; i < bins.size(); ++i) {
    point(bins[i].period, &bins[i]);
    if (i + 1 == bins.size() || bins[i + 1].period != bins[i].period + 1)
      point(bins[i].period + 1, nullptr);
  }
}

// Writes the document to `sink` as it goes (null: keeps it all) and returns what is left.
std::string write_trace(const TrainResult& r, std::ostream* sink) {
  Out out(sink);
  bool shown_as_other = false;
  for (std::size_t i = 0; i < r.timeline_drawn_as.size() && i < r.timeline_ranks.size(); ++i)
    shown_as_other = shown_as_other || r.timeline_drawn_as[i] != r.timeline_ranks[i];
  json other{{"model", r.model},
             {"engine", r.engine},
             {"expansion", r.expansion},
             {"gpus", r.gpus},
             {"iteration_s", r.iteration.seconds()}};
  if (shown_as_other) {
    other["note"] =
        "reduced expansion simulates one data-parallel replica, identical to the others without "
        "noise: a rank of another replica shows its equivalent rank's timeline (drawn_as in its "
        "process arguments)";
  }
  // The metadata comes first, opened by lockstep's signature (kTraceHead), so that a later run
  // can tell its own trace from a user's file by its first bytes (is_lockstep_trace).
  out.text() = std::string(kTraceHead) + other.dump().substr(1) +
               ",\n\"displayTimeUnit\":\"ns\",\n\"traceEvents\":[";
  std::map<std::uint32_t, double> slowdown;
  bool dualpipe = false;  // a track for DualPipe pairs' backward passes
  for (const TimelineSlice& s : r.timeline) dualpipe = dualpipe || s.stream == 3;
  for (std::size_t i = 0; i < r.timeline_ranks.size(); ++i) {
    const std::uint32_t rank = r.timeline_ranks[i];
    const double x = i < r.timeline_slowdown.size() ? r.timeline_slowdown[i] : 1.0;
    const std::uint32_t drawn = i < r.timeline_drawn_as.size() ? r.timeline_drawn_as[i] : rank;
    slowdown[rank] = x;
    // The slow GPU's own track says so in its name, a label and an argument.
    std::string name = fmt::format("rank {}", rank);
    json args{{"name", ""}, {"slowdown", x}};
    if (x > 1) name += fmt::format(" SLOW GPU x{:.2f}", x);
    if (drawn != rank) {
      name += fmt::format(" (as rank {})", drawn);
      args["drawn_as"] = drawn;
    }
    args["name"] = name;
    metadata(out, "process_name", rank, 0, args);
    metadata(out, "process_sort_index", rank, 0, json{{"sort_index", rank}});
    if (x > 1) {
      metadata(out, "process_labels", rank, 0,
               json{{"labels", fmt::format("slow GPU x{:.2f}", x)}});
    }
    for (std::uint8_t s = 0; s < (dualpipe ? 4 : 3); ++s)
      metadata(out, "thread_name", rank, s, json{{"name", stream_name(s)}});
  }
  for (const TimelineSlice& s : r.timeline) {
    const auto it = slowdown.find(s.rank);
    slice(out, s, it != slowdown.end() && it->second > 1);
  }
  // Link utilisation counters live in a process of their own, after the ranks.
  const std::uint32_t links_pid = r.gpus + 1;
  if (!r.links.empty())
    metadata(out, "process_name", links_pid, 0, json{{"name", "busiest links"}});
  for (const LinkTrack& link : r.links) {
    // At most kMaxCounterPoints averaged bins per link, and a point only where the value
    // changes: a long iteration sampled every 10 us would otherwise give millions of events.
    const std::size_t n = link.utilisation.size();
    const std::size_t per_bin =
        std::max<std::size_t>(1, (n + kMaxCounterPoints - 1) / kMaxCounterPoints);
    // The packet engine's peak queue depth per bin: a second counter of the same track.
    const bool queue = link.queue_bytes.size() == n;
    double last = -1, last_queue = -1;
    for (std::size_t b = 0; b * per_bin < n; ++b) {
      double sum = 0, depth = 0;
      const std::size_t end = std::min(n, (b + 1) * per_bin);
      for (std::size_t i = b * per_bin; i < end; ++i) {
        sum += link.utilisation[i];
        if (queue) depth = std::max<double>(depth, link.queue_bytes[i]);
      }
      const double value = sum / static_cast<double>(end - b * per_bin);
      if (value == last && depth == last_queue) continue;
      last = value;
      last_queue = depth;
      const Time ts = link.period * static_cast<std::int64_t>(b * per_bin);
      fmt::format_to(std::back_inserter(out.event()),
                     "{{\"ph\":\"C\",\"name\":{},\"pid\":{},\"tid\":0,\"ts\":{},\"args\":{{"
                     "\"utilisation\":{}{}}}}}",
                     json(link.name).dump(), links_pid, micros(ts), json(value).dump(),
                     queue ? ",\"queue_bytes\":" + json(depth).dump() : "");
    }
    event_counters(out, link, per_bin, links_pid);
  }
  out.text() += "\n]}\n";
  return std::move(out.text());
}

// A step of no rank with the sweeps' largest rows' links as its tracks: the same writer.
TrainResult collective_as_step(const std::vector<Sweep>& sweeps) {
  TrainResult r;
  r.engine = sweeps.empty() ? "" : sweeps.front().engine;
  double longest_us = 0;
  for (const Sweep& s : sweeps) {
    if (s.rows.empty()) continue;
    const SweepRow& row = s.rows.back();
    r.model += fmt::format("{}{} {} B", r.model.empty() ? "" : ", ", s.op, row.bytes);
    longest_us = std::max(longest_us, row.time_us);
    for (const LinkReport& l : row.links) {
      if (l.series.empty()) continue;
      LinkTrack t;
      t.name = sweeps.size() > 1 ? s.op + ": " + l.name : l.name;
      t.period = l.series_period;
      t.utilisation = l.series;
      t.queue_bytes = l.queue_series;
      t.events = l.events;
      r.links.push_back(std::move(t));
    }
  }
  r.iteration = Time::s(longest_us / 1e6);
  return r;
}

}  // namespace

std::string collective_trace_json(const std::vector<Sweep>& sweeps) {
  return write_trace(collective_as_step(sweeps), nullptr);
}

void write_collective_trace(const std::vector<Sweep>& sweeps, const std::string& path) {
  write_training_trace(collective_as_step(sweeps), path);
}

std::string training_trace_json(const TrainResult& result) {
  return write_trace(result, nullptr);
}

void write_training_trace(const TrainResult& result, const std::string& path) {
  const std::filesystem::path file(path);
  StagedOutput staged(file.has_parent_path() ? file.parent_path() : ".", "trace");
  {
    std::ofstream out(staged.reserve(file.filename().string()), std::ios::binary);
    if (!out) throw InputError("trace", fmt::format("cannot write '{}'", path));
    out << write_trace(result, &out);
    if (!out) throw InputError("trace", fmt::format("cannot write '{}'", path));
  }
  staged.commit();
}

bool is_lockstep_trace(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::string head(kTraceHead.size(), '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  return in && head == kTraceHead;
}

}  // namespace lockstep::report
