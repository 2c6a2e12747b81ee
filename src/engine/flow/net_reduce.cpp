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
  if (map_.classes() < map_.ranks() && !group_is_class(r, group)) {
    record(asymmetry_, Asymmetry::Group);
    return kNotAClass;
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
  // A simulated rank stands for map_.members() members of the group (all of it when aggregated:
  // group_is_class).
  if (g.arrived.size() * map_.members() < members.size()) return;
  const DeviceId top = root(op.peer);
  g.up_pending = static_cast<std::uint32_t>(g.arrived.size());
  g.down_arrived.assign(g.arrived.size(), false);
  g.members_left = static_cast<std::uint32_t>(g.arrived.size());
  for (std::uint32_t m = 0; m < g.arrived.size(); ++m) {
    const PostedOp p = g.arrived[m];
    const std::uint32_t up = leg(TransferKind::NetUp, p, top, op.peer, round, m);
    if (up == Transfers::kNoTransfer) return;
    const Time first_byte_at_root = routes_[transfers_.route(up)].shares.front().latency;
    transfers_.begin(up);
    // The switch reduces and multicasts as data streams in (SHARP and NVLS are cut-through),
    // so the result starts down once the first bytes have reached the root.
    const std::uint32_t down = leg(TransferKind::NetDown, p, top, op.peer, round, m);
    if (down == Transfers::kNoTransfer) return;
    events_.push(events_.now() + first_byte_at_root, EventKind::TransferStart, down);
  }
}

std::uint32_t NetReduce::leg(TransferKind kind, const PostedOp& member, DeviceId top,
                             std::uint32_t group, std::uint32_t round, std::uint32_t index) {
  const bool up = kind == TransferKind::NetUp;
  const std::uint32_t route = routes_.class_device_route(
      member.rank, top, up ? RouteTable::kToDevice : RouteTable::kFromDevice, group);
  if (route == RouteTable::kNoRoute) {
    record(asymmetry_, Asymmetry::Paths);
    return Transfers::kNoTransfer;
  }
  const IssuedOp& op = ranks_.op(member.rank, member.op);
  return transfers_.net_leg(kind, member, group, round, index, up ? op.src_bytes : op.dst_bytes(),
                            route);
}

bool NetReduce::group_is_class(Rank cls, std::uint32_t group) {
  const ProgramSet& programs = *in_.programs;
  if (group >= programs.num_groups()) return true;  // post reports it
  // Per group, the class it is (kNone: none), worked out once: every NetReduce op asks.
  if (group_class_.empty()) group_class_.assign(programs.num_groups(), kUnknownClass);
  Rank& known = group_class_[group];
  if (known == kUnknownClass) {
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
    known = whole ? first : kNone;
  }
  return known == cls;
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
