#pragma once
// lockstep's training step as Chakra traces (docs/chakra.md "Export"): the noise-free step of
// `lockstep train` in full expansion, one trace per rank, with its kernels as compute nodes
// (durations), its collectives as collective nodes (NCCL size, process group) and its pipeline
// transfers as send / receive nodes, joined by the step's dependencies.
#include <filesystem>
#include <string>
#include <vector>

#include "lockstep/chakra/trace.hpp"
#include "lockstep/topology/graph.hpp"
#include "lockstep/workload/train_config.hpp"

namespace lockstep::chakra {

std::vector<RankTrace> export_training(const Topology& topology, const TrainConfig& config);

/// Writes every rank's trace as `<dir>/<prefix>.<rank>.et` (the directory is created).
void write_traces(const std::vector<RankTrace>& traces, const std::filesystem::path& dir,
                  const std::string& prefix);

}  // namespace lockstep::chakra
