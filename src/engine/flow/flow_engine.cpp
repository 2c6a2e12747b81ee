#include "lockstep/engine/flow/flow_engine.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>

#include "lockstep/core/error.hpp"
#include "simulation.hpp"

namespace lockstep {

namespace {

void validate(const EngineInput& in) {
  if (in.topology == nullptr || in.programs == nullptr || in.router == nullptr)
    throw InputError("engine", "the flow engine needs a topology, programs and a router");
  const Rank n = in.programs->num_ranks();
  if (in.placement.size() != n) {
    throw InputError("placement",
                     fmt::format("{} ranks but {} placed devices", n, in.placement.size()));
  }
  for (std::size_t r = 0; r < in.placement.size(); ++r) {
    if (in.placement[r] >= in.topology->num_devices()) {
      throw InputError("placement", fmt::format("rank {} is placed on device {}, which does not "
                                                "exist",
                                                r, in.placement[r]));
    }
  }
  const double eff = in.options.transfer_efficiency;
  if (!(eff > 0 && eff <= 1))
    throw InputError("transfer_efficiency", fmt::format("must be in (0, 1], got {}", eff));
  if (in.options.per_message_overhead < Time::zero())
    throw InputError("per_message_overhead", "must not be negative");
  const double net = in.options.network_transfer_efficiency;
  if (!(net >= 0 && net <= 1))
    throw InputError("network_transfer_efficiency", fmt::format("must be in [0, 1], got {}", net));
  if (in.options.network_message_latency < Time::zero())
    throw InputError("network_message_latency", "must not be negative");
  const double cap = in.options.channel_send_bandwidth.bytes_per_second();
  if (!(cap >= 0) || std::isinf(cap))
    throw InputError("channel_send_bandwidth", fmt::format("must be finite and >= 0, got {}", cap));
}

// Class maps to try, fewest classes first: multiples of the program's symmetry period that
// divide the rank count, each also with rotations inside nodes when the program declares them
// (tried first of equal counts), ending with every rank on its own.
std::vector<flow_detail::ClassMap> class_maps(const EngineInput& in,
                                              const FlowEngineConfig& config) {
  const Rank n = in.programs->num_ranks();
  const Rank period = in.programs->symmetry_period();
  const Rank local = in.programs->local_symmetry();
  const bool channels = in.programs->local_symmetry_moves_channels();
  std::vector<flow_detail::ClassMap> maps;
  const bool may_aggregate = config.aggregate && in.router->policy() != RoutingPolicy::Adaptive;
  // Rotation inside nodes alone (no translation, e.g. a tree): the period is the whole ring of
  // ranks, and classes are the orbits of the rotations.
  if (may_aggregate && period == 0 && local > 1 && n % local == 0 && n > local) {
    for (Rank step = 1; step < local; step *= 2)
      if (local % step == 0) maps.emplace_back(n, n, local, step, channels);
  }
  const std::uint32_t shift = in.programs->symmetry_channel_shift();
  const std::uint32_t modulus = std::max<std::uint32_t>(1, in.programs->symmetry_channel_modulus());
  if (may_aggregate && period > 0 && n % period == 0 && n > period) {
    for (Rank c = period; c < n; c += period) {
      if (n % c != 0) continue;
      const auto tau_channels =
          static_cast<std::uint32_t>(static_cast<std::uint64_t>(c / period) * shift % modulus);
      // Rotations by 1, 2, 4, ... GPUs inside nodes (a subgroup may hold where the full
      // rotation does not, e.g. when ECMP hashes two members onto one uplink), then none.
      if (local > 1 && c % local == 0)
        for (Rank step = 1; step < local; step *= 2)
          if (local % step == 0)
            maps.emplace_back(n, c, local, step, channels, tau_channels, modulus);
      maps.emplace_back(n, c, 1, 1, true, tau_channels, modulus);
    }
    // Should every translation fail (nodes that the fabric tells apart: 3 NVL72 racks, where
    // rack 0's paths to rack 1 and rack 1's to rack 2 differ hop by hop), the rotation inside
    // nodes alone may still hold (P2 does not need P1); for channel-split programs it is what
    // the unsplit program had.
    if (local > 1 && n % local == 0 && n > local)
      for (Rank step = 1; step < local; step *= 2)
        if (local % step == 0) maps.emplace_back(n, n, local, step, channels);
    std::stable_sort(maps.begin(), maps.end(),
                     [](const auto& a, const auto& b) { return a.classes() < b.classes(); });
  }
  maps.emplace_back(n);
  return maps;
}

// What the configuration leaves open, the programs decide (ProgramSet::lookahead): work that runs
// at once far apart in the op list needs a window over the longest program, within [32, 16 Ki]
// ops; other programs keep the default window (issue_window 0).
FlowEngineConfig derived_config(const FlowEngineConfig& config, const ProgramSet& programs) {
  FlowEngineConfig out = config;
  if (out.issue_window == 0 && programs.lookahead() == Lookahead::Program)
    out.issue_window = std::clamp<OpIndex>(programs.longest_program(), 32, 1u << 14);
  return out;
}

}  // namespace

RunResult FlowEngine::run(const EngineInput& given) {
  const EngineInput input = with_link_samples(given);
  validate(input);
  // Channels that share nothing but links run as one class once split into ranks
  // (ProgramSet::split_channels); the split run's per-rank finishes fold back onto the ranks.
  if (config_.aggregate && config_.split_channels && !input.options.record_ops) {
    if (const std::unique_ptr<ProgramSet> split = input.programs->split_channels()) {
      const Rank n = input.programs->num_ranks();
      std::vector<DeviceId> placement(split->num_ranks());
      for (Rank v = 0; v < placement.size(); ++v) placement[v] = input.placement[v % n];
      EngineInput by_channel = input;
      by_channel.programs = split.get();
      by_channel.placement = placement;
      RunResult result = run_programs(by_channel);
      for (Rank v = n; v < result.rank_finish.size(); ++v)
        result.rank_finish[v % n] = std::max(result.rank_finish[v % n], result.rank_finish[v]);
      result.rank_finish.resize(n);
      keep_link_series(result);
      return result;
    }
  }
  RunResult result = run_programs(input);
  keep_link_series(result);
  return result;
}

RunResult FlowEngine::run_programs(const EngineInput& input) {
  const FlowEngineConfig config = derived_config(config_, *input.programs);
  stats_ = FlowRunStats{};
  flow_detail::PathCache paths(*input.router);
  const Rank n = input.programs->num_ranks();
  // A collision found during the run (an uneven link over capacity) costs the attempt's run so
  // far, and finer rotations of the same period tend to meet it again later still (the tree on
  // 256 HGX-H100 nodes failed rotations by 1, 2 and 4 GPUs after 16, 38 and 89 s): after one such
  // failure the finer rotations of that period are skipped.
  Rank skip_rotations_of = 0;
  for (const flow_detail::ClassMap& classes : class_maps(input, config)) {
    if (classes.turns() > 1 && classes.period() == skip_rotations_of) continue;
    ++stats_.attempts;
    flow_detail::Simulation sim(input, config, paths, classes);
    std::optional<RunResult> result = sim.run(progress_);
    if (!result) {
      // Some members of a class are distinguishable: try finer classes.
      if (sim.asymmetry() == flow_detail::Asymmetry::Overload && classes.turns() > 1)
        skip_rotations_of = classes.period();
      continue;
    }
    stats_.simulated_ranks = classes.classes();
    stats_.class_size = n / classes.classes();
    stats_.local_rotation = classes.turns();
    stats_.transfers = sim.transfers();
    stats_.bundled_flows = sim.bundled_flows();
    stats_.solver_components = sim.components();
    stats_.fast_forwards = sim.fast_forwards();
    stats_.skipped_ops = sim.skipped_ops();
    // The simulation's bytes are in its solver's units, payload / transfer_efficiency on every
    // link (simulation.cpp); the counters report the payload itself.
    std::vector<double> payload = result->link_bytes;
    for (double& b : payload) b *= input.options.transfer_efficiency;
    keep_payload_counts(input, std::move(payload), result->makespan);
    return std::move(*result);
  }
  throw std::logic_error("flow engine: individual simulation cannot be asymmetric");
}

std::unique_ptr<Engine> make_flow_engine(const FlowEngineConfig& config) {
  return std::make_unique<FlowEngine>(config);
}

}  // namespace lockstep
