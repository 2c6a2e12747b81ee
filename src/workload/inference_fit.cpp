// The serving job's memory (the weights and each attention group's KV cache against HBM) and
// its latency statistics, for src/workload/inference.cpp.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "inference_detail.hpp"
#include "lockstep/core/error.hpp"
#include "lockstep/topology/catalog.hpp"

namespace lockstep {

Percentiles percentiles(std::vector<double> v) {
  Percentiles p;
  if (v.empty()) return p;
  std::sort(v.begin(), v.end());
  auto rank = [&](double q) {
    const auto k = static_cast<std::size_t>(std::ceil(q * static_cast<double>(v.size())));
    return v[std::max<std::size_t>(k, 1) - 1];
  };
  p.p50 = rank(0.5);
  p.p90 = rank(0.9);
  p.p99 = rank(0.99);
  p.max = v.back();
  double sum = 0;
  for (double x : v) sum += x;
  p.mean = sum / static_cast<double>(v.size());
  return p;
}

// Blocks of KV cache one attention group holds: `kv_cache_tokens` (the replica's) split evenly
// over its attention_dp groups, else what HBM leaves on the group's GPUs, in whole blocks of 16
// tokens (vLLM's determine_num_available_blocks divides the free memory by a block's size). Each
// group's GPUs hold only its own sequences' K and V (SGLang's DP attention: one KV pool per DP
// rank), so the group's cache is its GPUs' free memory over one token's bytes on a GPU.
std::uint64_t group_kv_blocks(const InferenceConfig& c, const InferenceStepModel& m) {
  if (c.kv_cache_tokens > 0) return c.kv_cache_tokens / kKvBlockTokens / c.attention_dp;
  const double budget = m.kv_budget_bytes_per_gpu();
  const double block = m.kv_bytes_per_token_per_gpu() * kKvBlockTokens;
  return budget <= 0 ? 0 : static_cast<std::uint64_t>(budget / block);
}

void check_inference_fit(const InferenceConfig& c, const InferenceStepModel& m) {
  const GpuSpec& gpu = m.gpu();
  const double managed = static_cast<double>(gpu.hbm.count()) * c.gpu_memory_utilization;
  if (m.weight_bytes_per_gpu() >= managed) {
    throw InputError(
        c.world_field,
        fmt::format("{}'s weights take {:.1f} GiB per GPU at tp={}, pp={} ({}) but "
                    "the {} has {:.1f} GiB x gpu_memory_utilization {:g}: raise tp "
                    "or pp",
                    c.model.name, m.weight_bytes_per_gpu() / kGiB, c.tp, c.pp,
                    to_string(c.precision), gpu.display,
                    static_cast<double>(gpu.hbm.count()) / kGiB, c.gpu_memory_utilization),
        c.world_where);
  }
  // vLLM preempts when the cache is full (a decode pool too, sending the sequence back to the
  // prefill pool); one sequence must fit alone (vLLM refuses a max_model_len whose KV cache does
  // not fit).
  const std::uint64_t longest = c.prompt.max() + c.output.max();
  // A sequence lives in one attention group's cache.
  const std::uint64_t capacity = group_kv_blocks(c, m) * kKvBlockTokens;
  if (kv_blocks(longest) * kKvBlockTokens > capacity) {
    throw InputError(
        c.kv_field,
        fmt::format("one sequence of up to {} + {} tokens does not fit in the KV cache of {} "
                    "tokens ({:.1f} GiB per GPU left after the weights and activations)",
                    c.prompt.max(), c.output.max(), capacity,
                    std::max(0.0, m.kv_budget_bytes_per_gpu()) / kGiB),
        c.kv_where);
  }
}

}  // namespace lockstep
