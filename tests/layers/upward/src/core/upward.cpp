// A planted break of the layer rule for the test layers.rule_catches_upward_include: core code
// that includes a topology header. Never compiled.
#include "lockstep/topology/graph.hpp"
