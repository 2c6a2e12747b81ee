// Training collectives as NCCL runs them: the group's NCCL cluster, the tuner's choice of
// algorithm, protocol and channels, and the engine-run costs `lockstep collective` applies
// (engine/registry/collective_sweep.hpp), so that both commands agree for the same group and size.
#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

#include "lockstep/engine/registry/collective_sweep.hpp"
#include "training_detail.hpp"

namespace lockstep::train_detail {
namespace {

// BF16 when the size allows it (training tensors are BF16); bytes otherwise.
DataType type_for(Bytes bytes) {
  return bytes.count() % 2 == 0 ? DataType::Bf16 : DataType::Uint8;
}

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

NcclGroups::NcclGroups(const Topology& topo) : topo_(topo), whole_(nccl_cluster(topo)) {
  // As `lockstep collective` without --sharp: in-network reduction is opt-in.
  whole_.sharp = false;
}

NcclCluster NcclGroups::cluster_of(const std::vector<std::uint32_t>& globals) const {
  NcclCluster c = whole_;
  const std::uint32_t domain = std::max(1u, whole_.gpus_per_node);
  std::map<std::uint32_t, std::uint32_t> per_node;
  for (std::uint32_t g : globals) ++per_node[g / domain];
  std::uint32_t most = 0;
  for (const auto& [node, count] : per_node) most = std::max(most, count);
  c.nodes = static_cast<std::uint32_t>(per_node.size());
  c.gpus_per_node = most;
  // The NICs nearest the GPUs in use (NCCL picks each GPU's closest NIC).
  if (whole_.nics_per_node > 0) {
    c.nics_per_node = std::max(1u, whole_.nics_per_node * most / domain);
  }
  return c;
}

Prediction NcclGroups::predict(CollectiveOp op, Bytes bytes,
                               const std::vector<std::uint32_t>& globals) const {
  TunerRequest request;
  request.op = op;
  request.bytes = bytes;
  return lockstep::predict(cluster_of(globals), request);
}

PlannedCollective NcclGroups::plan(CollectiveOp op, Bytes bytes,
                                   const std::vector<std::uint32_t>& globals) const {
  const NcclCluster c = cluster_of(globals);
  const Prediction p = predict(op, bytes, globals);
  const DataType type = type_for(bytes);
  NcclEngineRun how = nccl_engine_run(c, p, op, bytes, type, topo_);
  // One step program carries many collectives, so the protocol's efficiency cannot be an
  // engine option: the programs move bytes / efficiency instead, which occupies the links the
  // same time. The per-step latency becomes part of one lead delay: launch + NCCL's latency term.
  const std::uint64_t unit = size_of(type) * globals.size();
  const auto stretched = static_cast<std::uint64_t>(
      std::ceil(bytes.as_double() / how.transfer_efficiency / static_cast<double>(unit)));
  how.spec.bytes = Bytes(std::max<std::uint64_t>(1, stretched) * unit);
  how.spec.ranks = static_cast<Rank>(globals.size());
  if (c.ranks() != globals.size()) how.spec.ranks_per_node = 0;  // uneven: a flat ring
  // One channel: NCCL's channels split the same bytes over the same links, which a flow engine
  // shares the same way, while a step of thousands of collectives x 32 channels would multiply
  // the program's size (and memory) by 32.
  how.spec.channels = 1;
  PlannedCollective out;
  out.programs = make_collective(how.spec);
  out.lead = p.time - p.transfer;
  // NCCL's latency term (in the lead) already covers each step's hop; the step program pays the
  // hop's link latency again on every message, so take that back out for groups in one node.
  if (c.nodes == 1 && out.programs->num_ranks() > 1) {
    std::uint64_t sends = 0;
    for (OpIndex i = 0; i < out.programs->num_ops(0); ++i)
      sends += out.programs->op(0, i).kind == OpKind::Send ? 1 : 0;
    const Time hop =
        std::min(scale_up_path_latency(topo_, topo_.gpus()[globals[0]]), Time::us(p.step_us));
    out.lead = std::max(Time::zero(), out.lead - hop * static_cast<std::int64_t>(sends));
  }
  return out;
}

Time Runner::nccl_collective(CollectiveOp op, Bytes bytes,
                             const std::vector<std::vector<std::uint32_t>>& groups) {
  const Prediction p = nccl_->predict(op, bytes, groups[0]);
  if (collective_engine_ == "analytical") return p.time;
  const NcclEngineRun how =
      nccl_engine_run(nccl_->cluster_of(groups[0]), p, op, bytes, type_for(bytes), topo_);
  std::vector<std::uint32_t> globals;
  MaterializedProgramSet set(static_cast<Rank>(groups.size() * groups[0].size()), DataType::Bf16);
  Rank next = 0;
  for (const auto& g : groups) {
    CollectiveSpec spec = how.spec;
    spec.ranks = static_cast<Rank>(g.size());
    if (nccl_->cluster_of(g).ranks() != g.size()) spec.ranks_per_node = 0;
    const auto programs = make_collective(spec);
    std::vector<Rank> members(g.size());
    std::iota(members.begin(), members.end(), next);
    next += static_cast<Rank>(g.size());
    append_collective(set, *programs, members, std::vector<OpIndex>(g.size(), kNone), 0);
    globals.insert(globals.end(), g.begin(), g.end());
  }
  EngineOptions options;
  how.apply(options);
  std::unique_ptr<Engine> engine;
  if (!collective_engine_.empty()) engine = make_sweep_engine(collective_engine_, set.num_ops(0));
  Engine& run_on = engine ? *engine : engine_;
  std::vector<DeviceId> placement;
  for (std::uint32_t g : globals) placement.push_back(topo_.gpus()[g]);
  EngineInput in;
  in.topology = &topo_;
  in.programs = &set;
  in.placement = placement;
  in.router = &router_;
  in.options = options;
  return how.fixed + run_on.run(in).makespan;
}

}  // namespace lockstep::train_detail
