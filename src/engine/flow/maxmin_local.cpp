// The local half of MaxMinSolver::solve (the maths is in maxmin.hpp): newcomers are offered spare
// capacity, the allocation is checked around each dirty constraint against the bottleneck
// characterisation of max-min fairness, and where the check fails a region around the constraint
// is filled with everyone else held, growing until the check passes or the region is too large.
#include <algorithm>
#include <cmath>
#include <limits>

#include "lockstep/engine/flow/maxmin.hpp"

namespace lockstep {

namespace {
// Relative tolerance for "this constraint is full" and "no rate on it is higher" (rounding of a
// sum of a few rates is near 1e-16; 1e-11 of a rate moves a millisecond transfer by 0.01 ps).
constexpr double kCheckTolerance = 1e-11;
// Relative distance within which a newcomer's offer is its neighbours' level (filling's own
// tolerance for "saturates at the same level").
constexpr double kSameLevel = 1e-12;
// Variables in a region beyond which the whole component is solved instead. A region costs its
// constraints' variables to check; a failed attempt costs that on top of the component's solve.
constexpr std::size_t kMaxRegion = 128;
}  // namespace

void MaxMinSolver::offer_spare_capacity() {
  for (const VarId v : added_now_) {
    Var& var = vars_[v];
    double rate = std::numeric_limits<double>::infinity();
    ConsId tightest = var.uses.front().cons;
    for (const VarUse& u : var.uses) {
      const double room =
          (cons_[u.cons].capacity - check_state(u.cons).checked_load) / u.coefficient;
      if (room < rate) rate = room, tightest = u.cons;
    }
    // Where the newcomer joins others at their level, take their rate exactly, as filling would.
    const double top = cons_[tightest].checked_top;  // the newcomer's own rate is still 0
    if (std::abs(rate - top) <= kSameLevel * top) rate = top;
    var.rate = std::max(rate, 0.0);
    var.offered = true;
    offered_.push_back(v);
    for (const VarUse& u : var.uses) {  // keep the cached state current for the next newcomer
      Cons& cons = cons_[u.cons];
      cons.checked_load += u.coefficient * var.rate;
      cons.checked_top = std::max(cons.checked_top, var.rate);
    }
  }
  added_now_.clear();
}

void MaxMinSolver::rates_moved() {
  if (++rates_ == 0) {
    for (Cons& c : cons_) c.checked = 0;
    rates_ = 1;
  }
}

const MaxMinSolver::Cons& MaxMinSolver::check_state(ConsId c) {
  Cons& cons = cons_[c];
  if (cons.checked != rates_) {
    cons.checked = rates_;
    cons.checked_load = 0;
    cons.checked_top = 0;
    for (const Elem& e : cons.elems) {
      const double rate = vars_[e.var].rate;
      cons.checked_load += e.coefficient * rate;
      cons.checked_top = std::max(cons.checked_top, rate);
    }
  }
  return cons;
}

bool MaxMinSolver::has_bottleneck(const Var& var) {
  const double ceiling = var.rate * (1 + kCheckTolerance);
  return std::any_of(var.uses.begin(), var.uses.end(), [&](const VarUse& u) {
    const Cons& cons = check_state(u.cons);
    return cons.checked_load >= cons.capacity * (1 - kCheckTolerance) &&
           cons.checked_top <= ceiling;
  });
}

bool MaxMinSolver::fair_around(ConsId c) {
  if (check_state(c).checked_load > cons_[c].capacity * (1 + kCheckTolerance)) return false;
  return std::all_of(cons_[c].elems.begin(), cons_[c].elems.end(),
                     [&](const Elem& e) { return has_bottleneck(vars_[e.var]); });
}

bool MaxMinSolver::settle_locally(ConsId c) {
  if (cons_[c].elems.size() > kMaxRegion) return false;
  if (++region_ == 0) {
    for (Var& v : vars_) v.region = 0;
    region_ = 1;
  }
  held_.clear();
  comp_vars_.clear();
  auto admit = [&](VarId v) {
    Var& var = vars_[v];
    if (var.region == region_) return;
    var.region = region_;
    comp_vars_.push_back(v);
    held_.push_back(Held{v, var.rate, var.offered});
  };
  for (const Elem& e : cons_[c].elems) admit(e.var);
  const std::size_t reported = changed_.size();
  for (;;) {
    fill_region();
    if (region_is_fair()) return true;
    changed_.resize(reported);
    restore_region();
    const std::size_t before = comp_vars_.size();
    for (const ConsId rc : comp_cons_)  // a hop further: every variable on the region's links
      for (const Elem& e : cons_[rc].elems) admit(e.var);
    // Past the limit, or the whole component already: solved as one.
    if (comp_vars_.size() > kMaxRegion || comp_vars_.size() == before) return false;
  }
}

// Progressive filling over the region's variables; the others on its constraints keep their
// rates and count as frozen load.
void MaxMinSolver::fill_region() {
  if (++filled_ == 0) {
    for (Cons& c : cons_) c.filled = 0;
    filled_ = 1;
  }
  comp_cons_.clear();
  for (const VarId v : comp_vars_) {
    for (const VarUse& u : vars_[v].uses) {
      Cons& cons = cons_[u.cons];
      if (cons.filled == filled_) continue;
      cons.filled = filled_;
      comp_cons_.push_back(u.cons);
    }
  }
  for (const ConsId c : comp_cons_) {
    Cons& cons = cons_[c];
    cons.frozen_load = 0;
    cons.open_weight = 0;
    for (const Elem& e : cons.elems) {
      Var& var = vars_[e.var];
      if (var.region == region_) {
        cons.open_weight += e.coefficient;
      } else {
        var.frozen = true;
        cons.frozen_load += e.coefficient * var.rate;
      }
    }
  }
  for (const VarId v : comp_vars_) {
    Var& var = vars_[v];
    var.frozen = false;
    var.previous_rate = var.offered ? 0 : var.rate;
    var.offered = false;
  }
  fill_component();
  rates_moved();
}

// Fair around every constraint of the region (variables elsewhere cannot have lost their
// bottleneck: their constraints carry the same rates as before).
bool MaxMinSolver::region_is_fair() {
  return std::all_of(comp_cons_.begin(), comp_cons_.end(),
                     [&](ConsId c) { return fair_around(c); });
}

void MaxMinSolver::restore_region() {
  for (const Held& h : held_) {
    Var& var = vars_[h.var];
    var.rate = h.rate;
    var.offered = h.offered;
  }
  rates_moved();
}

}  // namespace lockstep
