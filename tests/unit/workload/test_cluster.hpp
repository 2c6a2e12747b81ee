#pragma once
// Small clusters and models for the workload tests, with numbers chosen so that kernel and
// transfer times come out round (derivations in the comments).
#include <map>
#include <memory>

#include "lockstep/topology/builder.hpp"
#include "lockstep/topology/graph.hpp"
#include "lockstep/topology/presets.hpp"
#include "lockstep/workload/step_builder.hpp"
#include "lockstep/workload/train_config.hpp"
#include "lockstep/workload/training.hpp"
#include "reference_engine.hpp"

namespace lockstep::testing {

/// `nodes` HGX-H100 servers on the preset's rail-optimised NDR fabric, using `gpus_per_node`
/// GPUs each (and as many NICs, one per GPU).
inline Topology ndr_h100_nodes(std::uint32_t nodes, std::uint32_t gpus_per_node) {
  PresetRequest request;
  request.fabric = "ib-ndr";
  request.nodes = nodes;
  request.gpus_per_node = gpus_per_node;
  return *build_topology(rail_optimized_args(resolve_preset(request))).graph;
}

/// `nodes` servers of `per_node` H100s, every GPU on one switch (star).
inline Topology star_cluster(std::uint32_t nodes, std::uint32_t per_node) {
  TopologyBuilder b("star");
  ClusterTraits traits;
  traits.gpu = "h100";
  traits.gpus_per_node = per_node;
  b.set_traits(traits);
  std::vector<DeviceId> gpus;
  for (std::uint32_t n = 0; n < nodes; ++n) {
    for (std::uint32_t g = 0; g < per_node; ++g) {
      Device d;
      d.kind = DeviceKind::Gpu;
      d.node = n;
      d.local_index = g;
      gpus.push_back(b.add_device(d));
    }
  }
  Device sw;
  sw.kind = DeviceKind::Switch;
  const DeviceId s = b.add_device(sw);
  for (DeviceId g : gpus) b.add_link({g, s, Bandwidth::gbps(400), Time::ns(500)});
  return std::move(b).build();
}

/// A two-layer model whose layer forward pass takes exactly 1 ms per micro-batch of one
/// 1024-token sequence at the achieved rate below:
///   attention params 1024 x 128 x (2x8 + 2x8) = 4 Mi, GELU MLP 2 x 1024 x 4096 = 8 Mi,
///   forward FLOPs per token 2 x 12 Mi + 4 x 1024 x 8 x 128 = 28 Mi, per micro-batch 28 Gi;
///   head 2 x vocab 14336 x hidden 1024 = 28 Mi per token, 28 Gi per micro-batch: also 1 ms.
/// Gradients per rank (tp = 1): a layer 12 Mi params = 25,165,824 B, the embedding and the head
/// 14 Mi params = 29,360,128 B each.
/// Backward passes take 2 ms.
inline TrainConfig tiny_config(std::uint32_t tp, std::uint32_t pp, std::uint32_t dp,
                               std::uint64_t global_batch) {
  TrainConfig c;
  c.model.name = "tiny";
  c.model.layers = 2;
  c.model.hidden = 1024;
  c.model.ffn = 4096;
  c.model.heads = 8;
  c.model.kv_heads = 8;
  c.model.vocab = 14336;
  c.model.seq = 1024;
  c.model.gated_mlp = false;
  c.par.tp = tp;
  c.par.pp = pp;
  c.par.dp = dp;
  c.global_batch = global_batch;
  c.micro_batch = 1;
  c.efficiency = 1.0;
  c.peak_flops = 28.0 * 1024 * 1024 * 1024 * 1000;  // 28 Gi FLOP per ms
  c.optimizer_step = false;  // the hand-derived steps leave it out (OptimizerStep tests add it)
  c.clip_grad = 0;           // and the gradient-norm all-reduce (GradNorm tests add it)
  // A BF16 gradient buffer: the hand-derived steps send 2 B per parameter (the FP32 buffer's
  // twice that: Training.Fp32GradientBufferReducesTwiceTheBytes).
  c.grad_reduce_in_fp32 = false;
  return c;
}

/// Options running every engine request on one reference engine, with collectives as plain
/// ring / direct programs (no NCCL protocol costs), so that times can be derived by hand.
inline SimulateOptions reference_options(Time latency, Bandwidth bandwidth) {
  SimulateOptions o;
  o.nccl = false;
  o.engines = [latency, bandwidth](std::string_view) {
    return std::make_unique<ReferenceEngine>(latency, bandwidth);
  };
  return o;
}

/// The full expansion's programs of one step of `c` (every rank, collectives as real sends).
inline StepPrograms full_step_programs(const TrainConfig& c, const StepPlan& plan) {
  StepBuildOptions o;
  o.full = true;
  o.collectives = default_collective_factory();
  return build_step_programs(c, plan, o);
}

/// Bytes rank `from` sends in ops of `role`, by peer.
inline std::map<Rank, std::uint64_t> sends_of(const StepPrograms& p, Rank from, OpRole role) {
  std::map<Rank, std::uint64_t> sent;
  for (OpIndex i = 0; i < p.programs->num_ops(from); ++i) {
    const Op op = p.programs->op(from, i);
    if (p.tags[from][i].role == role && op.kind == OpKind::Send) sent[op.peer] += op.bytes();
  }
  return sent;
}

/// The same for the full expansion of `c` with its own plan.
inline std::map<Rank, std::uint64_t> sent_by(const TrainConfig& c, Rank from, OpRole role) {
  return sends_of(full_step_programs(c, make_step_plan(c, c.peak_flops)), from, role);
}

}  // namespace lockstep::testing
