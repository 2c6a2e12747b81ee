#include "lockstep/workload/noise.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>

#include "lockstep/core/error.hpp"

namespace lockstep {
namespace {

[[noreturn]] void bad(std::string_view field, std::string_view text, std::string_view why) {
  throw InputError(std::string(field), fmt::format("bad noise spec '{}': {}", text, why));
}

// "5%" -> 0.05, "0.1" -> 0.1.
double parse_number(std::string_view s, std::string_view field, std::string_view text) {
  bool percent = !s.empty() && s.back() == '%';
  if (percent) s.remove_suffix(1);
  double v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || !std::isfinite(v)) {
    bad(field, text, fmt::format("'{}' is not a number", s));
  }
  return percent ? v / 100 : v;
}

// "p=0.01,x=1.5" -> {p: 0.01, x: 1.5}; only `allowed` keys.
std::map<std::string, double> parse_params(std::string_view body, std::string_view field,
                                           std::string_view text,
                                           const std::vector<std::string>& allowed) {
  std::map<std::string, double> out;
  while (!body.empty()) {
    auto comma = body.find(',');
    std::string_view item = body.substr(0, comma);
    body = comma == std::string_view::npos ? std::string_view{} : body.substr(comma + 1);
    auto eq = item.find('=');
    if (eq == std::string_view::npos) bad(field, text, "expected key=value");
    std::string key(item.substr(0, eq));
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
      bad(field, text, fmt::format("unknown parameter '{}'", key));
    }
    out[key] = parse_number(item.substr(eq + 1), field, text);
  }
  for (const auto& key : allowed) {
    if (!out.count(key) && key != "x") bad(field, text, fmt::format("missing '{}='", key));
  }
  return out;
}

std::pair<std::string_view, std::string_view> split_kind(std::string_view text) {
  auto colon = text.find(':');
  if (colon == std::string_view::npos) return {text, {}};
  return {text.substr(0, colon), text.substr(colon + 1)};
}

}  // namespace

JitterSpec parse_jitter(std::string_view text, std::string_view field) {
  auto [kind, body] = split_kind(text);
  JitterSpec j;
  j.text = std::string(text);
  if (kind == "normal" || kind == "lognormal") {
    j.kind = kind == "normal" ? JitterSpec::Kind::Normal : JitterSpec::Kind::LogNormal;
    if (body.empty()) bad(field, text, "expected a width, e.g. normal:5% or lognormal:0.1");
    j.sigma = parse_number(body, field, text);
    if (j.sigma < 0 || j.sigma > 10) bad(field, text, "width must lie in [0, 10]");
  } else if (kind == "straggler") {
    auto p = parse_params(body, field, text, {"p", "x"});
    j.kind = JitterSpec::Kind::Straggler;
    j.probability = p.at("p");
    j.slowdown = p.count("x") ? p.at("x") : 1.5;
    if (j.probability < 0 || j.probability > 1) bad(field, text, "p must lie in [0, 1]");
    if (j.slowdown < 1 || j.slowdown > 1000) bad(field, text, "x must lie in [1, 1000]");
  } else {
    bad(field, text, "expected normal:W, lognormal:S or straggler:p=P,x=X");
  }
  return j;
}

FaultSpec parse_fault(std::string_view text, std::string_view field) {
  auto [kind, body] = split_kind(text);
  FaultSpec f;
  f.text = std::string(text);
  if (kind == "slow-gpu") {
    auto p = parse_params(body, field, text, {"rank", "x"});
    f.kind = FaultSpec::Kind::SlowGpu;
    f.rank = static_cast<std::uint32_t>(std::max(0.0, p.at("rank")));
    f.factor = p.count("x") ? p.at("x") : 1.5;
    if (p.at("rank") < 0 || p.at("rank") != std::floor(p.at("rank"))) {
      bad(field, text, "rank must be a non-negative integer");
    }
    if (f.factor < 1 || f.factor > 1000) bad(field, text, "x must lie in [1, 1000]");
  } else if (kind == "degraded-link" || kind == "failed-link") {
    const bool failed = kind == "failed-link";
    auto p = failed ? parse_params(body, field, text, {"link"})
                    : parse_params(body, field, text, {"link", "x"});
    f.kind = failed ? FaultSpec::Kind::FailedLink : FaultSpec::Kind::DegradedLink;
    if (p.at("link") < 0 || p.at("link") != std::floor(p.at("link"))) {
      bad(field, text, "link must be a non-negative integer");
    }
    f.link = static_cast<std::uint32_t>(p.at("link"));
    f.factor = failed ? 0 : (p.count("x") ? p.at("x") : 0.5);
    if (!failed && (f.factor <= 0 || f.factor > 1)) bad(field, text, "x must lie in (0, 1]");
  } else {
    bad(field, text,
        "expected slow-gpu:rank=R,x=X, degraded-link:link=L,x=F or failed-link:link=L");
  }
  return f;
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
