// The collectives section of `lockstep run`: each sweep the scenario names, run on the variant's
// cluster by the NCCL model (run_collective_sweep, nccl-tests semantics), as report records.
#include "lockstep/nccl/sweep.hpp"
#include "lockstep/report/collective_rows.hpp"
#include "lockstep/scenario/collective_sweep.hpp"
#include "run_sections.hpp"

namespace lockstep::report {
namespace {

std::string engine_name(const RunInput& input) {
  return input.engine ? parse_engine_name(*input.engine) : std::string("analytical");
}

}  // namespace

std::uint64_t count_collective_steps(const RunInput& input) {
  if (!input.collectives) return 0;
  return parse_collectives_section(*input.collectives, engine_name(input)).size();
}

void run_collectives(const RunInput& input, const BuildResult& cluster, Variant& variant,
                     Progress& progress) {
  std::vector<CollectiveSweep> sweeps =
      parse_collectives_section(*input.collectives, engine_name(input));
  for (CollectiveSweep& sweep : sweeps) sweep.packet = input.packet;
  if (!cluster.graph) {
    input.collectives->fail("the cluster is too large to build as a graph, so no sweep can run");
  }
  const NcclCluster nccl = nccl_cluster(*cluster.graph);
  for (const CollectiveSweep& spec : sweeps) {
    progress.begin(variant.name + ": " + to_string(spec.op) + " sweep");
    // The sweep is one step of the bar; its rows, and the engine inside each, move it.
    StepShare rows(progress.hook());
    rows.at(0, spec.sizes(nccl.ranks()).size());
    const auto row_done = [&rows](std::size_t done, std::size_t total) { rows.at(done, total); };
    variant.sweeps.push_back(sweep_record(
        spec, run_collective_sweep(spec, nccl, &*cluster.graph, row_done, rows.hook())));
    progress.advance();
  }
}

}  // namespace lockstep::report
