#pragma once
// Writes a topology as JSON in the format the from_file builder reads back (docs/scenario.md):
// {"name", "traits": {...}, "devices": [{"id", "kind", "node", ...}], "links": [{"a", "b",
// "bandwidth", "latency", "medium", "length"}]}. Quantities are written exactly ("5e+10B/s",
// "1250ps", "30m") so that reading the file back gives the same graph bit for bit.
#include <ostream>

#include "lockstep/topology/graph.hpp"

namespace lockstep {

/// Streams the graph (O(devices + links) memory is not needed: nothing is built in memory).
void write_graph_json(const Topology& topo, std::ostream& out);

}  // namespace lockstep
