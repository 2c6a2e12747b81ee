#pragma once
// Inference communication primitives priced on a topology by any engine (docs/moe-dispatch.md):
// MoE dispatch / combine (collective/moe.hpp) and the KV-cache transfer of disaggregated serving
// (prefill instance to decode instance, DistServe arXiv:2401.09670, Mooncake arXiv:2407.00079).
//
//   const Topology topo = ...;
//   CommRun d = run_moe(spec, MoePhase::Dispatch, topo, "flow");
//   KvTransferSpec kv{.prompt = 4096, .layers = 80, .kv_heads = 8, .head_dim = 128};
//   kv.prefill_gpus = {0, 1, 2, 3, 4, 5, 6, 7}; kv.decode_gpus = {8, ..., 15};
//   CommRun t = run_kv_transfer(kv, topo, "analytical");
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "lockstep/collective/moe.hpp"
#include "lockstep/collective/program.hpp"
#include "lockstep/core/units.hpp"
#include "lockstep/topology/graph.hpp"

namespace lockstep {

/// What one run of a primitive took and moved.
struct CommRun {
  Time time;                 // the engine's makespan
  double nvlink_bytes = 0;   // bytes GPUs put on NVLink (directed NVLink links leaving a GPU)
  double network_bytes = 0;  // bytes NICs put into the scale-out fabric
};

/// Bytes on a run's links by medium, as CommRun counts them.
void count_link_bytes(const Topology& topology, const std::vector<double>& link_bytes,
                      CommRun& out);

/// Runs `programs` on `engine` (analytical, flow, packet) with rank r on topology GPU
/// placement[r] (empty: the first GPUs in order), shortest-path ECMP routing, no NCCL overheads.
CommRun run_programs(const ProgramSet& programs, const Topology& topology, std::string_view engine,
                     const std::vector<std::uint32_t>& placement = {});

/// One MoE dispatch or combine over the first spec.ranks GPUs of `topology`, spec.ranks_per_node
/// to an NVLink domain (the caller's to match: NCCL's nodes, an NVL72 rack's 72 GPUs).
CommRun run_moe(const MoeSpec& spec, MoePhase phase, const Topology& topology,
                std::string_view engine);

/// The NVLink domain of each GPU of `gpus` (topology GPU indices): 0 for the first GPU's, then
/// in order of first appearance; two GPUs share one when the routed path between them crosses
/// no NIC (an HGX server's 8 GPUs, an NVL72 rack's 72).
std::vector<std::uint32_t> nvlink_domains(const Topology& topology,
                                          const std::vector<std::uint32_t>& gpus);

/// One dispatch or combine of an expert-parallel group placed on `gpus` (topology GPU indices,
/// any order): spec.ranks and ranks_per_node come from the group (its GPUs per NVLink domain
/// when every domain holds as many, else 1: each GPU alone), experts round up to a multiple of
/// the ranks and topk down to the experts reachable, spec.rank_tokens (in `gpus` order) follow
/// their GPUs. Zero tokens take no time.
CommRun run_moe_group(MoeSpec spec, MoePhase phase, const std::vector<std::uint32_t>& gpus,
                      const Topology& topology, std::string_view engine);
/// The spec run_moe_group runs for `gpus` and, in `placement`, the topology GPU of each of its
/// ranks (the group's GPUs domain by domain).
MoeSpec moe_group_spec(MoeSpec spec, const std::vector<std::uint32_t>& gpus,
                       const Topology& topology, std::vector<std::uint32_t>& placement);

/// One request's KV cache moving from a prefill instance's GPUs (its TP shards) to a decode
/// instance's. Bytes = prompt x 2 (K and V) x layers x kv_heads x head_dim x bytes_per_element.
/// KV head h lives on prefill GPU h x P / kv_heads (P = prefill_gpus.size()) and goes to decode
/// GPU h x D / kv_heads: each decode GPU pulls its heads from the GPUs holding them. Fewer heads
/// than GPUs: a head is replicated on P / kv_heads GPUs (Megatron), and the copies share the
/// sending. With layer_compute > 0 the transfer is layer-wise (Mooncake section 5.2 overlaps it
/// with prefill): each prefill GPU computes a layer for layer_compute, then sends that layer.
struct KvTransferSpec {
  std::uint64_t prompt = 0;  // tokens
  std::uint32_t layers = 0;
  std::uint32_t kv_heads = 0;
  std::uint32_t head_dim = 0;
  std::uint32_t bytes_per_element = 2;      // BF16 / FP16 cache; 1 for an FP8 cache
  std::vector<std::uint32_t> prefill_gpus;  // topology GPU indices (gpus() order)
  std::vector<std::uint32_t> decode_gpus;
  Time layer_compute = Time::zero();
};

/// The whole request's KV bytes. InputError naming the field for a zero size or empty instance.
std::uint64_t kv_cache_bytes(const KvTransferSpec& spec);
/// Ranks 0 .. P-1 are the prefill GPUs, P .. P+D-1 the decode ones.
std::unique_ptr<ProgramSet> make_kv_transfer_programs(const KvTransferSpec& spec);
CommRun run_kv_transfer(const KvTransferSpec& spec, const Topology& topology,
                        std::string_view engine);
/// `bytes` of KV cache held evenly by the GPUs `from` moving to be held evenly by `to` (the
/// shares of a TP P instance re-cut for a TP D one: P = D pairs GPU i with GPU i), after prefill.
CommRun run_kv_bytes(const std::vector<std::uint32_t>& from, const std::vector<std::uint32_t>& to,
                     Bytes bytes, const Topology& topology, std::string_view engine);

}  // namespace lockstep
