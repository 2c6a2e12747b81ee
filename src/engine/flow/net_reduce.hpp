#pragma once
// In-network reductions of a flow-engine run (internal; docs/flow-engine.md "In-network
// reduction (NetReduce)").
//
// A member's k-th NetReduce op on a group (counted as ops are loaded, so in program order) joins
// the group's round k. When the last member of a round has arrived, every member's contribution
// flows up to the root switch (the highest switch on the path from the group's first to its last
// member), which reduces at line rate and streams the result back down to every member as it
// goes; a member's op ends when its result has come down and every contribution has gone up.
// Rounds of one group gather, go up and come down on their own, as sends and recvs match FIFO
// per connection.
//
// With classes, a NetReduce op runs aggregated only when its group is exactly one class's members
// (NVLS inside a node, or one channel's copy of it in a channel-split program): the class's op
// then stands for the whole group. Any other group records Asymmetry::Group.
//
// Owns the open rounds (pooled), per group its class and root switch, and per (rank, group) the
// rounds loaded. Relies on the programs, the class map, the topology and placement, the path
// cache and route table, the events, Transfers (the up and down legs) and Ranks. Fast-forward is
// off for programs with groups, so none of this is in the steady state.
#include <cstdint>
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
  // Whether `group` is exactly the members of class `cls`: then the class's op stands for the
  // whole group's, and the group is complete when the class joins it.
  bool group_is_class(Rank cls, std::uint32_t group);
  // The switch a group reduces at: the highest on the path from its first to its last member.
  DeviceId root(std::uint32_t group);
  // Member `member`'s leg up to the root switch `top` or down from it, or kNoTransfer
  // (Asymmetry::Paths) when the members of its class reach the switch differently.
  std::uint32_t leg(TransferKind kind, const PostedOp& member, DeviceId top, std::uint32_t group,
                    std::uint32_t round, std::uint32_t index);
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
  static constexpr Rank kUnknownClass = kNone - 1;
  std::vector<Rank> group_class_;    // per group: its class, kNone, or kUnknownClass
  std::vector<GroupRounds> groups_;  // by group (sized at the first NetReduce)
  std::vector<RoundState> states_;
  std::vector<std::uint32_t> free_states_;
  std::uint64_t rounds_open_ = 0;
  std::unordered_map<std::uint64_t, std::uint32_t> rounds_loaded_;  // by key(rank, group)
  std::unordered_map<std::uint32_t, DeviceId> roots_;               // by group
  std::vector<PostedOp> done_scratch_;
};

}  // namespace lockstep::flow_detail
