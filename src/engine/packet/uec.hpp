#pragma once
// Ultra Ethernet 1.0 in the packet engine (not a public API): NSCC's window reaction, RCCC's
// receiver credit, the delivery modes and link-level retry. The Simulator's hooks live in
// uec_cc.cpp (NSCC, RCCC), uec_delivery.cpp (ROD) and uec_link.cpp (LLR, frame corruption);
// docs/packet-engine.md section 4 gives the specification's sections and each constant's source.
#include <cstdint>
#include <vector>

namespace lockstep::packet {

/// The four quadrants of NSCC (UEC 1.0, UET congestion management, NSCC): whether the queueing
/// delay an ACK reports is above the target, and whether the packet it acknowledges carried an
/// ECN mark. Delay and ECN agreeing that the queue is low -> increase (fast when the queue has
/// stayed empty for a whole window); agreeing that it is high -> multiplicative decrease in
/// proportion to the excess delay; delay high without ECN (the queue is not at this flow's
/// bottleneck or is draining) -> a small fair increase; ECN without high delay (a queue starting
/// to build) -> no change.
enum class NsccQuadrant : std::uint8_t {
  ProportionalIncrease,    // delay < target, no ECN
  FairIncrease,            // delay >= target, no ECN
  MultiplicativeDecrease,  // delay >= target, ECN
  NoChange,                // delay < target, ECN
};

NsccQuadrant nscc_quadrant(double delay, double target, bool ecn);

/// NSCC's window state per flow, in packets; times in picoseconds.
struct NsccWindow {
  double cwnd = 0;
  double max_cwnd = 0;  // bandwidth-delay product plus twice the target queue
  std::int64_t last_decrease = -1;
  std::uint32_t empty_acks = 0;  // consecutive ACKs that saw no queue (fast increase)
  // Quick adapt: packets acknowledged in the current and the last measurement period (one RTT).
  std::uint32_t acked_now = 0, acked_last = 0;
  std::int64_t period_start = -1;
};

struct NsccParams {
  double target = 0;    // queueing delay target (ps)
  double base_rtt = 0;  // the idle path's round trip (ps)
};

/// One ACK's reaction (rtt: its sample, ps; now: the time, ps). Returns the quadrant taken.
NsccQuadrant nscc_on_ack(NsccWindow& w, const NsccParams& p, double rtt, bool ecn,
                         std::int64_t now);
/// A trim (NACK), a loss or a timeout: the window drops to what the last round trip delivered,
/// at most once per round trip. True when it acted.
bool nscc_quick_adapt(NsccWindow& w, const NsccParams& p, std::int64_t now);

/// What a flow keeps for Ultra Ethernet besides the generic reliable transport's state.
struct UecFlow {
  NsccWindow nscc;
  NsccParams params;
  // RCCC, sender side: wire bytes it may still send new data for.
  std::int64_t credit = 0;
  // RCCC, receiver side: wire bytes of the flow not yet granted (nor covered by the initial
  // credit), and whether the receiver has seen the flow (its first packet).
  std::uint64_t owed = 0;
  bool known = false;
  // RCCC grants are control packets on the wire and may be dropped or corrupted: each carries
  // the bytes granted to the flow so far (mod 2^32, as TCP's window edge), so the next grant
  // makes up a lost one and a late one is ignored. Receiver: sent so far; sender: seen so far.
  std::uint32_t granted = 0, grant_seen = 0;
  // ROD receiver: the expected sequence number a gap NACK was last sent for.
  std::uint32_t nacked = 0xFFFFFFFFu;
};

/// RCCC's receiver: the flows it grants credit to, round robin, and the credit it has out
/// (granted or initial, not yet back as arriving data).
struct RcccReceiver {
  struct Entry {
    std::uint32_t flow, incarnation;
  };
  std::vector<Entry> flows;
  std::size_t cursor = 0;
  std::int64_t outstanding = 0;
};

}  // namespace lockstep::packet
