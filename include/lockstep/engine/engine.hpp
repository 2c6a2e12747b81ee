#pragma once
// The one interface every timing engine implements (analytical, flow, packet): execute the
// per-rank programs of a workload over a topology and report when every operation ran.
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "lockstep/collective/program.hpp"
#include "lockstep/core/progress_hook.hpp"
#include "lockstep/routing/router.hpp"
#include "lockstep/telemetry/link_counters.hpp"
#include "lockstep/topology/graph.hpp"

namespace lockstep {

struct EngineOptions {
  bool record_ops = false;          // keep per-op start/end times (memory: one pair per op)
  bool record_link_series = false;  // keep per-link utilisation over time
  Time link_sample_period = Time::us(10);
  std::uint64_t seed = 1;
  // Fixed per-message software cost added at each send (NCCL/host overheads); 0 by default.
  Time per_message_overhead = Time::zero();
  // Charge per_message_overhead after a message's bytes, as latency (the next message on the
  // connection streams meanwhile, as NCCL pipelines a step's chunks), rather than before them
  // (serialised per connection, the default). Flow engine only.
  bool overhead_as_latency = false;
  // Protocol payload efficiency (NCCL LL ~0.5, LL128 ~0.92, Simple ~1): a send of S bytes
  // occupies the wire as S / efficiency bytes would.
  double transfer_efficiency = 1.0;
  // Efficiency on scale-out network links (links touching an Ethernet/InfiniBand switch or a
  // gateway, joining two NICs, or a GPU's PCIe link to its NIC), where NCCL assumes a different
  // fraction of line rate than on NVLink; 0 means transfer_efficiency applies there too. The
  // flow engine scales those links; the packet engine inflates the bytes of a transfer that
  // crosses the fabric (all its links).
  double network_transfer_efficiency = 0;
  // Extra latency of a message whose path crosses a network link (NCCL's network step latency
  // exceeds its NVLink one). It adds to the path latency, so consecutive messages on one
  // connection overlap it; 0 by default. Every engine.
  Time network_message_latency = Time::zero();
  // Local memory bandwidth for Copy and Reduce ops (HBM-bound kernels); 0 means free.
  Bandwidth local_copy_bandwidth;
  // Speed limit of one (sending rank, channel) pair: every concurrent point-to-point send of a
  // rank on one channel shares at most this rate, as one NCCL channel is one thread block that
  // moves data at its own speed and does not lend it to the other channels while it waits. In
  // wire bytes, like link bandwidths (a send of S bytes counts S / transfer_efficiency). A send
  // whose data goes to several peers at once counts 1 / Op::fan_out of its bytes. 0 = off. The
  // flow engine adds it to the max-min constraints; the packet engine paces the channel's packets.
  Bandwidth channel_send_bandwidth;
};

/// The one rule for a link's rate on the analytical and flow engines: the fraction of `link`'s
/// line rate a transfer's payload runs at. A scale-out network link (is_network_link) runs at
/// network_transfer_efficiency when it is set (NCCL's network search speed over the link: 48 of
/// an NDR NIC's 50 GB/s), every other link at transfer_efficiency (NCCL's intra-node bandwidth
/// over the raw NVLink: 370.8 of 450 GB/s on H100), each times the protocol's payload efficiency
/// (docs/nccl-model.md "Flow runs", docs/analytical-engine.md "Link rates"). 1 when unset.
inline double link_payload_efficiency(const Topology& topo, LinkId link,
                                      const EngineOptions& options) {
  if (options.network_transfer_efficiency > 0 && is_network_link(topo, link))
    return options.network_transfer_efficiency;
  return options.transfer_efficiency > 0 ? options.transfer_efficiency : 1.0;
}

struct EngineInput {
  const Topology* topology = nullptr;
  const ProgramSet* programs = nullptr;
  std::span<const DeviceId> placement;  // rank -> GPU device
  const Router* router = nullptr;
  EngineOptions options;
};

struct OpTiming {
  Time start;
  Time end;
};

/// Utilisation of one directed link over time: bytes carried per sample period.
struct LinkSeries {
  DirLinkId link = kNone;
  std::vector<float> utilisation;    // 0..1 per sample
  std::vector<float> queue_bytes;    // packet engine: peak queue depth per sample (else empty)
  std::vector<PeriodEvents> events;  // packet engine: the samples with congestion events
};

struct RunResult {
  Time makespan;                           // when the last rank finished
  std::vector<Time> rank_finish;           // per rank
  std::vector<std::vector<OpTiming>> ops;  // per rank, per op (only with record_ops)
  std::vector<double> link_bytes;          // per directed link, bytes carried
  std::vector<LinkSeries> link_series;     // busiest links (only with record_link_series)
  // The period of link_series' samples when the engine widened the requested one (a long run
  // keeps at most a million samples per link); zero: EngineOptions::link_sample_period.
  Time link_sample_period = Time::zero();
  std::uint64_t events = 0;  // engine events processed (for benchmarks)
};

class Engine {
 public:
  virtual ~Engine() = default;
  virtual std::string_view name() const = 0;
  /// Runs the programs; throws InputError for programs that cannot run (unmatched sends, a
  /// deadlock) with a message naming the ranks and operations involved.
  virtual RunResult run(const EngineInput& input) = 0;
  /// Per-link counters of the last run() (telemetry/link_counters.hpp, docs/telemetry.md):
  /// payload and wire bytes on every engine, every column on the packet engine; empty before a
  /// run.
  const LinkCounters& link_counters() const { return counters_; }
  /// Bytes and peak queue per sample period of the last run, where the engine keeps them.
  virtual const LinkSeriesLog* link_series_log() const { return nullptr; }
  /// The flow and packet engines sample the busiest links' utilisation every `period` in the
  /// runs that follow, into link_counters().series, whatever the runs' options say (zero: off).
  void sample_links(Time period) { sample_links_ = period; }
  /// Where later run()s report the share of their ops done (core/progress_hook.hpp); not owned,
  /// null (the default) reports nothing. The flow and packet engines report; the analytical
  /// engine is done before a bar would show.
  void set_progress(ProgressHook* hook) { progress_ = hook; }

 protected:
  /// The input with the link series on at the sample_links() period, where one was set.
  EngineInput with_link_samples(const EngineInput& input) const {
    EngineInput out = input;
    if (sample_links_ > Time::zero()) {
      out.options.record_link_series = true;
      out.options.link_sample_period = sample_links_;
    }
    return out;
  }
  /// Keeps the run's series in counters_ when sample_links() asked for them.
  void keep_link_series(const RunResult& run) {
    counters_.series.clear();
    counters_.series_period = Time::zero();
    if (sample_links_ <= Time::zero()) return;
    counters_.series_period =
        run.link_sample_period > Time::zero() ? run.link_sample_period : sample_links_;
    for (const LinkSeries& s : run.link_series)
      counters_.series.push_back({s.link, s.utilisation, s.queue_bytes, s.events});
  }
  /// The analytical and flow engines' counters: `payload` per directed link, and as wire bytes
  /// payload / link_payload_efficiency, the share of the line rate it took (a link busy at its
  /// payload rate for the whole run reads 100%, never more).
  void keep_payload_counts(const EngineInput& input, std::vector<double> payload, Time makespan) {
    counters_.reset(0, false);
    counters_.wire_bytes.assign(payload.size(), 0.0);
    for (std::size_t d = 0; d < payload.size(); ++d) {
      if (payload[d] == 0) continue;  // most links of a large fabric carry nothing
      const LinkId link = Topology::link_of(static_cast<DirLinkId>(d));
      counters_.wire_bytes[d] =
          payload[d] / link_payload_efficiency(*input.topology, link, input.options);
    }
    counters_.bytes = std::move(payload);
    counters_.makespan = makespan;
  }
  LinkCounters counters_;
  Time sample_links_ = Time::zero();
  ProgressHook* progress_ = nullptr;
};

}  // namespace lockstep
