#include "link_orbits.hpp"

#include <numeric>

namespace lockstep::flow_detail {

LinkOrbits::LinkOrbits(std::size_t directed_links) : parent_(directed_links) {
  std::iota(parent_.begin(), parent_.end(), DirLinkId{0});
}

void LinkOrbits::join(DirLinkId a, DirLinkId b) {
  parent_[find(b)] = find(a);
}

}  // namespace lockstep::flow_detail
