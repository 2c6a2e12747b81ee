// The tuner's choice: which (algorithm, protocol) pairs NCCL enables for an op on a cluster, and
// the fastest of them by predicted time (NCCL's ncclTopoGetAlgoTime / getAlgoInfo).
#include "lockstep/nccl/tuner.hpp"

#include <algorithm>
#include <array>
#include <optional>
#include <stdexcept>
#include <string>

#include "cost.hpp"
#include "lockstep/core/error.hpp"

namespace lockstep {
namespace {

using nccl::Proto;
using A = Algorithm;

// The NCCL model's algorithms in the order its candidates are listed (equal times keep it) and
// their names; nullopt is "auto".
struct AlgoName {
  std::optional<Algorithm> algo;
  const char* name;
};
constexpr std::array<AlgoName, 11> kAlgoNames = {{
    {std::nullopt, "auto"},
    {A::Ring, "ring"},
    {A::Tree, "tree"},
    {A::NetReduce, "nvls"},
    {A::NvlsTree, "nvls_tree"},
    {A::CollNet, "collnet"},
    {A::Pat, "pat"},
    {A::HalvingDoubling, "halving_doubling"},
    {A::Direct, "direct"},
    {A::Hierarchical, "hierarchical"},
    {A::TorusRing, "torus_ring"},
}};
constexpr std::array<Proto, 3> kProtos = {Proto::LL, Proto::LL128, Proto::Simple};

bool is_one_of(CollectiveOp op, std::initializer_list<CollectiveOp> ops) {
  return std::find(ops.begin(), ops.end(), op) != ops.end();
}

using Coll = CollectiveOp;

// Whether NCCL can run `a` for `op` on this cluster at all (explicit requests), and whether its
// tuner considers it automatically (`automatic`).
bool algo_possible(const NcclCluster& c, Coll op, Algorithm a) {
  const bool multi = c.nodes > 1, local = c.gpus_per_node > 1;
  switch (a) {
    case A::Ring:
      return is_one_of(op, {Coll::AllReduce, Coll::AllGather, Coll::ReduceScatter, Coll::Broadcast,
                            Coll::Reduce});
    case A::Tree:
      return op == Coll::AllReduce;
    case A::NetReduce:
      return c.nvls && local &&
             (op == Coll::AllReduce
                  ? (!multi || c.sharp)
                  : (!multi && is_one_of(op, {Coll::AllGather, Coll::ReduceScatter})));
    case A::NvlsTree:
      return c.nvls && local && multi && op == Coll::AllReduce;
    case A::CollNet:
      return c.sharp && multi && op == Coll::AllReduce;
    case A::Pat:
      return c.pat && !local && multi && is_one_of(op, {Coll::AllGather, Coll::ReduceScatter});
    case A::HalvingDoubling:
      return op == Coll::AllReduce;
    case A::Direct:
      return is_one_of(op, {Coll::AllReduce, Coll::AllGather, Coll::ReduceScatter, Coll::Broadcast,
                            Coll::Reduce, Coll::AllToAll, Coll::AllToAllV, Coll::SendRecv});
    case A::Hierarchical:
      return op == Coll::AllReduce;
    case A::TorusRing:
      return !c.torus_dims.empty() &&
             is_one_of(op, {Coll::AllReduce, Coll::AllGather, Coll::ReduceScatter});
    default:
      return false;  // not an algorithm of the NCCL model
  }
}

bool algo_automatic(const NcclCluster& c, Coll op, Algorithm a) {
  if (op == Coll::AllToAll || op == Coll::AllToAllV || op == Coll::SendRecv) return a == A::Direct;
  // Not NCCL's (docs/nccl-model.md "Algorithms NCCL does not have").
  if (a == A::HalvingDoubling || a == A::Direct || a == A::Hierarchical || a == A::TorusRing)
    return false;
  // Across NVLink domains made of several trays (NVL72 racks, MNNVL) NCCL runs the ring: every
  // public multi-rack log has the ring's latency and NVLink bound, not NVLS tree's or the
  // tree's (docs/nccl-model.md "NVLS across NVL72 racks"). They are priced on request.
  const bool mnnvl = c.nodes > 1 && c.servers_per_node > 1;
  if (mnnvl && (a == A::Tree || a == A::NetReduce || a == A::NvlsTree)) return false;
  // The transport's documented NCCL_ALGO (GCP's TCPX profile: ring only).
  if (!c.net_algos.empty() &&
      std::find(c.net_algos.begin(), c.net_algos.end(), a) == c.net_algos.end())
    return false;
  if (a == A::Tree) return c.nodes > 1;  // NCCL's tree pays off across nodes only
  return true;
}

bool proto_possible(const NcclCluster& c, Algorithm a, Proto p) {
  if (a == A::NetReduce || a == A::NvlsTree || a == A::CollNet || a == A::Pat ||
      a == A::Hierarchical || a == A::TorusRing)
    return p == Proto::Simple;
  if (p == Proto::LL128 && c.nodes > 1 && !c.ll128_network) return false;
  return true;
}

// Point-to-point operations pick their protocol by size, not by model (NCCL_P2P_LL_THRESHOLD);
// collectives among the transport's documented NCCL_PROTO, if it has one.
bool proto_automatic(const NcclCluster& c, Coll op, Proto p, double per_peer_bytes) {
  if (op != Coll::AllToAll && op != Coll::AllToAllV && op != Coll::SendRecv) {
    if (p == Proto::LL128 && !c.ll128_default) return false;
    return c.net_protos.empty() ||
           std::find(c.net_protos.begin(), c.net_protos.end(), p) != c.net_protos.end();
  }
  return p == (per_peer_bytes <= nccl::kP2pLLThreshold ? Proto::LL : Proto::Simple);
}

Cost cost_of(const NcclCluster& c, const TunerRequest& r, Algorithm a, Proto p, double S,
             std::uint32_t ch) {
  const Coll op = r.op;
  if (op == Coll::AllToAllV) return alltoallv_cost(c, S, p, r.skew);
  switch (a) {
    case A::Ring:
      return ring_cost(c, op, S, p, ch);
    case A::Tree:
      return tree_cost(c, S, p, ch);
    case A::NetReduce:
      return nvls_cost(c, op, S);
    case A::NvlsTree:
      return nvls_tree_cost(c, S, ch);
    case A::CollNet:
      return collnet_cost(c, S);
    case A::Pat:
      return pat_cost(c, S, p);
    case A::HalvingDoubling:
      return halving_doubling_cost(c, S, p, ch);
    case A::Direct:
      return direct_cost(c, op, S, p);
    case A::Hierarchical:
      return hierarchical_cost(c, S);
    case A::TorusRing:
      return torus_ring_cost(c, op, S);
    default:
      throw std::logic_error(std::string("the NCCL model does not price ") + to_string(a));
  }
}

Prediction make_prediction(const NcclCluster& c, const TunerRequest& r, Algorithm a, Proto p) {
  const double S = r.bytes.as_double();
  // NVLS and NVLS tree run NCCL's NVLS channels; the other algorithms the rings' channels (the
  // trees are built on the same channels, connect.cc).
  const bool nvls = a == A::NetReduce || a == A::NvlsTree;
  const std::uint32_t max_ch = nvls ? c.nvls_channels() : c.max_channels();
  const std::uint32_t ch =
      r.channels > 0 ? r.channels : pick_channels(max_ch, a, p, r.bytes.count(), c.ranks());
  // Channel reduction changes how work is split, not the bandwidth the caps allow: NCCL's model
  // (and ours) prices a message with the communicator's channel count.
  const std::uint32_t priced_channels = r.channels > 0 ? r.channels : max_ch;
  const Cost cost = cost_of(c, r, a, p, S, priced_channels);
  Prediction out;
  out.algo = a;
  out.proto = p;
  out.channels = ch;
  out.bandwidth_channels = priced_channels;
  out.latency = Time::us(cost.latency_us);
  out.transfer = Time::us(cost.transfer_us);
  out.fill = Time::us(cost.fill_us);
  const double launch = r.include_launch_overhead ? nccl::kLaunchOverheadUs : 0.0;
  out.time = Time::us(launch + cost.latency_us + cost.transfer_us + cost.fill_us);
  // NCCL's formula has no pipeline fill, and scales the tree's bandwidth by its correction
  // factor for the size (tuning.cc treeCorrectionFactor).
  // Across nodes of several GPUs its tree bandwidth is the one NCCL derives from its tree graph
  // (tree_tuner_algbw_GBps: channels x the graph's speed, a flat 0.5 to algorithm bandwidth),
  // not the model's: on two DGX A100 that ranks the ring first at large sizes, and beyond two
  // nodes of HGX H100 NVLS tree ahead of the tree from mid sizes, as NCCL does
  // (docs/nccl-model.md "How NCCL ranks the tree").
  const double tree_factor = a == A::Tree ? nccl::tree_correction_factor(p, S) : 1.0;
  const bool tree_graph = a == A::Tree && c.nodes > 1 && c.gpus_per_node > 1 && r.channels == 0;
  const double ranked_transfer_us =
      tree_graph ? S / (tree_tuner_algbw_GBps(c, p) * 1e3) : cost.transfer_us;
  out.formula = Time::us(launch + cost.latency_us + ranked_transfer_us / tree_factor);
  out.bus_GBps = cost.bus_GBps;
  out.step_us = cost.step_us;
  out.efficiency = p == Proto::LL ? 0.5 : p == Proto::LL128 ? nccl::kLL128Efficiency : 1.0;
  const double seconds = out.time.seconds();
  out.algbw_GBps = seconds > 0 ? S / seconds / 1e9 : 0;
  out.busbw_GBps = out.algbw_GBps * busbw_factor(r.op, c.ranks());
  out.skew = r.op == Coll::AllToAllV ? r.skew : 0;
  return out;
}

void check_cluster(const NcclCluster& c) {
  if (c.nodes == 0 || c.gpus_per_node == 0)
    throw InputError("nodes", "a cluster needs at least one node with one GPU");
  if (c.gpus_per_node > 1 && c.intra_GBps <= 0)
    throw InputError("gpus_per_node", "GPUs of a node have no scale-up bandwidth");
  if (c.nodes > 1 && (c.nics_per_node == 0 || c.nic_GBps <= 0))
    throw InputError("nics_per_node", "a multi-node cluster needs NICs with a speed");
}

}  // namespace

namespace nccl {

const char* algorithm_name(std::optional<Algorithm> a) {
  for (const auto& n : kAlgoNames)
    if (n.algo == a) return n.name;
  return to_string(*a);  // not the NCCL model's: the collective layer's name
}

std::optional<Algorithm> parse_algorithm(std::string_view name, std::string_view field) {
  std::string known;
  for (const auto& n : kAlgoNames) {
    if (name == n.name) return n.algo;
    known += (known.empty() ? "" : ", ") + std::string(n.name);
  }
  throw InputError(std::string(field),
                   "unknown algorithm '" + std::string(name) + "' (expected one of " + known + ")");
}

std::optional<Proto> parse_protocol(std::string_view name, std::string_view field) {
  if (name == "auto") return std::nullopt;
  if (name == "ll" || name == "LL") return Proto::LL;
  if (name == "ll128" || name == "LL128") return Proto::LL128;
  if (name == "simple" || name == "Simple") return Proto::Simple;
  throw InputError(std::string(field), "unknown protocol '" + std::string(name) +
                                           "' (expected one of auto, ll, ll128, simple)");
}

}  // namespace nccl

std::vector<Prediction> candidates(const NcclCluster& c, const TunerRequest& r) {
  check_cluster(c);
  const double per_peer =
      r.op == Coll::SendRecv ? r.bytes.as_double() : r.bytes.as_double() / c.ranks();
  std::vector<Prediction> out;
  for (const AlgoName& name : kAlgoNames) {
    if (!name.algo) continue;
    const Algorithm a = *name.algo;
    if (r.algo && a != *r.algo) continue;
    if (!algo_possible(c, r.op, a)) continue;
    if (!r.algo && !algo_automatic(c, r.op, a)) continue;
    for (Proto p : kProtos) {
      if (r.proto && p != *r.proto) continue;
      if (!proto_possible(c, a, p)) continue;
      if (!r.proto && !proto_automatic(c, r.op, p, per_peer)) continue;
      out.push_back(make_prediction(c, r, a, p));
    }
  }
  // NCCL's tuner ranks by its own formula (make_prediction): it runs that choice even where
  // the fill makes another one faster, and the choice then pays its fill.
  std::stable_sort(out.begin(), out.end(),
                   [](const Prediction& x, const Prediction& y) { return x.formula < y.formula; });
  return out;
}

Prediction predict(const NcclCluster& c, const TunerRequest& r) {
  if (r.op == Coll::Barrier)
    throw InputError("op", std::string("the NCCL model does not cover ") + to_string(r.op) +
                               " (use all_reduce, all_gather, reduce_scatter, broadcast, reduce, "
                               "alltoall, alltoallv or sendrecv)");
  if (!(r.skew >= 0) || r.skew > nccl::kMaxSkew)
    throw InputError("skew", "must be between 0 and " + std::to_string(int(nccl::kMaxSkew)));
  if (r.algo == A::TorusRing && c.torus_dims.empty())
    throw InputError("algo",
                     "torus_ring runs on a torus of GPUs (builder: torus, every GPU in "
                     "the communicator), which this cluster is not");
  const auto all = candidates(c, r);
  if (all.empty()) {
    const std::string what = r.algo ? nccl::algorithm_name(r.algo) : std::string("no algorithm");
    throw InputError("algo", what + " cannot run " + to_string(r.op) + " on this cluster (" +
                                 std::to_string(c.nodes) + " nodes x " +
                                 std::to_string(c.gpus_per_node) + " GPUs" +
                                 (c.nvls ? ", NVLS" : "") + (c.sharp ? ", SHARP" : "") +
                                 (r.proto ? ", this protocol" : "") + ")");
  }
  return all.front();
}

}  // namespace lockstep
