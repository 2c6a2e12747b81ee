#pragma once
// One attempt of the flow engine over the classes of a ClassMap (internal). With one rank per
// class every rank is simulated; otherwise simulated rank c is the class's representative and
// stands for all its members (class_map.hpp), and a transfer between classes stands for all its
// members'.
//
// The pieces, each in its own header:
//   Events        the clock and the pending events (events.hpp)
//   Ranks         cursors, issue windows and op slots: ops start and finish (ranks.hpp)
//   Connections   send/recv matching, one streaming transfer per connection (connections.hpp)
//   Transfers     matched pairs and NetReduce legs in flight over class routes (transfers.hpp)
//   Flows         the transfers' bandwidth phases as max-min solver variables (flows.hpp)
//   NetReduce     in-network reduction rounds (net_reduce.hpp)
//   RouteTable    class routes over link orbits (route_table.hpp), with UnevenOrbits
//                 (uneven_orbits.hpp) checking the orbits that stand for no real link
//   SteadyState   what decides the future, and FastForward jumping over repeated cycles
//                 (steady_state.hpp, fast_forward.hpp)
// They hold references to one another (a finished transfer finishes ops, a started op posts a
// send), all members of one Simulation, which outlives them; none uses another in its
// constructor.
//
// The run loop runs one instant at a time, then solves the rates once, then lets fast-forward
// look. An asymmetry found by any piece (asymmetry.hpp) ends the attempt with no result.
#include <cstdint>
#include <optional>

#include "asymmetry.hpp"
#include "class_map.hpp"
#include "connections.hpp"
#include "events.hpp"
#include "fast_forward.hpp"
#include "flows.hpp"
#include "lockstep/engine/engine.hpp"
#include "lockstep/engine/flow/flow_engine.hpp"
#include "lockstep/engine/flow/maxmin.hpp"
#include "net_reduce.hpp"
#include "path_cache.hpp"
#include "ranks.hpp"
#include "route_table.hpp"
#include "steady_state.hpp"
#include "transfers.hpp"
#include "uneven_orbits.hpp"

namespace lockstep::flow_detail {

class Simulation final : public LinkLoadView {
 public:
  Simulation(const EngineInput& input, const FlowEngineConfig& config, PathCache& paths,
             const ClassMap& classes);
  // The result, or nothing when the classes turned out not to hold (asymmetry() says why).
  // `progress`, when set, hears the share of the simulated ranks' ops done now and then.
  std::optional<RunResult> run(ProgressHook* progress = nullptr);
  Asymmetry asymmetry() const { return asymmetry_; }
  // The load adaptive routing sees on a link: the flows crossing it.
  double load(DirLinkId link) const override { return solver_.weight(link); }
  std::uint64_t transfers() const { return transfers_.completed(); }
  std::uint64_t components() const { return flows_.solves(); }
  std::uint64_t bundled_flows() const { return flows_.bundled(); }
  std::uint32_t fast_forwards() const { return fast_forward_.jumps(); }
  std::uint64_t skipped_ops() const { return fast_forward_.skipped_ops(); }

 private:
  friend class SteadyState;  // names what a Simulation holds
  bool gave_up() const { return asymmetry_ != Asymmetry::None; }
  void dispatch(const Event& e);
  // Solves the rates; false when that found an asymmetry.
  bool solve();
  RunResult result();
  double ops_done_share() const;

  const EngineInput& in_;
  const FlowEngineConfig& config_;
  ClassMap map_;
  Asymmetry asymmetry_ = Asymmetry::None;
  Events events_;
  MaxMinSolver solver_;
  RouteTable routes_;
  UnevenOrbits uneven_;
  Ranks ranks_;
  Connections connections_;
  Transfers transfers_;
  Flows flows_;
  NetReduce net_reduce_;
  SteadyState steady_;
  FastForward fast_forward_;
};

}  // namespace lockstep::flow_detail
