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
// most bytes; result.makespan must be set. `capacities` are the solver's, per directed link, in
// the rates' units (a network link's is scaled by its transfer efficiency: the raw bandwidth
// would read a saturated RoCE link as 0.96 / 0.824 = 117% busy).
void fill_link_series(const std::vector<double>& capacities, const std::vector<RateChange>& log,
                      const std::vector<double>& link_bytes, std::uint32_t series_links,
                      Time sample_period, RunResult& result);

}  // namespace lockstep::flow_detail
