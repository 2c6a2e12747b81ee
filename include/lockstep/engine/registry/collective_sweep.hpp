#pragma once
// A collective sweep as nccl-tests runs it (-b min -e max -f factor): one op over a range of
// sizes, each size predicted by the NCCL model (engine "analytical") or compiled to programs and
// run on a timing engine ("flow", "packet"). `lockstep collective` and the `collectives:` /
// `engine:` sections of scenario files (docs/scenario-collectives.md) share this parsing.
//
//   CollectiveSweep sweep = parse_collective_sweep(args);  // {op: all_reduce, max_bytes: 1GiB}
//   auto rows = run_collective_sweep(sweep, nccl_cluster(preset), &topology);
//   std::string csv = format_collective_rows(rows, "csv");
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "lockstep/collective/collective.hpp"
#include "lockstep/collective/tuner.hpp"
#include "lockstep/config/arg_node.hpp"
#include "lockstep/engine/engine.hpp"
#include "lockstep/topology/graph.hpp"

namespace lockstep {

struct CollectiveSweep {
  CollectiveOp op = CollectiveOp::AllReduce;
  TunerAlgo algo = TunerAlgo::Auto;
  TunerProto proto = TunerProto::Auto;
  Bytes min_bytes{8};
  Bytes max_bytes = Bytes::gib(8);
  double step_factor = 2;             // multiply the size by this each row (> 1)
  DataType type = DataType::Float32;  // nccl-tests' default "float"
  std::uint32_t channels = 0;         // 0: as NCCL would pick
  bool sharp = false;                 // allow CollNet / SHARP where the switches have it
  std::string engine = "analytical";  // analytical | flow | packet
  std::optional<ArgNode> packet;      // the scenario's `packet:` section, for engine "packet"
  std::string algo_field = "algo";    // where `algo` came from, for errors ("--algo", file path)
  SourceLocation algo_where;

  /// The sizes of the sweep, nccl-tests style: min, min x f, ... up to max, each rounded down
  /// to whole elements (and, for all_gather / reduce_scatter / alltoall, whole elements per
  /// rank); sizes that round to zero are dropped.
  std::vector<Bytes> sizes(std::uint32_t ranks) const;
};

/// Reads one sweep from a map with keys op, algo, proto, min_bytes, max_bytes, step_factor,
/// type, channels, sharp, engine; every error names the key and file:line:column. Checks that
/// no unknown key remains.
CollectiveSweep parse_collective_sweep(const ArgNode& args);
/// A scenario's `collectives:` section: one sweep map or a list of them. `engine` (from the
/// `engine:` section, see parse_engine_name) is the default engine of each sweep.
std::vector<CollectiveSweep> parse_collectives_section(const ArgNode& section,
                                                       const std::string& engine = "analytical");
/// A scenario's `engine:` section: a name ("flow") or a map {name: flow}.
std::string parse_engine_name(const ArgNode& section);

/// One nccl-tests row.
struct CollectiveRow {
  std::uint64_t bytes = 0;  // nccl-tests size
  std::uint64_t count = 0;  // elements as nccl-tests prints them (per rank for gathers)
  std::string type;         // "float"
  std::string redop;        // "sum" or "none"
  std::string algorithm;    // tuner name: ring, tree, nvls, ...
  std::string protocol;     // LL, LL128, Simple
  std::uint32_t channels = 0;
  Time time;
  double algbw_GBps = 0;
  double busbw_GBps = 0;
};

/// Runs the sweep. The analytical engine prints the NCCL model's prediction; other engines run
/// the chosen algorithm's programs on `topology` (required for them) with the protocol's
/// per-step latency as per-message overhead and its efficiency as transfer efficiency, then add
/// the launch overhead and NCCL's base latency (docs/nccl-model.md).
std::vector<CollectiveRow> run_collective_sweep(const CollectiveSweep& sweep,
                                                const NcclCluster& cluster,
                                                const Topology* topology = nullptr);

/// How an engine run reproduces NCCL for one prediction (what run_collective_sweep does on
/// engines other than analytical, and what training steps use for their collectives): the
/// programs to build, the engine options, and the fixed cost added to the engine's makespan.
struct NcclEngineRun {
  CollectiveSpec spec;             // the prediction's algorithm and channels over cluster.ranks()
  Time per_message_overhead;       // NCCL's per-step latency less the NVLink path's latency
  double transfer_efficiency = 1;  // protocol efficiency x NCCL's link speed / the raw link's
  double network_transfer_efficiency = 0;  // the same for NICs and switches (0: none in use)
  Time network_message_latency;  // NCCL's network step latency less the above and the path's
  Time fixed;                    // launch overhead + NCCL's base latency
  // Pipelined algorithms (chunks through a chain or tree, PAT) pay NCCL's step latency once per
  // step, not per chunk: charge the overhead as latency. The ring keeps it serialised per
  // message (one message per step per channel, where it agrees best; docs/collectives.md).
  bool overhead_as_latency = false;
  // NCCL's speed of one channel (payload): bus bandwidth / channels, protocol caps included;
  // zero: no limit. Flow runs of ring all-reduce / all-gather / reduce-scatter cap each
  // channel's sends at it (EngineOptions::channel_send_bandwidth), so that a channel waiting out
  // its step latency does not lend its share to the others.
  Bandwidth channel_bandwidth;
  /// Copies the overheads, efficiencies and channel speed above into engine options (the
  /// channel cap in wire bytes: channel_bandwidth / transfer_efficiency).
  void apply(EngineOptions& options) const {
    options.per_message_overhead = per_message_overhead;
    options.overhead_as_latency = overhead_as_latency;
    options.transfer_efficiency = transfer_efficiency;
    options.network_transfer_efficiency = network_transfer_efficiency;
    options.network_message_latency = network_message_latency;
    options.channel_send_bandwidth = channel_bandwidth.bytes_per_second() > 0
                                         ? channel_bandwidth / transfer_efficiency
                                         : Bandwidth{};
  }
};
NcclEngineRun nccl_engine_run(const NcclCluster& cluster, const Prediction& p, CollectiveOp op,
                              Bytes bytes, DataType type, const Topology& topology);

/// Runs `how`'s programs on every GPU of `topology` with the named engine, as
/// run_collective_sweep does ("flow", "packet" configured by `packet` when given, or another
/// registry name), and returns NCCL's time: how.fixed plus the engine's makespan.
Time run_nccl_engine(const NcclEngineRun& how, const Topology& topology, const std::string& engine,
                     const ArgNode* packet = nullptr);

/// The engine a sweep runs on: "flow" with an issue window wide enough for `ops_per_rank` ops
/// (NCCL runs all channels at once), other names from the registry.
std::unique_ptr<Engine> make_sweep_engine(const std::string& name, std::uint32_t ops_per_rank);

/// "table" (nccl-tests style, fixed-width), "csv" (header
/// bytes,count,type,algorithm,protocol,time_us,algbw_GBps,busbw_GBps) or "json" (an array of
/// objects with those keys plus redop and channels). InputError for another format.
std::string format_collective_rows(const std::vector<CollectiveRow>& rows,
                                   const std::string& format);

}  // namespace lockstep
