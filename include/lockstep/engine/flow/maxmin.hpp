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
// Replacements cost nothing. The allocation is unique and depends only on the capacities and the
// multiset of variables (each a list of constraint uses), so a variable removed and one added with
// the same uses before the next solve leave it unchanged: the new one takes the old one's rate and
// neither dirties a constraint. This is the common case in a simulation, where a connection's
// next transfer starts the instant its previous one ends (two-thirds of the solves of a 1,024-GPU
// NVLS tree all-reduce, four-fifths of the variables they visited).
//
// Most changes move few rates. After pairing, each newcomer is offered the spare capacity of
// its tightest constraint and everyone else keeps their rate; the result is checked against the
// characterisation of max-min fairness (Bertsekas & Gallager, Data Networks, 2nd ed., 6.5.2): the
// allocation is feasible and every variable has a bottleneck, a saturated constraint on which no
// variable has a higher rate. The allocation is unique, so a passing check proves it exact; only
// variables on dirty constraints can have lost their bottleneck, so the check is local. Where it
// fails, progressive filling runs on a region (the variables on the dirty constraint, the others
// held at their rates) and the check is repeated around it; the region grows a hop at a time,
// and only past kMaxRegion variables is the whole component solved. In a 16,384-GPU NVLS tree
// all-reduce the flows of the whole tree form one component: a transfer that ends while its
// successor waits, or one that starts, moves the rates of a few neighbours, not of the tree.
//
// Example: link A (capacity 1) carries flows 1 and 2, link B (capacity 10) flows 2 and 3:
// lambda_A = 1/2 < lambda_B = 10/2, so flows 1, 2 freeze at 0.5; then B has 9.5 left for flow 3.
#include <cstdint>
#include <span>
#include <utility>
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
  /// variables (alive ones only) whose rate differs from before, with `previous_rate()` (0 for
  /// one added since the last call).
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
  /// Variables visited by the progressive filling of all solves so far (a cost measure).
  std::uint64_t visited() const { return visited_; }
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
    bool fresh = false;        // added since the last solve
    bool replaced = false;     // scratch: took a removed variable's rate in this solve
    bool offered = false;      // scratch: a newcomer holding its offered rate, not yet accepted
    std::uint32_t region = 0;  // scratch: == region_ when in the current region
  };
  // A variable removed since the last solve (unless it was added since then too): its rate and
  // its uses, kept in removed_uses_[first, first + count).
  struct Removed {
    std::uint64_t key;  // hash of the uses
    double rate;
    std::uint32_t first, count;
  };
  struct Cons {
    double capacity = 0;
    std::vector<Elem> elems;
    std::uint32_t mark = 0;
    bool dirty = false;
    double frozen_load = 0;  // scratch during a solve
    double open_weight = 0;  // scratch: sum of coefficients of unfrozen variables
    // Scratch for the check: load and highest rate, valid while checked == rates_.
    double checked_load = 0;
    double checked_top = 0;
    std::uint32_t checked = 0;
    std::uint32_t filled = 0;  // scratch: == filled_ when among the region's constraints
  };

  void mark_dirty(ConsId c);
  static std::uint64_t key_of(std::span<const VarUse> uses);
  static std::uint64_t key_of(std::span<const Use> uses);
  // Pairs the variables added since the last solve with removed ones of the same uses; the rest
  // dirty their constraints.
  void pair_replacements();
  bool same_uses(const Var& var, const Removed& gone) const;
  // Gives each unpaired newcomer the largest rate its constraints have room for.
  void offer_spare_capacity();
  const Cons& check_state(ConsId c);  // c with checked_load and checked_top up to date
  // Whether every variable on c has a bottleneck under the current rates (and c is not over).
  bool fair_around(ConsId c);
  bool has_bottleneck(const Var& var);
  // Solves the region around dirty constraint c with everyone else held; false (and every rate
  // as it was) where the region outgrew kMaxRegion before the check passed.
  bool settle_locally(ConsId c);
  void fill_region();
  bool region_is_fair();
  void restore_region();
  void rates_moved();  // invalidates the loads cached for the check
  void collect_component(ConsId seed);
  void fill_component();

  std::vector<Var> vars_;
  std::vector<Cons> cons_;
  std::vector<VarId> free_;
  std::vector<ConsId> dirty_;
  std::vector<VarId> changed_;
  std::vector<Removed> removed_;
  std::vector<Use> removed_uses_;
  std::vector<VarId> added_;  // may repeat a slot, or name one removed again: see fresh
  static constexpr std::uint32_t kConsumed = ~std::uint32_t{0};      // Removed::count once paired
  std::vector<std::pair<std::uint64_t, VarId>> arrivals_;            // scratch: (key, variable)
  std::vector<std::pair<std::uint64_t, std::uint32_t>> departures_;  // scratch: (key, removed_)
  std::vector<VarId> replaced_;
  std::vector<VarId> offered_;
  std::vector<VarId> added_now_;  // scratch: newcomers without a partner, in arrival order
  struct Held {                   // a region variable's state before the region was filled
    VarId var;
    double rate;
    bool offered;
  };
  std::vector<Held> held_;
  std::uint32_t rates_ = 1;       // bumped whenever rates move within a solve
  std::uint32_t region_ = 0;      // bumped per region attempt
  std::uint32_t filled_ = 0;      // bumped per region fill
  std::vector<VarId> comp_vars_;  // scratch: current component
  std::vector<ConsId> comp_cons_;
  std::vector<ConsId> stack_;
  std::uint32_t mark_ = 0;
  std::uint64_t visited_ = 0;
};

}  // namespace lockstep
