#pragma once
// In-network reductions of a flow-engine run (internal; docs/flow-engine.md "In-network
// reduction (NetReduce)").
//
// A member's k-th NetReduce op on a group (counted as ops are loaded, so in program order) joins
// the group's round k. When the last member of a round has arrived, every member's contribution
// flows up to the root switch (the highest switch on the path from the group's first to its last
// member) and the result streams back down to every member as it goes; a member's op ends when
// its result has come down and every contribution has gone up. The switches on the way reduce
// (SHARP's aggregation tree) and replicate (multicast): a link that k members' legs cross carries
// one stream, so each leg crosses it with weight 1/k. Rounds of one group gather, go up and come
// down on their own, as sends and recvs match FIFO per connection.
//
// With classes, a NetReduce op runs aggregated when its group is exactly one class's members
// (NVLS inside a node, a rail's CollNet group under translation by nodes, or one channel's copy
// of NVLS in a channel-split program): the class's op then stands for the whole group. It also
// runs when every member of the group is a representative of its own class (a node's NVLS group
// when classes are translations by nodes): the group's round then stands for every translate of
// it, member e of each class joining the translate by e (ProgramSet::symmetry_period). Any other
// group records Asymmetry::Group.
//
// Owns the open rounds (pooled), per group how it is simulated and its root switch, the tree
// weights per group, and per (rank, group) the rounds loaded. Relies on the programs, the class
// map, the topology and placement, the path cache and route table, the events, Transfers (the up
// and down legs) and Ranks. Fast-forward is off for programs with groups, so none of this is in
// the steady state.
#include <cstdint>
#include <map>
#include <unordered_map>
#include <vector>

#include "asymmetry.hpp"
#include "class_map.hpp"
#include "events.hpp"
#include "lockstep/engine/engine.hpp"
#include "path_cache.hpp"
#include "ranks.hpp"
#include "route_table.hpp"
#include "transfers.hpp"

namespace lockstep::flow_detail {

class NetReduce {
 public:
  static constexpr std::uint32_t kNotAClass = kNone;

  NetReduce(const EngineInput& input, const ClassMap& map, PathCache& paths, RouteTable& routes,
            Events& events, Transfers& transfers, Ranks& ranks, Asymmetry& asymmetry);

  // The round that rank r's next NetReduce op on `group` joins, or kNotAClass (and
  // Asymmetry::Group) when classes are aggregated and the group is not one class's members.
  std::uint32_t load(Rank r, std::uint32_t group);
  // Rank r's NetReduce op i has started: it arrives in its round.
  void post(Rank r, OpIndex i, const IssuedOp& op);
  // A leg of `round` is done: an up leg (member == kNone) or member `member`'s down leg.
  void member_done(std::uint32_t group, std::uint32_t round, std::uint32_t member);
  // Rounds begun and not finished, over all groups.
  std::uint64_t rounds_open() const { return rounds_open_; }

 private:
  friend class SteadyState;  // names what it holds (none of it is state: no fast-forward)
  struct RoundState {
    std::vector<PostedOp> arrived;
    std::uint32_t up_pending = 0;
    std::vector<bool> down_arrived;  // per arrived member: its result has come down
    std::uint32_t members_left = 0;  // members whose op has not finished
  };
  // The rounds of one group begun and not finished: round k's state is
  // states_[ring[k % ring.size()]] while first <= k < end, kNone once it has finished (rounds
  // finish out of order; first moves past finished ones). With a whole-program window thousands
  // of rounds are open at once; states are pooled, so they allocate nothing after warm-up.
  struct GroupRounds {
    std::uint32_t first = 0, end = 0;
    std::vector<std::uint32_t> ring;
  };
  // Round `round` of `group`, begun here if it is new. The reference lasts until the next round
  // is begun.
  RoundState& round_state(std::uint32_t group, std::uint32_t round);
  void finish_round(std::uint32_t group, std::uint32_t round);
  // How a group is simulated under the class map: by one class standing for all its members,
  // by its members each representing its class (the group stands for its translates), or by
  // every rank on its own; NotSimulated when none of these holds.
  enum class Mode : std::uint8_t { Unknown, Whole, Representatives, Individual, NotSimulated };
  struct GroupPlan {
    Mode mode = Mode::Unknown;
    Rank cls = kNone;  // Whole: the class
  };
  const GroupPlan& plan(std::uint32_t group);
  // Whether `group` is exactly the members of one class (kNone if not) or one rotation orbit of a
  // channel-split program's class.
  Rank whole_class(std::uint32_t group);
  // The group whose members are those of `group` moved by e, or kNone when there is none.
  std::uint32_t translate(std::uint32_t group, ClassMap::Element e);
  // The switch a group reduces at: the highest on the path from its first to its last member.
  DeviceId root(std::uint32_t group);
  // Member `member`'s leg up to the root switch or down from it (each member of its class to
  // its own group's root), or kNoTransfer (Asymmetry::Paths or Group) when the members of its
  // class reach their switches differently.
  std::uint32_t leg(TransferKind kind, const PostedOp& member, std::uint32_t group,
                    std::uint32_t round, std::uint32_t index);
  // How many of `group`'s legs in direction `up` cross the device hop of `link` (one stream
  // crosses it: each leg counts 1 / that).
  double legs_on_hop(std::uint32_t group, bool up, DirLinkId link);
  static std::uint64_t key(std::uint32_t a, std::uint32_t b) {
    return (static_cast<std::uint64_t>(a) << 32) | b;
  }

  const EngineInput& in_;
  const ClassMap& map_;
  PathCache& paths_;
  RouteTable& routes_;
  Events& events_;
  Transfers& transfers_;
  Ranks& ranks_;
  Asymmetry& asymmetry_;
  std::vector<GroupPlan> plans_;     // by group (sized at the first NetReduce)
  std::vector<GroupRounds> groups_;  // by group (sized at the first NetReduce)
  std::vector<RoundState> states_;
  std::vector<std::uint32_t> free_states_;
  std::uint64_t rounds_open_ = 0;
  std::unordered_map<std::uint64_t, std::uint32_t> rounds_loaded_;  // by key(rank, group)
  std::unordered_map<std::uint32_t, DeviceId> roots_;               // by group
  std::map<std::vector<Rank>, std::uint32_t> group_of_members_;     // for translate()
  // Legs per device hop: key (group << 1 | up) -> (source << 32 | target) -> legs crossing it.
  std::unordered_map<std::uint64_t, std::unordered_map<std::uint64_t, double>> hop_legs_;
  std::vector<RouteTable::Target> targets_scratch_;
  std::vector<std::uint32_t> member_groups_scratch_;
  std::vector<Rank> members_scratch_;
  std::vector<PostedOp> done_scratch_;
};

}  // namespace lockstep::flow_detail
