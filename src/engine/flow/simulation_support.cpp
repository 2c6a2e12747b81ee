// The less travelled parts of a flow-engine run: in-network reductions, deadlock reports and
// link utilisation series.
#include <fmt/format.h>

#include <algorithm>
#include <bit>

#include "lockstep/core/error.hpp"
#include "simulation.hpp"

namespace lockstep::flow_detail {

namespace {
// Which device of a path roots an in-network reduction: the highest switch on it.
int root_score(const Device& d) {
  if (d.kind == DeviceKind::Switch) return 2 + d.tier;
  if (d.kind == DeviceKind::ScaleUpSwitch) return 1;
  return 0;
}
}  // namespace

// NetReduce: when the last member of a round arrives, every member's contribution travels to
// the root switch (the highest switch on the path from the first to the last member), which
// reduces at line rate and streams the result back to each member as it goes (docs/flow-engine.md).
void Simulation::post_net_reduce(Rank r, OpIndex i, const IssuedOp& op) {
  if (op.peer >= programs_.num_groups()) {
    throw InputError("programs", fmt::format("rank {} op {} (net_reduce) names group {} of {}", r,
                                             i, op.peer, programs_.num_groups()));
  }
  const auto members = programs_.group(op.peer);
  if (std::find(members.begin(), members.end(), map_.real(r)) == members.end()) {
    throw InputError("programs",
                     fmt::format("rank {} op {} joins net_reduce group {} it is not a member of",
                                 map_.real(r), i, op.peer));
  }
  const std::uint32_t round = slot_of(r, i).net_round;
  NetReduceState& g = net_round(op.peer, round);
  g.arrived.push_back({r, i});
  // A simulated rank stands for map_.members() members of the group (all of it when aggregated:
  // group_is_class).
  if (g.arrived.size() * map_.members() < members.size()) return;
  const DeviceId root = net_root(op.peer);
  g.up_pending = static_cast<std::uint32_t>(g.arrived.size());
  g.down_arrived.assign(g.arrived.size(), false);
  g.members_left = static_cast<std::uint32_t>(g.arrived.size());
  for (std::uint32_t m = 0; m < g.arrived.size(); ++m) {
    const Pending p = g.arrived[m];
    const std::uint32_t up_route =
        routes_.class_device_route(p.rank, root, RouteTable::kToDevice, op.peer);
    if (up_route == RouteTable::kNoRoute) {
      asymmetry_ = Asymmetry::Paths;
      return;
    }
    const std::uint32_t up = net_transfer(TransferKind::NetUp, p, op.peer, round, m,
                                          slot(p.rank, p.op).src_bytes, up_route);
    const Time first_byte_at_root = routes_[up_route].shares.front().latency;
    begin_transfer(up);
    // The switch reduces and multicasts as data streams in (SHARP and NVLS are cut-through),
    // so the result starts down once the first bytes have reached the root.
    const std::uint32_t down_route =
        routes_.class_device_route(p.rank, root, RouteTable::kFromDevice, op.peer);
    if (down_route == RouteTable::kNoRoute) {
      asymmetry_ = Asymmetry::Paths;
      return;
    }
    const std::uint32_t down = net_transfer(TransferKind::NetDown, p, op.peer, round, m,
                                            slot(p.rank, p.op).dst_bytes(), down_route);
    push(now_ + first_byte_at_root, EventKind::TransferStart, down);
  }
}

bool Simulation::group_is_class(Rank cls, std::uint32_t group) {
  if (group >= programs_.num_groups()) return true;  // post_net_reduce reports it
  // Per group, the class it is (kNone: none), worked out once: every NetReduce op asks.
  if (group_class_.empty()) group_class_.assign(programs_.num_groups(), kUnknownClass);
  Rank& known = group_class_[group];
  if (known == kUnknownClass) {
    const auto members = programs_.group(group);
    const Rank first = !members.empty() && members[0] < ranks_ ? map_.where(members[0]).cls : kNone;
    const auto in_first = [&](Rank m) { return m < ranks_ && map_.where(m).cls == first; };
    bool whole =
        members.size() == map_.members() && std::all_of(members.begin(), members.end(), in_first);
    // A channel-split program's group is one channel's copy: the rotation orbit of one member
    // (same translation, every rotation), and each translation of it is the same GPUs' group
    // on another channel (ProgramSet::symmetry_channel_shift), which reduces at the same switch:
    // the class's op stands for all of those groups at once. Its routes to the switch carry the
    // representative group's flow label, so every member must reach the switch over exactly one
    // link (an NVSwitch next to each GPU), where no label can choose another path.
    if (!whole && programs_.symmetry_channel_shift() != 0 && members.size() == map_.turns() &&
        std::all_of(members.begin(), members.end(), in_first)) {
      const Rank tau = map_.where(members[0]).e.tau;
      const DeviceId root = net_root(group);
      whole = std::all_of(members.begin(), members.end(), [&](Rank m) {
        if (map_.where(m).e.tau != tau) return false;
        for (Rank k = 0; k < map_.members() / map_.turns(); ++k)
          if (in_.placement[map_.apply({k, 0}, m)] != in_.placement[m]) return false;
        const auto ports = topo_.ports(in_.placement[m]);
        return std::count_if(ports.begin(), ports.end(),
                             [&](const Port& p) { return p.peer == root; }) == 1;
      });
    }
    known = whole ? first : kNone;
  }
  return known == cls;
}

std::uint32_t Simulation::net_transfer(TransferKind kind, const Pending& member,
                                       std::uint32_t group, std::uint32_t round,
                                       std::uint32_t index, std::uint64_t bytes,
                                       std::uint32_t route) {
  const std::uint32_t t = new_transfer();
  Transfer& tr = transfers_[t];
  tr.kind = kind;
  tr.src = tr.dst = member.rank;
  tr.send_op = tr.recv_op = member.op;
  tr.group = group;
  tr.net_round = round;
  tr.member = index;
  tr.wire_bytes = static_cast<double>(bytes) / in_.options.transfer_efficiency;
  tr.route = route;
  return t;
}

DeviceId Simulation::net_root(std::uint32_t group) {
  const auto [it, fresh] = net_root_.try_emplace(group, kNone);
  if (!fresh) return it->second;
  const auto members = programs_.group(group);
  const DeviceId first = in_.placement[members.front()];
  DeviceId top = first;
  int best = 0;
  const auto& paths = paths_.get(first, in_.placement[members.back()], group);
  for (const DirLinkId hop : paths.front().hops) {
    const DeviceId d = topo_.target(hop);
    if (root_score(topo_.device(d)) > best) best = root_score(topo_.device(d)), top = d;
  }
  it->second = top;
  return top;
}

Simulation::NetReduceState& Simulation::net_round(std::uint32_t group, std::uint32_t round) {
  if (net_groups_.empty()) net_groups_.resize(programs_.num_groups());
  GroupRounds& rounds = net_groups_[group];
  if (round >= rounds.end) {
    const std::size_t span = round + 1 - rounds.first;
    if (span > rounds.ring.size()) {
      std::vector<std::uint32_t> grown(std::bit_ceil(std::max<std::size_t>(4, span)), kNone);
      for (std::uint32_t k = rounds.first; k < rounds.end; ++k)
        grown[k % grown.size()] = rounds.ring[k % rounds.ring.size()];
      rounds.ring = std::move(grown);
    }
    for (std::uint32_t k = rounds.end; k <= round; ++k) {
      const std::uint32_t id = take_slot(net_states_, free_net_states_);
      NetReduceState& fresh = net_states_[id];
      fresh.arrived.clear();
      fresh.down_arrived.clear();
      fresh.up_pending = fresh.members_left = 0;
      rounds.ring[k % rounds.ring.size()] = id;
      ++net_rounds_open_;
    }
    rounds.end = round + 1;
  }
  return net_states_[rounds.ring[round % rounds.ring.size()]];
}

void Simulation::finish_net_round(std::uint32_t group, std::uint32_t round) {
  GroupRounds& rounds = net_groups_[group];
  std::uint32_t& id = rounds.ring[round % rounds.ring.size()];
  free_net_states_.push_back(id);
  id = kNone;
  --net_rounds_open_;
  while (rounds.first < rounds.end && rounds.ring[rounds.first % rounds.ring.size()] == kNone)
    ++rounds.first;
}

// A member's op finishes when its result has come down and every contribution of the round has
// gone up (the reduction cannot finish before its last input arrives).
void Simulation::net_member_done(std::uint32_t group, std::uint32_t round, std::uint32_t member) {
  NetReduceState& g = net_round(group, round);
  // The members done now, at the end of a scratch list that finishing them may append to.
  const std::size_t first = net_done_scratch_.size();
  if (member != kNone) {
    g.down_arrived[member] = true;
    if (g.up_pending == 0) net_done_scratch_.push_back(g.arrived[member]);
  } else if (--g.up_pending == 0) {
    for (std::uint32_t m = 0; m < g.arrived.size(); ++m)
      if (g.down_arrived[m]) net_done_scratch_.push_back(g.arrived[m]);
  }
  g.members_left -= static_cast<std::uint32_t>(net_done_scratch_.size() - first);
  if (g.members_left == 0) finish_net_round(group, round);
  for (std::size_t k = first; k < net_done_scratch_.size(); ++k) {
    const Pending p = net_done_scratch_[k];
    finish_op(p.rank, p.op);
  }
  net_done_scratch_.resize(first);
}

void Simulation::report_deadlock() {
  Rank stuck = 0;
  for (Rank r = 0; r < classes_; ++r) stuck += rank_[r].done ? 0 : 1;
  for (Rank r = 0; r < classes_; ++r) {
    const RankState& rs = rank_[r];
    if (rs.done) continue;
    const IssuedOp& op = slot(r, rs.base);
    std::string what;
    switch (op.kind) {
      case OpKind::Send:
        what = fmt::format("send to rank {} on channel {}, never matched", op.peer, op.channel);
        break;
      case OpKind::Recv:
        what = fmt::format("recv from rank {} on channel {}, never matched", op.peer, op.channel);
        break;
      case OpKind::NetReduce:
        what = fmt::format("net_reduce in group {}, not every member joined", op.peer);
        break;
      default:
        what = "waiting for its dependencies";
    }
    throw InputError(
        "programs",
        fmt::format("deadlock: rank {} op {} ({}); {} simulated rank(s) unfinished (issue window "
                    "{} ops)",
                    map_.real(r), rs.base, what, stuck, window_size_));
  }
  throw InputError("programs", "deadlock");
}

// Utilisation series for the busiest links among those whose rate changes were logged (the
// representatives' links when classes are aggregated).
void Simulation::fill_link_series(RunResult& result) {
  std::vector<char> logged(topo_.num_directed_links(), 0);
  for (const RateChange& c : rate_log_) logged[c.link] = 1;
  std::vector<DirLinkId> links;
  for (DirLinkId l = 0; l < logged.size(); ++l)
    if (logged[l]) links.push_back(l);
  std::stable_sort(links.begin(), links.end(),
                   [&](DirLinkId a, DirLinkId b) { return link_bytes_[a] > link_bytes_[b]; });
  if (links.size() > config_.series_links) links.resize(config_.series_links);
  const Time period =
      in_.options.link_sample_period > Time::zero() ? in_.options.link_sample_period : Time::us(10);
  const std::int64_t bins =
      std::min<std::int64_t>(1'000'000, result.makespan.picoseconds() / period.picoseconds() + 1);
  std::vector<std::int32_t> slot_of(topo_.num_directed_links(), -1);
  result.link_series.resize(links.size());
  for (std::size_t k = 0; k < links.size(); ++k) {
    slot_of[links[k]] = static_cast<std::int32_t>(k);
    result.link_series[k].link = links[k];
    result.link_series[k].utilisation.assign(static_cast<std::size_t>(bins), 0.0f);
  }
  // The log is in time order; integrate each link's piecewise-constant rate into the bins.
  std::vector<double> rate(links.size(), 0.0);
  std::vector<Time> since(links.size(), Time::zero());
  auto integrate = [&](std::size_t k, Time until) {
    const double cap = topo_.link(Topology::link_of(links[k])).bandwidth.bytes_per_second();
    Time t = since[k];
    while (t < until && rate[k] > 0) {
      const std::int64_t b = t.picoseconds() / period.picoseconds();
      if (b >= bins) break;
      const Time bin_end = Time::ps((b + 1) * period.picoseconds());
      const Time end = std::min(bin_end, until);
      result.link_series[k].utilisation[static_cast<std::size_t>(b)] +=
          static_cast<float>(rate[k] * (end - t).seconds() / (cap * period.seconds()));
      t = end;
    }
    since[k] = until;
  };
  for (const RateChange& c : rate_log_) {
    const std::int32_t k = slot_of[c.link];
    if (k < 0) continue;
    integrate(static_cast<std::size_t>(k), c.at);
    rate[static_cast<std::size_t>(k)] += c.delta;
  }
}

}  // namespace lockstep::flow_detail
