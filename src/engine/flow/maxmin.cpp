#include "lockstep/engine/flow/maxmin.hpp"

#include <algorithm>
#include <bit>
#include <limits>
#include <stdexcept>

#include "lockstep/core/slot_pool.hpp"

namespace lockstep {

namespace {
// Relative tolerance for "this constraint saturates at the same level as the bottleneck".
constexpr double kLevelTolerance = 1e-12;
constexpr double kWeightEpsilon = 1e-12;
}  // namespace

MaxMinSolver::MaxMinSolver(std::vector<double> capacities) {
  cons_.resize(capacities.size());
  for (std::size_t i = 0; i < capacities.size(); ++i) cons_[i].capacity = capacities[i];
}

MaxMinSolver::ConsId MaxMinSolver::add_constraint(double capacity) {
  cons_.emplace_back();
  cons_.back().capacity = capacity;
  return static_cast<ConsId>(cons_.size() - 1);
}

void MaxMinSolver::set_capacity(ConsId c, double capacity) {
  cons_[c].capacity = capacity;
  mark_dirty(c);
}

void MaxMinSolver::mark_dirty(ConsId c) {
  if (!cons_[c].dirty) {
    cons_[c].dirty = true;
    dirty_.push_back(c);
  }
}

MaxMinSolver::VarId MaxMinSolver::add(std::span<const Use> uses) {
  if (uses.empty()) throw std::logic_error("MaxMinSolver::add: a variable needs a constraint");
  const VarId v = take_slot(vars_, free_);
  Var& var = vars_[v];
  var.uses.clear();
  var.alive = true;
  var.fresh = true;
  var.rate = var.previous_rate = 0;
  for (const Use& u : uses) {
    Cons& c = cons_[u.cons];
    var.uses.push_back(VarUse{u.cons, static_cast<std::uint32_t>(c.elems.size()), u.coefficient});
    c.elems.push_back(Elem{v, static_cast<std::uint32_t>(var.uses.size() - 1), u.coefficient});
  }
  added_.push_back(v);  // its constraints are dirtied at the solve unless it replaces one
  return v;
}

void MaxMinSolver::remove(VarId v) {
  Var& var = vars_[v];
  // One added since the last solve leaves the system as that solve left it.
  if (!var.fresh) {
    removed_.push_back(Removed{key_of(var.uses), var.rate,
                               static_cast<std::uint32_t>(removed_uses_.size()),
                               static_cast<std::uint32_t>(var.uses.size())});
    for (const VarUse& u : var.uses) removed_uses_.push_back(Use{u.cons, u.coefficient});
  }
  for (const VarUse& u : var.uses) {
    Cons& c = cons_[u.cons];
    // Swap-remove, fixing the moved element's back pointer.
    const Elem moved = c.elems.back();
    c.elems[u.elem_index] = moved;
    vars_[moved.var].uses[moved.use_index].elem_index = u.elem_index;
    c.elems.pop_back();
  }
  var.uses.clear();
  var.alive = false;
  var.fresh = false;
  var.rate = 0;
  free_.push_back(v);
}

namespace {
// Groups equal use lists (a collision only costs a comparison).
std::uint64_t mix_use(std::uint64_t h, std::uint32_t cons, double coefficient) {
  return ((h + cons) * 0x9E3779B97F4A7C15ull) ^ std::bit_cast<std::uint64_t>(coefficient);
}
// Below this many (arrival, departure) pairs, compare keys pairwise rather than sort.
constexpr std::size_t kPairwise = 256;
}  // namespace

std::uint64_t MaxMinSolver::key_of(std::span<const VarUse> uses) {
  std::uint64_t h = uses.size();
  for (const VarUse& u : uses) h = mix_use(h, u.cons, u.coefficient);
  return h;
}

std::uint64_t MaxMinSolver::key_of(std::span<const Use> uses) {
  std::uint64_t h = uses.size();
  for (const Use& u : uses) h = mix_use(h, u.cons, u.coefficient);
  return h;
}

bool MaxMinSolver::same_uses(const Var& var, const Removed& gone) const {
  if (gone.count == kConsumed || var.uses.size() != gone.count) return false;
  for (std::uint32_t k = 0; k < gone.count; ++k) {
    const Use& u = removed_uses_[gone.first + k];
    if (var.uses[k].cons != u.cons || var.uses[k].coefficient != u.coefficient) return false;
  }
  return true;
}

void MaxMinSolver::pair_replacements() {
  arrivals_.clear();
  for (const VarId v : added_) {
    Var& var = vars_[v];
    if (!var.alive || !var.fresh) continue;  // removed again, or a slot listed twice
    var.fresh = false;
    arrivals_.emplace_back(key_of(var.uses), v);
  }
  const bool pairwise = arrivals_.size() * removed_.size() <= kPairwise;
  departures_.clear();
  if (!pairwise) {
    for (std::uint32_t i = 0; i < removed_.size(); ++i)
      departures_.emplace_back(removed_[i].key, i);
    std::sort(arrivals_.begin(), arrivals_.end());
    std::sort(departures_.begin(), departures_.end());
  }
  // A removed variable of the same uses as v (consumed ones have count kConsumed), or null.
  std::size_t d = 0;
  auto partner_of = [&](std::uint64_t key, const Var& var) -> Removed* {
    if (pairwise) {
      for (Removed& gone : removed_)
        if (gone.key == key && same_uses(var, gone)) return &gone;
      return nullptr;
    }
    // Sorted: runs of one key are consumed from the front (a collision aside).
    while (d < departures_.size() &&
           (departures_[d].first < key || removed_[departures_[d].second].count == kConsumed))
      ++d;
    for (std::size_t k = d; k < departures_.size() && departures_[k].first == key; ++k)
      if (same_uses(var, removed_[departures_[k].second])) return &removed_[departures_[k].second];
    return nullptr;
  };
  for (const auto& [key, v] : arrivals_) {
    Var& var = vars_[v];
    Removed* partner = partner_of(key, var);
    if (partner == nullptr) {
      for (const VarUse& u : var.uses) mark_dirty(u.cons);
      added_now_.push_back(v);
      continue;
    }
    partner->count = kConsumed;
    var.rate = partner->rate;
    var.replaced = true;  // listed as changed at the end of the solve
    replaced_.push_back(v);
  }
  // Listed in one order whichever way they were paired.
  std::sort(replaced_.begin(), replaced_.end());
  for (const Removed& gone : removed_) {
    if (gone.count == kConsumed) continue;
    for (std::uint32_t k = 0; k < gone.count; ++k) mark_dirty(removed_uses_[gone.first + k].cons);
  }
  added_.clear();
  removed_.clear();
  removed_uses_.clear();
}

double MaxMinSolver::load(ConsId c) const {
  double sum = 0;
  for (const Elem& e : cons_[c].elems) sum += e.coefficient * vars_[e.var].rate;
  return sum;
}

double MaxMinSolver::weight(ConsId c) const {
  double sum = 0;
  for (const Elem& e : cons_[c].elems) sum += e.coefficient;
  return sum;
}

// Also readies the component for filling: open weights summed, variables unfrozen.
void MaxMinSolver::collect_component(ConsId seed) {
  comp_vars_.clear();
  comp_cons_.clear();
  stack_.clear();
  cons_[seed].mark = mark_;
  stack_.push_back(seed);
  while (!stack_.empty()) {
    const ConsId c = stack_.back();
    stack_.pop_back();
    comp_cons_.push_back(c);
    Cons& cons = cons_[c];
    cons.frozen_load = 0;
    cons.open_weight = 0;
    for (const Elem& e : cons.elems) {
      cons.open_weight += e.coefficient;
      Var& var = vars_[e.var];
      if (var.mark == mark_) continue;
      var.mark = mark_;
      var.frozen = false;
      var.previous_rate = var.offered ? 0 : var.rate;
      var.offered = false;
      comp_vars_.push_back(e.var);
      for (const VarUse& u : var.uses) {
        if (cons_[u.cons].mark == mark_) continue;
        cons_[u.cons].mark = mark_;
        stack_.push_back(u.cons);
      }
    }
  }
}

void MaxMinSolver::fill_component() {
  std::size_t open = comp_vars_.size();
  visited_ += open;
  while (open > 0) {
    double level = std::numeric_limits<double>::infinity();
    for (const ConsId c : comp_cons_) {
      const Cons& cons = cons_[c];
      if (cons.open_weight <= kWeightEpsilon) continue;
      const double l = (cons.capacity - cons.frozen_load) / cons.open_weight;
      if (l < level) level = l;
    }
    if (level < 0) level = 0;  // rounding after many freezes; never hand out negative rates
    const double threshold = level * (1 + kLevelTolerance);
    for (const ConsId c : comp_cons_) {
      Cons& cons = cons_[c];
      if (cons.open_weight <= kWeightEpsilon) continue;
      if ((cons.capacity - cons.frozen_load) / cons.open_weight > threshold) continue;
      for (const Elem& e : cons.elems) {
        Var& var = vars_[e.var];
        if (var.frozen) continue;
        var.frozen = true;
        var.rate = level;
        --open;
        for (const VarUse& u : var.uses) {
          Cons& other = cons_[u.cons];
          other.frozen_load += u.coefficient * level;
          other.open_weight -= u.coefficient;
        }
      }
      cons.open_weight = 0;
    }
  }
  for (const VarId v : comp_vars_) {
    const Var& var = vars_[v];
    if (var.rate != var.previous_rate && !var.replaced) changed_.push_back(v);
  }
}

void MaxMinSolver::solve() {
  changed_.clear();
  if (++mark_ == 0) {
    for (auto& v : vars_) v.mark = 0;
    for (auto& c : cons_) c.mark = 0;
    mark_ = 1;
  }
  rates_moved();
  pair_replacements();
  offer_spare_capacity();
  for (const ConsId c : dirty_) {
    cons_[c].dirty = false;
    if (cons_[c].mark == mark_ || cons_[c].elems.empty()) continue;
    if (fair_around(c) || settle_locally(c)) continue;
    collect_component(c);
    fill_component();
    rates_moved();
  }
  dirty_.clear();
  for (const VarId v : replaced_) {
    Var& var = vars_[v];
    var.replaced = false;
    var.previous_rate = 0;
    if (var.rate != 0) changed_.push_back(v);
  }
  replaced_.clear();
  for (const VarId v : offered_) {  // accepted where their components were not solved
    Var& var = vars_[v];
    if (!var.offered) continue;
    var.offered = false;
    var.previous_rate = 0;
    if (var.rate != 0) changed_.push_back(v);
  }
  offered_.clear();
}

}  // namespace lockstep
