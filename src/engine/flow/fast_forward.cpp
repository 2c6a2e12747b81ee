#include "fast_forward.hpp"

#include <algorithm>
#include <bit>
#include <stdexcept>

#include "net_reduce.hpp"
#include "ranks.hpp"

namespace lockstep::flow_detail {

namespace {
// Whole snapshots kept per region: the first few (one of them usually already in the steady
// state), every power-of-two-th, and those whose hash repeated an earlier one (verified one
// cycle later).
constexpr std::size_t kSavedFirst = 8;
constexpr std::size_t kSavedMax = 48;
// A snapshot word costs about a hundredth of an event; allow ~1/32 of the run's time for them.
constexpr std::uint64_t kWordsPerEvent = 32;
constexpr std::uint32_t kMaxStride = 1u << 12;
}  // namespace

FastForward::FastForward(const EngineInput& input, const FlowEngineConfig& config,
                         const ClassMap& map, const Events& events, const Ranks& ranks,
                         const NetReduce& net_reduce, SteadyState& steady)
    : programs_(*input.programs),
      map_(map),
      events_(events),
      ranks_(ranks),
      net_reduce_(net_reduce),
      steady_(steady),
      enabled_(config.fast_forward && !input.options.record_ops &&
               input.router->policy() != RoutingPolicy::Adaptive && programs_.num_groups() == 0) {}

void FastForward::reset() {
  marks_.clear();
  by_hash_.clear();
  saved_.clear();
}

// Keeps `mark`'s whole state. When kSavedMax are kept, the oldest one kept only because its
// signature had repeated makes room: a newer snapshot with that signature replaced it in
// by_hash_ anyway, or its cycle is longer than the slots cover (the kept ones catch those).
void FastForward::save_state(PeriodMark& mark, bool keep) {
  std::size_t slot = saved_.size();
  if (slot >= kSavedMax) {
    for (std::size_t s = 0; s < saved_.size(); ++s)
      if (!saved_[s].keep && (slot == saved_.size() || saved_[s].mark < saved_[slot].mark))
        slot = s;
    if (slot == saved_.size()) return;
    marks_[saved_[slot].mark].saved = -1;
  }
  SavedState saved;
  saved.mark = static_cast<std::uint32_t>(marks_.size());  // mark is pushed next
  saved.keep = keep;
  saved.words = words_;
  steady_.totals(saved.totals);
  mark.saved = static_cast<std::int32_t>(slot);
  if (slot == saved_.size()) {
    saved_.push_back(std::move(saved));
  } else {
    saved_[slot] = std::move(saved);
  }
}

void FastForward::check() {
  const RankState& r0 = ranks_.cursor(0);
  if (r0.base == last_base_) return;
  last_base_ = r0.base;
  if (r0.base >= r0.num_ops || net_reduce_.rounds_open() > 0) return reset();
  const PeriodicRegion region = programs_.periodic_region(0, r0.base);
  // A window reaching past the region's last period leaves nothing to skip (the CLI gives ranks
  // their whole program as window so that channels laid out one after another overlap).
  if (region.period_ops == 0 || r0.loaded + region.period_ops > region.end()) {
    region_first_ = 0;
    return reset();
  }
  if (region.first_op != region_first_ || marks_.empty()) {
    reset();
    region_first_ = region.first_op;
    stride_ = 1;
  }
  const OpIndex boundary = (r0.base - region.first_op) / region.period_ops;
  if ((r0.base - region.first_op) % region.period_ops != 0 || boundary % stride_ != 0) return;

  const std::uint64_t hash = steady_.signature(r0.base);
  PeriodMark mark{hash, events_.now(), r0.base, events_.processed(), -1};
  const auto it = by_hash_.find(hash);
  // The first few and then every power-of-two-th are kept whole: one of them lies past the
  // transient and within one cycle of the steady state's start, to be matched a cycle later.
  const bool keep = marks_.size() < kSavedFirst || std::has_single_bit(marks_.size());
  if (it != by_hash_.end() || keep) {
    steady_.write(words_, r0.base);
    // Keep the snapshots' cost a small fraction of the simulation's: with wide issue windows a
    // state has many words per event, so look only at every stride-th boundary (a power of
    // two, so earlier snapshots stay on the grid).
    if (!marks_.empty()) {
      const PeriodMark& last = marks_.back();
      const std::uint64_t periods = boundary - (last.origin - region.first_op) / region.period_ops;
      const std::uint64_t per_period =
          std::max<std::uint64_t>(1, (events_.processed() - last.events) / periods);
      while (stride_ < kMaxStride && words_.size() > kWordsPerEvent * per_period * stride_)
        stride_ *= 2;
    }
    if (it != by_hash_.end()) {
      const PeriodMark& earlier = marks_[it->second];
      if (earlier.saved >= 0 && saved_[earlier.saved].words == words_ &&
          try_skip(earlier, saved_[earlier.saved])) {
        return reset();
      }
    }
    // A repeated signature: so that the next repetition can be verified against this one.
    save_state(mark, keep);
  }
  by_hash_[hash] = static_cast<std::uint32_t>(marks_.size());
  marks_.push_back(mark);
}

// The state now equals `a`'s moved on by D ops; apply as many further cycles as every rank's
// periodic region holds.
bool FastForward::try_skip(const PeriodMark& a, const SavedState& saved) {
  const OpIndex d = ranks_.cursor(0).base - a.origin;
  const Time dt = events_.now() - a.time;
  if (d == 0 || dt <= Time::zero()) return false;
  std::uint64_t cycles = ~std::uint64_t{0};
  for (Rank r = 0; r < ranks_.count() && cycles > 0; ++r) {
    const RankState& rs = ranks_.cursor(r);
    if (rs.done || rs.base < d) return false;
    // Every op touched from `a` on, and in the cycles to skip, must lie in one region.
    const PeriodicRegion region = programs_.periodic_region(map_.real(r), rs.base - d);
    if (region.period_ops == 0 || d % region.period_ops != 0 || rs.loaded > region.end())
      return false;
    cycles = std::min<std::uint64_t>(cycles, (region.end() - rs.loaded) / d);
  }
  if (cycles == 0 || cycles == ~std::uint64_t{0}) return false;
  const auto ops = static_cast<OpIndex>(cycles * d);
  check_promise(ops);
  steady_.extrapolate(saved.totals, cycles, dt);
  steady_.shift(ops, dt * static_cast<std::int64_t>(cycles));
  last_base_ = ranks_.cursor(0).base;
  ++jumps_;
  skipped_ops_ += ops;
  return true;
}

void FastForward::check_promise(OpIndex ops) const {
  for (Rank r = 0; r < ranks_.count(); ++r) {
    for (OpIndex i = ranks_.cursor(r).base; i < ranks_.cursor(r).loaded; ++i) {
      const Op now = programs_.op(map_.real(r), i);
      const Op later = programs_.op(map_.real(r), i + ops);
      bool same = now.kind == later.kind && now.peer == later.peer &&
                  now.channel == later.channel && now.bytes() == later.bytes() &&
                  now.duration == later.duration && now.num_deps == later.num_deps;
      for (std::uint32_t k = 0; same && k < now.num_deps; ++k)
        same = now.deps[k] + ops == later.deps[k];
      if (!same) {
        throw std::logic_error(
            "flow engine: " + programs_.label() +
            " declares a periodic region whose ops do not repeat (ProgramSet::periodic_region)");
      }
    }
  }
}

}  // namespace lockstep::flow_detail
