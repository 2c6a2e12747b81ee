#pragma once
// Max-min fair sharing of link capacities among flows (the model of SimGrid's lmm solver).
//
// The maths. Constraints c (directed links) have capacities C_c. Variables v (flows, or classes
// of identical flows) cross constraints with coefficients a_vc (1 for one flow; k when a variable
// stands for k identical flows that all cross c). A rate allocation x is feasible when
//     sum_v a_vc * x_v <= C_c   for every constraint c,
// and max-min fair when no x_v can grow without shrinking some x_u <= x_v. Progressive filling
// finds it: all unfrozen variables grow at the same rate lambda; the first constraint to
// saturate, at lambda_c = (C_c - frozen load_c) / (sum of a_vc over its unfrozen variables),
// freezes its variables at lambda_c; repeat until every variable is frozen.
//
// Incremental. Adding or removing a variable marks its constraints dirty; solve() re-solves only
// the connected components (variables linked through shared constraints) that contain a dirty
// constraint, and reports the variables whose rate changed. Scratch buffers are kept between
// calls; a variable slot is reused after removal, so steady-state solving does not allocate.
//
// Example: link A (capacity 1) carries flows 1 and 2, link B (capacity 10) flows 2 and 3:
// lambda_A = 1/2 < lambda_B = 10/2, so flows 1, 2 freeze at 0.5; then B has 9.5 left for flow 3.
#include <cstdint>
#include <span>
#include <vector>

namespace lockstep {

class MaxMinSolver {
 public:
  using VarId = std::uint32_t;
  using ConsId = std::uint32_t;

  struct Use {
    ConsId cons;
    double coefficient;
  };

  /// One constraint per capacity (e.g. per directed link, in bytes/s).
  explicit MaxMinSolver(std::vector<double> capacities);

  /// Adds a constraint of `capacity` after the existing ones and returns its id.
  ConsId add_constraint(double capacity);

  /// Changes constraint c's capacity; the next solve re-solves its component.
  void set_capacity(ConsId c, double capacity);

  /// Adds a variable crossing `uses` (at least one; constraint ids must exist and be distinct).
  VarId add(std::span<const Use> uses);
  void remove(VarId v);

  /// Re-solves every component touched since the last call. Afterwards `changed()` lists the
  /// variables (alive ones only) whose rate differs from before, with `previous_rate()`.
  void solve();
  std::span<const VarId> changed() const { return changed_; }

  double rate(VarId v) const { return vars_[v].rate; }
  double previous_rate(VarId v) const { return vars_[v].previous_rate; }
  /// Sum of coefficient * rate over the variables on c (bytes/s carried), as of the last solve.
  double load(ConsId c) const;
  /// Number of variables crossing c (weighted by coefficient).
  double weight(ConsId c) const;
  double capacity(ConsId c) const { return cons_[c].capacity; }
  /// Calls fn(variable, coefficient) for every variable on c, in the solver's internal order
  /// (which decides the order of floating-point sums, so callers comparing states include it).
  template <class Fn>
  void for_each_on(ConsId c, Fn&& fn) const {
    for (const Elem& e : cons_[c].elems) fn(e.var, e.coefficient);
  }
  std::size_t num_constraints() const { return cons_.size(); }
  std::size_t num_variables() const { return vars_.size() - free_.size(); }

 private:
  struct Elem {  // a variable's entry in a constraint's list
    VarId var;
    std::uint32_t use_index;  // position of the matching Use in the variable's list
    double coefficient;
  };
  struct VarUse {
    ConsId cons;
    std::uint32_t elem_index;  // position in the constraint's element list
    double coefficient;
  };
  struct Var {
    std::vector<VarUse> uses;
    double rate = 0;
    double previous_rate = 0;
    std::uint32_t mark = 0;
    bool alive = false;
    bool frozen = false;
  };
  struct Cons {
    double capacity = 0;
    std::vector<Elem> elems;
    std::uint32_t mark = 0;
    bool dirty = false;
    double frozen_load = 0;  // scratch during a solve
    double open_weight = 0;  // scratch: sum of coefficients of unfrozen variables
  };

  void mark_dirty(ConsId c);
  void collect_component(ConsId seed);
  void fill_component();

  std::vector<Var> vars_;
  std::vector<Cons> cons_;
  std::vector<VarId> free_;
  std::vector<ConsId> dirty_;
  std::vector<VarId> changed_;
  std::vector<VarId> comp_vars_;  // scratch: current component
  std::vector<ConsId> comp_cons_;
  std::vector<ConsId> stack_;
  std::uint32_t mark_ = 0;
};

}  // namespace lockstep
