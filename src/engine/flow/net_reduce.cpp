#include "net_reduce.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>

#include "lockstep/core/error.hpp"
#include "lockstep/core/slot_pool.hpp"
#include "transfers.hpp"

namespace lockstep::flow_detail {

namespace {
// Which device of a path roots an in-network reduction: the highest switch on it.
int root_score(const Device& d) {
  if (d.kind == DeviceKind::Switch) return 2 + d.tier;
  if (d.kind == DeviceKind::ScaleUpSwitch) return 1;
  return 0;
}
}  // namespace

NetReduce::NetReduce(const EngineInput& input, const ClassMap& map, PathCache& paths,
                     RouteTable& routes, Events& events, Transfers& transfers, Ranks& ranks,
                     Asymmetry& asymmetry)
    : in_(input),
      map_(map),
      paths_(paths),
      routes_(routes),
      events_(events),
      transfers_(transfers),
      ranks_(ranks),
      asymmetry_(asymmetry) {}

std::uint32_t NetReduce::load(Rank r, std::uint32_t group) {
  if (group < in_.programs->num_groups()) {  // post reports an unknown group
    const GroupPlan& p = plan(group);
    if (p.mode == Mode::NotSimulated || (p.mode == Mode::Whole && p.cls != r)) {
      record(asymmetry_, Asymmetry::Group);
      return kNotAClass;
    }
  }
  return rounds_loaded_[key(r, group)]++;
}

void NetReduce::post(Rank r, OpIndex i, const IssuedOp& op) {
  const ProgramSet& programs = *in_.programs;
  if (op.peer >= programs.num_groups()) {
    throw InputError("programs", fmt::format("rank {} op {} (net_reduce) names group {} of {}", r,
                                             i, op.peer, programs.num_groups()));
  }
  const auto members = programs.group(op.peer);
  if (std::find(members.begin(), members.end(), map_.real(r)) == members.end()) {
    throw InputError("programs",
                     fmt::format("rank {} op {} joins net_reduce group {} it is not a member of",
                                 map_.real(r), i, op.peer));
  }
  const std::uint32_t round = ranks_.net_round(r, i);
  RoundState& g = round_state(op.peer, round);
  g.arrived.push_back({r, i});
  // One class's op stands for the whole group; otherwise each member arrives itself.
  const std::size_t arrivals = plan(op.peer).mode == Mode::Whole ? 1 : members.size();
  if (g.arrived.size() < arrivals) return;
  g.up_pending = static_cast<std::uint32_t>(g.arrived.size());
  g.down_arrived.assign(g.arrived.size(), false);
  g.members_left = static_cast<std::uint32_t>(g.arrived.size());
  for (std::uint32_t m = 0; m < g.arrived.size(); ++m) {
    const PostedOp p = g.arrived[m];
    const std::uint32_t up = leg(TransferKind::NetUp, p, op.peer, round, m);
    if (up == Transfers::kNoTransfer) return;
    const Time first_byte_at_root = routes_[transfers_.route(up)].shares.front().latency;
    transfers_.begin(up);
    // The switch reduces and multicasts as data streams in (SHARP and NVLS are cut-through),
    // so the result starts down once the first bytes have reached the root.
    const std::uint32_t down = leg(TransferKind::NetDown, p, op.peer, round, m);
    if (down == Transfers::kNoTransfer) return;
    events_.push(events_.now() + first_byte_at_root, EventKind::TransferStart, down);
  }
}

std::uint32_t NetReduce::leg(TransferKind kind, const PostedOp& member, std::uint32_t group,
                             std::uint32_t round, std::uint32_t index) {
  const bool up = kind == TransferKind::NetUp;
  // Member m of the class reduces in its own group: the group itself, or (representatives
  // standing for their translates) the group moved by m's element, each at its own root. The
  // legs of a channel-split class all go to one switch with the representative group's label.
  const bool translated = plan(group).mode == Mode::Representatives;
  member_groups_scratch_.assign(map_.members(), group);
  targets_scratch_.assign(map_.members(), RouteTable::Target{root(group), group});
  if (translated) {
    for (Rank m = 1; m < map_.members(); ++m) {
      const std::uint32_t image = translate(group, map_.member(m));
      if (image == kNone) {
        record(asymmetry_, Asymmetry::Group);
        return Transfers::kNoTransfer;
      }
      member_groups_scratch_[m] = image;
      targets_scratch_[m] = {root(image), image};
    }
  }
  const RouteTable::LinkWeight weight = [&](std::size_t m, DirLinkId link) {
    return 1.0 / legs_on_hop(member_groups_scratch_[m], up, link);
  };
  const std::uint32_t route = routes_.class_device_route(
      member.rank, targets_scratch_, up ? RouteTable::kToDevice : RouteTable::kFromDevice, &weight);
  if (route == RouteTable::kNoRoute) {
    record(asymmetry_, Asymmetry::Paths);
    return Transfers::kNoTransfer;
  }
  const IssuedOp& op = ranks_.op(member.rank, member.op);
  return transfers_.net_leg(kind, member, group, round, index, up ? op.src_bytes : op.dst_bytes(),
                            route);
}

double NetReduce::legs_on_hop(std::uint32_t group, bool up, DirLinkId link) {
  auto [it, fresh] = hop_legs_.try_emplace(std::uint64_t{group} << 1 | (up ? 1 : 0));
  auto& legs = it->second;
  const Topology& topo = *in_.topology;
  const auto hop = [&](DirLinkId l) {
    return std::uint64_t{topo.source(l)} << 32 | topo.target(l);
  };
  if (fresh) {
    // Every member's leg, as routed in an individual run (the group's own label).
    const DeviceId top = root(group);
    for (const Rank m : in_.programs->group(group)) {
      const DeviceId gpu = in_.placement[m];
      const auto& paths = up ? paths_.get(gpu, top, group) : paths_.get(top, gpu, group);
      for (const PathShare& share : paths)
        for (const DirLinkId l : share.hops) legs[hop(l)] += share.fraction;
    }
  }
  const auto found = legs.find(hop(link));
  return found == legs.end() || found->second < 1 ? 1.0 : found->second;
}

const NetReduce::GroupPlan& NetReduce::plan(std::uint32_t group) {
  // Worked out once per group: every NetReduce op asks.
  if (plans_.empty()) plans_.assign(in_.programs->num_groups(), GroupPlan{});
  GroupPlan& p = plans_[group];
  if (p.mode != Mode::Unknown) return p;
  if (map_.classes() == map_.ranks()) {
    p.mode = Mode::Individual;
    return p;
  }
  p.cls = whole_class(group);
  if (p.cls != kNone) {
    p.mode = Mode::Whole;
    return p;
  }
  // Every member a representative, of distinct classes: with translation alone (no rotation
  // inside nodes), member e of each class joins the group moved by e (symmetry_period's
  // promise), so this group's rounds stand for those of all its translates.
  const auto members = in_.programs->group(group);
  std::vector<bool> seen(map_.classes(), false);
  const bool representatives =
      map_.turns() == 1 && std::all_of(members.begin(), members.end(), [&](Rank m) {
        if (m >= map_.ranks()) return false;
        const ClassMap::Where w = map_.where(m);
        if (w.e.tau != 0 || w.e.sigma != 0 || seen[w.cls]) return false;
        seen[w.cls] = true;
        return true;
      });
  p.mode = representatives ? Mode::Representatives : Mode::NotSimulated;
  return p;
}

Rank NetReduce::whole_class(std::uint32_t group) {
  const ProgramSet& programs = *in_.programs;
  const auto members = programs.group(group);
  const Rank ranks = map_.ranks();
  const Rank first = !members.empty() && members[0] < ranks ? map_.where(members[0]).cls : kNone;
  const auto in_first = [&](Rank m) { return m < ranks && map_.where(m).cls == first; };
  bool whole =
      members.size() == map_.members() && std::all_of(members.begin(), members.end(), in_first);
  // A channel-split program's group is one channel's copy: the rotation orbit of one member
  // (same translation, every rotation), and each translation of it is the same GPUs' group
  // on another channel (ProgramSet::symmetry_channel_shift), which reduces at the same switch:
  // the class's op stands for all of those groups at once. Its routes to the switch carry the
  // representative group's flow label, so every member must reach the switch over exactly one
  // link (an NVSwitch next to each GPU), where no label can choose another path.
  if (!whole && programs.symmetry_channel_shift() != 0 && members.size() == map_.turns() &&
      std::all_of(members.begin(), members.end(), in_first)) {
    const Rank tau = map_.where(members[0]).e.tau;
    const DeviceId top = root(group);
    whole = std::all_of(members.begin(), members.end(), [&](Rank m) {
      if (map_.where(m).e.tau != tau) return false;
      for (Rank k = 0; k < map_.members() / map_.turns(); ++k)
        if (in_.placement[map_.apply({k, 0}, m)] != in_.placement[m]) return false;
      const auto ports = in_.topology->ports(in_.placement[m]);
      return std::count_if(ports.begin(), ports.end(),
                           [&](const Port& p) { return p.peer == top; }) == 1;
    });
  }
  return whole ? first : kNone;
}

std::uint32_t NetReduce::translate(std::uint32_t group, ClassMap::Element e) {
  const ProgramSet& programs = *in_.programs;
  if (group_of_members_.empty())
    for (std::uint32_t id = 0; id < programs.num_groups(); ++id) {
      const auto m = programs.group(id);
      std::vector<Rank> sorted(m.begin(), m.end());
      std::sort(sorted.begin(), sorted.end());
      group_of_members_.emplace(std::move(sorted), id);
    }
  members_scratch_.clear();
  for (const Rank m : programs.group(group)) members_scratch_.push_back(map_.apply(e, m));
  std::sort(members_scratch_.begin(), members_scratch_.end());
  const auto it = group_of_members_.find(members_scratch_);
  return it == group_of_members_.end() ? kNone : it->second;
}

DeviceId NetReduce::root(std::uint32_t group) {
  const auto [it, fresh] = roots_.try_emplace(group, kNone);
  if (!fresh) return it->second;
  const Topology& topo = *in_.topology;
  const auto members = in_.programs->group(group);
  const DeviceId first = in_.placement[members.front()];
  DeviceId top = first;
  int best = 0;
  const auto& paths = paths_.get(first, in_.placement[members.back()], group);
  for (const DirLinkId hop : paths.front().hops) {
    const DeviceId d = topo.target(hop);
    if (root_score(topo.device(d)) > best) best = root_score(topo.device(d)), top = d;
  }
  it->second = top;
  return top;
}

NetReduce::RoundState& NetReduce::round_state(std::uint32_t group, std::uint32_t round) {
  if (groups_.empty()) groups_.resize(in_.programs->num_groups());
  GroupRounds& rounds = groups_[group];
  if (round >= rounds.end) {
    const std::size_t span = round + 1 - rounds.first;
    if (span > rounds.ring.size()) {
      std::vector<std::uint32_t> grown(std::bit_ceil(std::max<std::size_t>(4, span)), kNone);
      for (std::uint32_t k = rounds.first; k < rounds.end; ++k)
        grown[k % grown.size()] = rounds.ring[k % rounds.ring.size()];
      rounds.ring = std::move(grown);
    }
    for (std::uint32_t k = rounds.end; k <= round; ++k) {
      const std::uint32_t id = take_slot(states_, free_states_);
      RoundState& fresh = states_[id];
      fresh.arrived.clear();
      fresh.down_arrived.clear();
      fresh.up_pending = fresh.members_left = 0;
      rounds.ring[k % rounds.ring.size()] = id;
      ++rounds_open_;
    }
    rounds.end = round + 1;
  }
  return states_[rounds.ring[round % rounds.ring.size()]];
}

void NetReduce::finish_round(std::uint32_t group, std::uint32_t round) {
  GroupRounds& rounds = groups_[group];
  std::uint32_t& id = rounds.ring[round % rounds.ring.size()];
  free_states_.push_back(id);
  id = kNone;
  --rounds_open_;
  while (rounds.first < rounds.end && rounds.ring[rounds.first % rounds.ring.size()] == kNone)
    ++rounds.first;
}

// A member's op finishes when its result has come down and every contribution of the round has
// gone up (the reduction cannot finish before its last input arrives).
void NetReduce::member_done(std::uint32_t group, std::uint32_t round, std::uint32_t member) {
  RoundState& g = round_state(group, round);
  // The members done now, at the end of a scratch list that finishing them may append to.
  const std::size_t first = done_scratch_.size();
  if (member != kNone) {
    g.down_arrived[member] = true;
    if (g.up_pending == 0) done_scratch_.push_back(g.arrived[member]);
  } else if (--g.up_pending == 0) {
    for (std::uint32_t m = 0; m < g.arrived.size(); ++m)
      if (g.down_arrived[m]) done_scratch_.push_back(g.arrived[m]);
  }
  g.members_left -= static_cast<std::uint32_t>(done_scratch_.size() - first);
  if (g.members_left == 0) finish_round(group, round);
  for (std::size_t k = first; k < done_scratch_.size(); ++k) {
    const PostedOp p = done_scratch_[k];
    ranks_.finish_op(p.rank, p.op);
  }
  done_scratch_.resize(first);
}

}  // namespace lockstep::flow_detail
