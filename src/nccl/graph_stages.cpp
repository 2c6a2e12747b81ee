// The tree's stages with one chunk per lane (graph_model.hpp tree_stage_term,
// docs/analytical-engine.md "Stages"). Kept apart from graph_model.cpp's pricing: this walk
// routes the one-chunk programs' transfers stage by stage, where the phases there route the
// steady state's traffic.
#include <algorithm>
#include <cstdint>
#include <map>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "graph_model.hpp"
#include "lockstep/engine/analytical/analytical_engine.hpp"

namespace lockstep::nccl_detail {

// A tree moves a lane's chunks level by level. With one chunk per lane (a small message) a
// level's transfers run together and the next level waits for them, so a fabric link that several
// levels cross (a dragonfly's global link, docs/analytical-engine.md "Stages") carries each
// level's bytes in turn, where the pipeline's steady state overlaps them all. Each transfer of
// the one-chunk programs belongs to the stage of its depth (critical_path_ops with unit costs);
// in its stage, it needs its path's busiest link's load of that stage, of which the busiest of
// its own links (those touching its GPUs or a NIC, which an ideal fabric and NCCL's model load
// alike) is already NCCL's. The rest is its excess; the longest chain of excesses, per byte of S.
StageTerm tree_stage_term(const ProgramSet& programs, double nominal,
                          std::span<const DeviceId> devices, const Topology& topo,
                          const Router& router, const MediumEfficiency& efficiency) {
  ChainCosts unit;
  unit.transfer = [](Rank, Rank, std::uint16_t) { return Time::ps(1); };
  unit.net_reduce = [](std::uint32_t) { return Time::ps(1); };
  const auto at = critical_path_ops(programs, unit);
  struct Staged {
    Rank src, dst;
    std::uint16_t channel;
    std::uint64_t stage;
    std::size_t first, last;  // its hops
    OpIndex op;
  };
  std::vector<Staged> sends;
  std::vector<DirLinkId> hops;
  std::unordered_map<std::uint64_t, double> load;  // (stage, directed link) -> share of S
  std::vector<PathShare> paths;
  for (Rank r = 0; r < programs.num_ranks(); ++r) {
    for (OpIndex i = 0; i < programs.num_ops(r); ++i) {
      const Op op = programs.op(r, i);
      if (op.kind != OpKind::Send || devices[r] == devices[op.peer]) continue;
      Staged t{r, op.peer, op.channel, 0, hops.size(), 0, i};
      t.stage = static_cast<std::uint64_t>(at[r][i].end.picoseconds());
      router.route(FlowKey{devices[r], devices[op.peer], op.channel}, nullptr, paths);
      for (const PathShare& share : paths) {
        for (DirLinkId d : share.hops) {
          hops.push_back(d);
          load[t.stage << 32 | d] += static_cast<double>(op.bytes()) / nominal * share.fraction;
        }
      }
      t.last = hops.size();
      sends.push_back(t);
    }
  }
  const auto seconds = [&](DirLinkId d, double bytes) {
    const LinkId l = Topology::link_of(d);
    const double e = is_network_link(topo, l) ? efficiency.network : efficiency.scale_up;
    return bytes / (topo.link(l).bandwidth.bytes_per_second() * e);
  };
  // Whether a link is a transfer's own: it touches a NIC or a GPU (the transfer's src or dst;
  // any GPU when they are kNone).
  const auto own_link = [&](DirLinkId d, DeviceId src, DeviceId dst) {
    const Link& link = topo.link(Topology::link_of(d));
    const auto edge = [&](DeviceId x) {
      const DeviceKind kind = topo.device(x).kind;
      return kind == DeviceKind::Nic ||
             (kind == DeviceKind::Gpu && (src == kNone || x == src || x == dst));
    };
    return edge(link.a) || edge(link.b);
  };
  // Excess in picoseconds per GiB of S (Time's resolution), back to seconds per byte below.
  constexpr double kPerGiB = 1073741824.0;
  std::map<std::tuple<Rank, Rank, std::uint16_t>, Time> excess;
  for (const Staged& t : sends) {
    double slowest = 0, own = 0;
    for (std::size_t h = t.first; h < t.last; ++h) {
      const double s = seconds(hops[h], load.at(t.stage << 32 | hops[h]));
      slowest = std::max(slowest, s);
      if (own_link(hops[h], devices[t.src], devices[t.dst])) own = std::max(own, s);
    }
    if (slowest <= own) continue;
    Time& x = excess[{t.src, t.dst, t.channel}];
    x = std::max(x, Time::s((slowest - own) * kPerGiB));
  }
  if (excess.empty()) return {};
  ChainCosts costs;
  costs.transfer = [&](Rank src, Rank dst, std::uint16_t channel) {
    const auto it = excess.find({src, dst, channel});
    return it == excess.end() ? Time::zero() : it->second;
  };
  const auto walked = critical_path_ops(programs, costs);
  Time longest;
  for (const auto& rank : walked)
    for (const OpTiming& op : rank) longest = std::max(longest, op.end);
  // Per link beyond the transfers' own: when the walk first needs it (its earliest transfer's
  // start) and how long after its last transfer the walk goes on.
  struct Use {
    Time first = Time::infinite(), last;
  };
  std::unordered_map<DirLinkId, Use> use;
  for (const Staged& t : sends) {
    const auto it = excess.find({t.src, t.dst, t.channel});
    const Time cost = it == excess.end() ? Time::zero() : it->second;
    const OpTiming& at_t = walked[t.src][t.op];
    for (std::size_t h = t.first; h < t.last; ++h) {
      if (own_link(hops[h], kNone, kNone)) continue;
      Use& u = use[hops[h]];
      u.first = std::min(u.first, at_t.end - cost);
      u.last = std::max(u.last, at_t.end);
    }
  }
  StageTerm out;
  // In the steady state the links beyond the transfers' own already carry their whole load, all
  // stages overlapped: the part of the excess that load covers is no fill.
  std::unordered_map<DirLinkId, double> total;
  for (const auto& [key, bytes] : load) total[static_cast<DirLinkId>(key)] += bytes;
  double busiest = 0, busiest_own = 0;
  for (const auto& [d, bytes] : total) {
    const double steady = seconds(d, bytes);
    busiest = std::max(busiest, steady);
    if (own_link(d, kNone, kNone)) {
      busiest_own = std::max(busiest_own, steady);
    } else if (const auto u = use.find(d); u != use.end()) {
      const Time idle = u->second.first + (longest - u->second.last);
      out.links.emplace_back(steady, idle.seconds() / kPerGiB);
    }
  }
  out.one_chunk = std::max(0.0, longest.seconds() / kPerGiB - (busiest - busiest_own));
  return out;
}

}  // namespace lockstep::nccl_detail
