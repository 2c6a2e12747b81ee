#pragma once
// Rank classes of one flow run (internal; docs/flow-engine.md "Class aggregation").
//
// The symmetries a program declares form an abelian group G of maps on (rank, channel):
// - tau^k: rotate ranks by k x period (ProgramSet::symmetry_period), channels unchanged;
// - sigma^j: rotate every rank by j inside its block of `local` ranks and every channel by j
//   inside its block of `local` channels (ProgramSet::local_symmetry; local = 1: unused).
// G acts freely on ranks (no element but the identity fixes a rank), so every rank is
// e(real(c)) for exactly one class c and one element e: the class's members are its images.
// Class c's representative is rank real(c): with local = 1 the classes are ranks 0..period-1,
// with local = g they are the first rank of each block of g among the first `period` ranks.
#include <cstdint>

#include "lockstep/collective/program.hpp"

namespace lockstep::flow_detail {

class ClassMap {
 public:
  struct Element {
    Rank tau = 0;    // rotations by the period
    Rank sigma = 0;  // rotations inside blocks of `local`
  };
  struct Where {
    Rank cls = 0;
    Element e;
  };

  ClassMap(Rank ranks, Rank period, Rank local)
      : n_(ranks), period_(period), local_(local), classes_(period / local) {}
  // Every rank on its own.
  explicit ClassMap(Rank ranks) : ClassMap(ranks, ranks, 1) {}

  Rank ranks() const { return n_; }
  Rank classes() const { return classes_; }
  Rank members() const { return n_ / classes_; }
  Rank local() const { return local_; }
  Rank real(Rank cls) const { return cls * local_; }

  Rank apply(Element e, Rank r) const {
    const std::uint64_t within = r % local_;
    const std::uint64_t rotated = r - within + (within + e.sigma) % local_;
    return static_cast<Rank>((rotated + static_cast<std::uint64_t>(e.tau) * period_) % n_);
  }
  std::uint16_t apply_channel(Element e, std::uint16_t ch) const {
    if (local_ == 1) return ch;
    return static_cast<std::uint16_t>(ch - ch % local_ + (ch % local_ + e.sigma) % local_);
  }
  Element inverse(Element e) const {
    return {static_cast<Rank>((n_ / period_ - e.tau) % (n_ / period_)),
            static_cast<Rank>((local_ - e.sigma) % local_)};
  }
  // The class of rank r and the element that maps the class's representative onto r.
  Where where(Rank r) const {
    const Rank sigma = r % local_;
    const Rank block = r - sigma;  // sigma^-1(r), the first rank of r's block
    return {static_cast<Rank>(block % period_ / local_), {block / period_, sigma}};
  }
  // Member m (0 <= m < members()) of the class group, in a fixed order.
  Element member(Rank m) const { return {m / local_, m % local_}; }

 private:
  Rank n_, period_, local_, classes_;
};

}  // namespace lockstep::flow_detail
