// The tuner's choice: which (algorithm, protocol) pairs NCCL enables for an op on a cluster, and
// the fastest of them by predicted time (NCCL's ncclTopoGetAlgoTime / getAlgoInfo).
#include <algorithm>
#include <array>
#include <string>

#include "lockstep/collective/tuner.hpp"
#include "lockstep/core/error.hpp"
#include "tuner_model.hpp"

namespace lockstep {
namespace {

using nccl::Algo;
using nccl::Proto;

struct AlgoName {
  TunerAlgo algo;
  const char* name;
};
constexpr std::array<AlgoName, 9> kAlgoNames = {{
    {TunerAlgo::Auto, "auto"},
    {TunerAlgo::Ring, "ring"},
    {TunerAlgo::Tree, "tree"},
    {TunerAlgo::Nvls, "nvls"},
    {TunerAlgo::NvlsTree, "nvls_tree"},
    {TunerAlgo::CollNet, "collnet"},
    {TunerAlgo::Pat, "pat"},
    {TunerAlgo::HalvingDoubling, "halving_doubling"},
    {TunerAlgo::Direct, "direct"},
}};

constexpr std::array<TunerAlgo, 8> kConcrete = {TunerAlgo::Ring,
                                                TunerAlgo::Tree,
                                                TunerAlgo::Nvls,
                                                TunerAlgo::NvlsTree,
                                                TunerAlgo::CollNet,
                                                TunerAlgo::Pat,
                                                TunerAlgo::HalvingDoubling,
                                                TunerAlgo::Direct};
constexpr std::array<Proto, 3> kProtos = {Proto::LL, Proto::LL128, Proto::Simple};

bool is_one_of(CollectiveOp op, std::initializer_list<CollectiveOp> ops) {
  return std::find(ops.begin(), ops.end(), op) != ops.end();
}

using Coll = CollectiveOp;

// Whether NCCL can run `a` for `op` on this cluster at all (explicit requests), and whether its
// tuner considers it automatically (`automatic`).
bool algo_possible(const NcclCluster& c, Coll op, TunerAlgo a) {
  const bool multi = c.nodes > 1, local = c.gpus_per_node > 1;
  switch (a) {
    case TunerAlgo::Ring:
      return is_one_of(op, {Coll::AllReduce, Coll::AllGather, Coll::ReduceScatter, Coll::Broadcast,
                            Coll::Reduce});
    case TunerAlgo::Tree:
      return op == Coll::AllReduce;
    case TunerAlgo::Nvls:
      return c.nvls && local &&
             (op == Coll::AllReduce
                  ? (!multi || c.sharp)
                  : (!multi && is_one_of(op, {Coll::AllGather, Coll::ReduceScatter})));
    case TunerAlgo::NvlsTree:
      return c.nvls && local && multi && op == Coll::AllReduce;
    case TunerAlgo::CollNet:
      return c.sharp && multi && op == Coll::AllReduce;
    case TunerAlgo::Pat:
      return !local && multi && is_one_of(op, {Coll::AllGather, Coll::ReduceScatter});
    case TunerAlgo::HalvingDoubling:
      return op == Coll::AllReduce;
    case TunerAlgo::Direct:
      return is_one_of(op, {Coll::AllReduce, Coll::AllGather, Coll::ReduceScatter, Coll::Broadcast,
                            Coll::Reduce, Coll::AllToAll, Coll::SendRecv});
    case TunerAlgo::Auto:
      return false;
  }
  return false;
}

bool algo_automatic(const NcclCluster& c, Coll op, TunerAlgo a) {
  if (op == Coll::AllToAll || op == Coll::SendRecv) return a == TunerAlgo::Direct;
  if (a == TunerAlgo::HalvingDoubling || a == TunerAlgo::Direct) return false;  // not NCCL's
  if (a == TunerAlgo::Tree) return c.nodes > 1;  // NCCL's tree pays off across nodes only
  return true;
}

bool proto_possible(const NcclCluster& c, TunerAlgo a, Proto p) {
  if (a == TunerAlgo::Nvls || a == TunerAlgo::NvlsTree || a == TunerAlgo::CollNet ||
      a == TunerAlgo::Pat)
    return p == Proto::Simple;
  if (p == Proto::LL128 && c.nodes > 1 && !c.ll128_network) return false;
  return true;
}

// Point-to-point operations pick their protocol by size, not by model (NCCL_P2P_LL_THRESHOLD).
bool proto_automatic(Coll op, Proto p, double per_peer_bytes) {
  if (op != Coll::AllToAll && op != Coll::SendRecv) return true;
  return p == (per_peer_bytes <= nccl::kP2pLLThreshold ? Proto::LL : Proto::Simple);
}

Algo nccl_algo(TunerAlgo a) {
  switch (a) {
    case TunerAlgo::Tree:
      return Algo::Tree;
    case TunerAlgo::Nvls:
      return Algo::Nvls;
    case TunerAlgo::NvlsTree:
      return Algo::NvlsTree;
    case TunerAlgo::CollNet:
      return Algo::CollNetDirect;
    case TunerAlgo::Pat:
      return Algo::Pat;
    default:
      return Algo::Ring;
  }
}

Cost cost_of(const NcclCluster& c, Coll op, TunerAlgo a, Proto p, double S, std::uint32_t ch) {
  switch (a) {
    case TunerAlgo::Ring:
      return ring_cost(c, op, S, p, ch);
    case TunerAlgo::Tree:
      return tree_cost(c, S, p, ch);
    case TunerAlgo::Nvls:
      return nvls_cost(c, op, S);
    case TunerAlgo::NvlsTree:
      return nvls_tree_cost(c, S, ch);
    case TunerAlgo::CollNet:
      return collnet_cost(c, S);
    case TunerAlgo::Pat:
      return pat_cost(c, S, p);
    case TunerAlgo::HalvingDoubling:
      return halving_doubling_cost(c, S, p, ch);
    default:
      return direct_cost(c, op, S, p);
  }
}

Prediction make_prediction(const NcclCluster& c, const TunerRequest& r, TunerAlgo a, Proto p) {
  const double S = r.bytes.as_double();
  const std::uint32_t max_ch = c.max_channels();
  const std::uint32_t ch = r.channels > 0
                               ? r.channels
                               : pick_channels(max_ch, nccl_algo(a), p, r.bytes.count(), c.ranks());
  // Channel reduction changes how work is split, not the bandwidth the caps allow: NCCL's model
  // (and ours) prices a message with the communicator's channel count.
  const Cost cost = cost_of(c, r.op, a, p, S, r.channels > 0 ? r.channels : max_ch);
  Prediction out;
  out.algo = a;
  out.proto = p;
  out.channels = ch;
  out.latency = Time::us(cost.latency_us);
  out.transfer = Time::us(cost.transfer_us);
  const double launch = r.include_launch_overhead ? nccl::kLaunchOverheadUs : 0.0;
  out.time = Time::us(launch + cost.latency_us + cost.transfer_us);
  out.bus_GBps = cost.bus_GBps;
  out.step_us = cost.step_us;
  out.efficiency = p == Proto::LL ? 0.5 : p == Proto::LL128 ? nccl::kLL128Efficiency : 1.0;
  const double seconds = out.time.seconds();
  out.algbw_GBps = seconds > 0 ? S / seconds / 1e9 : 0;
  out.busbw_GBps = out.algbw_GBps * busbw_factor(r.op, c.ranks());
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

double NcclCluster::nic_path_GBps() const {
  return gpu_nic_GBps > 0 ? std::min(nic_GBps, gpu_nic_GBps) : nic_GBps;
}

double NcclCluster::node_net_GBps() const {
  return nics_per_node * nccl::net_search_speed(generation, nic_path_GBps());
}

std::uint32_t NcclCluster::max_channels() const {
  std::uint32_t ch = intra_path == nccl::Path::NvLink ? nccl::intra_node_channels(generation) : 2;
  if (nodes > 1) ch = std::min(ch, std::max(2u, nccl::kChannelsPerNic * nics_per_node));
  return std::min(ch, nccl::kMaxChannels);
}

const char* to_string(TunerAlgo a) {
  for (const auto& n : kAlgoNames)
    if (n.algo == a) return n.name;
  return "?";
}

TunerAlgo parse_tuner_algo(std::string_view name, std::string_view field) {
  std::string known;
  for (const auto& n : kAlgoNames) {
    if (name == n.name) return n.algo;
    known += (known.empty() ? "" : ", ") + std::string(n.name);
  }
  throw InputError(std::string(field),
                   "unknown algorithm '" + std::string(name) + "' (expected one of " + known + ")");
}

TunerProto parse_tuner_proto(std::string_view name, std::string_view field) {
  if (name == "auto") return TunerProto::Auto;
  if (name == "ll" || name == "LL") return TunerProto::LL;
  if (name == "ll128" || name == "LL128") return TunerProto::LL128;
  if (name == "simple" || name == "Simple") return TunerProto::Simple;
  throw InputError(std::string(field), "unknown protocol '" + std::string(name) +
                                           "' (expected one of auto, ll, ll128, simple)");
}

Algorithm program_algorithm(TunerAlgo a) {
  switch (a) {
    case TunerAlgo::Tree:
      return Algorithm::Tree;
    case TunerAlgo::Nvls:
      return Algorithm::NetReduce;
    case TunerAlgo::CollNet:
      return Algorithm::CollNet;
    case TunerAlgo::NvlsTree:
      return Algorithm::NvlsTree;
    case TunerAlgo::Pat:
      return Algorithm::Pat;
    case TunerAlgo::HalvingDoubling:
      return Algorithm::HalvingDoubling;
    case TunerAlgo::Direct:
      return Algorithm::Direct;
    default:
      return Algorithm::Ring;
  }
}

std::vector<Prediction> candidates(const NcclCluster& c, const TunerRequest& r) {
  check_cluster(c);
  const double per_peer =
      r.op == Coll::SendRecv ? r.bytes.as_double() : r.bytes.as_double() / c.ranks();
  std::vector<Prediction> out;
  for (TunerAlgo a : kConcrete) {
    if (r.algo != TunerAlgo::Auto && a != r.algo) continue;
    if (!algo_possible(c, r.op, a)) continue;
    if (r.algo == TunerAlgo::Auto && !algo_automatic(c, r.op, a)) continue;
    for (Proto p : kProtos) {
      if (r.proto != TunerProto::Auto && static_cast<int>(p) != static_cast<int>(r.proto) - 1)
        continue;
      if (!proto_possible(c, a, p)) continue;
      if (r.proto == TunerProto::Auto && !proto_automatic(r.op, p, per_peer)) continue;
      out.push_back(make_prediction(c, r, a, p));
    }
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const Prediction& x, const Prediction& y) { return x.time < y.time; });
  return out;
}

Prediction predict(const NcclCluster& c, const TunerRequest& r) {
  if (r.op == Coll::AllToAllV || r.op == Coll::Barrier)
    throw InputError("op", std::string("the NCCL model does not cover ") + to_string(r.op) +
                               " (use all_reduce, all_gather, reduce_scatter, broadcast, reduce, "
                               "alltoall or sendrecv)");
  const auto all = candidates(c, r);
  if (all.empty()) {
    const std::string what =
        r.algo == TunerAlgo::Auto ? std::string("no algorithm") : to_string(r.algo);
    throw InputError("algo", what + " cannot run " + to_string(r.op) + " on this cluster (" +
                                 std::to_string(c.nodes) + " nodes x " +
                                 std::to_string(c.gpus_per_node) + " GPUs" +
                                 (c.nvls ? ", NVLS" : "") + (c.sharp ? ", SHARP" : "") +
                                 (r.proto != TunerProto::Auto ? ", this protocol" : "") + ")");
  }
  return all.front();
}

}  // namespace lockstep
