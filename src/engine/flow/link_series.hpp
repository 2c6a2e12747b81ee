#pragma once
// Link utilisation series of a flow-engine run (internal; RunResult::link_series): the busiest
// links among those whose rate changed (the representatives' links when classes are
// aggregated), integrated from the log of rate changes into bins of the sample period.
#include <cstdint>
#include <vector>

#include "flows.hpp"
#include "lockstep/engine/engine.hpp"

namespace lockstep::flow_detail {

// Fills result.link_series from `log` (in time order) for the `series_links` links carrying the
// most bytes; result.makespan must be set.
void fill_link_series(const Topology& topo, const std::vector<RateChange>& log,
                      const std::vector<double>& link_bytes, std::uint32_t series_links,
                      Time sample_period, RunResult& result);

}  // namespace lockstep::flow_detail
