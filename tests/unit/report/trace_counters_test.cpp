// The busiest links' congestion counters in a training trace: the packet engine's incasts of
// tests/unit/engine/packet/telemetry_test.cpp drawn as Perfetto counter tracks show their PAUSEs
// and drops in the periods they happen, and every counter track moves forward in time.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>

#include "../engine/packet/fixtures.hpp"
#include "lockstep/report/trace.hpp"

namespace lockstep {
namespace {

constexpr std::uint64_t kWire = 4096 + 26;

// 4 senders of `packets` 4 KiB packets to host 4 through one switch (400G, 100 ns links),
// sampled every `period`, as a trace's link tracks.
TrainResult incast_trace(PacketConfig cfg, std::uint64_t packets, Time period) {
  std::vector<packet_test::Transfer> list;
  for (Rank s = 0; s < 4; ++s) list.push_back({s, 4, packets * 4096});
  const Topology topo = packet_test::star(5, Bandwidth::gbps(400), Time::ns(100));
  const auto programs = packet_test::transfers(5, list);
  cfg.payload = Bytes(4096);
  cfg.header = Bytes(26);
  cfg.ecn = false;
  cfg.switch_latency = Time::zero();
  EngineOptions options;
  options.record_link_series = true;
  options.link_sample_period = period;
  const packet_test::Outcome r = packet_test::simulate(topo, programs, cfg, options);
  TrainResult out;
  out.gpus = 5;
  for (const LinkSeries& s : r.result.link_series)
    out.links.push_back(
        {fmt::format("link {}", s.link), period, s.utilisation, s.queue_bytes, s.events});
  return out;
}

// Per counter track (link name, argument): its points in file order, (ts, value).
using Tracks =
    std::map<std::pair<std::string, std::string>, std::vector<std::pair<double, double>>>;

Tracks counter_tracks(const std::string& trace) {
  const auto doc = nlohmann::json::parse(trace);
  Tracks tracks;
  for (const auto& e : doc["traceEvents"]) {
    if (e["ph"] != "C") continue;
    for (const auto& [arg, value] : e["args"].items())
      tracks[{e["name"], arg}].push_back({e["ts"].get<double>(), value.get<double>()});
  }
  return tracks;
}

void expect_forward_in_time(const Tracks& tracks) {
  for (const auto& [track, points] : tracks)
    for (std::size_t i = 1; i < points.size(); ++i)
      EXPECT_LT(points[i - 1].first, points[i].first) << track.first << " " << track.second;
}

// Where a track's points are non-zero: ts (us) -> value.
std::map<double, double> nonzero(const Tracks& tracks, const std::string& arg) {
  std::map<double, double> out;
  for (const auto& [track, points] : tracks)
    if (track.second == arg)
      for (const auto& [ts, value] : points)
        if (value != 0) out[ts] += value;
  return out;
}

PacketConfig lossless() {
  PacketConfig cfg = packet_config_for_fabric("roce");
  cfg.congestion = CongestionControl::None;
  cfg.switch_buffer = Bytes(1 << 20);
  cfg.pfc_xoff = Bytes(8 * kWire);
  cfg.pfc_xon = Bytes(1);
  return cfg;
}

// telemetry_test.cpp derives the PAUSEs: senders 1-3 at 924.4 ns (the period from 0.9 us),
// sender 0 at 1006.84 ns (from 1.0 us); each track steps back to 0 in the next quiet period.
TEST(TraceCounters, LosslessIncastShowsFourPausesInTheirPeriods) {
  const Tracks tracks =
      counter_tracks(report::training_trace_json(incast_trace(lossless(), 16, Time::ns(100))));
  expect_forward_in_time(tracks);
  const std::map<double, double> pauses = nonzero(tracks, "pfc_pauses");
  const std::map<double, double> expected = {{0.9, 3.0}, {1.0, 1.0}};
  EXPECT_EQ(pauses, expected);
  EXPECT_TRUE(nonzero(tracks, "drops").empty());
  // Paused time: senders 1-3 from 1026.08 ns (the 84 B PAUSE frame's 1.68 ns at 400 Gb/s after
  // the crossing, then the 100 ns cable), 73.92 ns of the period from 1.0 us.
  EXPECT_NEAR(nonzero(tracks, "pfc_paused_us").at(1.0), 3 * 0.07392, 1e-6);
  for (const auto& [track, points] : tracks)
    if (track.second == "pfc_pauses") {
      EXPECT_EQ(points.back().second, 0.0) << track.first;
    }
}

// Sampled every 1 ns, the ~4.4 us run has over 2,000 periods: the trace sums them in bins of 3
// (3 ns): the 4 PAUSEs stay 4, in the bins from 924 ns and 1005 ns.
TEST(TraceCounters, CoarserBinsKeepThePauseCount) {
  const Tracks tracks =
      counter_tracks(report::training_trace_json(incast_trace(lossless(), 16, Time::ns(1))));
  expect_forward_in_time(tracks);
  const std::map<double, double> pauses = nonzero(tracks, "pfc_pauses");
  ASSERT_EQ(pauses.size(), 2u);
  EXPECT_NEAR(pauses.begin()->first, 0.924, 1e-9);
  EXPECT_EQ(pauses.begin()->second, 3.0);
  EXPECT_NEAR(pauses.rbegin()->first, 1.005, 1e-9);
  EXPECT_EQ(pauses.rbegin()->second, 1.0);
}

// Lossy (12 packets of buffer, each sender's 10-packet window at once): 20 drops on the switch ->
// receiver link, 2, 3, 6, 3, 3, 3 in the 100 ns periods from 0.3 .. 0.8 us. The retransmission
// timeouts stretch the run past 2,000 periods, so the trace sums bins of k = ceil(periods / 2000)
// periods: the same drops regrouped by period / k. Every packet is acknowledged, as in the
// packet engine's own incast test (tests/unit/engine/packet/telemetry_test.cpp): with TCP's ACK
// every second packet, held ACKs wait past the RTO and 3 more packets are resent.
TEST(TraceCounters, LossyIncastShowsTwentyDrops) {
  PacketConfig cfg = packet_config_for_fabric("ethernet");
  cfg.host_per_message = Time::zero();
  cfg.host_per_byte_ps = Time::zero();
  cfg.initial_window = 10;
  cfg.dynamic_threshold = 1e6;
  cfg.switch_buffer = Bytes(12 * kWire);
  cfg.ack_every = 1;
  const TrainResult run = incast_trace(cfg, 10, Time::ns(100));
  std::size_t periods = 0;
  for (const LinkTrack& t : run.links) periods = std::max(periods, t.utilisation.size());
  const std::size_t k = (periods + 1999) / 2000;
  std::map<double, double> expected;
  for (const auto& [period, n] :
       std::map<std::size_t, double>{{3, 2.0}, {4, 3.0}, {5, 6.0}, {6, 3.0}, {7, 3.0}, {8, 3.0}})
    expected[static_cast<double>(period / k * k) / 10] += n;
  const Tracks tracks = counter_tracks(report::training_trace_json(run));
  expect_forward_in_time(tracks);
  EXPECT_EQ(nonzero(tracks, "drops"), expected) << k << " periods a bin";
  double retransmissions = 0;
  for (const auto& [ts, n] : nonzero(tracks, "retransmissions")) retransmissions += n;
  EXPECT_EQ(retransmissions, 20.0);
  EXPECT_TRUE(nonzero(tracks, "pfc_pauses").empty());
}

}  // namespace
}  // namespace lockstep

namespace lockstep {
namespace {

// collective --trace: a sweep's largest row, its link sampled in two 1 us periods (busy, then
// half busy) with one PAUSE in the second: utilisation points 1 at 0 us and 0.5 at 1 us, the
// PAUSE at 1 us and back to 0 at 2 us; with two sweeps the tracks name their op.
TEST(TraceCounters, CollectiveTraceDrawsTheLargestRowsLinks) {
  LinkReport l;
  l.link = 3;
  l.name = "node 0 nic 0 -> leaf 0";
  l.series_period = Time::us(1);
  l.series = {1.0f, 0.5f};
  l.queue_series = {0.0f, 4122.0f};
  PeriodEvents pause;
  pause.period = 1;
  pause.count[PeriodEvents::Pause] = 1;
  l.events = {pause};
  report::Sweep sweep;
  sweep.op = "all_reduce";
  sweep.engine = "packet";
  report::SweepRow small, large;
  small.bytes = 8;
  large.bytes = 1 << 20;
  large.time_us = 2;
  large.links = {l};
  sweep.rows = {small, large};
  const Tracks one = counter_tracks(report::collective_trace_json({sweep}));
  expect_forward_in_time(one);
  using Points = std::vector<std::pair<double, double>>;
  EXPECT_EQ(one.at({l.name, "utilisation"}), (Points{{0.0, 1.0}, {1.0, 0.5}}));
  EXPECT_EQ(one.at({l.name, "queue_bytes"}), (Points{{0.0, 0.0}, {1.0, 4122.0}}));
  EXPECT_EQ(one.at({l.name, "pfc_pauses"}), (Points{{1.0, 1.0}, {2.0, 0.0}}));
  const Tracks two = counter_tracks(report::collective_trace_json({sweep, sweep}));
  EXPECT_EQ(two.count({"all_reduce: " + l.name, "utilisation"}), 1u);
}

}  // namespace
}  // namespace lockstep
