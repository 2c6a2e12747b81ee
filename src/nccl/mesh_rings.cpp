// NCCL's intra-node ring search (graph/search.cc ncclTopoCompute) on a node whose GPUs are wired
// pair by pair (DGX-1's hybrid cube mesh) or bridged in a pair: the speeds it tries, the path
// types it allows at each, the rings that fit, and the duplication that follows
// (docs/nccl-model.md "Path types", "Channels on a partial NVLink mesh").
#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "lockstep/nccl/cluster.hpp"
#include "lockstep/topology/catalog.hpp"

namespace lockstep {
namespace {

// The path types a ring's hop may take, in the order NCCL's search raises typeIntra: NVLink alone
// (PATH_NVL), NVLink through one GPU (PATH_NVB), then the host's PCIe tree (PIX .. SYS).
enum class HopLevel {
  NvLink = MeshSearch::kNvLink,
  Relay = MeshSearch::kRelay,
  Host = MeshSearch::kHost
};

// The node at one ring speed: for each ordered GPU pair the links one ring's hop charges (empty:
// no path at the allowed level), and how many rings each link carries at that speed. NCCL merges
// a pair's NVLinks into one link of their summed bandwidth (topo.cc) and charges a channel's
// speed to every link of its path (ncclTopoFollowPath), so a link of `bw` carries floor(bw /
// speed) rings per direction.
class HopGraph {
 public:
  HopGraph(const MeshSearchInput& in, HopLevel level, double speed)
      : g_(in.gpus), hops_(g_, std::vector<std::vector<std::uint32_t>>(g_)) {
    const auto rings_on = [&](double bw) { return static_cast<std::uint32_t>(bw / speed + 1e-9); };
    // Resources: NVLink a -> b; each GPU's PCIe link up and down; each PCIe switch's uplink up and
    // down; the CPU link each way.
    const std::uint32_t switches =
        in.gpus_per_switch > 0 ? (g_ + in.gpus_per_switch - 1) / in.gpus_per_switch : 0;
    rings_per_link.assign(g_ * g_ + 2 * g_ + 2 * switches + 2, 0);
    for (std::uint32_t a = 0; a < g_; ++a)
      for (std::uint32_t b = 0; b < g_; ++b)
        rings_per_link[a * g_ + b] = rings_on(in.links[a][b] * in.link_GBps);
    const std::uint32_t up = g_ * g_, down = up + g_, sw_up = down + g_, sw_down = sw_up + switches,
                        cpu = sw_down + switches;
    for (std::uint32_t k = up; k < cpu; ++k) rings_per_link[k] = rings_on(in.pcie_GBps);
    rings_per_link[cpu] = rings_per_link[cpu + 1] = rings_on(in.cpu_link_GBps);
    for (std::uint32_t a = 0; a < g_; ++a)
      for (std::uint32_t b = 0; b < g_; ++b) {
        if (a == b) continue;
        std::vector<std::uint32_t>& hop = hops_[a][b];
        if (in.links[a][b] > 0) {
          hop = {a * g_ + b};
          continue;
        }
        // paths.cc: the widest of the shortest paths; a relay (2 hops) is shorter than any PCIe
        // path between GPUs, so with NVB on it wins wherever a GPU is linked to both.
        const std::uint32_t relay = level >= HopLevel::Relay && in.nvb ? relay_of(in, a, b) : g_;
        if (relay < g_) {
          hop = {a * g_ + relay, relay * g_ + b};
        } else if (level >= HopLevel::Host && switches > 0) {
          const std::uint32_t sa = a / in.gpus_per_switch, sb = b / in.gpus_per_switch;
          const std::uint32_t ca = sa / in.switches_per_cpu, cb = sb / in.switches_per_cpu;
          hop = {up + a, down + b};
          if (sa != sb) hop.insert(hop.end(), {sw_up + sa, sw_down + sb});
          if (ca != cb) hop.push_back(cpu + ca);
        }
      }
  }
  std::uint32_t gpus() const { return g_; }
  const std::vector<std::uint32_t>& hop(std::uint32_t a, std::uint32_t b) const {
    return hops_[a][b];
  }
  // The GPU relaying a -> b (linked to both, its narrower link the widest, lowest index among
  // equals as NCCL's link order has it), or gpus() when none.
  static std::uint32_t relay_of(const MeshSearchInput& in, std::uint32_t a, std::uint32_t b) {
    std::uint32_t best = in.gpus, widest = 0;
    for (std::uint32_t k = 0; k < in.gpus; ++k) {
      const std::uint32_t narrow = std::min(in.links[a][k], in.links[k][b]);
      if (k != a && k != b && narrow > widest) {
        widest = narrow;
        best = k;
      }
    }
    return best;
  }
  std::vector<std::uint32_t> rings_per_link;  // rings each link carries at the speed

 private:
  std::uint32_t g_;
  std::vector<std::vector<std::vector<std::uint32_t>>> hops_;
};

// The most rings (directed Hamiltonian cycles from GPU 0, a cycle may repeat) the links carry at
// one speed, by trying every combination; NCCL's backtracking search (ncclTopoSearchRec) looks
// for the same, up to MAXCHANNELS / 2 rings.
class RingPacking {
 public:
  explicit RingPacking(HopGraph graph) : graph_(std::move(graph)), g_(graph_.gpus()) {
    std::vector<std::uint32_t> path{0};
    std::vector<bool> used(g_, false);
    used[0] = true;
    if (g_ >= 2) find_rings(path, used);
  }
  std::vector<std::vector<std::uint32_t>> most() {
    pack(0);
    std::vector<std::vector<std::uint32_t>> out;
    for (std::size_t i : best_) out.push_back(rings_[i]);
    return out;
  }

 private:
  void find_rings(std::vector<std::uint32_t>& path, std::vector<bool>& used) {
    const std::uint32_t last = path.back();
    if (path.size() == g_) {
      if (!graph_.hop(last, 0).empty()) rings_.push_back(path);
      return;
    }
    for (std::uint32_t next = 1; next < g_; ++next) {
      if (used[next] || graph_.hop(last, next).empty()) continue;
      used[next] = true;
      path.push_back(next);
      find_rings(path, used);
      path.pop_back();
      used[next] = false;
    }
  }
  // Charges ring r to its hops' links (+1) or gives them back (-1); false, with nothing taken,
  // if a link would exceed its rings.
  bool take(const std::vector<std::uint32_t>& r, int sign) {
    std::vector<std::uint32_t> taken;
    for (std::size_t k = 0; k < r.size(); ++k)
      for (std::uint32_t res : graph_.hop(r[k], r[(k + 1) % r.size()])) {
        std::uint32_t& c = graph_.rings_per_link[res];
        if (sign > 0 && c == 0) {
          for (std::uint32_t t : taken) ++graph_.rings_per_link[t];
          return false;
        }
        c = sign > 0 ? c - 1 : c + 1;
        taken.push_back(res);
      }
    return true;
  }
  void pack(std::size_t from) {
    if (taken_.size() > best_.size()) best_ = taken_;
    if (taken_.size() >= nccl::kMaxChannels / 2) return;
    for (std::size_t i = from; i < rings_.size(); ++i) {
      if (!take(rings_[i], +1)) continue;
      taken_.push_back(i);
      pack(i);
      taken_.pop_back();
      take(rings_[i], -1);
    }
  }

  HopGraph graph_;
  std::uint32_t g_;
  std::vector<std::vector<std::uint32_t>> rings_;
  std::vector<std::size_t> taken_, best_;  // indices into rings_
};

}  // namespace

MeshSearch nccl_ring_search(const MeshSearchInput& in, nccl::Generation generation) {
  MeshSearch best;
  if (in.gpus < 2) return best;
  // search.cc ncclTopoSearchInit: maxBw, the widest path between two GPUs in use; totalBw, the
  // most NVLink bandwidth one of them has (the search stops once the rings reach it).
  double widest = 0, total = 0;
  for (std::uint32_t a = 0; a < in.gpus; ++a) {
    double sum = 0;
    for (std::uint32_t b = 0; b < in.gpus; ++b) {
      widest = std::max(widest, in.links[a][b] * in.link_GBps);
      sum += in.links[a][b] * in.link_GBps;
    }
    total = std::max(total, sum);
  }
  const std::vector<double> speeds = nccl::intra_search_speeds(generation);
  std::size_t i = 0;
  while (i + 1 < speeds.size() && speeds[i] > widest) ++i;
  int best_level = 0;
  const auto bw = [](const MeshSearch& s) { return static_cast<double>(s.rings.size()) * s.speed; };
  for (; i < speeds.size(); ++i) {
    // Lower speeds only while nothing is found or the next is above 0.49 of the best's.
    if (!best.rings.empty() && speeds[i] / best.speed <= 0.49) break;
    // typeIntra rises one level at a time while nothing is found, or while it is below the
    // best graph's; each level is searched at this speed.
    for (int level = 0; level <= static_cast<int>(HopLevel::Host); ++level) {
      if (level > 0 && !best.rings.empty() && level - 1 >= best_level) break;
      if (level == static_cast<int>(HopLevel::Relay) && !in.nvb) continue;
      MeshSearch here;
      here.rings = RingPacking(HopGraph(in, static_cast<HopLevel>(level), speeds[i])).most();
      here.speed = speeds[i];
      here.level = level;
      // ncclTopoCompareGraphs: a graph replaces the best only with more rings x speed.
      if (bw(here) > bw(best) + 1e-9) {
        best = here;
        best_level = level;
      }
    }
    if (bw(best) >= total - 1e-9) break;
  }
  // ncclTopoDupChannels: rings of at least 25 GB/s are duplicated at half the speed (from
  // compute capability 9.0 not below 50 GB/s when more than 4 rings were found). The search's
  // second pass, which tries higher speeds at the doubled count, finds nothing the first pass
  // did not reject (a ring count carried at a higher speed would have won there).
  best.found = static_cast<std::uint32_t>(best.rings.size());
  best.duplicated = best.found;
  const bool sm90 = generation != nccl::Generation::Volta && generation != nccl::Generation::Ampere;
  if (best.speed >= 25.0 && !(sm90 && best.speed < 50.0 && best.found > 4)) {
    best.duplicated = std::min(2 * best.found, nccl::kMaxChannels / 2);
    best.speed /= (best.duplicated + best.found - 1) / best.found;
  }
  return best;
}

MeshSearchInput nccl_mesh_input(const std::string& gpu, std::uint32_t gpus, bool nvb) {
  const GpuSpec& spec = gpu_spec(gpu);
  const auto& wiring = mesh_wiring(spec.default_scale_up);
  MeshSearchInput in;
  in.gpus = std::min<std::uint32_t>(gpus, static_cast<std::uint32_t>(wiring.size()));
  in.links = wiring;
  in.link_GBps = nccl::nvlink_bw_per_link(nccl_generation(gpu));
  in.nvb = nvb;
  const HostPcieTree& tree = host_pcie_tree(spec.default_scale_up);
  in.gpus_per_switch = tree.gpus_per_switch;
  in.switches_per_cpu = tree.switches_per_cpu;
  // NCCL rates the CPUs' link by their generation (catalog CpuLinkSpec::nccl; the DGX-1's
  // Broadwell QPI: topo.h QPI_BW, 6 GB/s whatever its 38.4).
  if (tree.cpu_link != nullptr) in.cpu_link_GBps = tree.cpu_link->nccl.gigabytes_per_second();
  in.pcie_GBps = default_gpu_nic_pcie(gpu).nccl.gigabytes_per_second();
  return in;
}

MeshSearch nccl_mesh_search(const std::string& gpu, std::uint32_t gpus, bool nvb) {
  return nccl_ring_search(nccl_mesh_input(gpu, gpus, nvb), nccl_generation(gpu));
}

std::vector<std::vector<std::uint32_t>> nccl_mesh_rings(const std::string& gpu, std::uint32_t gpus,
                                                        bool nvb) {
  return nccl_mesh_search(gpu, gpus, nvb).rings;
}

bool nccl_mesh_rings_relayed(const std::string& gpu, std::uint32_t gpus) {
  return nccl_mesh_search(gpu, gpus).level == MeshSearch::kRelay;
}

}  // namespace lockstep
