#include "lockstep/report/trace.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>

#include "lockstep/core/error.hpp"
#include "lockstep/report/output.hpp"

namespace lockstep::report {
namespace {

using nlohmann::json;

constexpr std::size_t kMaxCounterPoints = 2000;

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
    default:
      return "pipeline sends";
  }
}

json metadata(const char* what, std::uint32_t pid, std::uint32_t tid, const std::string& name) {
  return json{{"ph", "M"},  {"name", what}, {"pid", pid},
              {"tid", tid}, {"ts", 0},      {"args", {{"name", name}}}};
}

}  // namespace

std::string training_trace_json(const TrainResult& r) {
  json events = json::array();
  for (std::uint32_t rank : r.timeline_ranks) {
    events.push_back(metadata("process_name", rank, 0, fmt::format("rank {}", rank)));
    events.push_back(metadata("process_sort_index", rank, 0, std::to_string(rank)));
    for (std::uint8_t s = 0; s < 3; ++s) {
      events.push_back(metadata("thread_name", rank, s, stream_name(s)));
    }
  }
  for (const TimelineSlice& s : r.timeline) {
    events.push_back(json{{"ph", "X"},
                          {"name", s.name},
                          {"cat", s.category},
                          {"pid", s.rank},
                          {"tid", s.stream},
                          {"ts", micros(s.start)},
                          {"dur", micros(s.end - s.start)}});
  }
  // Link utilisation counters live in a process of their own, after the ranks.
  const std::uint32_t links_pid = r.gpus + 1;
  if (!r.links.empty()) events.push_back(metadata("process_name", links_pid, 0, "busiest links"));
  for (const LinkTrack& link : r.links) {
    // At most kMaxCounterPoints averaged bins per link, and a point only where the value
    // changes: a long iteration sampled every 10 us would otherwise give millions of events.
    const std::size_t n = link.utilisation.size();
    const std::size_t per_bin =
        std::max<std::size_t>(1, (n + kMaxCounterPoints - 1) / kMaxCounterPoints);
    double last = -1;
    for (std::size_t b = 0; b * per_bin < n; ++b) {
      double sum = 0;
      const std::size_t end = std::min(n, (b + 1) * per_bin);
      for (std::size_t i = b * per_bin; i < end; ++i) sum += link.utilisation[i];
      const double value = sum / static_cast<double>(end - b * per_bin);
      if (value == last) continue;
      last = value;
      const Time ts = link.period * static_cast<std::int64_t>(b * per_bin);
      events.push_back(json{{"ph", "C"},
                            {"name", link.name},
                            {"pid", links_pid},
                            {"tid", 0},
                            {"ts", micros(ts)},
                            {"args", {{"utilisation", value}}}});
    }
  }
  json doc{{"traceEvents", std::move(events)},
           {"displayTimeUnit", "ns"},
           {"otherData",
            {{"model", r.model},
             {"engine", r.engine},
             {"expansion", r.expansion},
             {"gpus", r.gpus},
             {"iteration_s", r.iteration.seconds()}}}};
  return doc.dump(1) + "\n";
}

void write_training_trace(const TrainResult& result, const std::string& path) {
  const std::filesystem::path file(path);
  StagedOutput out(file.has_parent_path() ? file.parent_path() : ".", "trace");
  out.add(file.filename().string(), training_trace_json(result));
  out.commit();
}

bool is_lockstep_trace(const std::filesystem::path& path) {
  // training_trace_json's first bytes: nlohmann's dump(1) sorts the keys, so every trace opens
  // with displayTimeUnit and otherData's engine (no other tool indents a trace this way).
  static constexpr std::string_view kHead =
      "{\n \"displayTimeUnit\": \"ns\",\n \"otherData\": {\n  \"engine\": ";
  std::ifstream in(path, std::ios::binary);
  std::string head(kHead.size(), '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  return in && head == kHead;
}

}  // namespace lockstep::report
