#pragma once
// Configuration of the packet engine: which fabric model (flow control, transport, congestion
// control, path selection) and its parameters. Four presets follow the fabrics of DESIGN.md:
//   infiniband      credit-based link-level flow control per virtual lane, lossless, RDMA
//   roce            RoCEv2: PFC pause/resume per priority, ECN marking, DCQCN at the sender
//   ethernet / tcp  lossy drop-tail Ethernet, kernel TCP (SACK loss recovery, Reno window)
//   ultra_ethernet  Ultra Ethernet 1.0: spraying (RUD) or one path in order (ROD), trimming,
//                   NSCC and / or RCCC congestion control, optional link-level retry
// Every field can be overridden from a scenario file (config_from_args). docs/packet-engine.md
// says what each model simplifies.
#include <cstdint>
#include <string>
#include <vector>

#include "lockstep/config/arg_node.hpp"
#include "lockstep/core/units.hpp"

namespace lockstep {

enum class FabricModel : std::uint8_t { InfiniBand, RoCE, Ethernet, UltraEthernet };

/// How a switch stops its upstream neighbour from overrunning its buffer.
enum class FlowControl : std::uint8_t {
  Credit,  // InfiniBand: the transmitter holds credits for the receiver's per-VL buffer
  Pfc,     // Ethernet priority flow control: PAUSE above Xoff, RESUME below Xon
  None,    // drop-tail (or trim) when the shared buffer is full
};

/// Sender-side rate or window control.
enum class CongestionControl : std::uint8_t {
  None,      // line rate, limited only by flow control
  Dcqcn,     // RoCEv2: rate cut on CNP, timer-driven recovery (Zhu et al., SIGCOMM 2015)
  Reno,      // TCP NewReno-style window: slow start, AIMD, halve on loss, reset on timeout
  Delay,     // Swift-like: additive increase below a target RTT, multiplicative decrease above
  Ecn,       // DCTCP-like: window cut in proportion to the fraction of ECN-marked packets
  Nscc,      // UEC 1.0 NSCC: window from delay and ECN together (four quadrants), quick adapt
  Rccc,      // UEC 1.0 RCCC: the receiver grants credit, shared among its senders
  NsccRccc,  // both: a packet leaves with room in the window and credit in hand
};

/// UEC 1.0 packet delivery modes (PDS): reliable unordered (sprayed, per-packet SACK) or
/// reliable ordered (one path, in order, go-back-N from the first missing packet).
enum class Delivery : std::uint8_t { Rud, Rod };

const char* to_string(FabricModel m);
const char* to_string(FlowControl f);
const char* to_string(CongestionControl c);
const char* to_string(Delivery d);

struct PacketConfig {
  FabricModel model = FabricModel::InfiniBand;
  FlowControl flow_control = FlowControl::Credit;
  CongestionControl congestion = CongestionControl::None;

  // Segmentation. `payload` is the data carried per packet (IB/RoCE MTU; for TCP the IP MTU
  // minus IP and TCP headers); `header` is the per-packet overhead on the wire (for Ethernet
  // including preamble, FCS and inter-frame gap). Transfers that stay on the board (NVLink, PCIe)
  // are GPU copies: no header, host cost or window (docs/packet-engine.md "On-board copies").
  Bytes payload = Bytes(4096);
  Bytes header = Bytes(26);
  // Payload per packet of an on-board copy: 0 = the medium's own packet from the catalog
  // (board_packet_payload: NVLink's and PCIe's 256 B), the smallest along its path. A scenario
  // may set it (`board_mtu`) to compare with other sizes.
  Bytes board_payload = Bytes(0);

  // Switches. Zero buffer means "from the catalog by switch model". The topology builders fold
  // each switch's port-to-port latency into its links (half per end), so switch_latency is an
  // extra delay per switch hop on top of that, zero by default.
  Bytes switch_buffer;           // shared buffer per switch
  Time switch_latency;           // added at every switch (and gateway) hop
  bool cut_through = true;       // false: store-and-forward (a packet waits for its last bit)
  Bytes port_buffer = Bytes(0);  // credit/PFC headroom per ingress port and lane; 0 = derived
  std::uint32_t virtual_lanes = 1;
  // Lane levels on lossless fabrics: a packet moves up one level (to lane class + level x
  // virtual_lanes) where its route turns from a downward to an upward switch hop, so that buffers
  // cannot wait on each other in a cycle (docs/packet-engine.md "Lane change at turns").
  // 0 = auto: 2 where some switch is wired to two or more switches of its own tier (a
  // dragonfly's routers), else 1 (a Clos routed up then down never turns).
  std::uint32_t lane_levels = 0;
  double dynamic_threshold = 1.0;  // drop-tail: an output queue may use alpha x free buffer
  // Switch buffers as built (`buffers:`, docs/packet-engine.md "Buffers as built"; the default
  // where every switch is a catalog part with a published layout, see model_set). Off: one
  // shared pool per switch and a static PFC Xoff per port (the model before). On: the catalog
  // switch's buffer in cells, a reserve per egress queue (lossy) or ingress priority group (PFC)
  // with PFC headroom per (port, priority), the rest a pool shared under dynamic thresholds
  // (alpha = dynamic_threshold for egress queues, ingress_alpha for PFC), the catalog's ECN.
  struct BufferModel {
    bool as_built = false;
    // The scenario named a model. Else (the default) the model is as built where every switch
    // of the topology is a catalog part with a published buffer layout (a cell size), shared
    // where one is not (hand-built topologies, Rosetta).
    bool model_set = false;
    Bytes cell = Bytes(0);            // 0: the catalog switch's (1 B where it has none)
    Bytes reserved_queue = Bytes(0);  // per egress queue and lane, before the shared pool
    Bytes reserved_pg = Bytes(0);     // per ingress port and lane (PFC)
    double ingress_alpha = 1.0;       // XOFF once a group's shared use passes alpha x free pool
    Bytes headroom = Bytes(0);        // per ingress port and lane; 0: 802.1Qbb's (docs)
  } buffers;
  bool ecn_thresholds_set = false;  // the scenario's ecn: {kmin, kmax, pmax} (else the catalog's)

  // Host side. RDMA has no host cost; kernel TCP pays per message and per byte at the sender.
  Time host_per_message;
  Time host_per_byte_ps;        // picoseconds per byte (0 = none); 1 ps/B caps a host at 1 TB/s
  Bytes nic_buffer = Bytes(0);  // buffer of NICs and hosts (lossless, credit-controlled)

  // Path selection.
  bool spray = false;     // per-packet spraying over all equal-cost paths
  bool adaptive = false;  // per-packet least-loaded choice (power of two choices) among paths
  // `adaptive: switch`: each switch sends a packet to the least-loaded of its equal-cost next
  // hops (InfiniBand adaptive routing as in Quantum switches); the sender keeps one path.
  bool switch_adaptive = false;

  // PFC (per ingress port and priority), in bytes of that ingress' buffered packets.
  Bytes pfc_xoff = Bytes(0);  // 0 = derived from port buffer
  Bytes pfc_xon = Bytes(0);

  // ECN marking on enqueue (RED-like): none below kmin, probability rising linearly to pmax at
  // kmax, always above kmax.
  bool ecn = false;
  Bytes ecn_kmin = Bytes(100 * 1024);
  Bytes ecn_kmax = Bytes(400 * 1024);
  double ecn_pmax = 0.2;

  // InfiniBand congestion control (IBTA Vol. 1 Annex A10; `ib_cc: true` or a map): a switch
  // marks FECN on packets it queues behind `ib_cc_threshold` bytes of an output, the receiver
  // returns a BECN, and the sender raises its congestion control table index by one (at most
  // `ib_cc_limit`), which every `ib_cc_timer` falls by one again. The table is linear: index i
  // puts i packet times between packets (rate / (1 + i)). docs/packet-engine.md.
  bool ib_cc = false;
  Bytes ib_cc_threshold = Bytes(64 * 1024);
  Time ib_cc_timer = Time::us(10);
  std::uint32_t ib_cc_limit = 127;

  // DCQCN parameters (names as in the paper).
  double dcqcn_g = 1.0 / 256;
  Time dcqcn_timer = Time::us(55);         // rate increase and alpha decay period
  Time dcqcn_cnp_interval = Time::us(50);  // at most one CNP per flow per interval
  Bandwidth dcqcn_rai = Bandwidth::gbps(5);
  Bandwidth dcqcn_rhai = Bandwidth::gbps(50);
  double dcqcn_min_rate_fraction = 0.001;

  // Reliable transport (lossy fabrics).
  Time rto_min = Time::us(1000);
  std::uint32_t initial_window = 10;    // packets
  std::uint32_t reorder_threshold = 3;  // packets acked beyond a hole before it counts as lost
  Time delay_target = Time::us(4);      // queueing delay target of the Delay controller
  bool trimming = false;                // trim to header instead of dropping (UEC)

  // Control packets on the wire (docs/packet-engine.md "Control packets"): ACKs, NACKs and CNPs
  // take the reverse route, queue, hold buffer and credits, and on lossy fabrics can be dropped.
  // The receiver of a fabric transfer acknowledges the transfer's last packet and every
  // `ack_every`-th packet (0: the last one only, one ACK per message); on the reliable transport
  // also at once a packet that arrives out of order, fills a gap or twice, and with
  // `congestion: ecn` a change of CE mark.
  std::uint32_t ack_every = 0;
  Bytes ack_wire = Bytes(30);  // an ACK or NACK on the wire (preset per transport)
  Bytes cnp_wire = Bytes(98);  // a RoCEv2 CNP on the wire
  // Reliable transport: a held ACK goes out at the latest this long after the packet it covers
  // (TCP's delayed-ACK timer; Linux's TCP_DELACK_MIN, 40 ms).
  Time ack_delay = Time::ms(40);
  // Switches (and NICs) send control packets before data, strict priority; false: in the data
  // lane of their flow, behind its queue. Trimmed headers always go first.
  bool control_priority = false;
  // UEC 1.0 PDS: an ACK carries the cumulative PSN plus a 64-bit SACK bitmap over the PSNs that
  // follow it, so the receiver may coalesce ACKs across the reordering spraying causes (an
  // out-of-order packet is not acknowledged at once). False: an ACK holds the cumulative point
  // and the one packet that sent it (a TCP SACK block).
  bool sack_bitmap = false;
  // Ultra Ethernet (docs/packet-engine.md section 4). The delivery mode; RCCC's first credit
  // per flow before any grant (0: one bandwidth-delay product of its path); link-level retry on
  // the cables and the probability that a frame is corrupted on a cable (seeded, per hop).
  Delivery delivery = Delivery::Rud;
  Bytes rccc_initial_credit = Bytes(0);
  bool llr = false;
  double loss_rate = 0;

  // Deadlock watchdog: no packet progress for this long while packets wait => analyse.
  Time watchdog = Time::us(500);
  bool throw_on_deadlock = true;  // false: stop and report through PacketStats only

  // Link telemetry sampling period; 0 takes EngineOptions::link_sample_period.
  Time sample_period;
  std::uint32_t series_links = 64;  // busiest links kept in RunResult::link_series

  /// Throws InputError naming the offending field.
  void validate() const;
};

/// Preset for a fabric name: infiniband | roce | ethernet | tcp | ultra_ethernet (also the
/// aliases ib, rocev2, uec, spectrum_x). Unknown names are an InputError listing known ones.
PacketConfig packet_config_for_fabric(const std::string& fabric);

/// Reads a packet-engine section of a scenario, e.g.
///   {fabric: roce, mtu: 4096, ecn: {kmin: 100KB, kmax: 400KB, pmax: 0.2}, pfc: {xoff: 200KB}}
/// starting from the fabric preset (or `base` when the node has no `fabric` key). Unknown keys
/// are reported with file:line:column.
PacketConfig packet_config_from_args(const ArgNode& node, const PacketConfig& base = {});

/// The settings a packet engine runs with on a topology whose fabric is `topology_fabric`
/// (ClusterTraits::fabric): that fabric's preset (infiniband for a name without one) under the
/// scenario's `section` when given. `lockstep run` calls it for every variant before simulating,
/// so that a value out of the medium's range (an MTU) fails before any run.
PacketConfig packet_config_for_topology(const ArgNode* section, const std::string& topology_fabric);

/// The names accepted by packet_config_for_fabric, for --help.
std::vector<std::string> packet_fabric_names();

}  // namespace lockstep
