#pragma once
// Rank classes of one flow run (internal; docs/flow-engine.md "Class aggregation").
//
// The symmetries a program declares generate an abelian group G of maps on (rank, channel):
// - tau^k: rotate ranks by k x period (ProgramSet::symmetry_period), channels unchanged;
// - sigma^j: rotate every rank by j x step inside its block of `local` ranks and every channel by
//   j x step inside its block of `local` channels (ProgramSet::local_symmetry promises step 1, so
//   any step dividing `local` holds too; step = local: no rotation), or leave channels as they
//   are when the program says so (ProgramSet::local_symmetry_moves_channels).
// - tau may also move channels: by `tau_channels` per step, modulo `channel_modulus`
//   (ProgramSet::symmetry_channel_shift: the channel-split NVLS tree, where tau moves a rank to the
//   same GPU's next channel).
// G acts freely on ranks (no element but the identity fixes a rank), so every rank is
// e(real(c)) for exactly one class c and one element e: the class's members are its images.
// Class c's representative is rank real(c): the ranks 0..step-1 of each block of `local` among
// the first `period` ranks (with step = local = 1: ranks 0..period-1).
#include <cstdint>

#include "lockstep/collective/program.hpp"

namespace lockstep::flow_detail {

class ClassMap {
 public:
  struct Element {
    Rank tau = 0;    // rotations by the period
    Rank sigma = 0;  // rotations by `step` inside blocks of `local`
  };
  struct Where {
    Rank cls = 0;
    Element e;
  };

  ClassMap(Rank ranks, Rank period, Rank local, Rank step, bool rotate_channels = true,
           std::uint32_t tau_channels = 0, std::uint32_t channel_modulus = 1)
      : n_(ranks),
        period_(period),
        local_(local),
        step_(step),
        turns_(local / step),
        classes_(period / turns_),
        rotate_channels_(rotate_channels),
        tau_channels_(tau_channels % channel_modulus),
        channel_modulus_(channel_modulus) {}
  // Every rank on its own.
  explicit ClassMap(Rank ranks) : ClassMap(ranks, ranks, 1, 1) {}

  Rank ranks() const { return n_; }
  Rank period() const { return period_; }
  Rank classes() const { return classes_; }
  Rank members() const { return n_ / classes_; }
  Rank turns() const { return turns_; }  // rotations inside a block (1: none)
  Rank real(Rank cls) const { return cls / step_ * local_ + cls % step_; }

  Rank apply(Element e, Rank r) const {
    const std::uint64_t within = r % local_;
    const std::uint64_t rotated = r - within + (within + std::uint64_t{e.sigma} * step_) % local_;
    return static_cast<Rank>((rotated + static_cast<std::uint64_t>(e.tau) * period_) % n_);
  }
  std::uint16_t apply_channel(Element e, std::uint16_t ch) const {
    if (turns_ > 1 && rotate_channels_)
      ch = static_cast<std::uint16_t>(ch - ch % local_ + (ch % local_ + e.sigma * step_) % local_);
    if (tau_channels_ == 0) return ch;
    return static_cast<std::uint16_t>((ch + static_cast<std::uint64_t>(e.tau) * tau_channels_) %
                                      channel_modulus_);
  }
  Element inverse(Element e) const {
    return {static_cast<Rank>((n_ / period_ - e.tau) % (n_ / period_)),
            static_cast<Rank>((turns_ - e.sigma) % turns_)};
  }
  // The class of rank r and the element that maps the class's representative onto r.
  Where where(Rank r) const {
    const Rank within = r % local_;
    const Rank block = r - within;
    const Rank cls = block % period_ / local_ * step_ + within % step_;
    return {cls, {block / period_, within / step_}};
  }
  // Member m (0 <= m < members()) of the class group, in a fixed order.
  Element member(Rank m) const { return {m / turns_, m % turns_}; }

 private:
  Rank n_, period_, local_, step_, turns_, classes_;
  bool rotate_channels_;  // sigma moves channels too (ProgramSet::local_symmetry_moves_channels)
  std::uint32_t tau_channels_, channel_modulus_;
};

}  // namespace lockstep::flow_detail
