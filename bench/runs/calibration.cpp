// Whole-process run (not Google Benchmark): prints its own figures, see bench/CMakeLists.txt.
// bench_calibration: compares the NCCL model's predictions with measured nccl-tests rows
// (/work/shared/calibration/nccl_tests_public.csv by default, --csv FILE to use another) and
// prints each row's predicted vs measured bus bandwidth, its error, and the median and maximum
// absolute percentage errors. Rows are mapped to presets from their text: the GPU named in
// `system`, the fabric in `interconnect` (RoCE / IB HDR-NDR-XDR / EFA / TCP, SHARP), GPUs per
// node = gpus / nodes, and the algorithm column (Ring, Tree, NVLS, ...; empty = auto).
// Every row runs on the preset's rail-optimised cluster exactly as `lockstep collective` does:
// the default engine (analytical) prices the NCCL model on its graph, `--engine flow` (or
// packet) runs the row's programs.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "lockstep/core/error.hpp"
#include "lockstep/nccl/sweep.hpp"
#include "lockstep/nccl/tuner.hpp"
#include "lockstep/topology/builder.hpp"
#include "lockstep/topology/presets.hpp"

namespace {

using namespace lockstep;

std::string lower(std::string s) {
  for (char& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}
bool has(const std::string& text, const char* word) {
  return text.find(word) != std::string::npos;
}

std::vector<std::string> split_csv(const std::string& line) {
  std::vector<std::string> out;
  std::string cur;
  bool quoted = false;
  for (char ch : line) {
    if (ch == '"') {
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

std::string system_of(const std::string& text) {
  const std::string s = lower(text);
  if (has(s, "gb200")) return "gb200-nvl72";
  if (has(s, "b200")) return "hgx-b200";
  if (has(s, "h200")) return "hgx-h200";
  if (has(s, "h100")) return "hgx-h100";
  if (has(s, "a100")) return "dgx-a100";
  if (has(s, "mi300")) return "mi300x";
  if (has(s, "mi325")) return "mi325x";
  if (has(s, "mi355")) return "mi355x";
  throw InputError("system", "no preset for system '" + text + "'");
}

// "RoCE 4x400G" -> roce-400g with 4 NICs; "IB NDR 8x400G SHARP" -> ib-ndr, sharp.
struct FabricGuess {
  std::string fabric;  // empty: the system's own
  std::uint32_t nics = 0;
  bool sharp = false;
};
FabricGuess fabric_of(const std::string& text) {
  const std::string s = lower(text);
  FabricGuess g;
  int speed = 0;
  if (has(s, "800")) speed = 800;
  if (has(s, "400")) speed = 400;
  if (has(s, "200")) speed = 200;
  // "4x400G": the count before an 'x' that follows a digit.
  for (std::size_t x = s.find('x'); x != std::string::npos; x = s.find('x', x + 1)) {
    if (x == 0 || !std::isdigit(static_cast<unsigned char>(s[x - 1]))) continue;
    std::size_t b = x;
    while (b > 0 && std::isdigit(static_cast<unsigned char>(s[b - 1]))) --b;
    g.nics = static_cast<std::uint32_t>(std::stoul(s.substr(b, x - b)));
    break;
  }
  if (has(s, "roce")) {
    g.fabric = fmt::format("roce-{}g", speed == 0 ? 400 : speed);
  } else if (has(s, "efa")) {
    g.fabric = "efa";
  } else if (has(s, "tcp") || has(s, "socket")) {
    g.fabric = "tcp";
  } else if (has(s, "ib") || has(s, "infiniband") || has(s, "dr")) {
    g.fabric = has(s, "hdr") || speed == 200   ? "ib-hdr"
               : has(s, "xdr") || speed == 800 ? "ib-xdr"
                                               : "ib-ndr";
  }
  g.sharp = has(s, "sharp");
  return g;
}

std::optional<Algorithm> algo_of(const std::string& text) {
  const std::string s = lower(text);
  if (s.empty() || s == "auto") return std::nullopt;
  if (s == "nvlstree" || s == "nvls_tree") return Algorithm::NvlsTree;
  if (s == "collnetdirect" || s == "collnetchain" || s == "collnet" || s == "sharp")
    return Algorithm::CollNet;
  try {
    return nccl::parse_algorithm(s);
  } catch (const InputError&) {
    return std::nullopt;
  }
}

// nccl-tests binary and collective spellings: all_reduce_perf, allreduce, AllReduce, ...
CollectiveOp op_of(std::string text) {
  text = lower(text);
  if (text.size() > 5 && text.substr(text.size() - 5) == "_perf") text.resize(text.size() - 5);
  std::string squashed;
  for (char ch : text)
    if (ch != '_' && ch != '-') squashed += ch;
  if (squashed == "allreduce") return CollectiveOp::AllReduce;
  if (squashed == "allgather") return CollectiveOp::AllGather;
  if (squashed == "reducescatter") return CollectiveOp::ReduceScatter;
  if (squashed == "alltoall") return CollectiveOp::AllToAll;
  if (squashed == "sendrecv") return CollectiveOp::SendRecv;
  if (squashed == "broadcast" || squashed == "bcast") return CollectiveOp::Broadcast;
  if (squashed == "reduce") return CollectiveOp::Reduce;
  return parse_collective_op(text, "collective");
}

// One row on an engine: the sweep of `lockstep collective` at this one size.
Prediction run_on_engine(const std::string& engine, const PresetCluster& preset,
                         const NcclCluster& cluster, const TunerRequest& tr, Prediction p) {
  const BuildResult built = build_topology(rail_optimized_args(preset));
  CollectiveSweep sweep;
  sweep.op = tr.op;
  sweep.algo = tr.algo;
  sweep.min_bytes = sweep.max_bytes = tr.bytes;
  sweep.engine = engine;
  const auto rows = run_collective_sweep(sweep, cluster, &*built.graph);
  if (rows.empty()) throw InputError("bytes", "no whole element at this size");
  p.time = rows.front().time;
  p.busbw_GBps = rows.front().busbw_GBps;
  return p;
}

std::string default_csv() {
  return std::string(LOCKSTEP_SOURCE_DIR) + "/../shared/calibration/nccl_tests_public.csv";
}

}  // namespace

int main(int argc, char** argv) {
  std::string path = default_csv();
  std::string engine = "analytical";
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--csv") == 0 && i + 1 < argc) path = argv[++i];
    if (std::strcmp(argv[i], "--engine") == 0 && i + 1 < argc) engine = argv[++i];
  }
  std::ifstream in(path);
  if (!in) {
    std::printf("calibration: %s not found; nothing to compare (use --csv FILE)\n", path.c_str());
    return 0;
  }
  std::string line;
  std::getline(in, line);
  const auto header = split_csv(line);
  auto col = [&](const char* name) {
    const auto it = std::find(header.begin(), header.end(), name);
    return it == header.end() ? -1 : static_cast<int>(it - header.begin());
  };
  const int c_sys = col("system"), c_gpus = col("gpus"), c_nodes = col("nodes"),
            c_ic = col("interconnect"), c_coll = col("collective"), c_bytes = col("bytes"),
            c_time = col("time_us"), c_algo = col("algorithm");
  if (std::min({c_sys, c_gpus, c_nodes, c_ic, c_coll, c_bytes, c_time}) < 0) {
    std::printf("calibration: %s lacks the nccl-tests columns\n", path.c_str());
    return 1;
  }
  if (engine != "analytical" && engine != "flow" && engine != "packet") {
    std::fprintf(stderr,
                 "bench_calibration: --engine: unknown engine '%s' (analytical, flow, packet)\n",
                 engine.c_str());
    return 2;
  }
  std::printf("engine: %s\n", engine.c_str());
  std::printf("%-14s %-15s %11s %-8s %-6s %10s %10s %9s %9s %7s\n", "system", "collective", "bytes",
              "algo", "proto", "meas_us", "pred_us", "meas_bus", "pred_bus", "err%");
  std::vector<double> errors;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    const auto f = split_csv(line);
    if (static_cast<int>(f.size()) < static_cast<int>(header.size())) continue;
    try {
      PresetRequest req;
      TunerRequest tr;
      req.system = system_of(f[c_sys]);
      const auto gpus = static_cast<std::uint32_t>(std::stoul(f[c_gpus]));
      req.nodes = static_cast<std::uint32_t>(std::stoul(f[c_nodes]));
      const std::uint32_t per_node = gpus / req.nodes;
      const SystemPreset& sys = system_preset(req.system);
      if (sys.domain_nodes > 1) {
        req.nodes = (gpus + sys.gpus_per_node - 1) / sys.gpus_per_node;  // NVL72: trays
      } else {
        req.gpus_per_node = per_node;
      }
      const FabricGuess fab = fabric_of(f[c_ic]);
      req.fabric = fab.fabric;
      tr.algo = c_algo >= 0 ? algo_of(f[c_algo]) : std::nullopt;
      // A CollNet row ran with SHARP on; only InfiniBand switches have it.
      req.sharp = fab.sharp || (tr.algo == Algorithm::CollNet && req.fabric.rfind("ib-", 0) == 0);
      if (fab.nics > 0 && sys.domain_nodes == 1)  // NICs next to the GPUs in use
        req.nics_per_node = std::max<std::uint32_t>(
            1, (fab.nics * req.gpus_per_node + sys.gpus_per_node - 1) / sys.gpus_per_node);
      const PresetCluster preset = resolve_preset(req);
      const NcclCluster cluster = nccl_cluster(preset);
      tr.op = op_of(f[c_coll]);
      tr.bytes = Bytes(std::stoull(f[c_bytes]));
      Prediction p;
      try {
        p = predict(cluster, tr);
      } catch (const InputError& e) {
        if (e.field() != "algo") throw;
        tr.algo = std::nullopt;  // an algorithm NCCL would not run here: take NCCL's choice
        p = predict(cluster, tr);
      }
      p = run_on_engine(engine, preset, cluster, tr, p);
      const double meas_us = std::stod(f[c_time]);
      const double factor = busbw_factor(tr.op, cluster.ranks());
      const double meas_bus = tr.bytes.as_double() / (meas_us * 1e3) * factor;
      const double err = (p.busbw_GBps / meas_bus - 1) * 100;
      errors.push_back(std::fabs(err));
      std::printf("%-14s %-15s %11llu %-8s %-6s %10.2f %10.2f %9.3f %9.3f %+7.1f\n",
                  f[c_sys].substr(0, 14).c_str(), f[c_coll].c_str(),
                  static_cast<unsigned long long>(tr.bytes.count()), nccl::algorithm_name(p.algo),
                  nccl::to_string(p.proto), meas_us, p.time.microseconds(), meas_bus, p.busbw_GBps,
                  err);
    } catch (const std::exception& e) {
      std::printf("skipped row (%s): %s\n", e.what(), line.c_str());
    }
  }
  if (errors.empty()) {
    std::printf("calibration: no rows compared\n");
    return 0;
  }
  std::vector<double> sorted = errors;
  std::sort(sorted.begin(), sorted.end());
  const std::size_t m = sorted.size();
  const double median = m % 2 ? sorted[m / 2] : (sorted[m / 2 - 1] + sorted[m / 2]) / 2;
  std::printf("rows %zu  median |error| %.1f%%  max |error| %.1f%%  rows over 25%%: %zu\n", m,
              median, sorted.back(),
              static_cast<std::size_t>(
                  std::count_if(sorted.begin(), sorted.end(), [](double e) { return e > 25; })));
  return 0;
}
