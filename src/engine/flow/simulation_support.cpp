// The less travelled parts of a flow-engine run: in-network reductions, deadlock reports and
// link utilisation series.
#include <fmt/format.h>

#include <algorithm>

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

// NetReduce: when the last member of the group arrives, every member's contribution travels to
// the root switch (the highest switch on the path from the first to the last member), the switch
// reduces at line rate, and the result travels back to each member; a member's op ends when its
// result arrives.
void Simulation::post_net_reduce(Rank r, OpIndex i, const Op& op) {
  if (op.peer >= programs_.num_groups()) {
    throw InputError("programs", fmt::format("rank {} op {} (net_reduce) names group {} of {}", r,
                                             i, op.peer, programs_.num_groups()));
  }
  const auto members = programs_.group(op.peer);
  if (std::find(members.begin(), members.end(), r) == members.end()) {
    throw InputError("programs",
                     fmt::format("rank {} op {} joins net_reduce group {} it is not a member of", r,
                                 i, op.peer));
  }
  NetReduceState& g = net_reduce_[op.peer];
  g.arrived.push_back({r, i});
  if (g.arrived.size() < members.size()) return;
  if (g.root == kNone) {
    const DeviceId first = in_.placement[members.front()];
    g.root = first;
    int best = 0;
    const auto& paths = paths_.get(first, in_.placement[members.back()], op.peer);
    for (const DirLinkId hop : paths.front().hops) {
      const DeviceId d = topo_.target(hop);
      if (root_score(topo_.device(d)) > best) best = root_score(topo_.device(d)), g.root = d;
    }
  }
  g.up_pending = static_cast<std::uint32_t>(g.arrived.size());
  for (const Pending& p : g.arrived) {
    const std::uint32_t t = new_transfer();
    Transfer& tr = transfers_[t];
    tr.kind = TransferKind::NetUp;
    tr.src = tr.dst = p.rank;
    tr.send_op = tr.recv_op = p.op;
    tr.group = op.peer;
    tr.wire_bytes =
        static_cast<double>(slot(p.rank, p.op).src.bytes) / in_.options.transfer_efficiency;
    tr.route = routes_.device_route(in_.placement[p.rank], g.root, op.peer);
    begin_transfer(t);
  }
}

void Simulation::net_up_done(std::uint32_t group) {
  NetReduceState& g = net_reduce_[group];
  const std::vector<Pending> members = std::move(g.arrived);
  g.arrived.clear();
  for (const Pending& p : members) {
    const std::uint32_t t = new_transfer();
    Transfer& tr = transfers_[t];
    tr.kind = TransferKind::NetDown;
    tr.src = tr.dst = p.rank;
    tr.send_op = tr.recv_op = p.op;
    tr.group = group;
    tr.wire_bytes =
        static_cast<double>(slot(p.rank, p.op).dst.bytes) / in_.options.transfer_efficiency;
    tr.route = routes_.device_route(g.root, in_.placement[p.rank], group);
    begin_transfer(t);
  }
}

void Simulation::report_deadlock() {
  Rank stuck = 0;
  for (Rank r = 0; r < classes_; ++r) stuck += rank_[r].done ? 0 : 1;
  for (Rank r = 0; r < classes_; ++r) {
    const RankState& rs = rank_[r];
    if (rs.done) continue;
    const Op& op = slot(r, rs.base);
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
                    r, rs.base, what, stuck, window_size_));
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
