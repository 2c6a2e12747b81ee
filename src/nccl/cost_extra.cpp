// Costs of collectives NCCL does not run itself, priced the same way as NCCL's own (NCCL's step
// latencies, NCCL's view of each link's speed, the bytes the program really moves per link):
// hierarchical all-reduce, the torus's dimension-ordered rings and a skewed alltoallv
// (docs/nccl-model.md "Algorithms NCCL does not have"); and what NCCL's tables leave out of
// in-network reduction: the depth of SHARP's aggregation tree.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "cost.hpp"

namespace lockstep {
namespace {

using nccl::Proto;
using A = Algorithm;

double payload_efficiency(Proto p) {
  return p == Proto::LL ? 0.5 : p == Proto::LL128 ? nccl::kLL128Efficiency : 1.0;
}

// The torus all-reduce's 2D colours of S / 2D (collective/torus_all_reduce.cpp) as link time
// (bytes at one link's speed). Colour (i, +-) runs the dimensions i, i + 1, ..., i - 1, then back;
// a phase on a dimension of size m moves (m-1)/m of the colour's current range over each
// directed link it uses, and the range shrinks by m after each reduce-scatter phase. With equal
// sizes every directed link carries one colour at a time, and the time is the links' load. With
// unequal sizes the colours' phases drift apart and meet on a dimension, sharing its links
// equally (as the flow engine's max-min sharing of symmetric flows does): follow them phase by
// phase. A dimension of size 2 has one link, which the colours of both directions share.
double torus_colours_time(const std::vector<double>& m, double S) {
  const std::size_t D = m.size();
  struct Colour {
    std::size_t phase = 0;       // 0 .. 2D-1: reduce-scatter phases, then all-gather back
    double left = 0;             // link time left in the phase (at a link's full speed)
    std::vector<double> ranges;  // range at each reduce-scatter phase
  };
  std::vector<Colour> colours(D);  // one per order: its two directions move alike
  const auto dim_of = [&](std::size_t i, std::size_t phase) {
    const std::size_t p = phase < D ? phase : 2 * D - 1 - phase;
    return (i + p) % D;
  };
  const auto work = [&](std::size_t i, std::size_t phase) {
    const std::size_t p = phase < D ? phase : 2 * D - 1 - phase, k = (i + p) % D;
    return (m[k] - 1) / m[k] * colours[i].ranges[p];
  };
  for (std::size_t i = 0; i < D; ++i) {
    double range = S / (2.0 * D);
    for (std::size_t p = 0; p < D; ++p) {
      colours[i].ranges.push_back(range);
      range /= m[(i + p) % D];
    }
    colours[i].left = work(i, 0);
  }
  double t = 0;
  for (std::size_t active = D; active > 0;) {
    std::vector<double> sharing(D, 0.0);  // colours on one directed link of each dimension
    for (std::size_t i = 0; i < D; ++i)
      if (colours[i].phase < 2 * D) sharing[dim_of(i, colours[i].phase)] += 1;
    for (std::size_t k = 0; k < D; ++k)
      if (m[k] == 2) sharing[k] *= 2;
    double dt = std::numeric_limits<double>::infinity();
    for (std::size_t i = 0; i < D; ++i)
      if (colours[i].phase < 2 * D)
        dt = std::min(dt, colours[i].left * sharing[dim_of(i, colours[i].phase)]);
    t += dt;
    for (std::size_t i = 0; i < D; ++i) {
      Colour& c = colours[i];
      if (c.phase >= 2 * D) continue;
      c.left -= dt / sharing[dim_of(i, c.phase)];
      // Move on through finished phases (empty ones too).
      while (c.phase < 2 * D && c.left <= 1e-12 * S) {
        if (++c.phase < 2 * D) c.left = work(i, c.phase);
        if (c.phase == 2 * D) --active;
      }
    }
  }
  return t;
}

}  // namespace

double sharp_depth_us(const NcclCluster& c) {
  // NCCL's CollNet / NVLS network step (hwLat) does not depend on the fabric: take it as the
  // cost of a tree whose root is the rail's leaf, and add each level above it (up, aggregate,
  // down): a 2-tier fabric's tree has one more level, a 3-tier fabric's two.
  return (std::max<std::uint32_t>(c.sharp_levels, 1) - 1) * c.sharp_level_us;
}

Cost hierarchical_cost(const NcclCluster& c, double S) {
  // Three phases one after the other on every channel's slice (collective/hierarchical.cpp): a
  // ring reduce-scatter over the node's g GPUs ((g-1)/g S per GPU over NVLink), an all-reduce
  // ring per rail over the N nodes (2 (N-1)/N x S/g per GPU; the node's g GPUs at once put
  // 2 (N-1)/N S on its NICs), a ring all-gather in the node ((g-1)/g S). The phases do not
  // overlap, so their times add; so do their steps' latencies.
  const double g = c.gpus_per_node, N = c.nodes, n = c.ranks();
  Cost cost;
  cost.latency_us =
      nccl::base_latency_us(A::Hierarchical, Proto::Simple) +
      2 * (g - 1) * nccl::hw_latency_us(c.intra_path, A::Hierarchical, Proto::Simple) +
      2 * (N - 1) * network_step_us(c, A::Hierarchical, Proto::Simple);
  double us = 0;
  if (g > 1) us += 2 * (g - 1) / g * S / (c.intra_GBps * 1e3);
  if (N > 1) us += 2 * (N - 1) / N * S / (c.node_nics_GBps() * 1e3);
  cost.transfer_us = us;
  cost.bus_GBps = us > 0 ? 2 * (n - 1) / n * S / (us * 1e3) : c.intra_GBps;
  cost.step_us = nccl::hw_latency_us(c.intra_path, A::Hierarchical, Proto::Simple);
  return cost;
}

Cost torus_ring_cost(const NcclCluster& c, CollectiveOp op, double S) {
  // Every ring hop is one direct link, at the speed NCCL's search would give a network link of
  // that rate (48 GB/s for 400 Gb/s). A dimension of size 2 has one link, which the two
  // directions of its ring share (twice the bytes on it); size 1 has no ring. The all-reduce's
  // bytes term is torus_colours_time; all-gather and reduce-scatter run one phase at a time.
  std::vector<double> m;
  for (std::uint32_t d : c.torus_dims)
    if (d >= 2) m.push_back(d);
  const std::size_t D = m.size();
  const auto share = [&](std::size_t k) { return m[k] == 2 ? 2.0 : 1.0; };
  const bool ar = op == CollectiveOp::AllReduce;
  double steps = 0;
  for (double size : m) steps += size - 1;
  if (ar) steps *= 2;
  double busiest = 0;  // bytes through the busiest directed link, in link time order
  if (ar) {
    busiest = torus_colours_time(m, S);
  } else {
    // One dimension order, both directions at once (half of every part each way), phases one
    // after another: reduce-scatter from the outermost dimension (range S, then S / m, ...),
    // all-gather from the innermost (the mirror image: the same bytes per phase, reversed).
    double range = S;
    for (std::size_t p = D; p-- > 0;) {
      busiest += (m[p] - 1) / m[p] * range / 2 * share(p);
      range /= m[p];
    }
  }
  Cost cost;
  cost.latency_us = nccl::base_latency_us(A::TorusRing, Proto::Simple) +
                    steps * network_step_us(c, A::TorusRing, Proto::Simple);
  const double link_GBps = nccl::net_search_speed(c.generation, c.nic_path_GBps());
  cost.transfer_us = busiest / (link_GBps * 1e3);
  const double volume = busbw_factor(op, c.ranks()) * S;
  cost.bus_GBps = cost.transfer_us > 0 ? volume / (cost.transfer_us * 1e3) : link_GBps;
  cost.step_us = nccl::hw_latency_us(c.intra_path, A::TorusRing, Proto::Simple);
  return cost;
}

Cost alltoallv_cost(const NcclCluster& c, double S, Proto p, double skew) {
  // Skew 0 is alltoall's matrix, priced as alltoall is.
  if (skew == 0) return direct_cost(c, CollectiveOp::AllToAll, S, p);
  // Every rank sends S, receiver j's share w_j = (j+1)^-skew / H (collective.hpp
  // skewed_alltoallv_row). The time is the most loaded sender's or receiver's: per GPU over
  // NVLink (its local peers' shares), per NIC (the remote shares of the GPUs using it; GPU l of
  // a node uses NIC l x nics / g, one NIC's speed each). Uniform shares give direct_cost's
  // alltoall exactly.
  const std::uint64_t n = c.ranks(), g = c.gpus_per_node, N = c.nodes;
  const std::uint64_t nics =
      std::max<std::uint64_t>(1, std::min<std::uint64_t>(c.nics_per_node, g));
  std::vector<double> w(n);
  double total = 0;
  for (std::uint64_t j = 0; j < n; ++j) total += w[j] = std::pow(double(j + 1), -skew);
  for (double& x : w) x /= total;
  const double eff = payload_efficiency(p);
  double t = 0;  // seconds x 1e9 (bytes / GB/s)
  std::vector<double> nic_send(nics), nic_recv(nics);
  for (std::uint64_t k = 0; k < N; ++k) {
    double node_share = 0;
    for (std::uint64_t l = 0; l < g; ++l) node_share += w[k * g + l];
    std::fill(nic_send.begin(), nic_send.end(), 0.0);
    std::fill(nic_recv.begin(), nic_recv.end(), 0.0);
    for (std::uint64_t l = 0; l < g; ++l) {
      const double wj = w[k * g + l];
      if (g > 1) {
        // Out: its shares for the node's other GPUs; in: g - 1 local senders' shares.
        const double local = std::max(S * (node_share - wj), (g - 1) * S * wj);
        t = std::max(t, local / (c.intra_GBps * eff));
      }
      if (N > 1) {
        nic_send[l * nics / g] += S * (1 - node_share);
        nic_recv[l * nics / g] += (n - g) * S * wj;
      }
    }
    if (N > 1) {
      const double nic_GBps = c.node_nics_GBps() / nics * eff;
      for (std::uint64_t v = 0; v < nics; ++v)
        t = std::max(t, std::max(nic_send[v], nic_recv[v]) / nic_GBps);
    }
  }
  Cost cost;
  const bool remote = N > 1;
  cost.latency_us =
      nccl::base_latency_us(A::Direct, p) +
      (remote ? network_step_us(c, A::Direct, p) : nccl::hw_latency_us(c.intra_path, A::Direct, p));
  cost.transfer_us = t / 1e3;
  cost.bus_GBps = t > 0 ? S / t : 0;
  cost.step_us = nccl::hw_latency_us(c.intra_path, A::Direct, p);
  return cost;
}

}  // namespace lockstep
