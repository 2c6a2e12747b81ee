// An nccl-tests row read as a calibration case (the cluster, the collective and what was
// measured) and the CSV tables such rows come in (docs/calibration.md "How a row is read"); the
// free-text columns are read by calibration_row.cpp.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <istream>
#include <regex>
#include <string>
#include <vector>

#include "lockstep/core/error.hpp"
#include "lockstep/scenario/calibration_row.hpp"
#include "row_text.hpp"

namespace lockstep {
namespace {

using row_text::first_number;
using row_text::has;
using row_text::lower;

// "16", also as a spreadsheet writes it ("16.0").
std::uint64_t whole_number(const std::string& text, const char* field) {
  std::size_t used = 0;
  double v = -1;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size() || !(v >= 0) || v > 1e15 || v != std::floor(v))
    throw InputError(field, "'" + text + "' is not a whole number");
  return static_cast<std::uint64_t>(v);
}
double number(const std::string& text, const char* field) {
  std::size_t used = 0;
  double v = 0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size() || !(v >= 0) || !std::isfinite(v))
    throw InputError(field, "'" + text + "' is not a number");
  return v;
}

// A size as nccl-tests' parsesize reads -b / -e: a number and K, M or G (a trailing B too:
// "1GB" is 1 G) in binary multiples, since nccl-tests' sizes are powers of two; KiB / kB and
// the rest as parse_bytes.
Bytes row_bytes(const std::string& text) {
  static const std::regex nccl_size(R"(\s*(\d+)\s*([kmgt])b?\s*)", std::regex::icase);
  std::smatch m;
  if (!std::regex_match(text, m, nccl_size)) return parse_bytes(text, "bytes");
  const std::string unit = lower(m[2].str());
  const int shift = unit == "k" ? 10 : unit == "m" ? 20 : unit == "g" ? 30 : 40;
  const std::uint64_t n = std::stoull(m[1].str());
  if (n >= (std::uint64_t{1} << (63 - shift)))
    throw InputError("bytes", "'" + text + "' is too large");
  return Bytes(n << shift);
}

// A time in microseconds, or with its unit ("2.85 ms", "850 us", "850µs", "0.01 s").
double row_time_us(const std::string& text, const char* field) {
  static const std::regex with_unit(R"(\s*([0-9.eE+-]+)\s*(us|µs|usec|ms|msec|s|sec)\s*)");
  std::smatch m;
  if (!std::regex_match(text, m, with_unit)) return number(text, field);
  const double v = number(m[1].str(), field);
  const std::string unit = m[2].str();
  if (unit == "ms" || unit == "msec") return v * 1e3;
  if (unit == "s" || unit == "sec") return v * 1e6;
  return v;
}

// GPUs per NVLink partition of NVL72 trays: "3x NVL4 partitions" (4), "NVL8 partition", or the
// row's GPUs over "3 NVL partitions"; 0 when the row names no partition.
std::uint32_t partition_gpus(const RowSystem& sys, const std::string& interconnect,
                             std::uint64_t gpus) {
  const std::string s = lower(interconnect);
  if (!sys.nvlink_partitions && !(has(s, "nvl") && has(s, "partition"))) return 0;
  static const std::regex size(R"(nvl(\d+)\s+partition)");
  static const std::regex count(R"((\d+)\s*x?\s*nvl\d*\s+partition)");
  const std::string both = lower(sys.text) + " " + s;
  if (const std::uint32_t n = first_number(both, size); n > 0) return n;
  const std::uint32_t partitions = first_number(both, count);
  if (partitions == 0 || gpus % partitions != 0)
    throw InputError("system", "NVLink partitions of an unstated size");
  return static_cast<std::uint32_t>(gpus / partitions);
}
}  // namespace

CalibrationCase calibration_case(const CalibrationRow& row) {
  const RowSystem sys = read_row_system(row.system);
  const SystemPreset* preset = &system_preset(sys.preset);
  CalibrationCase c;
  // One column left blank: the other over (or times) the node's GPUs as the text or preset says.
  const std::uint64_t node_size = sys.node_gpus != 0 ? sys.node_gpus : preset->gpus_per_node;
  std::uint64_t gpus = 0, nodes = 0;
  if (row.gpus.empty() && !row.nodes.empty()) {
    nodes = whole_number(row.nodes, "nodes");
    gpus = nodes * node_size;
  } else {
    gpus = whole_number(row.gpus, "gpus");
    nodes =
        row.nodes.empty() ? (gpus + node_size - 1) / node_size : whole_number(row.nodes, "nodes");
  }
  if (gpus == 0 || nodes == 0 || gpus % nodes != 0 || gpus > 1'000'000)
    throw InputError("gpus", fmt::format("{} GPUs on {} nodes is not a whole number per node "
                                         "of at least one",
                                         row.gpus, row.nodes));
  c.ranks = static_cast<std::uint32_t>(gpus);
  const auto per_node = static_cast<std::uint32_t>(gpus / nodes);
  if (sys.node_gpus != 0 && per_node > sys.node_gpus)
    throw InputError("gpus", fmt::format("{} GPUs per node, but the system says {} per node",
                                         per_node, sys.node_gpus));
  PresetRequest& req = c.preset;
  req.system = sys.preset;
  req.nodes = static_cast<std::uint32_t>(nodes);
  req.gpus_per_node = per_node;
  if (preset->domain_nodes > 1 && per_node > preset->gpus_per_node) {
    // An NVLink rack given as one node: its trays.
    req.nodes =
        static_cast<std::uint32_t>((gpus + preset->gpus_per_node - 1) / preset->gpus_per_node);
    req.gpus_per_node = preset->gpus_per_node;
  }
  // The GPUs of the node the text describes: the stated NICs serve them all.
  std::uint32_t node_gpus = sys.node_gpus != 0 ? sys.node_gpus : preset->gpus_per_node;
  std::uint32_t trays_per_node = 1;
  // NVL72 trays split into NVLink partitions: each partition is an NVLink domain of its trays'
  // GPUs on NVLink 5 switches with one NIC per GPU, which an HGX board of the same GPU is for up
  // to 8 GPUs; a partition is read as one such node (GB200 -> hgx-b200, GB300 -> hgx-b300).
  if (const std::uint32_t part = partition_gpus(sys, row.interconnect, gpus); part != 0) {
    if (preset->domain_nodes == 1 || part > 8 || part % per_node != 0 || gpus % part != 0)
      throw InputError("system", fmt::format("NVLink partitions of {} GPUs ({} per tray): only "
                                             "partitions of whole trays up to 8 GPUs have a preset",
                                             part, per_node));
    req.system = sys.preset == "gb300-nvl72" ? "hgx-b300" : "hgx-b200";
    preset = &system_preset(req.system);
    req.nodes = static_cast<std::uint32_t>(gpus / part);
    req.gpus_per_node = part;
    trays_per_node = part / per_node;
    node_gpus = part;
  }

  const RowFabric fab = read_row_fabric(row.interconnect, *preset);
  req.fabric = fab.fabric.empty() ? sys.shape_fabric : fab.fabric;
  // NICs stated per tray serve a partition's trays.
  std::uint32_t nics = fab.nics != 0 ? fab.nics * trays_per_node : fab.nics_per_gpu * node_gpus;
  req.nic_speed = fab.nic_speed;
  // A speed stated with no count that equals the shape's NICs x their speed is the node's total
  // ("p4d ... EFA 400 Gbps": 4 x 100G, AWS's instance page), not one NIC's.
  if (req.fabric == sys.shape_fabric && nics == 0 && sys.shape_nics > 0 &&
      std::lround(req.nic_speed.gigabits_per_second()) ==
          std::lround(sys.shape_nics * sys.shape_nic_speed.gigabits_per_second()))
    req.nic_speed = Bandwidth{};
  if (req.fabric == sys.shape_fabric && !req.fabric.empty()) {
    if (nics == 0) nics = sys.shape_nics;
    if (req.nic_speed.bytes_per_second() == 0) req.nic_speed = sys.shape_nic_speed;
  }
  // Fewer GPUs in use than the node has: only the NICs next to them serve them.
  if (nics != 0 && req.gpus_per_node < node_gpus)
    nics = std::max<std::uint32_t>(1, (nics * req.gpus_per_node + node_gpus - 1) / node_gpus);
  req.nics_per_node = nics;
  c.nvls_off = fab.nvls_off;
  c.nccl_version = read_row_nccl_version(row.system, row.interconnect);
  req.qps_per_connection = read_row_qps(row.system, row.interconnect, req.fabric);

  c.tuner.algo = read_row_algorithm(row.algorithm);
  c.tuner.proto = read_row_protocol(row.algorithm, row.system + " " + row.interconnect);
  const std::string fabric = req.fabric.empty() ? preset->fabric : req.fabric;
  // A CollNet row ran with SHARP on; only InfiniBand switches have it.
  req.sharp = fab.sharp || (c.tuner.algo == Algorithm::CollNet && fabric.rfind("ib-", 0) == 0);
  c.tuner.op = read_row_collective(row.collective);
  c.tuner.bytes = row_bytes(row.bytes);  // nccl-tests prints bytes; "1G", "1GiB" read too
  if (c.tuner.bytes.count() == 0) throw InputError("bytes", "must be at least 1");

  const double size = c.tuner.bytes.as_double();
  const double factor = busbw_factor(c.tuner.op, c.ranks);
  // time_us, else S / algbw, else S x factor / busbw; a time_us that is not a number ("N/A") is
  // an error only when the bandwidths give no time either.
  auto positive = [](const std::string& text, const char* field) {
    return text.empty() ? 0.0 : number(text, field);
  };
  std::optional<InputError> bad_time;
  try {
    c.measured_time_us = row.time_us.empty() ? 0.0 : row_time_us(row.time_us, "time_us");
  } catch (const InputError& e) {
    bad_time = e;
  }
  if (!(c.measured_time_us > 0)) {
    if (const double algbw = positive(row.algbw_GBps, "algbw_GBps"); algbw > 0) {
      c.measured_time_us = size / (algbw * 1e3);
    } else if (const double busbw = positive(row.busbw_GBps, "busbw_GBps");
               busbw > 0 && factor > 0) {
      c.measured_time_us = size * factor / (busbw * 1e3);
    } else if (bad_time) {
      throw *bad_time;
    } else {
      throw InputError("time_us", "no time: time_us, algbw_GBps and busbw_GBps are empty or zero");
    }
  }
  c.measured_busbw_GBps = size / (c.measured_time_us * 1e3) * factor;
  return c;
}

NcclCluster calibration_nccl_cluster(const CalibrationCase& c, const PresetCluster& preset) {
  NcclCluster cluster = nccl_cluster(preset);
  if (c.nvls_off) cluster.nvls = false;
  // NCCL's documentation of NCCL_ALGO: NVLS since 2.17 (one node; across nodes only with
  // CollNet), NVLSTree since 2.18, PAT since 2.23: an older NCCL runs without them.
  static const std::regex minor_of(R"(2\.(\d+))");
  std::smatch m;
  if (std::regex_search(c.nccl_version, m, minor_of)) {
    const int minor = std::stoi(m[1].str());
    if (minor < 17 || (minor < 18 && cluster.nodes > 1 && !cluster.sharp)) cluster.nvls = false;
    if (minor < 23) cluster.pat = false;
  }
  return cluster;
}

std::vector<std::string> split_csv_line(const std::string& line) {
  std::vector<std::string> out;
  std::string cur;
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char ch = line[i];
    if (ch == '"' && quoted && i + 1 < line.size() && line[i + 1] == '"') {
      cur += '"';
      ++i;
    } else if (ch == '"') {
      quoted = !quoted;
    } else if (ch == ',' && !quoted) {
      out.push_back(cur);
      cur.clear();
    } else if (ch != '\r') {
      cur += ch;
    }
  }
  out.push_back(cur);
  return out;
}

namespace {
std::string trimmed(const std::string& text) {
  const auto space = [](char ch) { return std::isspace(static_cast<unsigned char>(ch)) != 0; };
  const auto b = std::find_if_not(text.begin(), text.end(), space);
  const auto e = std::find_if_not(text.rbegin(), text.rend(), space).base();
  return b < e ? std::string(b, e) : std::string();
}
// A column name as any spreadsheet writes it: " Time (us)", "out-of-place time_us" and
// "algbw GB/s" are time_us, out_of_place_time_us and algbw_gb_s.
std::string column_key(const std::string& h) {
  std::string key;
  for (char ch : lower(trimmed(h))) {
    if (ch == '(' || ch == ')') continue;
    const char c = ch == ' ' || ch == '-' || ch == '/' || ch == '.' ? '_' : ch;
    if (c == '_' && (key.empty() || key.back() == '_')) continue;
    key += c;
  }
  while (!key.empty() && key.back() == '_') key.pop_back();
  return key;
}
// The names one column goes by in nccl-tests tables: the first column found of the list. A table
// of both the out-of-place and the in-place columns is read out-of-place, as calibrate reads a
// log (nccl-tests prints out-of-place first).
const std::vector<std::vector<std::string>>& column_names() {
  static const std::vector<std::vector<std::string>> names = {
      {"system"},
      {"gpus", "ranks", "num_gpus", "world_size"},
      {"nodes", "num_nodes"},
      {"interconnect"},
      {"collective"},
      {"bytes", "size", "size_bytes", "size_b", "message_size", "msg_size"},
      {"time_us", "time", "time_usec", "avg_time_us", "out_of_place_time_us", "out_of_place_time",
       "oop_time_us", "oop_time"},
      {"time_ms", "avg_time_ms", "out_of_place_time_ms", "oop_time_ms"},
      {"algbw_gbps", "algbw", "algbw_gb_s", "out_of_place_algbw_gbps", "out_of_place_algbw",
       "out_of_place_algbw_gb_s", "oop_algbw_gbps", "oop_algbw"},
      {"busbw_gbps", "busbw", "busbw_gb_s", "out_of_place_busbw_gbps", "out_of_place_busbw",
       "out_of_place_busbw_gb_s", "oop_busbw_gbps", "oop_busbw"},
      {"algorithm", "algo"},
      {"source"},
  };
  return names;
}
int column(const std::vector<std::string>& header, const char* name) {
  const std::string want = lower(name);
  for (const std::vector<std::string>& aliases : column_names()) {
    if (aliases.front() != want) continue;
    for (const std::string& alias : aliases)
      for (std::size_t i = 0; i < header.size(); ++i)
        if (column_key(header[i]) == alias) return static_cast<int>(i);
  }
  return -1;
}
}  // namespace

bool has_nccl_tests_columns(const std::vector<std::string>& header) {
  for (const char* name : {"system", "gpus", "nodes", "interconnect", "collective", "bytes"})
    if (column(header, name) < 0) return false;
  return column(header, "time_us") >= 0 || column(header, "time_ms") >= 0 ||
         column(header, "algbw_GBps") >= 0 || column(header, "busbw_GBps") >= 0;
}

std::vector<CalibrationRow> read_calibration_csv(std::istream& in, const std::string& name) {
  std::string line;
  std::getline(in, line);
  const std::vector<std::string> header = split_csv_line(line);
  if (!has_nccl_tests_columns(header))
    throw InputError("csv", name +
                                " lacks the nccl-tests columns (system, gpus, nodes, "
                                "interconnect, collective, bytes, time_us or algbw_GBps)");
  std::vector<CalibrationRow> rows;
  while (std::getline(in, line)) {
    if (line.empty() || line == "\r") continue;
    const std::vector<std::string> f = split_csv_line(line);
    auto at = [&](const char* key) {
      const int i = column(header, key);
      return i >= 0 && i < static_cast<int>(f.size()) ? trimmed(f[static_cast<std::size_t>(i)])
                                                      : std::string();
    };
    CalibrationRow r;
    r.system = at("system");
    r.gpus = at("gpus");
    r.nodes = at("nodes");
    r.interconnect = at("interconnect");
    r.collective = at("collective");
    r.bytes = at("bytes");
    r.time_us = at("time_us");
    // A table in milliseconds: its time with the unit, which calibration_case reads.
    if (r.time_us.empty() && !at("time_ms").empty()) r.time_us = at("time_ms") + " ms";
    r.algbw_GBps = at("algbw_GBps");
    r.busbw_GBps = at("busbw_GBps");
    r.algorithm = at("algorithm");
    r.source = at("source");
    rows.push_back(std::move(r));
  }
  return rows;
}

}  // namespace lockstep
