#pragma once
// How a MoE layer's token-slots fall on the expert-parallel GPUs when the experts are not equally
// popular, and DeepSeek's EPLB placement that evens them (docs/inference.md, "Expert load and
// redundant experts").
//
//   std::vector<double> shares = zipf_expert_shares(256, 0.5, seed);   // popularity, sums to 1
//   ExpertPlacement p = eplb_placement(shares, 32, 32);                // 9 experts a GPU
//   double busiest = expected_hottest_gpu_slots(2048, p.gpu_share);     // the layer waits for it
#include <cstdint>
#include <vector>

namespace lockstep {

/// Each routed expert's share of a layer's token-slots under a Zipf popularity of exponent
/// `skew` (0: uniform): the expert of popularity rank i (1-based) takes i^-skew / sum_j j^-skew,
/// the ranks dealt to the experts by a permutation drawn from `seed` (which expert is hot is the
/// router's accident, not its index). Sums to 1.
std::vector<double> zipf_expert_shares(std::uint32_t experts, double skew, std::uint64_t seed);

/// Physical experts (each logical expert and its replicas) on `gpus` GPUs, `slots` a GPU.
struct ExpertPlacement {
  std::uint32_t gpus = 0, slots = 0;
  std::vector<std::uint32_t> logical;   // physical expert p (on GPU p / slots) -> logical expert
  std::vector<std::uint32_t> replicas;  // per logical expert: its copies
  std::vector<double> slot_share;       // per physical expert: its logical share / replicas
  std::vector<double> gpu_share;        // per GPU: the token-slots it takes (sums to 1)
  /// Each GPU's share over the mean (mean 1): MoeExchange::load.
  std::vector<double> relative_load() const;
};

/// Experts in place, without replicas: GPU g holds experts g x E / G .. (g + 1) x E / G - 1
/// (the layout without a load balancer; `shares` a multiple of `gpus` long).
ExpertPlacement contiguous_placement(const std::vector<double>& shares, std::uint32_t gpus);

/// DeepSeek's EPLB, global policy (github.com/deepseek-ai/EPLB, rebalance_experts with one
/// group): `redundant` replicas each go to the expert whose load per copy is then the highest
/// (replicate_experts), a copy taking share / copies; the physical experts, heaviest first, each
/// to the GPU with the least load that still has a free slot (balanced_packing), (E + redundant)
/// / gpus slots a GPU.
ExpertPlacement eplb_placement(const std::vector<double>& shares, std::uint32_t gpus,
                               std::uint32_t redundant);

/// The expected token-slots of the busiest GPU when `slots` fall on GPU g with probability
/// gpu_share[g]: E[max_g X_g], X_g ~ Normal(n p_g, n p_g (1 - p_g)) (the binomial's normal limit;
/// the multinomial's negative covariance between GPUs left out, which overstates the spread by
/// at most sqrt(1 / (1 - p_g))), by integrating 1 - prod_g Phi over the range where the maximum
/// lies.
double expected_hottest_gpu_slots(double slots, const std::vector<double>& gpu_share);

/// The busiest GPU of one MoE layer: its expected token-slots and the expected number of its
/// physical experts they reach.
struct HottestGpu {
  double slots = 0, experts = 0;
};

/// `tokens` tokens each picking `top_k` distinct experts, each pick among those not yet picked in
/// proportion to their shares (the logical expert's share is its copies' sum), then one of its
/// copies uniformly. Up to 256 slots sampled as the uniform model samples (the busiest GPU by
/// slots, ties by experts reached; a fixed seed, trials about 2^18 / slots, at least 4,096);
/// above, expected_hottest_gpu_slots and the experts the slots reach on the GPU of the largest
/// share.
HottestGpu expected_hottest_gpu(const ExpertPlacement& placement, std::uint64_t tokens,
                                std::uint32_t top_k);

/// The sampled busiest GPU, trial by trial (the uniform model's expected_busiest_rank and
/// expected_hottest_gpu share it): each trial's slots land on experts numbered GPU by GPU,
/// `per_gpu` a GPU; the trial's busiest GPU has the most slots (ties: the most experts hit).
class BusiestSampler {
 public:
  BusiestSampler(std::uint32_t gpus, std::uint32_t per_gpu);
  /// Trials for `slots` slots a trial: about 2^18 slots in all, at least 4,096.
  static std::uint64_t trials(std::uint64_t slots);
  void start_trial();
  void hit(std::uint32_t expert) {
    ++load_[expert / per_gpu_];
    ++hits_[expert];
  }
  void end_trial();
  /// The busiest GPU's mean slots and experts hit over the trials.
  HottestGpu mean() const;

 private:
  std::uint32_t per_gpu_;
  std::vector<std::uint32_t> load_, hits_;
  double slots_ = 0, experts_ = 0;
  std::uint64_t trials_ = 0;
};

/// Tokens expert_reach samples: 2^17, the reach of a GPU or domain within about 0.003 (two
/// standard errors at a reach of 1/2).
constexpr std::uint32_t kReachTokens = 1u << 17;

/// What a token reaches, for DeepEP's normal kernels (a token crosses to a node once, and is
/// forwarded to a GPU once, however many of its experts are there).
struct ExpertReach {
  std::vector<double> gpu;     // per GPU: P(one of the token's top_k copies is on it)
  std::vector<double> domain;  // per GPU: P(one is in its NVLink domain)
};

/// Sampled as expected_hottest_gpu picks (kReachTokens tokens, a fixed seed): GPU g of
/// `placement` in NVLink domain domain_of[g] (numbered from 0). Uniform shares in place give the
/// hypergeometric 1 - C(E - E/R, k) / C(E, k) per GPU up to the sampling error.
ExpertReach expert_reach(const ExpertPlacement& placement, std::uint32_t top_k,
                         const std::vector<std::uint32_t>& domain_of);

/// The GPU with the largest share (the first of equals).
std::uint32_t hottest_gpu(const ExpertPlacement& placement);

/// The expected experts of `gpu` that `slots` slots reach: sum over its physical experts of
/// 1 - (1 - share)^slots (a slot lands on a copy with probability its share).
double experts_reached(const ExpertPlacement& placement, std::uint32_t gpu, double slots);

}  // namespace lockstep
