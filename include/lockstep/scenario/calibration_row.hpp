#pragma once
// One row of an nccl-tests / rccl-tests result table (the CSVs of ../shared/calibration/: system,
// gpus, nodes, interconnect, collective, bytes, time_us, algbw_GBps, busbw_GBps, algorithm) read
// as the cluster it describes: a preset request (system, fabric, nodes, GPUs and NICs per node),
// the collective NCCL ran, and the measured bus bandwidth. The free-text columns are read by
// mechanism, never per row: the GPU or cloud shape named in `system`, the transport, NIC count
// and speed named in `interconnect`. docs/calibration.md lists every rule; bench_calibration
// compares the rows with the engines.
//
//   CalibrationCase c = calibration_case(row);  // "2x p4de.24xlarge ...", "AWS EFA 4x100G ..."
//   // c.preset.system == "dgx-a100", c.preset.fabric == "efa", c.preset.nics_per_node == 4
#include <cstdint>
#include <istream>
#include <optional>
#include <string>
#include <vector>

#include "lockstep/nccl/cluster.hpp"
#include "lockstep/nccl/tuner.hpp"
#include "lockstep/topology/presets.hpp"

namespace lockstep {

/// The columns of one row as text (empty when the file lacks the column or leaves it blank).
struct CalibrationRow {
  std::string system, gpus, nodes, interconnect, collective, bytes, time_us, algbw_GBps, busbw_GBps,
      algorithm, source;
};

/// What `system` names: the preset, and the node as the text describes it.
struct RowSystem {
  std::string preset;              // "hgx-h100"
  std::uint32_t node_gpus = 0;     // GPUs per node the text states ("8x H100 each"); 0: not said
  std::string shape_fabric;        // the fabric the cloud shape ships ("efa" for p5), or empty
  std::uint32_t shape_nics = 0;    // its NICs per node (32 for p5), 0: not known
  Bandwidth shape_nic_speed;       // their speed (100G for p5), zero: not known
  bool nvlink_partitions = false;  // NVL72 trays split into NVLink partitions ("3x NVL4 ...")
  std::string text;                // the column as given
};

/// What `interconnect` names: the transport and the NICs per node as the text states them.
struct RowFabric {
  std::string fabric;      // fabric preset; empty: the system's own ("RDMA network", xGMI, MNNVL)
  std::uint32_t nics = 0;  // per node, 0: not stated
  std::uint32_t nics_per_gpu = 0;  // "4 per GPU" when the text gives no count per node
  Bandwidth nic_speed;             // per NIC, zero: not stated
  bool sharp = false;              // SHARP / CollNet on
  bool nvls_off = false;           // NCCL_NVLS_ENABLE=0, "NVLS off"
};

/// The GPU, or the cloud shape that implies it (p4d A100, p5 H100, a3-megagpu H100, ND96asr_v4
/// A100, ...), as a system preset name; InputError("system") when the text names no GPU.
RowSystem read_row_system(const std::string& text);
/// The transport, NIC count and speed; `system` gives the defaults where the text says
/// "InfiniBand" or "RoCE" without a speed (the NIC generation the system ships with).
RowFabric read_row_fabric(const std::string& text, const SystemPreset& system);
/// Queue pairs per connection on a RoCE `fabric` preset: NCCL_IB_QPS_PER_CONNECTION=N where the
/// row's system or interconnect text sets it, else 4 on Oracle Cloud (its published nccl-tests
/// scripts set it), else 0 (NCCL's default, 1). Other fabrics: 0.
std::uint32_t read_row_qps(const std::string& system, const std::string& interconnect,
                           const std::string& fabric);
/// The NCCL (or RCCL) version the row states: "2.21.5" from "NCCL 2.21.5+cuda12.4", "RCCL
/// version 2.21.5", "nccl-2.26.6-1", "nccl-library=23102" (2.31.2); empty when none is stated
/// (nccl-tests' own version and plugins' do not count).
std::string read_row_nccl_version(const std::string& system, const std::string& interconnect);
/// The algorithm column: the first algorithm name in it ("Ring (default)", "NVLSTree (...)");
/// nullopt ("auto") when it names none ("default (not stated)", "n/a (alltoall)").
std::optional<Algorithm> read_row_algorithm(const std::string& text);
/// The protocol a row forced: NCCL_PROTO=LL128 anywhere in the row's text, or LL, LL128 or
/// Simple named in the algorithm column ("Ring / LL128"); nullopt (NCCL's choice) otherwise.
std::optional<nccl::Proto> read_row_protocol(const std::string& algorithm,
                                             const std::string& other);
/// The collective: all_reduce, allreduce, all_reduce_perf, AllReduce, bcast, ...
CollectiveOp read_row_collective(const std::string& text);

/// A row as lockstep runs it.
struct CalibrationCase {
  PresetRequest preset;
  TunerRequest tuner;
  bool nvls_off = false;
  std::string nccl_version;        // "2.21.5" as the row states NCCL's (or RCCL's); empty: not
  std::uint32_t ranks = 0;         // the row's gpus
  double measured_time_us = 0;     // time_us, or S / algbw, or S x factor / busbw
  double measured_busbw_GBps = 0;  // S / time x nccl-tests' busbw factor
};

/// Reads the row; InputError naming the column ("system", "gpus", "time_us", ...) when a column
/// cannot be read or the row describes a cluster no preset expresses.
CalibrationCase calibration_case(const CalibrationRow& row);
/// The cluster NCCL sees for the case: nccl_cluster(preset) with NVLS off when the row says so.
NcclCluster calibration_nccl_cluster(const CalibrationCase& c, const PresetCluster& preset);

/// One CSV line split at commas outside double quotes ("" inside quotes is one quote).
std::vector<std::string> split_csv_line(const std::string& line);
/// True when the header has the nccl-tests columns (system, gpus, nodes, interconnect,
/// collective, bytes, and time_us or algbw_GBps or busbw_GBps).
bool has_nccl_tests_columns(const std::vector<std::string>& header);
/// Every non-empty data line of a CSV with that header (a column a line lacks reads as empty);
/// InputError("csv") when the header lacks those columns.
std::vector<CalibrationRow> read_calibration_csv(std::istream& in, const std::string& name);

}  // namespace lockstep
