#pragma once
// Runs imported Chakra traces on a cluster (docs/chakra.md "Running a trace"): every node starts
// once its data and control dependencies are done; compute nodes run one at a time per GPU;
// collectives start when every member of their process group has reached them and last as long
// as lockstep's NCCL model says on the members' GPUs (the chosen engine); send / receive pairs
// as NCCL send/recv between the two GPUs.
#include <cstdint>
#include <string>
#include <vector>

#include "lockstep/chakra/trace.hpp"
#include "lockstep/topology/graph.hpp"

namespace lockstep::chakra {

struct RunOptions {
  std::string engine = "analytical";  // analytical: NCCL's model; flow: an engine run of it
  double peak_flops = 0;              // for FLOPs-only compute nodes; 0: the GPU's catalog peak
};

/// Exposed time by what the GPU is doing, for one rank or the mean over ranks; the parts add up
/// to the step time.
struct Breakdown {
  Time compute;
  // Exposed, by parallel dimension ("tp", "ep", "cp", "pp", "dp": dimension_of the group's
  // name, send / receive as "pp"), else by collective type ("all_reduce"); train's order.
  std::vector<std::pair<std::string, Time>> comm;
  Time idle;  // nothing running: waiting for other ranks to reach a collective or a send
};

struct TraceResult {
  std::string engine;
  std::uint32_t ranks = 0;
  std::size_t nodes = 0, compute_nodes = 0, collectives = 0, transfers = 0, skipped = 0;
  std::size_t flops_timed = 0;  // compute nodes without a duration, timed from num_ops
  std::size_t groups = 0;       // process groups
  Time step;                    // when the last rank finished
  std::vector<Time> rank_finish;
  Breakdown mean;
};

/// Checks the traces (dependencies name nodes of the same file, no cycle, the ranks of a process
/// group agree on its collectives, sends have their receives) and runs them on `topology`'s
/// first GPUs (rank r on topology.gpus()[r]). InputError "<file>: node <id> '<name>': ..." for a
/// bad trace.
TraceResult run_traces(const std::vector<RankTrace>& traces, const Topology& topology,
                       const RunOptions& options = {});

/// The parallel dimension a process group's name states ("tp", "dp", "pp", "ep", "cp"), or ""
/// when it states none: lockstep's export names ("tp0", "dp3"), or Megatron-LM's group
/// descriptions ("TENSOR_MODEL_PARALLEL_GROUP", ...), in any case.
std::string dimension_of(const std::string& group);

/// Only the checks of run_traces.
void check_traces(const std::vector<RankTrace>& traces);

}  // namespace lockstep::chakra
