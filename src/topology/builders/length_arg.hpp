#pragma once
// Physical lengths in builder arguments ("50km", "3m", "0.5 km"), in metres. A bare number is
// refused: "distance: 50" could mean metres or kilometres, and the difference is 1000x latency.
#include "lockstep/config/arg_node.hpp"

namespace lockstep::builders {

/// Parses a scalar length with unit m or km into metres; InputError at `node` otherwise.
double length_metres(const ArgNode& node);

}  // namespace lockstep::builders
