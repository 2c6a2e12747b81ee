#pragma once
// The packet-level engine: a discrete-event simulation of MTU packets through NIC and switch
// queues with the fabric's flow control and congestion control (see packet_config.hpp and
// docs/packet-engine.md). Executes the same per-rank programs as the other engines.
//
//   auto engine = make_packet_engine(packet_config_for_fabric("roce"));
//   RunResult r = engine->run(input);
//   const PacketStats& s = packet_stats(*engine);  // pauses, ECN marks, drops, FCTs ...
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "lockstep/engine/engine.hpp"
#include "lockstep/engine/packet/packet_config.hpp"
#include "lockstep/telemetry/flow_log.hpp"

namespace lockstep {

/// A cyclic buffer dependency found by the watchdog: every link in `links` is paused (or out of
/// credits) waiting for the next one, and `flows` are the transfers with packets stuck in it.
struct DeadlockReport {
  bool detected = false;
  Time at;
  struct StuckFlow {
    DeviceId src = kNone;
    DeviceId dst = kNone;
    std::uint64_t bytes = 0;
  };
  std::vector<DirLinkId> links;  // the cycle, in wait-for order
  std::vector<StuckFlow> flows;  // transfers with packets queued on the cycle
  std::string describe(const Topology& topo) const;
};

struct PacketStats {
  std::uint64_t packets_sent = 0;             // data packets put on their first link (incl. retx)
  std::uint64_t packets_delivered = 0;        // data packets that reached their destination
  std::uint64_t payload_bytes_delivered = 0;  // unique payload (duplicates excluded)
  std::uint64_t duplicate_packets = 0;        // retransmitted copies of data already received
  std::uint64_t drops = 0;
  std::uint64_t trims = 0;
  std::uint64_t retransmissions = 0;
  std::uint64_t timeouts = 0;
  std::uint64_t ecn_marks = 0;
  std::uint64_t cnps = 0;  // DCQCN congestion notifications delivered to senders
  // Control packets (ACK, NACK, CNP) put on the wire, delivered to senders, dropped on the way.
  std::uint64_t control_sent = 0;
  std::uint64_t control_delivered = 0;
  std::uint64_t control_drops = 0;
  std::uint64_t pfc_pauses = 0;  // PAUSE frames (XOFF transitions)
  std::uint64_t pfc_resumes = 0;
  std::uint64_t pfc_frames = 0;  // PFC frames on the wire (84 B each; one may carry both)
  // `buffers: {model: as_built}`: the most bytes that reached one priority group between its
  // XOFF and its XON (the bytes in flight its PFC headroom absorbs), and the packets that found
  // its headroom full (a switch would drop them).
  std::int64_t peak_headroom = 0;
  std::uint64_t headroom_overflows = 0;
  std::uint64_t credit_stalls = 0;  // times a packet waited at a link for credits
  std::uint64_t lane_changes = 0;   // packets moved up a lane level at a down-up turn
  std::uint64_t max_reorder = 0;    // most packets ever held out of order by one receiver
  // Ultra Ethernet (docs/packet-engine.md section 4). NSCC's reactions to ACKs by quadrant
  // (proportional increase, fair increase, multiplicative decrease, no change) and its quick
  // adaptations; NACKs sent by receivers (for trimmed packets, and ROD's for gaps); packets a
  // ROD receiver discarded past a gap; RCCC credit grants; frames corrupted on cables
  // (loss_rate) and replayed by link-level retry.
  std::uint64_t nscc_quadrants[4] = {0, 0, 0, 0};
  std::uint64_t nscc_quick_adapts = 0;
  std::uint64_t nacks = 0;
  std::uint64_t out_of_order_discards = 0;
  std::uint64_t credit_grants = 0;
  std::uint64_t corrupted_frames = 0;
  std::uint64_t llr_replays = 0;
  Time makespan;
  std::uint64_t events = 0;  // events processed
  std::uint64_t peak_pending_events = 0;
  std::uint64_t peak_packets = 0;  // packets alive at once (pool size)

  // Conservation check for credit-based flow control: credits outstanding at the end of the
  // run (should equal the initial total once every buffer has drained).
  // Credits in their units: 64 B blocks on InfiniBand cables, bytes on NVLink and PCIe.
  std::int64_t credits_initial = 0;
  std::int64_t credits_final = 0;
  std::uint64_t negative_credits = 0;  // packets sent on credits they did not have (a defect)
  // Switch buffers as built: bytes still booked on egress queues at the end (0 once drained).
  std::int64_t egress_booked_final = 0;

  // Per directed link: drops, trims, PAUSE frames and paused time, ECN marks, credit stalls,
  // CNPs and retransmissions (on the sender's first link), peak queue (telemetry/link_counters).
  LinkCounters links;

  FlowLog flows;              // one row per transfer (device ids, payload bytes, start, end)
  LinkSeriesLog link_series;  // per link bytes and peak queue per sample period
  DeadlockReport deadlock;
};

class PacketEngine : public Engine {
 public:
  /// `fabric_from_topology`: replace the config by the preset of the topology's fabric
  /// (ClusterTraits::fabric) at each run, as the engine registry's default engine does.
  explicit PacketEngine(PacketConfig config, bool fabric_from_topology = false);
  /// Settings from a scenario's `packet:` section (packet_config_from_args). Without a `fabric`
  /// key they apply on top of the preset of each run's topology fabric, so they are read at
  /// run(); with one they are read, and checked, here. Errors carry file:line:column.
  explicit PacketEngine(const ArgNode& section);
  std::string_view name() const override { return "packet"; }
  RunResult run(const EngineInput& input) override;
  const PacketConfig& config() const { return config_; }
  /// Statistics of the last run().
  const PacketStats& stats() const { return stats_; }
  const LinkSeriesLog* link_series_log() const override { return &stats_.link_series; }

 private:
  PacketConfig config_;
  bool fabric_from_topology_ = false;
  std::optional<ArgNode> section_;
  PacketStats stats_;
};

std::unique_ptr<Engine> make_packet_engine(const PacketConfig& config);
/// The preset of each topology's own fabric (ClusterTraits::fabric; unknown -> infiniband).
std::unique_ptr<Engine> make_packet_engine();
/// Configured by a scenario's `packet:` section, e.g. {mtu: 2048, pfc: {xoff: 200KB}}.
std::unique_ptr<Engine> make_packet_engine(const ArgNode& section);

/// The stats of a packet engine's last run; throws std::invalid_argument for other engines.
const PacketStats& packet_stats(const Engine& engine);

}  // namespace lockstep
