#include "lockstep/engine/packet/packet_engine.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>

#include "lockstep/core/error.hpp"
#include "simulator.hpp"

namespace lockstep {

namespace packet {

void Simulator::schedule_op_done(Rank r, OpIndex i, std::int64_t at) {
  events_.push(at, EventKind::OpDone, r, i);
}

RunResult Simulator::result() {
  RunResult out;
  programs_.fill_result(out);
  out.link_bytes = link_bytes_;
  out.events = stats_.events;
  stats_.egress_booked_final = buffers_.on() ? buffers_.egress_booked() : 0;
  stats_.credits_final = 0;
  for (std::uint32_t l = 0; l < links_.size(); ++l) {
    if (links_[l].control != LinkControl::Credit) continue;
    for (std::uint32_t lane = 0; lane < lanes_; ++lane) {
      const std::size_t li = lidx(l, static_cast<std::uint8_t>(lane));
      const LaneState& r = lane_[li];
      stats_.credits_final += r.credits;
      r.returns.for_each([&](std::int64_t, std::uint32_t wire) {
        stats_.credits_final += wire;  // still on their way back
        return true;
      });
    }
  }
  const LinkSeriesLog& log = stats_.link_series;
  if (input_.options.record_link_series && log.enabled()) {
    // The busiest links, as utilisation (bytes carried / capacity) per sample period.
    std::vector<std::uint32_t> order(links_.size());
    std::iota(order.begin(), order.end(), 0u);
    const std::size_t keep = std::min<std::size_t>(cfg_.series_links, order.size());
    std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(keep), order.end(),
                      [&](std::uint32_t a, std::uint32_t b) {
                        return link_bytes_[a] > link_bytes_[b] ||
                               (link_bytes_[a] == link_bytes_[b] && a < b);
                      });
    out.link_sample_period = log.period();
    const double period = log.period().seconds();
    for (std::size_t i = 0; i < keep && link_bytes_[order[i]] > 0; ++i) {
      LinkSeries series;
      series.link = order[i];
      const double capacity = 1e12 / links_[order[i]].ps_per_byte * period;
      for (float b : log.bytes(order[i]))
        series.utilisation.push_back(static_cast<float>(std::min(1.0, b / capacity)));
      const std::span<const float> queue = log.peak_queue(order[i]);
      series.queue_bytes.assign(queue.begin(), queue.end());
      series.queue_bytes.resize(series.utilisation.size(), 0.0f);
      const std::span<const PeriodEvents> events = log.events(order[i]);
      series.events.assign(events.begin(), events.end());
      out.link_series.push_back(std::move(series));
    }
  }
  return out;
}

}  // namespace packet

PacketEngine::PacketEngine(PacketConfig config, bool fabric_from_topology)
    : config_(std::move(config)), fabric_from_topology_(fabric_from_topology) {
  config_.validate();
}

PacketEngine::PacketEngine(const ArgNode& section)
    : fabric_from_topology_(!section.has("fabric")), section_(section) {
  if (!fabric_from_topology_) config_ = packet_config_from_args(section);
}

RunResult PacketEngine::run(const EngineInput& given) {
  const EngineInput input = with_link_samples(given);
  if (input.topology == nullptr) throw InputError("engine.topology", "no topology given");
  if (input.programs == nullptr) throw InputError("engine.programs", "no programs given");
  stats_ = PacketStats{};
  if (fabric_from_topology_) {
    config_ = packet_config_for_topology(section_ ? &*section_ : nullptr,
                                         input.topology->traits().fabric);
  }
  const Time period = config_.sample_period > Time::zero() ? config_.sample_period
                      : input.options.record_link_series   ? input.options.link_sample_period
                                                           : Time::zero();
  stats_.link_series.reset(input.topology->num_directed_links(), period);
  packet::Simulator sim(config_, input, stats_);
  sim.run(progress_);
  RunResult result = sim.result();
  counters_ = stats_.links;  // payload and wire bytes (Simulator::flush_tallies)
  counters_.makespan = result.makespan;
  keep_link_series(result);
  return result;
}

std::unique_ptr<Engine> make_packet_engine(const PacketConfig& config) {
  return std::make_unique<PacketEngine>(config);
}

std::unique_ptr<Engine> make_packet_engine() {
  return std::make_unique<PacketEngine>(PacketConfig{}, true);
}

std::unique_ptr<Engine> make_packet_engine(const ArgNode& section) {
  return std::make_unique<PacketEngine>(section);
}

const PacketStats& packet_stats(const Engine& engine) {
  const auto* p = dynamic_cast<const PacketEngine*>(&engine);
  if (p == nullptr) throw std::invalid_argument("packet_stats: not a packet engine");
  return p->stats();
}

}  // namespace lockstep
