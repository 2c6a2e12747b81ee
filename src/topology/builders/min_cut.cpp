#include "min_cut.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

namespace lockstep::builders {
namespace {

// Residual network: each full-duplex link gives two arcs, each the other's reverse, both with the
// link's per-direction bandwidth (a flow one way frees capacity the other way, as in any
// undirected max-flow). Extra arcs join a super source and a super sink to the terminals.
class Residual {
 public:
  explicit Residual(std::size_t nodes) : first_(nodes, kNone), level_(nodes), next_arc_(nodes) {}

  void add_pair(std::uint32_t a, std::uint32_t b, double cap_ab, double cap_ba) {
    add_arc(a, b, cap_ab);
    add_arc(b, a, cap_ba);
  }

  double run(std::uint32_t s, std::uint32_t t, double epsilon) {
    epsilon_ = epsilon;
    double total = 0;
    while (bfs(s, t)) total += blocking_flow(s, t);
    return total;
  }

 private:
  struct Arc {
    std::uint32_t to;
    std::uint32_t next;  // next arc leaving the same node
    double residual;
  };

  void add_arc(std::uint32_t from, std::uint32_t to, double cap) {
    arcs_.push_back(Arc{to, first_[from], cap});
    first_[from] = static_cast<std::uint32_t>(arcs_.size() - 1);
  }

  bool bfs(std::uint32_t s, std::uint32_t t) {
    std::fill(level_.begin(), level_.end(), -1);
    std::vector<std::uint32_t> queue{s};
    level_[s] = 0;
    for (std::size_t head = 0; head < queue.size(); ++head) {
      const std::uint32_t u = queue[head];
      for (std::uint32_t a = first_[u]; a != kNone; a = arcs_[a].next) {
        if (arcs_[a].residual > epsilon_ && level_[arcs_[a].to] < 0) {
          level_[arcs_[a].to] = level_[u] + 1;
          queue.push_back(arcs_[a].to);
        }
      }
    }
    return level_[t] >= 0;
  }

  // Repeatedly walks s -> t along level-increasing arcs with spare capacity, remembering the
  // path on an explicit stack; dead ends are pruned by dropping their level.
  double blocking_flow(std::uint32_t s, std::uint32_t t) {
    next_arc_ = first_;
    double pushed = 0;
    std::vector<std::uint32_t> path;  // arc ids from s
    std::uint32_t u = s;
    while (true) {
      if (u == t) {
        double bottleneck = std::numeric_limits<double>::infinity();
        for (auto a : path) bottleneck = std::min(bottleneck, arcs_[a].residual);
        for (auto a : path) {
          arcs_[a].residual -= bottleneck;
          arcs_[a ^ 1].residual += bottleneck;
        }
        pushed += bottleneck;
        // Back up to the tail of the first saturated arc.
        std::size_t keep = 0;
        while (keep < path.size() && arcs_[path[keep]].residual > epsilon_) ++keep;
        path.resize(keep);
        u = path.empty() ? s : arcs_[path.back()].to;
        continue;
      }
      std::uint32_t& a = next_arc_[u];
      while (a != kNone &&
             !(arcs_[a].residual > epsilon_ && level_[arcs_[a].to] == level_[u] + 1)) {
        a = arcs_[a].next;
      }
      if (a != kNone) {
        path.push_back(a);
        u = arcs_[a].to;
        continue;
      }
      if (u == s) break;
      level_[u] = -1;  // dead end for this phase
      path.pop_back();
      u = path.empty() ? s : arcs_[path.back()].to;
      next_arc_[u] = arcs_[next_arc_[u]].next;
    }
    return pushed;
  }

  std::vector<Arc> arcs_;
  std::vector<std::uint32_t> first_;
  std::vector<int> level_;
  std::vector<std::uint32_t> next_arc_;
  double epsilon_ = 0;
};

}  // namespace

Bandwidth max_flow(const Topology& topo, std::span<const DeviceId> sources,
                   std::span<const DeviceId> sinks) {
  const auto n = static_cast<std::uint32_t>(topo.num_devices());
  const std::uint32_t s = n, t = n + 1;
  Residual net(n + 2);
  double total_capacity = 0;
  for (const Link& l : topo.links()) {
    net.add_pair(l.a, l.b, l.bandwidth.bytes_per_second(), l.bandwidth.bytes_per_second());
    total_capacity += l.bandwidth.bytes_per_second();
  }
  // Terminal arcs never limit the flow: together they exceed every link.
  const double unlimited = 2 * total_capacity + 1;
  for (DeviceId d : sources) net.add_pair(s, d, unlimited, 0);
  for (DeviceId d : sinks) net.add_pair(d, t, unlimited, 0);
  // Ignore residues below a billionth of the total, left by floating-point rounding.
  return Bandwidth::bytes_per_second(net.run(s, t, total_capacity * 1e-12));
}

Bandwidth rank_halves_cut(const Topology& topo) {
  const auto gpus = topo.gpus();
  if (gpus.size() < 2) return Bandwidth{};
  const std::size_t half = gpus.size() / 2;
  return max_flow(topo, gpus.subspan(0, half), gpus.subspan(half));
}

}  // namespace lockstep::builders
