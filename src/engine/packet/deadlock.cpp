// Deadlock watchdog. A lossless fabric (PFC or credits) deadlocks when buffers wait on each other
// in a cycle: link L cannot send because the device at its far end is full of packets that wait
// for link M, which cannot send because ... back to L. Every watchdog period we build that
// wait-for graph over links that have been blocked for a whole period and look for a cycle. If
// the whole network stops moving, the run ends there with the blocked links reported, so a
// deadlock is never a hang.
#include <fmt/format.h>

#include <algorithm>

#include "simulator.hpp"

namespace lockstep {

std::string DeadlockReport::describe(const Topology& topo) const {
  std::string msg =
      fmt::format("fabric deadlock at {}: cyclic buffer dependency over links", to_string(at));
  for (std::size_t i = 0; i < links.size() && i < 8; ++i)
    msg += fmt::format(" {}->{}", topo.source(links[i]), topo.target(links[i]));
  if (links.size() > 8) msg += fmt::format(" (+{} more)", links.size() - 8);
  msg += fmt::format("; {} stuck transfers", flows.size());
  for (std::size_t i = 0; i < flows.size() && i < 4; ++i)
    msg += fmt::format(" {}->{}", flows[i].src, flows[i].dst);
  return msg;
}

namespace packet {

void Simulator::on_watchdog() {
  watchdog_armed_ = false;
  const bool stalled = progress_ == progress_at_watchdog_ && in_network_ > 0;
  progress_at_watchdog_ = progress_;
  if ((congestion_seen_ || stalled) && find_deadlock(stalled)) {
    stopped_ = true;
    return;
  }
  if (in_network_ > 0) {
    watchdog_armed_ = true;
    events_.push(later(now_, watchdog_), EventKind::Watchdog, 0);
  }
}

std::int64_t Simulator::credits_due(std::size_t li) const {
  std::int64_t c = lane_[li].credits;
  lane_[li].returns.for_each([&](std::int64_t at, std::uint32_t wire) {
    if (at > now_) return false;
    c += wire;
    return true;
  });
  return c;
}

bool Simulator::find_deadlock(bool force) {
  const std::int64_t period = watchdog_;
  const std::size_t n = links_.size();
  // A link is blocked when it holds data it may not send (paused lane or no credits) and has not
  // sent anything for a whole watchdog period.
  std::vector<std::uint8_t> blocked(n, 0);
  std::size_t count = 0;
  for (std::uint32_t l = 0; l < n; ++l) {
    const LinkState& s = links_[l];
    if (s.busy || now_ - s.last_tx < period) continue;
    for (std::uint32_t lane = 0; lane < lanes_; ++lane) {
      const std::uint32_t head = fifos_[qidx(l, lane + 1)].head;
      const bool paused = s.paused & (1u << lane);
      const bool starved = s.control == LinkControl::Credit &&
                           credits_due(lidx(l, static_cast<std::uint8_t>(lane))) <
                               credit_blocks(l, packets_[head == kNil ? 0 : head].wire);
      if (head != kNil && (paused || starved)) {
        blocked[l] = 1;
        ++count;
        break;
      }
    }
  }
  if (count == 0 && !force) return false;
  // Edges L -> M: a packet that arrived over blocked L waits in the queue of blocked M.
  std::vector<std::pair<std::uint32_t, std::uint32_t>> edges;
  for (std::uint32_t m = 0; m < n; ++m) {
    if (!blocked[m]) continue;
    for (std::uint32_t q = 1; q < queues_; ++q) {
      for (std::uint32_t p = fifos_[qidx(m, q)].head; p != kNil; p = packets_[p].next) {
        const Packet& pk = packets_[p];
        if (pk.hop == 0) continue;
        const std::uint32_t l = arena_[pk.at - 1];
        if (blocked[l]) edges.emplace_back(l, m);
      }
    }
  }
  std::sort(edges.begin(), edges.end());
  edges.erase(std::unique(edges.begin(), edges.end()), edges.end());
  // Iterative DFS for a cycle (white 0 / grey 1 / black 2), remembering the grey path.
  std::vector<std::uint8_t> colour(n, 0);
  std::vector<DirLinkId> cycle;
  auto first_edge = [&](std::uint32_t l) {
    return static_cast<std::size_t>(
        std::lower_bound(edges.begin(), edges.end(), std::make_pair(l, 0u)) - edges.begin());
  };
  std::vector<std::pair<std::uint32_t, std::size_t>> stack;
  for (std::uint32_t root = 0; root < n && cycle.empty(); ++root) {
    if (!blocked[root] || colour[root]) continue;
    stack.assign(1, {root, first_edge(root)});
    colour[root] = 1;
    while (!stack.empty() && cycle.empty()) {
      auto& [l, e] = stack.back();
      if (e < edges.size() && edges[e].first == l) {
        const std::uint32_t m = edges[e++].second;
        if (colour[m] == 1) {
          auto it =
              std::find_if(stack.begin(), stack.end(), [&](const auto& f) { return f.first == m; });
          for (; it != stack.end(); ++it) cycle.push_back(it->first);
        } else if (colour[m] == 0) {
          colour[m] = 1;
          stack.emplace_back(m, first_edge(m));
        }
      } else {
        colour[l] = 2;
        stack.pop_back();
      }
    }
  }
  if (cycle.empty() && !force) return false;
  DeadlockReport& r = stats_.deadlock;
  r.detected = true;
  r.at = Time::ps(now_);
  if (cycle.empty()) {
    for (std::uint32_t l = 0; l < n; ++l)
      if (blocked[l]) cycle.push_back(l);
  }
  r.links = cycle;
  std::vector<std::uint32_t> flows;
  for (DirLinkId m : cycle) {
    for (std::uint32_t q = 1; q < queues_; ++q)
      for (std::uint32_t p = fifos_[qidx(m, q)].head; p != kNil; p = packets_[p].next)
        flows.push_back(packets_[p].flow);
  }
  std::sort(flows.begin(), flows.end());
  flows.erase(std::unique(flows.begin(), flows.end()), flows.end());
  for (std::uint32_t f : flows) r.flows.push_back({flows_[f].src, flows_[f].dst, flows_[f].bytes});
  return true;
}

}  // namespace packet
}  // namespace lockstep
