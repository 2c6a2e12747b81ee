// Expert popularity, EPLB's placement and the busiest expert GPU (expert_load.hpp;
// docs/inference.md, "Expert load and redundant experts").
#include "lockstep/workload/expert_load.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <utility>

#include "lockstep/core/rng.hpp"

namespace lockstep {
namespace {

// Fills the per-GPU shares from the physical experts' shares.
void sum_gpus(ExpertPlacement& p) {
  p.gpu_share.assign(p.gpus, 0.0);
  for (std::size_t e = 0; e < p.slot_share.size(); ++e) p.gpu_share[e / p.slots] += p.slot_share[e];
}

double normal_cdf(double z) {
  return 0.5 * std::erfc(-z / std::sqrt(2.0));
}

}  // namespace

std::vector<double> zipf_expert_shares(std::uint32_t experts, double skew, std::uint64_t seed) {
  std::vector<double> weight(experts);
  for (std::uint32_t i = 0; i < experts; ++i) weight[i] = std::pow(i + 1.0, -skew);
  const double sum = std::accumulate(weight.begin(), weight.end(), 0.0);
  for (double& w : weight) w /= sum;
  if (skew == 0) return weight;
  // Fisher-Yates: popularity rank i goes to expert order[i].
  std::vector<std::uint32_t> order(experts);
  std::iota(order.begin(), order.end(), 0u);
  Rng rng(mix64(seed ^ 0xE7B1A5u));
  for (std::uint32_t i = experts; i > 1; --i)
    std::swap(order[i - 1], order[static_cast<std::size_t>(rng.below(i))]);
  std::vector<double> shares(experts);
  for (std::uint32_t i = 0; i < experts; ++i) shares[order[i]] = weight[i];
  return shares;
}

std::vector<double> ExpertPlacement::relative_load() const {
  std::vector<double> out(gpu_share.size());
  for (std::size_t g = 0; g < out.size(); ++g) out[g] = gpu_share[g] * gpus;
  return out;
}

ExpertPlacement contiguous_placement(const std::vector<double>& shares, std::uint32_t gpus) {
  ExpertPlacement p;
  p.gpus = gpus;
  p.slots = static_cast<std::uint32_t>(shares.size()) / gpus;
  p.replicas.assign(shares.size(), 1);
  for (std::uint32_t e = 0; e < shares.size(); ++e) p.logical.push_back(e);
  p.slot_share = shares;
  sum_gpus(p);
  return p;
}

ExpertPlacement eplb_placement(const std::vector<double>& shares, std::uint32_t gpus,
                               std::uint32_t redundant) {
  const auto experts = static_cast<std::uint32_t>(shares.size());
  const std::uint32_t physical = experts + redundant;
  // replicate_experts: each extra copy to the expert with the most load per copy (the first of
  // equals, as argmax takes).
  std::vector<std::uint32_t> copies(experts, 1), logical(experts);
  std::iota(logical.begin(), logical.end(), 0u);
  for (std::uint32_t r = 0; r < redundant; ++r) {
    std::uint32_t best = 0;
    for (std::uint32_t e = 1; e < experts; ++e)
      if (shares[e] / copies[e] > shares[best] / copies[best]) best = e;
    ++copies[best];
    logical.push_back(best);
  }
  // balanced_packing: heaviest first (stable among equals), each to the least loaded GPU with a
  // free slot (the first of equals).
  std::vector<std::uint32_t> order(physical);
  std::iota(order.begin(), order.end(), 0u);
  const auto weight = [&](std::uint32_t q) { return shares[logical[q]] / copies[logical[q]]; };
  std::stable_sort(order.begin(), order.end(),
                   [&](std::uint32_t a, std::uint32_t b) { return weight(a) > weight(b); });
  ExpertPlacement p;
  p.gpus = gpus;
  p.slots = physical / gpus;
  p.replicas = copies;
  std::vector<double> load(gpus, 0.0);
  std::vector<std::vector<std::uint32_t>> held(gpus);
  for (std::uint32_t q : order) {
    std::uint32_t best = gpus;
    for (std::uint32_t g = 0; g < gpus; ++g)
      if (held[g].size() < p.slots && (best == gpus || load[g] < load[best])) best = g;
    held[best].push_back(q);
    load[best] += weight(q);
  }
  for (const std::vector<std::uint32_t>& gpu : held)
    for (std::uint32_t q : gpu) {
      p.logical.push_back(logical[q]);
      p.slot_share.push_back(weight(q));
    }
  sum_gpus(p);
  return p;
}

double expected_hottest_gpu_slots(double slots, const std::vector<double>& gpu_share) {
  // Each GPU's mean and spread; the maximum lies above the highest lower bound (mean - 8 sd:
  // below it that GPU alone is under x with probability < 1e-15) and below the highest upper one.
  const std::size_t n = gpu_share.size();
  std::vector<double> mean(n), sd(n);
  double low = -1e300, high = -1e300;
  for (std::size_t g = 0; g < n; ++g) {
    const double p = gpu_share[g];
    mean[g] = slots * p;
    sd[g] = std::sqrt(slots * p * std::max(0.0, 1 - p));
    low = std::max(low, mean[g] - 8 * sd[g]);
    high = std::max(high, mean[g] + 8 * sd[g]);
  }
  if (n == 0 || high <= low) return std::max(0.0, low);
  std::vector<std::size_t> contenders;
  for (std::size_t g = 0; g < n; ++g)
    if (mean[g] + 8 * sd[g] > low) contenders.push_back(g);
  // E[max] = low + integral from low to high of P(max > x) dx (the trapezoid rule).
  const int steps = 4000;
  const double h = (high - low) / steps;
  double sum = 0;
  for (int i = 0; i <= steps; ++i) {
    const double x = low + i * h;
    double all_below = 1;
    for (std::size_t g : contenders)
      all_below *= sd[g] > 0 ? normal_cdf((x - mean[g]) / sd[g]) : (x >= mean[g] ? 1.0 : 0.0);
    sum += (i == 0 || i == steps ? 0.5 : 1.0) * (1 - all_below);
  }
  return low + sum * h;
}

std::uint32_t hottest_gpu(const ExpertPlacement& p) {
  return static_cast<std::uint32_t>(std::max_element(p.gpu_share.begin(), p.gpu_share.end()) -
                                    p.gpu_share.begin());
}

double experts_reached(const ExpertPlacement& p, std::uint32_t gpu, double slots) {
  double out = 0;
  for (std::uint32_t e = gpu * p.slots; e < (gpu + 1) * p.slots; ++e)
    out += 1 - std::pow(1 - p.slot_share[e], slots);
  return out;
}

BusiestSampler::BusiestSampler(std::uint32_t gpus, std::uint32_t per_gpu)
    : per_gpu_(per_gpu), load_(gpus), hits_(static_cast<std::size_t>(gpus) * per_gpu) {}

std::uint64_t BusiestSampler::trials(std::uint64_t slots) {
  return std::max<std::uint64_t>(4096,
                                 (std::uint64_t{1} << 18) / std::max<std::uint64_t>(1, slots));
}

void BusiestSampler::start_trial() {
  std::fill(load_.begin(), load_.end(), 0);
  std::fill(hits_.begin(), hits_.end(), 0);
}

void BusiestSampler::end_trial() {
  std::uint32_t best = 0, best_hit = 0;
  for (std::size_t g = 0; g < load_.size(); ++g) {
    std::uint32_t reached = 0;
    for (std::size_t e = g * per_gpu_; e < (g + 1) * per_gpu_; ++e) reached += hits_[e] > 0 ? 1 : 0;
    if (load_[g] > best || (load_[g] == best && reached > best_hit)) {
      best = load_[g];
      best_hit = reached;
    }
  }
  slots_ += best;
  experts_ += best_hit;
  ++trials_;
}

HottestGpu BusiestSampler::mean() const {
  const auto n = static_cast<double>(std::max<std::uint64_t>(1, trials_));
  return {slots_ / n, experts_ / n};
}

namespace {

// A token's top_k distinct logical experts, each pick among those not yet picked in proportion
// to their shares (by the shares' running sum, a repeat drawn again), then one of its copies
// uniformly: the physical experts it reaches.
class TokenRouter {
 public:
  TokenRouter(const ExpertPlacement& p, std::uint32_t top_k)
      : top_k_(top_k),
        share_(p.replicas.size(), 0.0),
        cumulative_(p.replicas.size()),
        copies_(p.replicas.size()) {
    for (std::uint32_t e = 0; e < p.logical.size(); ++e) {
      share_[p.logical[e]] += p.slot_share[e];
      copies_[p.logical[e]].push_back(e);
    }
    std::partial_sum(share_.begin(), share_.end(), cumulative_.begin());
  }
  // Calls hit(physical expert) for each of one token's top_k picks.
  template <class Hit>
  void route(Rng& rng, Hit&& hit) {
    const auto experts = static_cast<std::ptrdiff_t>(share_.size());
    picked_.clear();
    while (picked_.size() < top_k_) {
      const double u = rng.uniform() * cumulative_.back();
      const auto x = static_cast<std::uint32_t>(std::min<std::ptrdiff_t>(
          experts - 1,
          std::upper_bound(cumulative_.begin(), cumulative_.end(), u) - cumulative_.begin()));
      if (share_[x] <= 0 || std::find(picked_.begin(), picked_.end(), x) != picked_.end()) continue;
      picked_.push_back(x);
      hit(copies_[x][rng.below(copies_[x].size())]);
    }
  }

 private:
  std::uint32_t top_k_;
  std::vector<double> share_, cumulative_;
  std::vector<std::vector<std::uint32_t>> copies_;
  std::vector<std::uint32_t> picked_;
};

}  // namespace

HottestGpu expected_hottest_gpu(const ExpertPlacement& p, std::uint64_t tokens,
                                std::uint32_t top_k) {
  const double slots = static_cast<double>(tokens) * top_k;
  if (tokens == 0) return {};
  if (slots > 256)
    return {expected_hottest_gpu_slots(slots, p.gpu_share),
            experts_reached(p, hottest_gpu(p), slots)};
  TokenRouter router(p, top_k);
  const std::uint64_t trials = BusiestSampler::trials(tokens * top_k);
  Rng rng(0x70b6);
  BusiestSampler sampler(p.gpus, p.slots);
  for (std::uint64_t n = 0; n < trials; ++n) {
    sampler.start_trial();
    for (std::uint64_t q = 0; q < tokens; ++q)
      router.route(rng, [&](std::uint32_t e) { sampler.hit(e); });
    sampler.end_trial();
  }
  return sampler.mean();
}

ExpertReach expert_reach(const ExpertPlacement& p, std::uint32_t top_k,
                         const std::vector<std::uint32_t>& domain_of) {
  const std::uint32_t domains =
      domain_of.empty() ? 0 : *std::max_element(domain_of.begin(), domain_of.end()) + 1;
  std::vector<std::uint64_t> gpu_hits(p.gpus, 0), domain_hits(domains, 0);
  std::vector<std::uint32_t> gpu_seen(p.gpus, 0), domain_seen(domains, 0);
  TokenRouter router(p, top_k);
  Rng rng(0x4eac);
  for (std::uint32_t token = 1; token <= kReachTokens; ++token) {
    // A GPU or domain counts once a token, however many of its picks land there.
    router.route(rng, [&](std::uint32_t e) {
      const std::uint32_t g = e / p.slots;
      if (std::exchange(gpu_seen[g], token) != token) ++gpu_hits[g];
      if (std::exchange(domain_seen[domain_of[g]], token) != token) ++domain_hits[domain_of[g]];
    });
  }
  ExpertReach out;
  for (std::uint32_t g = 0; g < p.gpus; ++g) {
    out.gpu.push_back(static_cast<double>(gpu_hits[g]) / kReachTokens);
    out.domain.push_back(static_cast<double>(domain_hits[domain_of[g]]) / kReachTokens);
  }
  return out;
}

}  // namespace lockstep
