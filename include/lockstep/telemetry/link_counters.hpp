#pragma once
// Per-link network counters of one engine run, and the busiest links summarised with names a
// reader knows (docs/telemetry.md). Engines fill the columns they model: the flow engine bytes
// only, the packet engine every one (drops, trims, PFC, ECN, CNPs, credit stalls, retransmits).
//
//   const LinkCounters& c = engine.link_counters();
//   for (const LinkReport& l : busiest_links(topo, c, engine.link_series_log(), 5))
//   fmt::print("{}\n", l.name);
#include <algorithm>
#include <bit>
#include <cstdint>
#include <string>
#include <vector>

#include "lockstep/core/units.hpp"
#include "lockstep/telemetry/flow_log.hpp"
#include "lockstep/topology/device_names.hpp"
#include "lockstep/topology/graph.hpp"

namespace lockstep {

/// Utilisation (bytes / capacity) per sample period of one link.
struct LinkUtilisation {
  DirLinkId link = kNone;
  std::vector<float> utilisation;    // 0..1 per period
  std::vector<float> queue_bytes;    // packet engine: peak queue depth per period
  std::vector<PeriodEvents> events;  // packet engine: the periods with congestion events
};

/// Columns indexed by directed link id; empty where the engine does not count that quantity.
struct LinkCounters {
  // Payload bytes the link's transmitter sent (the collective's data, every engine), and what
  // they took of the wire: on the analytical and flow engines payload / link_payload_efficiency
  // (engine.hpp), on the packet engine every packet's size (headers, ACKs, PAUSE frames and
  // retransmissions included). Utilisation is wire_bytes / (bandwidth x makespan).
  std::vector<double> bytes;
  std::vector<double> wire_bytes;
  std::vector<double> dropped_bytes;     // bytes lost at the link's queue (dropped, or trimmed off)
  std::vector<std::uint64_t> drops;      // packets dropped at the link's queue (buffer full)
  std::vector<std::uint64_t> trims;      // packets cut to their header there instead
  std::vector<std::uint64_t> ecn_marks;  // packets marked queuing for the link
  std::vector<std::uint64_t> pauses;     // PFC PAUSE frames sent to the link's transmitter
  std::vector<Time> paused;              // time its transmitter spent paused
  std::vector<std::uint64_t> credit_stalls;  // times a packet waited there for credits
  // Sender-side events, on the sending NIC's (GPU's) first link of the flow they concern:
  std::vector<std::uint64_t> cnps;             // DCQCN congestion notifications received
  std::vector<std::uint64_t> retransmissions;  // packets sent again
  std::vector<double> peak_queue;              // bytes queued for the link, at most
  // Queue depth each packet found joining the link's queue (itself included), per link
  // kQueueBuckets counts: bucket 0 an empty queue, bucket b a depth in [2^(b-1), 2^b) bytes.
  static constexpr std::size_t kQueueBuckets = 32;
  std::vector<std::uint32_t> queue_hist;
  // When the link's first packet started and its last one finished leaving (infinite / zero
  // for a link that never sent): the window its bytes fell in.
  std::vector<Time> first_sent, last_sent;
  Time makespan;  // of the run the counters cover
  // The busiest links' utilisation per period, when the engine was asked to sample them
  // (Engine::sample_links); series_period zero when not.
  Time series_period;
  std::vector<LinkUtilisation> series;
  void note_queue(std::size_t link, double depth) {
    const auto d = static_cast<std::uint64_t>(depth);
    const std::size_t b = std::min<std::size_t>(std::bit_width(d), kQueueBuckets - 1);
    ++queue_hist[link * kQueueBuckets + b];
  }
  /// Sizes every column for `links` links (the packet columns only when `packet`), zeroed.
  void reset(std::size_t links, bool packet);
  bool packet() const { return !drops.empty(); }
};

/// One link of the busiest-links summary. Utilisation is wire_bytes / (bandwidth x time).
struct LinkReport {
  DirLinkId link = kNone;
  std::string name;        // link_name(): "node 3 gpu 1 nic -> leaf 1 (rail 1)"
  double bytes = 0;        // payload
  double wire_bytes = 0;   // what the payload (and, on the packet engine, headers) took
  double utilisation = 0;  // mean over the run (its makespan)
  // Over the sample periods of a link series (LinkSeriesLog), when one was recorded:
  double peak_utilisation = 0;  // of the busiest period
  Time peak_at;                 // that period's start
  // With a sampled series (LinkCounters::series): the time the link spent at 90% or more of
  // its bandwidth, and the series in at most kSeriesPoints periods of series_period.
  static constexpr std::size_t kSeriesPoints = 64;
  Time above_90;
  Time series_period;
  std::vector<float> series;
  std::vector<float> queue_series;   // peak queue depth per period of series_period
  std::vector<PeriodEvents> events;  // congestion events per period of series_period
  // Bytes: the depth packets found (the upper edge of its power-of-two bucket, at most the
  // peak), or without a histogram the per-period peak depth; queue_max the peak itself.
  double queue_p50 = 0, queue_p99 = 0, queue_max = 0;
  std::uint64_t drops = 0, trims = 0, ecn_marks = 0, pauses = 0, credit_stalls = 0;
  std::uint64_t cnps = 0, retransmissions = 0;
  Time paused;
  double dropped_bytes = 0;
  Time first_sent, last_sent;  // packet engine: the window the link was sending in
};

/// The `n` links that carried the most payload bytes (ties: lower id), then every link with a drop,
/// trim, pause, ECN mark, CNP, credit stall or retransmission not already among them, up to `n`
/// more. `series` may be null or disabled (no peak, no queue percentiles).
std::vector<LinkReport> busiest_links(const Topology& topo, const LinkCounters& counters,
                                      const LinkSeriesLog* series, std::size_t n);

/// Sums of the packet counters over every link (for one-line totals).
LinkReport link_totals(const LinkCounters& counters);

}  // namespace lockstep
