#include "lockstep/workload/noise.hpp"

#include <algorithm>
#include <cmath>

#include "lockstep/config/spec_text.hpp"

namespace lockstep {

JitterSpec parse_jitter(std::string_view text, std::string_view field) {
  auto [kind, body] = split_spec_kind(text);
  JitterSpec j;
  j.text = std::string(text);
  if (kind == "normal" || kind == "lognormal") {
    j.kind = kind == "normal" ? JitterSpec::Kind::Normal : JitterSpec::Kind::LogNormal;
    if (body.empty()) bad_spec(field, text, "expected a width, e.g. normal:5% or lognormal:0.1");
    j.sigma = parse_spec_number(body, field, text);
    if (j.sigma < 0 || j.sigma > 10) bad_spec(field, text, "width must lie in [0, 10]");
  } else if (kind == "straggler") {
    auto p = parse_spec_numbers(body, field, text, {"p", "x"}, {"p"});
    j.kind = JitterSpec::Kind::Straggler;
    j.probability = p.at("p");
    j.slowdown = p.count("x") ? p.at("x") : 1.5;
    if (j.probability < 0 || j.probability > 1) bad_spec(field, text, "p must lie in [0, 1]");
    if (j.slowdown < 1 || j.slowdown > 1000) bad_spec(field, text, "x must lie in [1, 1000]");
  } else {
    bad_spec(field, text, "expected normal:W, lognormal:S or straggler:p=P,x=X");
  }
  return j;
}

bool ComputeNoise::empty() const {
  for (const auto& j : jitter_) {
    if (j.kind == JitterSpec::Kind::Straggler ? (j.probability > 0 && j.slowdown > 1)
                                              : j.sigma > 0) {
      return false;
    }
  }
  for (const auto& f : faults_) {
    if (f.kind == FaultSpec::Kind::SlowGpu && f.factor > 1) return false;
  }
  return true;
}

bool ComputeNoise::has_kernel_jitter() const {
  return std::any_of(jitter_.begin(), jitter_.end(), [](const JitterSpec& j) {
    return j.kind != JitterSpec::Kind::Straggler && j.sigma > 0;
  });
}

std::vector<double> ComputeNoise::draw_rank_factors(std::uint32_t ranks, Rng& rng) const {
  std::vector<double> factors(ranks, 1.0);
  for (const auto& j : jitter_) {
    if (j.kind != JitterSpec::Kind::Straggler) continue;
    for (auto& f : factors) {
      // One draw per rank whatever p is, so that raising p or x never reshuffles the stream:
      // the same ranks straggle at a higher p plus some more (monotone in p for a fixed seed).
      if (rng.uniform() < j.probability) f *= j.slowdown;
    }
  }
  for (const auto& f : faults_) {
    if (f.kind == FaultSpec::Kind::SlowGpu && f.rank < ranks) factors[f.rank] *= f.factor;
  }
  return factors;
}

double ComputeNoise::draw_kernel_factor(Rng& rng) const {
  double factor = 1.0;
  for (const auto& j : jitter_) {
    if (j.kind == JitterSpec::Kind::Normal) {
      factor *= 1.0 + j.sigma * rng.normal();
    } else if (j.kind == JitterSpec::Kind::LogNormal) {
      factor *= std::exp(j.sigma * rng.normal() - j.sigma * j.sigma / 2);
    }
  }
  return std::max(factor, 0.05);
}

}  // namespace lockstep
