// InferenceComm on the engines: DeepEP-style MoE exchanges and KV transfers (deepep_comm.hpp).
#include "lockstep/workload/deepep_comm.hpp"

#include <algorithm>

#include "lockstep/workload/moe_comm.hpp"

namespace lockstep {

DeepEpComm::DeepEpComm(const Topology& topology, std::string engine)
    : topo_(topology), engine_(std::move(engine)) {}

Time DeepEpComm::moe(const MoeExchange& x, bool dispatch) {
  const std::uint64_t most =
      x.tokens.empty() ? 0 : *std::max_element(x.tokens.begin(), x.tokens.end());
  if (most == 0 || x.ranks.size() < 2) return Time::zero();
  const MoeKey key{x.ranks,  x.tokens, x.hidden, x.top_k,     x.experts,     x.bytes_per_element,
                   x.decode, dispatch, x.load,   x.gpu_reach, x.domain_reach};
  if (const auto it = moe_cache_.find(key); it != moe_cache_.end()) return it->second;
  MoeSpec s;
  s.tokens = most;
  // Equal counts keep the uniform programs (and their symmetry).
  if (std::any_of(x.tokens.begin(), x.tokens.end(), [&](std::uint64_t n) { return n != most; }))
    s.rank_tokens = x.tokens;
  s.rank_load = x.load;
  s.rank_reach = x.gpu_reach;
  s.node_reach = x.domain_reach;
  s.hidden = static_cast<std::uint32_t>(x.hidden);
  s.topk = x.top_k;
  s.experts = x.experts;
  // DeepEP: the low-latency kernels serve decode, the normal ones prefill; dispatch in FP8 when
  // the job sends 1-byte activations, combine in BF16 always.
  s.kernel = x.decode ? MoeKernel::LowLatency : MoeKernel::Normal;
  s.fp8_dispatch = x.bytes_per_element < 2;
  const Time t =
      run_moe_group(s, dispatch ? MoePhase::Dispatch : MoePhase::Combine, x.ranks, topo_, engine_)
          .time;
  moe_cache_.emplace(key, t);
  return t;
}

Time DeepEpComm::moe_dispatch(const MoeExchange& x) {
  return moe(x, true);
}
Time DeepEpComm::moe_combine(const MoeExchange& x) {
  return moe(x, false);
}

Time DeepEpComm::kv_transfer(const KvTransfer& x) {
  const KvKey key{x.from, x.to, x.bytes.count()};
  if (const auto it = kv_cache_.find(key); it != kv_cache_.end()) return it->second;
  const Time t = run_kv_bytes(x.from, x.to, x.bytes, topo_, engine_).time;
  kv_cache_.emplace(key, t);
  return t;
}

}  // namespace lockstep
