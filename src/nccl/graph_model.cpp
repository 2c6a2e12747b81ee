// The NCCL model's collective priced on the graph (graph_model.hpp, docs/analytical-engine.md).
//
// The programs are built at a nominal size that splits evenly (every block, channel slice and
// tree lane equal) and unpipelined (one chunk), so a send's bytes over the nominal size is its
// exact share of S: traffic is linear in S, and the NCCL model's volumes are such shares too, so
// on a fabric where nothing is slower than NCCL assumes the graph term equals the model's and
// does not bind. One chunk also makes the programs short (a tree lane is a handful of ops per
// rank) and makes their dependency chain the latency chain of one piece of data.
#include "graph_model.hpp"

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <tuple>
#include <unordered_map>

#include "lockstep/engine/analytical/analytical_engine.hpp"
#include "lockstep/engine/analytical/link_loads.hpp"
#include "lockstep/nccl/engine_run.hpp"

namespace lockstep::nccl_detail {
namespace {

using A = Algorithm;

MediumEfficiency medium_efficiency(const NcclCluster& c, const Prediction& p, CollectiveOp op,
                                   const Topology& topo) {
  // The glue's ratios with no algorithm efficiency: a Simple ring's run.
  Prediction plain = p;
  plain.algo = A::Ring;
  plain.proto = nccl::Proto::Simple;
  plain.efficiency = 1;
  const NcclEngineRun ratios = nccl_engine_run(c, plain, op, Bytes(1), DataType::Uint8, topo);
  MediumEfficiency e;
  e.scale_up = ratios.transfer_efficiency;
  e.network = ratios.network_transfer_efficiency > 0 ? ratios.network_transfer_efficiency : 1.0;
  double up = p.efficiency, net = p.efficiency;
  switch (p.algo) {
    case A::Tree:
      up = net = p.proto == nccl::Proto::Simple ? nccl::kTreeSimpleEfficiency
                 : p.proto == nccl::Proto::LL128
                     ? (c.nodes == 1 ? nccl::kTreeLL128SingleNode : nccl::kTreeLL128MultiNode)
                     : 1.0 / nccl::kTreeLLDivisor;
      break;
    case A::Pat:
      up = net = nccl::kPatEfficiency * p.efficiency;
      break;
    case A::NetReduce:
      // In one node the program's NetReduce carries S each way where NVLink SHARP moves
      // S (1 + 1/g); across nodes the program moves that itself (cost.cpp nvls_cost).
      up = net = nccl::nvls_efficiency(c.generation) /
                 (op == CollectiveOp::AllReduce && c.nodes == 1 ? 1 + 1.0 / c.gpus_per_node : 1);
      break;
    case A::NvlsTree:
      up = nccl::nvls_efficiency(c.generation);  // the tree between nodes runs Simple
      break;
    case A::CollNet:
      net = c.generation < nccl::Generation::Hopper ? nccl::kTreeSimpleEfficiency
                                                    : nccl::kCollNetHopperEfficiency;
      break;
    default:
      break;
  }
  e.scale_up *= up;
  e.network *= net;
  return e;
}

// Phases run one after another when the algorithm's steps exchange different patterns that
// each wait for the last (halving-doubling, PAT: a step is a run of sends to one peer); the
// others pipeline (ring, tree, chain, NVLS, CollNet, direct), and their whole traffic is one
// phase, its busiest link the bound.
bool stepped(Algorithm a) {
  return a == A::HalvingDoubling || a == A::Pat;
}

// The group's spec at the nominal size, in one chunk: every block, channel slice, tree half
// and node's share of a chunk equal (ranks x 2 x channels x ranks per node bytes of one-byte
// elements).
CollectiveSpec nominal_spec(const CollectiveSpec& run) {
  CollectiveSpec s = run;
  // NVLS all-gather and reduce-scatter inside one node have no program of their own: the
  // direct one loads each GPU's NVSwitch link with the same (n-1)/n S each way (cost.cpp
  // nvls_cost's volume), which is all the graph needs of them.
  if (!is_supported(s.op, s.algorithm)) s.algorithm = A::Direct;
  const std::uint64_t g = std::max<std::uint64_t>(1, s.ranks_per_node);
  s.type = DataType::Uint8;
  // A torus ring's all-reduce splits the data into 2D colours (torus_all_reduce.cpp): one unit
  // each, or uneven blocks load some links more than the run does.
  const std::uint64_t colours = s.torus_dims.empty() ? 1 : 2 * s.torus_dims.size();
  s.bytes =
      Bytes(std::uint64_t{s.ranks} * 2 * std::max<std::uint64_t>(1, s.channels) * g * colours);
  s.chunk = s.bytes;
  return s;
}

// Groups of more (ranks x channels) walk their longest chain on two channels (price_on_graph).
constexpr std::uint64_t kChainRankChannels = std::uint64_t{1} << 16;

// One rank's sends, aggregated: (peer, channel, phase) -> share of S.
using SendKey = std::tuple<Rank, std::uint16_t, std::uint32_t>;

// A transfer waiting to be routed. Transfers are routed in batches sorted by destination: the
// router keeps the search towards one destination (at 131,072 GPUs only one fits its cache),
// and a tree node's parent and children, which all send to it, are far apart in rank order.
struct Pending {
  DeviceId dst, src;
  std::uint16_t channel;
  std::uint32_t phase;
  Rank rank, peer;
  double share;
  std::uint32_t rail = 0;  // the destination's GPU index in its node (flush sorts by it)
};

class Pricer {
 public:
  Pricer(const NcclCluster& c, const Prediction& p, CollectiveOp op, const Topology& healthy,
         const Topology& topo, const Router& router, const MediumEfficiency& e)
      : p_(p), op_(op), topo_(topo), router_(router), e_(e), loads_(topo, router) {
    // NCCL's per-step latency includes the path of the hop it was measured on, taken to be the
    // cluster's own nearest one (GPU 0 to 1 inside a node, 0 to the next node's first GPU
    // across): a hop pays what its path takes beyond that, as in the flow engine's run
    // (nccl_engine_run), never the step latency itself.
    const std::uint32_t g = std::max<std::uint32_t>(1, c.gpus_per_node);
    covered_up_ = gpu_path_latency(healthy, 0, 1);
    covered_net_ = g > 1 ? gpu_path_latency(healthy, 0, g) : covered_up_;
  }

  // `chain` gives the programs whose longest chain is walked (called only when a hop has an
  // excess): `programs` themselves, or fewer channels of them on large groups. `stages`: walk
  // the tree's one-chunk stages too (tree_stage_term, graph_stages.cpp).
  void add_group(const ProgramSet& programs, double nominal, std::span<const DeviceId> devices,
                 const std::function<const ProgramSet&()>& chain, std::uint16_t sample_half,
                 bool stages);
  void add_direct_group(const CollectiveSpec& spec, std::span<const DeviceId> devices);
  GraphTerm result() const;

 private:
  Time excess(const RoutedPath& path) const {
    const Time covered = path.network ? covered_net_ : covered_up_;
    return std::max(Time::zero(), path.latency - covered);
  }
  void scan_rank(const ProgramSet& programs, Rank r, double nominal,
                 std::span<const DeviceId> devices);
  void flush();
  void route_rounds(const ProgramSet& programs, std::span<const DeviceId> devices);
  Time ring_chain(Rank ranks) const;
  Time dag_chain(const ProgramSet& programs);
  static std::uint64_t pair_key(Rank src, Rank dst) { return std::uint64_t{src} << 32 | dst; }
  // Whether the chain's walk sees channel c's transfers: all, or when it walks two channels
  // (price_on_graph) those of the full set's channels 0 and C/2, the two trees' lanes headed at
  // GPU 0, which the two-channel set's channels 0 and 1 are.
  bool walked(std::uint16_t c) const { return sample_half_ == 0 || c == 0 || c == sample_half_; }
  std::uint16_t sample_half_ = 0;

  static constexpr std::size_t kBatch = std::size_t{1} << 20;
  static constexpr std::uint64_t kDirectRoutes = std::uint64_t{1} << 22;

  const Prediction& p_;
  CollectiveOp op_;
  const Topology& topo_;
  const Router& router_;
  MediumEfficiency e_;
  LinkLoads loads_;
  Time covered_up_, covered_net_;
  Time excess_;                      // the longest chain so far (over groups)
  StageTerm stage_;                  // the tree's stages, over groups
  Time group_excess_;                // the largest single-hop excess of the group being added
  std::map<SendKey, double> sends_;  // scratch for one rank
  std::vector<Pending> pending_;
  // NetReduce rounds of the group: (group, channel, phase) -> share of S per member.
  std::map<std::tuple<std::uint32_t, std::uint16_t, std::uint32_t>, double> rounds_;
  // Ring: the next rank and the hop's excess, per channel and rank.
  bool ring_ = false;
  std::vector<std::vector<Rank>> next_;
  std::vector<std::vector<Time>> hop_excess_;
  std::unordered_map<std::uint32_t, Time> group_round_;  // NetReduce group -> up-and-down excess
  // The group's hops with an excess, (rank, peer) -> the largest over their channels, recorded
  // as flush() routes them: the chain's walk then routes nothing (in its order the router's
  // search towards each destination would be redone, 56 s at 131,072 GPUs). Channels of a pair
  // differ only by ECMP's choice among paths of as many hops.
  std::unordered_map<std::uint64_t, Time> pair_excess_;
};

// Reads rank r's program: every send's share of S (a periodic region's period once, times its
// repeats, where the phases pipeline), and the NetReduce rounds it leads.
void Pricer::scan_rank(const ProgramSet& programs, Rank r, double nominal,
                       std::span<const DeviceId> devices) {
  sends_.clear();
  const bool steps = stepped(p_.algo);
  std::uint32_t phase = 0;
  Rank last_peer = 0;
  bool any_send = false;
  const OpIndex n = programs.num_ops(r);
  for (OpIndex i = 0; i < n;) {
    double repeats = 1;
    OpIndex end = i + 1;
    if (!steps) {
      const PeriodicRegion region = programs.periodic_region(r, i);
      if (region.period_ops > 0 && region.repeats > 1 && region.first_op == i) {
        repeats = region.repeats;
        end = i + region.period_ops;
      }
    }
    for (OpIndex j = i; j < end; ++j) {
      const Op op = programs.op(r, j);
      const double share = static_cast<double>(op.bytes()) * repeats / nominal;
      if (op.kind == OpKind::Send) {
        if (steps && any_send && op.peer != last_peer) ++phase;
        any_send = true;
        last_peer = op.peer;
        sends_[SendKey{op.peer, op.channel, phase}] += share;
      } else if (op.kind == OpKind::NetReduce) {
        const auto members = programs.group(op.peer);
        if (!members.empty() && members[0] == r)  // the first member stands for the round
          rounds_[{op.peer, op.channel, phase}] += share;
      }
    }
    i = repeats > 1 ? i + static_cast<OpIndex>((end - i) * repeats) : end;
  }
  for (const auto& [key, share] : sends_) {
    const auto [peer, channel, at_phase] = key;
    pending_.push_back(Pending{devices[peer], devices[r], channel, at_phase, r, peer, share});
    if (ring_) {
      if (next_.size() <= channel) {
        next_.resize(channel + 1u);
        hop_excess_.resize(channel + 1u);
      }
      auto& next = next_[channel];
      if (next.size() <= r) next.resize(r + 1u, 0);
      next[r] = peer;
    }
  }
  if (pending_.size() >= kBatch) flush();
}

void Pricer::flush() {
  // By destination, the destinations of one rail (GPU index in the node) together: on a
  // rail-optimised fabric they share a leaf, and the router's search towards a leaf serves every
  // destination behind it (DistanceField::find_gateway).
  // (Each transfer's rail read once: the comparisons' device lookups were a third of the sort.)
  for (Pending& t : pending_) t.rail = topo_.device(t.dst).local_index;
  std::sort(pending_.begin(), pending_.end(), [](const Pending& a, const Pending& b) {
    return std::tie(a.rail, a.dst, a.src, a.channel) < std::tie(b.rail, b.dst, b.src, b.channel);
  });
  for (const Pending& t : pending_) {
    const Time hop = excess(loads_.add_transfer(t.phase, t.src, t.dst, t.channel, t.share));
    group_excess_ = std::max(group_excess_, hop);
    if (hop > Time::zero() && !ring_ && walked(t.channel)) {
      Time& e = pair_excess_[pair_key(t.rank, t.peer)];
      e = std::max(e, hop);
    }
    if (ring_ && t.channel < next_.size() && next_[t.channel][t.rank] == t.peer) {
      auto& row = hop_excess_[t.channel];
      if (row.size() <= t.rank) row.resize(next_[t.channel].size());
      row[t.rank] = hop;
    }
  }
  pending_.clear();
}

// Every NetReduce round the group's ranks led, each (group, channel, phase) once: its share is
// what each member hands in, summed over the rounds (NVLS's reduce-scatter and all-gather).
void Pricer::route_rounds(const ProgramSet& programs, std::span<const DeviceId> devices) {
  std::vector<DeviceId> at;
  for (const auto& [key, share] : rounds_) {
    const auto [group, channel, phase] = key;
    at.clear();
    for (Rank m : programs.group(group)) at.push_back(devices[m]);
    const Time round = excess(loads_.add_net_reduce(phase, at, channel, share)) * 2;  // up, down
    group_excess_ = std::max(group_excess_, round);
    group_round_[group] = std::max(group_round_[group], round);
  }
  rounds_.clear();
}

// A ring's longest chain: the data of one step is forwarded round the ring, each step waiting
// for the one before, so the chain is `steps` consecutive hops of a channel's ring (wrapping
// round it when steps > ranks); the longest such window over every channel and start.
Time Pricer::ring_chain(Rank ranks) const {
  const std::uint64_t steps =
      op_ == CollectiveOp::AllReduce ? 2 * (std::uint64_t{ranks} - 1) : ranks - 1;
  Time longest;
  for (std::size_t ch = 0; ch < next_.size(); ++ch) {
    if (next_[ch].size() < ranks || hop_excess_[ch].size() < ranks) continue;
    // The ring's hops in order from rank 0, their excess as prefix sums over two laps.
    std::vector<Time> hops;
    hops.reserve(ranks);
    Rank at = 0;
    for (Rank k = 0; k < ranks; ++k) {
      hops.push_back(hop_excess_[ch][at]);
      at = next_[ch][at];
    }
    Time lap;
    for (Time h : hops) lap += h;
    const std::uint64_t laps = steps / ranks, rest = steps % ranks;
    std::vector<Time> prefix(2 * std::size_t{ranks} + 1);
    for (std::size_t k = 0; k < 2 * std::size_t{ranks}; ++k)
      prefix[k + 1] = prefix[k] + hops[k % ranks];
    Time window;
    for (std::size_t start = 0; start < ranks && rest > 0; ++start)
      window = std::max(window, prefix[start + rest] - prefix[start]);
    longest = std::max(longest, lap * static_cast<std::int64_t>(laps) + window);
  }
  return longest;
}

// The longest chain of dependent transfers through the one-chunk programs, each transfer
// costing its path's excess and each NetReduce round its up-and-down excess.
Time Pricer::dag_chain(const ProgramSet& programs) {
  ChainCosts costs;
  costs.transfer = [&](Rank src, Rank dst, std::uint16_t) {
    const auto it = pair_excess_.find(pair_key(src, dst));
    return it == pair_excess_.end() ? Time::zero() : it->second;
  };
  costs.net_reduce = [&](std::uint32_t group) {
    const auto it = group_round_.find(group);
    return it == group_round_.end() ? Time::zero() : it->second;
  };
  return critical_path(programs, costs);
}

void Pricer::add_group(const ProgramSet& programs, double nominal,
                       std::span<const DeviceId> devices,
                       const std::function<const ProgramSet&()>& chain, std::uint16_t sample_half,
                       bool stages) {
  sample_half_ = sample_half;
  next_.clear();
  hop_excess_.clear();
  group_round_.clear();
  pair_excess_.clear();
  group_excess_ = Time::zero();
  ring_ = p_.algo == A::Ring && op_ != CollectiveOp::Broadcast && op_ != CollectiveOp::Reduce;
  for (Rank r = 0; r < programs.num_ranks(); ++r) scan_rank(programs, r, nominal, devices);
  flush();
  route_rounds(programs, devices);
  if (stages) {
    StageTerm t = tree_stage_term(programs, nominal, devices, topo_, router_, e_);
    stage_.one_chunk = std::max(stage_.one_chunk, t.one_chunk);
    stage_.links.insert(stage_.links.end(), t.links.begin(), t.links.end());
  }
  // Only a path longer than the reference path makes a chain longer than NCCL's formula.
  if (group_excess_ <= Time::zero()) return;
  excess_ = std::max(excess_, ring_ ? ring_chain(programs.num_ranks()) : dag_chain(chain()));
}

// The direct algorithm's traffic, as direct.cpp writes it, without its programs (n^2 ops,
// which its program set would keep for a thousand ranks at a time): every rank sends S/n to
// every other (all-to-all, all-gather, reduce-scatter; all-reduce twice, in two rounds), S to
// the next rank (sendrecv), the root S to every other (broadcast) or every other S to the root
// (reduce); each transfer split over the channels. Beyond kDirectRoutes routes the channels of
// a pair travel as one flow (label: a channel by pair), and beyond that each rank sends to
// evenly spaced offsets only, each standing for the offsets up to the next: every rank still
// sends and receives its whole volume, so NIC and edge links are exact and only links shared by
// many ranks are a sample.
void Pricer::add_direct_group(const CollectiveSpec& spec, std::span<const DeviceId> devices) {
  group_excess_ = Time::zero();
  const std::uint64_t n = spec.ranks, c = std::max<std::uint16_t>(1, spec.channels);
  const CollectiveOp op = spec.op;
  double rounds = op == CollectiveOp::AllReduce ? 2 : 1;
  const auto add = [&](Rank r, Rank j, double share, std::uint16_t channel) {
    pending_.push_back(Pending{devices[j], devices[r], channel, 0, r, j, share});
    if (pending_.size() >= kBatch) flush();
  };
  const auto rank = [&](std::uint64_t x) { return static_cast<Rank>(x % n); };
  const auto split = [&](Rank r, Rank j) {
    for (std::uint16_t ch = 0; ch < c; ++ch) add(r, j, 1.0 / static_cast<double>(c), ch);
  };
  if (n == 1) {
    // nothing moves
  } else if (op == CollectiveOp::SendRecv) {
    for (Rank r = 0; r < n; ++r) split(r, rank(r + 1));
  } else if (op == CollectiveOp::Broadcast || op == CollectiveOp::Reduce) {
    const Rank root = spec.root;
    for (Rank r = 0; r < n; ++r)
      if (r != root) op == CollectiveOp::Broadcast ? split(root, r) : split(r, root);
  } else if (op == CollectiveOp::AllToAllV && spec.alltoallv.size() == n) {
    // A skewed matrix (alltoallv with --skew): each pair carries its own share of its sender's
    // bytes, so the hot receiver's links carry what the matrix sends them.
    for (Rank r = 0; r < n; ++r) {
      const auto& row = spec.alltoallv[r];
      double total = 0;
      for (const std::uint64_t b : row) total += static_cast<double>(b);
      if (total <= 0) continue;
      for (std::uint64_t d = 1; d < n; ++d) {
        const Rank j = rank(r + d);
        const double weight = static_cast<double>(row[j]) / total;
        if (weight <= 0) continue;
        for (std::uint16_t ch = 0; ch < c; ++ch) add(r, j, weight / c, ch);
      }
    }
  } else {
    const std::uint64_t pairs = n * (n - 1);
    const bool every_channel = pairs * c <= kDirectRoutes;
    const std::uint64_t offsets =
        std::min<std::uint64_t>(n - 1, std::max<std::uint64_t>(1, kDirectRoutes / n));
    const double per_pair = rounds / static_cast<double>(n);
    for (Rank r = 0; r < n; ++r) {
      for (std::uint64_t k = 0; k < offsets; ++k) {
        // Offsets 1 + k (n-1) / offsets: all of 1..n-1 when they fit.
        const std::uint64_t d = 1 + k * (n - 1) / offsets;
        const std::uint64_t next = 1 + (k + 1) * (n - 1) / offsets;
        const double weight = static_cast<double>(next - d) * per_pair;
        const Rank j = rank(r + d);
        if (every_channel) {
          for (std::uint16_t ch = 0; ch < c; ++ch) add(r, j, weight / c, ch);
        } else {
          add(r, j, weight, static_cast<std::uint16_t>((r + d) % c));
        }
      }
    }
  }
  flush();
  // Every transfer of a round starts at once: the chain is a round's slowest transfer per round.
  if (op != CollectiveOp::AllReduce) rounds = 1;
  excess_ = std::max(excess_, group_excess_ * static_cast<std::int64_t>(rounds));
}

GraphTerm Pricer::result() const {
  GraphTerm out;
  out.latency_excess = excess_;
  out.stages = stage_;
  // Only links that some size could make the slowest: none with both less load and less idle
  // time than another.
  auto& links = out.stages.links;
  std::sort(links.begin(), links.end(), std::greater<>());
  std::vector<std::pair<double, double>> kept;
  for (const auto& l : links)
    if (kept.empty() || l.second > kept.back().second) kept.push_back(l);
  links = std::move(kept);
  double slowest = 0;
  double line_rate = 0;  // the same sum with every link at its line rate
  bool network_binds = true, scale_up_binds = true;
  for (std::uint32_t ph = 0; ph < loads_.num_phases(); ++ph) {
    const PhaseLoad load = loads_.phase(ph);
    const double up = load.scale_up_seconds / e_.scale_up;
    const double net = load.network_seconds / e_.network;
    out.seconds_per_byte += std::max(up, net);
    line_rate += std::max(load.scale_up_seconds, load.network_seconds);
    if (std::max(up, net) > slowest) {
      slowest = std::max(up, net);
      out.bottleneck = up >= net ? load.scale_up_link : load.network_link;
    }
    if (std::max(up, net) <= 0) continue;
    network_binds = network_binds && net >= up && load.network_seconds >= load.scale_up_seconds;
    scale_up_binds = scale_up_binds && up >= net && load.scale_up_seconds >= load.network_seconds;
  }
  if (out.seconds_per_byte > 0) {
    out.binding_efficiency = network_binds    ? e_.network
                             : scale_up_binds ? e_.scale_up
                                              : line_rate / out.seconds_per_byte;
  }
  return out;
}

}  // namespace

GraphTerm price_on_graph(const NcclCluster& cluster, const Prediction& p, CollectiveOp op,
                         const std::vector<NcclGroupSpec>& groups, const Topology& topo,
                         const Topology& run_on, const Router& router) {
  Pricer pricer(cluster, p, op, topo, run_on, router, medium_efficiency(cluster, p, op, topo));
  const auto gpus = run_on.gpus();
  std::vector<DeviceId> devices;
  std::unique_ptr<ProgramSet> programs;
  CollectiveSpec last;
  for (const NcclGroupSpec& group : groups) {
    const CollectiveSpec spec = nominal_spec(group.spec);
    devices.clear();
    for (std::uint32_t g : group.gpus) devices.push_back(gpus[g]);
    if (spec.algorithm == A::Direct) {
      pricer.add_direct_group(spec, devices);
      continue;
    }
    if (!programs || spec.ranks != last.ranks || spec.ranks_per_node != last.ranks_per_node) {
      programs = make_collective(spec);
      last = spec;
    }
    // The chain's walk keeps a few words per op and routes every (pair, channel) again: on a
    // large group (a tree of 16,384 GPUs x 32 channels: 5 s and 550 MiB) it walks two channels,
    // one per tree of the double binary tree. A channel differs from the others of its tree only
    // by the GPU whose NIC its edges between nodes take, whose path is as long on every rail of
    // a rail-optimised fabric; elsewhere this is a sample of the channels, as the direct
    // algorithm's offsets are beyond kDirectRoutes.
    std::unique_ptr<ProgramSet> fewer;
    const bool sample = std::uint64_t{spec.ranks} * spec.channels > kChainRankChannels &&
                        spec.channels > 2 && spec.channels % 2 == 0;
    const auto chain = [&]() -> const ProgramSet& {
      if (!sample) return *programs;
      if (!fewer) {
        CollectiveSpec two = group.spec;
        two.channels = 2;
        fewer = make_collective(nominal_spec(two));
      }
      return *fewer;
    };
    // The tree's stages: walked on groups whose chain is walked whole (a few words per op and
    // a route per transfer again); larger ones take the steady state alone.
    const bool stages = (p.algo == A::Tree || p.algo == A::NvlsTree) && !sample &&
                        std::uint64_t{spec.ranks} * spec.channels <= kChainRankChannels;
    pricer.add_group(*programs, spec.bytes.as_double(), devices, chain,
                     sample ? static_cast<std::uint16_t>(spec.channels / 2) : 0, stages);
  }
  return pricer.result();
}

}  // namespace lockstep::nccl_detail
