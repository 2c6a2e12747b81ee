// NCCL's view of groups of GPUs, and their collectives timed the one way every command uses.
#include "lockstep/nccl/groups.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

#include "graph_model.hpp"
#include "lockstep/core/error.hpp"
#include "lockstep/nccl/constants.hpp"
#include "lockstep/nccl/engine_run.hpp"
#include "lockstep/routing/gpu_transit.hpp"
#include "lockstep/routing/pxn.hpp"
#include "pxn.hpp"

namespace lockstep {
namespace {

// Link latency from a GPU to the scale-up switch and on to another GPU of the same domain: what
// the flow engine charges each message inside a node (0 when the GPU has no scale-up port).
Time scale_up_path_latency(const Topology& topo, DeviceId gpu) {
  for (const Port& port : topo.ports(gpu)) {
    const DeviceKind kind = topo.device(port.peer).kind;
    if (kind == DeviceKind::ScaleUpSwitch)
      return topo.link(Topology::link_of(port.out)).latency * 2;
    if (kind == DeviceKind::Gpu) return topo.link(Topology::link_of(port.out)).latency;
  }
  return Time::zero();
}

}  // namespace

NcclGroups::NcclGroups(const Topology& topology, bool pxn)
    : NcclGroups(nccl_cluster(topology), &topology) {
  whole_.sharp = false;
  whole_.pxn = pxn;
}

NcclGroups::NcclGroups(const NcclCluster& cluster, const Topology* topology, const Topology* run_on)
    : whole_(cluster), topo_(topology), run_on_(run_on ? run_on : topology) {}

const Topology& NcclGroups::topology() const {
  if (topo_ == nullptr) throw InputError("engine", "an engine run needs a topology to run on");
  return *topo_;
}

GpuGroup NcclGroups::all() const {
  GpuGroup out(whole_.ranks());
  std::iota(out.begin(), out.end(), 0u);
  return out;
}

NcclCluster NcclGroups::cluster_of(const GpuGroup& gpus) const {
  NcclCluster c = whole_;
  const std::uint32_t domain = std::max(1u, whole_.gpus_per_node);
  std::map<std::uint32_t, std::uint32_t> per_node;
  for (std::uint32_t g : gpus) ++per_node[g / domain];
  std::uint32_t most = 0;
  for (const auto& [node, count] : per_node) most = std::max(most, count);
  c.nodes = static_cast<std::uint32_t>(per_node.size());
  c.gpus_per_node = most;
  // The torus's rings are those of every GPU in the builder's order, not of a subset.
  bool every_gpu_in_order = gpus.size() == whole_.ranks();
  for (std::size_t i = 0; every_gpu_in_order && i < gpus.size(); ++i)
    every_gpu_in_order = gpus[i] == i;
  if (!every_gpu_in_order) c.torus_dims.clear();
  // The NICs nearest the GPUs in use (NCCL picks each GPU's closest NIC).
  if (whole_.nics_per_node > 0) {
    c.nics_per_node = std::max(1u, whole_.nics_per_node * most / domain);
  }
  return c;
}

Prediction NcclGroups::predict(const TunerRequest& request, const GpuGroup& gpus) const {
  return lockstep::predict(cluster_of(gpus), request);
}

struct NcclGroups::GraphKey {
  Algorithm algo;
  nccl::Proto proto;
  CollectiveOp op;
  std::uint32_t channels;
  double skew;  // alltoallv's matrix
  std::vector<GpuGroup> groups;
  auto operator<=>(const GraphKey&) const = default;
};
struct NcclGroups::GraphCache {
  std::map<GraphKey, nccl_detail::GraphTerm> terms;
  // The fabric's router with NCCL's PXN relays, for p2p collectives (made on first use; the
  // graph and the engines route them alike).
  const Router& pxn_router(const Topology& topo, bool nvb) {
    if (!pxn) pxn = make_pxn_router(topo, fabric_routing(topo), nvb);
    return *pxn;
  }
  std::unique_ptr<Router> pxn;
};

const Router& NcclGroups::router() const {
  // NCCL_NVB_DISABLE=1: no GPU relays (PATH_NVB), GPUs without NVLink meet over the host.
  if (!router_)
    router_ = whole_.nvb ? make_router(*run_on_, fabric_routing(*run_on_))
                         : make_router_without_gpu_transit(*run_on_, fabric_routing(*run_on_));
  return *router_;
}

std::vector<NcclGroupSpec> NcclGroups::group_specs(const NcclEngineRun& how, const Prediction& p,
                                                   CollectiveOp op,
                                                   const std::vector<GpuGroup>& groups) const {
  std::vector<NcclGroupSpec> specs;
  for (const GpuGroup& g : groups) {
    NcclGroupSpec s{how.spec, g};
    s.spec.ranks = static_cast<Rank>(g.size());
    // Nodes holding different numbers of the group's GPUs: a flat ring.
    if (cluster_of(g).ranks() != g.size()) s.spec.ranks_per_node = 0;
    if (op == CollectiveOp::AllToAllV && s.spec.alltoallv.size() != g.size())
      s.spec.alltoallv = skewed_alltoallv(s.spec.ranks, how.spec.bytes, how.spec.type, p.skew);
    specs.push_back(std::move(s));
  }
  return specs;
}

const nccl_detail::GraphTerm& NcclGroups::graph_term(const Prediction& p, CollectiveOp op,
                                                     Bytes bytes, DataType type,
                                                     const std::vector<GpuGroup>& groups) const {
  // The traffic spreads over the channels the model's bandwidth term assumes (the
  // communicator's, tuner.cpp, unless the request fixed them; fewer run small messages, where
  // the latency terms dominate): one channel of a ring crosses one NIC per node, sixteen cross
  // them all.
  Prediction wide = p;
  wide.channels = std::max(p.channels, p.bandwidth_channels);
  if (!graph_cache_) graph_cache_ = std::make_shared<GraphCache>();
  GraphKey key{p.algo, p.proto, op, wide.channels, p.skew, groups};
  auto it = graph_cache_->terms.find(key);
  if (it == graph_cache_->terms.end()) {
    const NcclCluster first = cluster_of(groups.at(0));
    const NcclEngineRun how = nccl_engine_run(first, wide, op, bytes, type, topology());
    const Router& routes = nccl_detail::routes_with_pxn(how)
                               ? graph_cache_->pxn_router(*run_on_, whole_.nvb)
                               : router();
    const auto term = nccl_detail::price_on_graph(first, p, op, group_specs(how, p, op, groups),
                                                  topology(), *run_on_, routes);
    it = graph_cache_->terms.emplace(std::move(key), term).first;
  }
  return it->second;
}

Time NcclGroups::time(const Prediction& p, CollectiveOp op, Bytes bytes, DataType type,
                      const std::vector<GpuGroup>& groups, Engine* engine,
                      const std::vector<std::optional<Time>>& late) const {
  // The analytical engine's straggler: every rank of all-reduce, all-gather, reduce-scatter and
  // all-to-all needs data that depends on every rank's, so none can end before the latest
  // start; adding the delay is exact when nothing of the collective can run ahead of the late
  // rank's data (docs/scenario-collectives.md "Faults").
  Time latest = Time::zero();
  for (const auto& d : late)
    if (d) latest = std::max(latest, *d);
  if (engine == nullptr && topo_ == nullptr) return p.time + latest;
  if (engine != nullptr) {
    const NcclEngineRun how =
        nccl_engine_run(cluster_of(groups.at(0)), p, op, bytes, type, topology());
    if (!graph_cache_) graph_cache_ = std::make_shared<GraphCache>();
    const Router& routes = nccl_detail::routes_with_pxn(how)
                               ? graph_cache_->pxn_router(*run_on_, whole_.nvb)
                               : router();
    return run_nccl_engine(how, *run_on_, routes, *engine, group_specs(how, p, op, groups), late);
  }
  // The analytical engine: the model's time, plus what the graph adds.
  const NcclCluster first = cluster_of(groups.at(0));
  const nccl_detail::GraphTerm& term = graph_term(p, op, bytes, type, groups);
  Time t = p.time + term.latency_excess;
  // The graph binds only where its busiest links need longer than the model's bandwidth term
  // (equal to rounding on a fabric as fast as NCCL assumes).
  const double graph_s = term.seconds_per_byte * bytes.as_double();
  if (graph_s > 1e15)  // beyond any time worth printing (and near what Time can hold)
    throw InputError("bytes", fmt::format("{} bytes would take {:.3g} s over the graph's busiest "
                                          "link: check the sizes and the link bandwidths",
                                          bytes.count(), graph_s));
  // A tree moves S / channels per lane in k chunks (NCCL's chunk rule). One chunk crosses the
  // tree level by level, each level's loads in turn; with more, the other chunks fill a link's
  // idle time between its levels, and what is left is the time before its first use and after
  // its last, paid at a chunk's size (docs/analytical-engine.md "Stages").
  double staged = graph_s;
  const nccl_detail::StageTerm& stages = term.stages;
  if (stages.one_chunk > 0 || !stages.links.empty()) {
    // NVLS tree: each (channel, head) pair moves its share in NVLS tree's chunks.
    const bool nvls = p.algo == Algorithm::NvlsTree;
    const std::uint32_t heads = nvls ? nccl::nvls_heads(first.gpus_per_node) : 1;
    const double chunk =
        nvls ? nccl::nvls_tree_chunk_bytes(bytes.as_double(), p.channels, heads, first.nodes)
             : nccl::tree_chunk_bytes(p.proto, bytes.as_double(), p.channels, first.gpus_per_node,
                                      first.nodes);
    const double per_lane =
        bytes.as_double() / (double(std::max<std::uint32_t>(1, p.channels)) * heads);
    const double k = chunk > 0 ? std::ceil(per_lane / chunk) : 1;
    double fill = k <= 1 ? stages.one_chunk : 0;
    if (k > 1)
      for (const auto& [steady, idle] : stages.links)
        fill = std::max(fill, steady + idle / k - term.seconds_per_byte);
    staged += fill * bytes.as_double();
  }
  if (staged > p.transfer.seconds() * (1 + 1e-9)) t += Time::s(staged) - p.transfer;
  return t + latest;
}

// What plan() reads of a group: cluster_of's fields that depend on the group, its size and the
// hop latency of its first GPU (the rest is the whole cluster's and the topology's).
struct NcclGroups::PlanKey {
  CollectiveOp op;
  std::uint64_t bytes;
  DataType type;
  std::size_t size;
  std::uint32_t nodes, gpus_per_node, nics_per_node;
  std::vector<std::uint32_t> torus_dims;
  std::int64_t hop_ps;
  auto operator<=>(const PlanKey&) const = default;
};
struct NcclGroups::PlanCache {
  std::map<PlanKey, PlannedCollective> plans;
};

PlannedCollective NcclGroups::plan(CollectiveOp op, Bytes bytes, DataType type,
                                   const GpuGroup& gpus) const {
  const Topology& topo = topology();
  const NcclCluster c = cluster_of(gpus);
  const Time first_hop = scale_up_path_latency(topo, topo.gpus()[gpus[0]]);
  // Planning prices the group's paths on the graph (routers for path latencies): a 6,144-GPU
  // step plans ~10^5 collectives of a handful of shapes.
  if (!plan_cache_) plan_cache_ = std::make_shared<PlanCache>();
  const PlanKey key{op,
                    bytes.count(),
                    type,
                    gpus.size(),
                    c.nodes,
                    c.gpus_per_node,
                    c.nics_per_node,
                    c.torus_dims,
                    first_hop.picoseconds()};
  if (auto it = plan_cache_->plans.find(key); it != plan_cache_->plans.end()) return it->second;
  TunerRequest request;
  request.op = op;
  request.bytes = bytes;
  const Prediction p = lockstep::predict(c, request);
  NcclEngineRun how = nccl_engine_run(c, p, op, bytes, type, topo);
  // One step program carries many collectives, so the protocol's efficiency cannot be an
  // engine option: the programs move bytes / efficiency instead, which occupies the links the
  // same time. The per-step latency becomes part of one lead delay: launch + NCCL's latency term.
  // One efficiency for every link, where an engine run has one for NVLink and one for the
  // network: the medium's whose links bind the collective on the graph (a ring over 2 nodes
  // of 2 H100 is held by its NICs at 48 / 50 GB/s, not by NVLink at 0.82 of its line rate:
  // with NVLink's it ran 17% slower than the reduced expansion's time, docs/training.md).
  double efficiency = how.transfer_efficiency;
  if (gpus.size() > 1) {
    const double binding = graph_term(p, op, bytes, type, {gpus}).binding_efficiency;
    if (binding > 0) efficiency = binding;
  }
  const std::uint64_t unit = size_of(type) * gpus.size();
  const auto stretched = static_cast<std::uint64_t>(
      std::ceil(bytes.as_double() / efficiency / static_cast<double>(unit)));
  how.spec.bytes = Bytes(std::max<std::uint64_t>(1, stretched) * unit);
  how.spec.ranks = static_cast<Rank>(gpus.size());
  if (c.ranks() != gpus.size()) how.spec.ranks_per_node = 0;  // uneven: a flat ring
  // Inside a node one channel: NCCL's channels split the same bytes over the same links, which a
  // flow engine shares the same way, while a step of thousands of collectives x 32 channels
  // would multiply the program's size (and memory) by 32. Across nodes a channel crosses each
  // node boundary through one GPU's NIC (a ring channel enters one GPU further on than the one
  // before; a tree channel's chain heads at one GPU, its mirror channel on the same): one
  // channel loaded one NIC of g and ran the group's all-reduce g times slower than NCCL (2 x 8
  // H100, 16 GB reduce-scatter + all-gather: 674 ms against 79). As many channels as take every
  // GPU's NIC once, at most NCCL's own.
  const std::uint32_t g = how.spec.ranks_per_node;
  const bool across = c.nodes > 1 && g > 1;
  const std::uint32_t per_nic = how.spec.algorithm == Algorithm::Tree ? 2 : 1;
  how.spec.channels =
      across ? static_cast<std::uint16_t>(std::min<std::uint32_t>(p.channels, per_nic * g)) : 1;
  // NCCL's tree chunk (nccl_engine_run) is cut for its channels' bytes, not these: the
  // program's own rule for its bytes per channel.
  how.spec.chunk = Bytes{};
  PlannedCollective out;
  out.programs = make_collective(how.spec);
  out.lead = p.time - p.transfer;
  // NCCL's latency term (in the lead) already covers each step's hop; the step program pays the
  // hop's link latency again on every message, so take that back out for groups in one node.
  if (c.nodes == 1 && out.programs->num_ranks() > 1) {
    std::uint64_t sends = 0;
    for (OpIndex i = 0; i < out.programs->num_ops(0); ++i)
      sends += out.programs->op(0, i).kind == OpKind::Send ? 1 : 0;
    const Time hop = std::min(first_hop, Time::us(p.step_us));
    out.lead = std::max(Time::zero(), out.lead - hop * static_cast<std::int64_t>(sends));
  }
  plan_cache_->plans.emplace(key, out);
  return out;
}

}  // namespace lockstep
