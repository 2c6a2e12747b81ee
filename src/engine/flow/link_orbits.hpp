#pragma once
// Orbits of directed links under the symmetries of a class map (internal; docs/flow-engine.md
// "Link orbits"), learnt from the routes: member e's hop h crosses the image under e of the
// representative's hop h. By symmetry every link of an orbit carries the same load, so an orbit
// is one solver constraint (its root link): class transfers whose representatives' paths cross
// different links of one orbit share it. (Without this, flows that meet only on members' links,
// e.g. two channels entering one GPU from senders of different classes, would not share them.)
// A union-find over directed links; RouteTable decides which root stays the constraint.
#include <cstddef>
#include <vector>

#include "lockstep/topology/graph.hpp"

namespace lockstep::flow_detail {

class LinkOrbits {
 public:
  explicit LinkOrbits(std::size_t directed_links);
  DirLinkId find(DirLinkId l) {
    while (parent_[l] != l) {
      parent_[l] = parent_[parent_[l]];
      l = parent_[l];
    }
    return l;
  }
  // Joins the orbits of a and b under a's root (the root that stays the constraint).
  void join(DirLinkId a, DirLinkId b);

 private:
  std::vector<DirLinkId> parent_;
};

}  // namespace lockstep::flow_detail
