#pragma once
// A collective sweep as nccl-tests runs it (-b min -e max -f factor): one op over a range of
// sizes, each size predicted by the NCCL model (engine "analytical") or compiled to programs and
// run on a timing engine ("flow", "packet"). `lockstep collective`, the report's collectives and
// bench_calibration run sweeps; scenario/collective_sweep.hpp reads them from flags and files.
//
//   CollectiveSweep sweep;
//   sweep.max_bytes = Bytes::gib(1);
//   std::vector<CollectiveRow> rows = run_collective_sweep(sweep, nccl_cluster(preset), &topo);
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lockstep/collective/collective.hpp"
#include "lockstep/config/arg_node.hpp"
#include "lockstep/core/progress_hook.hpp"
#include "lockstep/nccl/cluster.hpp"
#include "lockstep/nccl/tuner.hpp"
#include "lockstep/telemetry/link_counters.hpp"
#include "lockstep/topology/faults.hpp"
#include "lockstep/topology/graph.hpp"

namespace lockstep {

/// One nccl-tests row (report/collective_rows.hpp prints it as table, CSV or JSON).
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
  // Flow and packet engines (docs/telemetry.md): the busiest links of the run and the sums of
  // the packet engine's counters over every link; empty with the analytical engine.
  std::vector<LinkReport> links;
  std::optional<LinkReport> network;
};

struct CollectiveSweep {
  CollectiveOp op = CollectiveOp::AllReduce;
  std::optional<Algorithm> algo;     // nullopt: as NCCL's tuner picks ("auto")
  std::optional<nccl::Proto> proto;  // nullopt: as NCCL's tuner picks ("auto")
  Bytes min_bytes{8};
  Bytes max_bytes = Bytes::gib(8);
  double step_factor = 2;             // multiply the size by this each row (> 1)
  std::uint64_t step_bytes = 0;       // nccl-tests -i: add this each row instead (0: factor)
  DataType type = DataType::Float32;  // nccl-tests' default "float"
  std::uint32_t channels = 0;         // 0: as NCCL would pick
  bool sharp = false;                 // allow CollNet / SHARP where the switches have it
  // NCCL_NVB_DISABLE unset: a ring's hop between GPUs without NVLink may cross one GPU over
  // NVLink (PATH_NVB); false: over the host's PCIe tree (only a node wired pair by pair differs).
  bool nvb = true;
  // NCCL_PXN_DISABLE unset: p2p sends between nodes relay over NVLink to the receiver's rail
  // (docs/routing.md "PXN"); false: NCCL_PXN_DISABLE=1, each GPU sends through its own NIC.
  bool pxn = true;
  double skew = 0;                    // alltoallv: Zipf exponent of its matrix (0: alltoall's)
  std::string engine = "analytical";  // kNcclModelEngine, or a registry engine (flow, packet)
  std::optional<ArgNode> packet;      // the scenario's `packet:` section: the engine's settings
  std::string algo_field = "algo";    // where `algo` came from, for errors ("--algo", file path)
  SourceLocation algo_where;
  // Link faults the engines run with (docs/scenario-collectives.md); NCCL's choices stay those of
  // the healthy cluster (the fault comes after NCCL initialised). A slow GPU only as a late
  // start (slow-gpu:rank=R,delay=D): a collective has no compute for x= to slow
  // (parse_collective_sweep refuses it).
  std::vector<FaultSpec> faults;
  // Where the sizes came from, likewise: a size too large for a GPU's memory, or whose time
  // would leave Time's range, is an error at min_bytes (the first row) or max_bytes (the rest).
  std::string min_bytes_field = "min_bytes", max_bytes_field = "max_bytes";
  SourceLocation min_bytes_where, max_bytes_where;

  /// The sizes of the sweep, nccl-tests style: min, min x f (or min + step_bytes), ... up to
  /// max, each rounded down to whole elements (and, for all_gather / reduce_scatter / alltoall,
  /// whole elements per rank); sizes that round to zero are dropped.
  std::vector<Bytes> sizes(std::uint32_t ranks) const;
};

/// Runs the sweep. The analytical engine prints the NCCL model's prediction; other engines run
/// the chosen algorithm's programs on `topology` (required for them), with the sweep's faults
/// applied, as NCCL's model implies (nccl/engine_run.hpp), then add the launch overhead and
/// NCCL's base latency. InputError for link faults without a topology, for a late rank outside
/// the communicator, for a size larger than one GPU's memory, and for a time past Time's range
/// (docs/units.md): the latter two at the size's field.
/// `on_row`, when given, is called after each row with (rows done, rows in the sweep);
/// `progress`, when given, hears the engine's share of a row's ops done while it runs.
std::vector<CollectiveRow> run_collective_sweep(
    const CollectiveSweep& sweep, const NcclCluster& cluster, const Topology* topology = nullptr,
    const std::function<void(std::size_t done, std::size_t total)>& on_row = {},
    ProgressHook* progress = nullptr);

/// run_collective_sweep's checks of its input, without running anything (for a caller that
/// validates a whole scenario first): the engine's topology, fault ranks and links, sizes
/// against one GPU's memory. InputError as run_collective_sweep.
void check_sweep(const CollectiveSweep& sweep, const NcclCluster& cluster,
                 const Topology* topology = nullptr);

/// nccl-tests' element type names (float, double, bfloat16, int8, ...) plus lockstep's own
/// spellings (float32, float64), in the order error messages list them.
std::vector<std::string> nccl_tests_type_names();
/// The type a name in nccl_tests_type_names() denotes (std::invalid_argument otherwise).
DataType nccl_tests_type(std::string_view name);
/// The name nccl-tests prints for a type ("float" for Float32).
const char* nccl_tests_type_name(DataType type);

}  // namespace lockstep
