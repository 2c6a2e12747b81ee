// nccl-tests sweeps: one row per size, from the NCCL model or an engine run of its programs.
#include "lockstep/nccl/sweep.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <optional>
#include <stdexcept>

#include "lockstep/core/error.hpp"
#include "lockstep/engine/registry/registry.hpp"
#include "lockstep/nccl/groups.hpp"
#include "lockstep/topology/catalog.hpp"
#include "lockstep/topology/faults.hpp"

namespace lockstep {
namespace {

struct TypeName {
  const char* name;
  DataType type;
};
// nccl-tests' type names, plus lockstep's own spellings.
constexpr std::array<TypeName, 10> kTypes = {{{"float", DataType::Float32},
                                              {"float32", DataType::Float32},
                                              {"double", DataType::Float64},
                                              {"float64", DataType::Float64},
                                              {"bfloat16", DataType::Bf16},
                                              {"int8", DataType::Int8},
                                              {"uint8", DataType::Uint8},
                                              {"int32", DataType::Int32},
                                              {"uint32", DataType::Uint32},
                                              {"int64", DataType::Int64}}};

bool per_rank_count(CollectiveOp op) {
  return op == CollectiveOp::AllGather || op == CollectiveOp::ReduceScatter ||
         op == CollectiveOp::AllToAll || op == CollectiveOp::AllToAllV;
}

bool reduces(CollectiveOp op) {
  return op == CollectiveOp::AllReduce || op == CollectiveOp::ReduceScatter ||
         op == CollectiveOp::Reduce;
}

// nccl-tests holds a message in each GPU's memory: a larger one cannot run. (GPUs the catalog
// does not know are held to the most memory lockstep accepts.)
void check_fits_in_memory(const CollectiveSweep& s, const NcclCluster& c) {
  Bytes memory = kMaxGpuMemory;
  for (const GpuSpec& g : gpu_catalog())
    if (g.name == c.gpu) memory = g.hbm;
  if (s.max_bytes <= memory) return;
  throw InputError(
      s.max_bytes_field,
      fmt::format("{} does not fit in one GPU's memory ({}: {})", to_string(s.max_bytes),
                  c.gpu.empty() ? "at most" : c.gpu, to_string(memory)),
      s.max_bytes_where);
}

// A time past Time's range is an error at the size that asked for it: min_bytes when the first
// of several sizes already is too long, else max_bytes.
void check_in_range(const CollectiveSweep& s, const CollectiveRow& row, bool first) {
  if (row.time.is_finite()) return;
  first = first && s.min_bytes < s.max_bytes;
  throw InputError(first ? s.min_bytes_field : s.max_bytes_field,
                   fmt::format("a {} {} would take longer than lockstep's time range ({}) on this "
                               "cluster (engine {}); use smaller sizes or faster links",
                               to_string(Bytes(row.bytes)), to_string(s.op), kTimeRange, s.engine),
                   first ? s.min_bytes_where : s.max_bytes_where);
}

}  // namespace

std::vector<std::string> nccl_tests_type_names() {
  std::vector<std::string> out;
  for (const auto& t : kTypes) out.emplace_back(t.name);
  return out;
}

DataType nccl_tests_type(std::string_view name) {
  for (const auto& t : kTypes)
    if (name == t.name) return t.type;
  throw std::invalid_argument("not an nccl-tests type: " + std::string(name));
}

const char* nccl_tests_type_name(DataType t) {
  for (const auto& n : kTypes)
    if (n.type == t) return n.name;
  return "float";
}

std::vector<Bytes> CollectiveSweep::sizes(std::uint32_t ranks) const {
  std::vector<Bytes> out;
  const std::uint64_t unit = size_of(type) * (per_rank_count(op) ? ranks : 1);
  double s = min_bytes.as_double();
  while (s <= max_bytes.as_double() * (1 + 1e-12)) {
    const auto rounded = static_cast<std::uint64_t>(s) / unit * unit;
    if (rounded > 0 && (out.empty() || out.back().count() != rounded)) out.emplace_back(rounded);
    s = step_bytes > 0 ? s + static_cast<double>(step_bytes) : s * step_factor;
  }
  return out;
}

void check_sweep(const CollectiveSweep& sweep, const NcclCluster& cluster,
                 const Topology* topology) {
  if (sweep.engine != kNcclModelEngine && topology == nullptr)
    throw InputError("engine", fmt::format("engine '{}' needs a topology to run on", sweep.engine));
  for (const FaultSpec& f : sweep.faults) {
    if (f.on_link() && topology == nullptr) {
      throw InputError(f.field, fmt::format("'{}': link faults need the cluster's graph", f.text),
                       f.where);
    }
    if (f.kind == FaultSpec::Kind::SlowGpu && f.rank >= cluster.ranks()) {
      throw InputError(f.field,
                       fmt::format("'{}': rank {} does not exist ({} ranks, 0 .. {})", f.text,
                                   f.rank, cluster.ranks(), cluster.ranks() - 1),
                       f.where);
    }
  }
  // A link named that the graph lacks throws here.
  if (topology != nullptr) {
    for (const FaultSpec& f : sweep.faults) {
      if (f.on_link()) fault_link(f, *topology);
    }
  }
  check_fits_in_memory(sweep, cluster);
}

// Links a row of a flow or packet run names (busiest first, then those with congestion events).
constexpr std::size_t kBusiestLinks = 5;

std::vector<CollectiveRow> run_collective_sweep(
    const CollectiveSweep& sweep, const NcclCluster& cluster, const Topology* topology,
    const std::function<void(std::size_t done, std::size_t total)>& on_row,
    ProgressHook* progress) {
  // An unknown engine fails before any work. The model's own engine prints its predictions.
  const std::unique_ptr<Engine> engine =
      make_engine(sweep.engine, sweep.packet ? &*sweep.packet : nullptr);
  engine->set_progress(progress);
  const bool run_programs = sweep.engine != kNcclModelEngine;
  check_sweep(sweep, cluster, topology);
  // The engines run on the faulted graph (the analytical one prices the model on it); NCCL's
  // choices below stay the healthy cluster's.
  std::optional<Topology> faulted;
  if (std::any_of(sweep.faults.begin(), sweep.faults.end(),
                  [](const FaultSpec& f) { return f.on_link(); })) {
    faulted = apply_link_faults(*topology, sweep.faults);
  }
  // Stragglers (slow-gpu:rank=R,delay=D): rank R starts D late; several on one rank add up.
  std::vector<std::optional<Time>> late;
  for (const FaultSpec& f : sweep.faults) {
    if (f.kind != FaultSpec::Kind::SlowGpu) continue;
    late.resize(cluster.ranks());
    late[f.rank] = late[f.rank].value_or(Time::zero()) + f.delay;
  }
  NcclCluster c = cluster;
  c.sharp = c.sharp && sweep.sharp;
  if (!sweep.nvb) disable_nvb(c);
  c.pxn = sweep.pxn;
  const NcclGroups nccl(c, topology, faulted ? &*faulted : nullptr);
  const std::vector<GpuGroup> every_gpu = {nccl.all()};
  std::vector<CollectiveRow> rows;
  const std::vector<Bytes> sizes = sweep.sizes(c.ranks());
  for (Bytes bytes : sizes) {
    TunerRequest req;
    req.op = sweep.op;
    req.bytes = bytes;
    req.algo = sweep.algo;
    req.proto = sweep.proto;
    req.channels = sweep.channels;
    req.skew = sweep.skew;
    Prediction p;
    try {
      p = predict(c, req);
    } catch (const InputError& e) {
      if (e.field() != "algo") throw;
      throw InputError(sweep.algo_field, e.bare_message(), sweep.algo_where);
    }
    CollectiveRow row;
    row.bytes = bytes.count();
    row.count = bytes.count() / size_of(sweep.type) / (per_rank_count(sweep.op) ? c.ranks() : 1);
    row.type = nccl_tests_type_name(sweep.type);
    row.redop = reduces(sweep.op) ? "sum" : "none";
    row.algorithm = nccl::algorithm_name(p.algo);
    row.protocol = nccl::to_string(p.proto);
    row.channels = p.channels;
    // The busiest links' utilisation over time: about kSeriesPoints periods of the model's
    // prediction (a run that takes longer gets more, summed into that many when reported). The
    // flow engine draws its series from a log of every link-rate change, which grows with the
    // ranks and steps (a 1 GiB ring on 512 H100s: 81 -> 168 MiB): it samples up to 128 ranks.
    constexpr Rank kFlowSeriesRanks = 128;
    if (run_programs) {
      const bool sample = sweep.engine != "flow" || c.ranks() <= kFlowSeriesRanks;
      engine->sample_links(sample ? std::max(Time::ns(1), p.time / static_cast<std::int64_t>(
                                                                       LinkReport::kSeriesPoints))
                                  : Time::zero());
    }
    row.time = nccl.time(p, sweep.op, bytes, sweep.type, every_gpu,
                         run_programs ? engine.get() : nullptr, late);
    if (run_programs) {
      // The engine ran on the faulted graph: a failed link is gone, so ids are that graph's.
      const LinkCounters& counters = engine->link_counters();
      row.links = busiest_links(faulted ? *faulted : *topology, counters, engine->link_series_log(),
                                kBusiestLinks);
      if (counters.packet()) row.network = link_totals(counters);
    }
    const double seconds = row.time.seconds();
    row.algbw_GBps = seconds > 0 ? bytes.as_double() / seconds / 1e9 : 0;
    row.busbw_GBps = row.algbw_GBps * busbw_factor(sweep.op, c.ranks());
    check_in_range(sweep, row, rows.empty());
    rows.push_back(row);
    if (on_row) on_row(rows.size(), sizes.size());
  }
  return rows;
}

}  // namespace lockstep
