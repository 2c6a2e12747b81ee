#pragma once
// Why an attempt's rank classes did not hold (internal; docs/flow-engine.md "Class aggregation").
//
// The engine first simulates a program's rank classes, one representative each (class_map.hpp).
// Whether the members of a class really are indistinguishable shows only as the run goes on: when
// a class route is built, when a NetReduce group is met, after a solve. The piece that finds a
// difference records it (an explicit result, not an exception) and returns; from then on Ranks
// loads and starts no more ops (so nothing more is routed or reported), the run loop ends the
// attempt after the event at hand, and FlowEngine::run starts the next, finer class map. An
// attempt that found none is exact.
#include <cstdint>

namespace lockstep::flow_detail {

enum class Asymmetry : std::uint8_t {
  None,
  Paths,                // members' paths differ hop by hop (RouteTable)
  SharesOnUnevenOrbit,  // a route of several path shares crosses an uneven link orbit
  Group,                // a NetReduce group is not exactly one class's members
  Overload,             // found during the run: a real link of an uneven orbit over capacity
};

// Records `found` in an attempt's verdict unless an earlier asymmetry is there already.
inline void record(Asymmetry& verdict, Asymmetry found) {
  if (verdict == Asymmetry::None) verdict = found;
}

}  // namespace lockstep::flow_detail
