// An N-to-1 incast of kernel TCP (the `tcp` preset: 1,448 B segments, 1,538 B on the wire,
// delayed ACKs, Reno from an initial window of 10) on a lossy switch, with the drops counted by
// hand: drops = N W - B - D packets, B the packets the buffer holds and D the packets the output
// has sent on before the last ones of the burst arrive.
#include <gtest/gtest.h>

#include "fixtures.hpp"
#include "lockstep/engine/packet/packet_engine.hpp"
#include "lockstep/topology/catalog.hpp"

namespace lockstep {
namespace {

using packet_test::Outcome;
using packet_test::simulate;

constexpr std::uint32_t kSenders = 4, kWindow = 10;
constexpr std::uint64_t kWire = 1448 + 90;

// 4 senders to host 4 through one switch, 400 Gb/s, cables of 1 us: the receiver's first ACK
// (after its second packet) reaches the switch 3 T + 3 us after the burst starts, long after its
// last packets (10 T, T = 1,538 B / 50 B/ns = 30.76 ns), so only data is in the buffer meanwhile.
// Each sender's message is its initial window, so nothing but retransmissions follows.
// `model`: the switch's catalog part ("" for none, as packet_test::star's).
Outcome incast(PacketConfig cfg, std::string_view model = "") {
  std::vector<packet_test::Transfer> list;
  for (Rank s = 0; s < kSenders; ++s) list.push_back({s, kSenders, kWindow * 1448});
  cfg.cut_through = false;
  cfg.switch_latency = Time::zero();
  cfg.ecn = false;
  TopologyBuilder b("incast");
  for (std::uint32_t i = 0; i <= kSenders; ++i) b.add_device(packet_test::gpu(i));
  Device sw = packet_test::fabric_switch(0);
  const auto cat = switch_catalog();
  for (std::size_t i = 0; i < cat.size(); ++i)
    if (cat[i].name == model) sw.model = static_cast<std::uint16_t>(i);
  const DeviceId id = b.add_device(sw);
  for (std::uint32_t i = 0; i <= kSenders; ++i)
    b.add_link(packet_test::link(i, id, Bandwidth::gbps(400), Time::us(1)));
  return simulate(std::move(b).build(), packet_test::transfers(kSenders + 1, list), cfg);
}

// All 4 senders start together (after the same 5 us host cost) and send back to back: the k-th
// packets of all four reach the switch together at (k + 1) T + L, k = 0..9, ahead of the
// output's release of the packet it sent in the slot before (its event was queued later). With
// the buffer holding B packets, 3 k + 1 are held before slot k's arrivals (k >= 1) until it is
// full. B = 24: slot 7 (22 held) admits 2 and drops 2, slots 8 and 9 (23) admit 1 and drop 3:
// 8 drops = 40 - 24 - 8 (the output has released one packet in each of slots 1..8 before slot
// 9's arrivals). B = 30: only slot 9 (28 held) drops, 2 = 40 - 30 - 8. The losses are at the
// tails of the windows: no three later packets to SACK them, so the 1 ms RTO resends them, one,
// then two a round trip later, into an empty buffer: no more drops.
TEST(TcpIncast, DropsAreTheWindowsLessTheBufferLessTheDrain) {
  for (const auto& [buffer, drops] : {std::pair{24u, 8u}, {30u, 2u}}) {
    PacketConfig cfg = packet_config_for_fabric("tcp");
    cfg.switch_buffer = Bytes(buffer * kWire);
    cfg.dynamic_threshold = 1e3;  // the buffer's size alone limits the queue
    const Outcome r = incast(cfg);
    EXPECT_EQ(drops, kSenders * kWindow - buffer - 8) << buffer;
    EXPECT_EQ(r.stats.drops, drops) << buffer;
    EXPECT_EQ(r.stats.control_drops, 0u) << buffer;
    EXPECT_GE(r.stats.retransmissions, drops) << buffer;
    EXPECT_EQ(r.stats.payload_bytes_delivered, std::uint64_t{kSenders} * kWindow * 1448) << buffer;
  }
}

// The same burst under the switch's dynamic threshold (buffers as built, alpha 1): one queue
// alone may hold alpha / (1 + alpha) of the pool, so a pool of 48 packets acts as a buffer of
// 24: the same 8 drops. With alpha 1/2 (a third of the pool, 16 packets): slot 4 (13 held)
// admits 3, slots 5..9 admit 1 each: 1 + 5 x 3 = 16 drops = 40 - 16 - 8.
TEST(TcpIncast, DynamicThresholdDropsAsAQueueOfItsShare) {
  for (const auto& [alpha, drops] : {std::pair{1.0, 8u}, {0.5, 16u}}) {
    PacketConfig cfg = packet_config_for_fabric("tcp");
    cfg.buffers.as_built = true;
    cfg.switch_buffer = Bytes(48 * kWire);
    cfg.dynamic_threshold = alpha;
    const Outcome r = incast(cfg);
    EXPECT_EQ(r.stats.drops, drops) << alpha;
    EXPECT_EQ(r.stats.payload_bytes_delivered, std::uint64_t{kSenders} * kWindow * 1448) << alpha;
  }
}

// Buffers as built are the default where every switch is a catalog part with a published layout:
// a Spectrum-4 (SN5600, 192 B cells: a 1,538 B packet takes 9, 1,728 B) with a pool of 48 such
// packets (82,944 B) holds 24 in one queue at alpha 1: 8 drops as above, with or without `model:
// as_built`. `model: shared` counts bytes and admits while the switch holds at most B / 2 =
// 41,472 B before the packet (its queue, the one on the wire aside, within the free buffer):
// 26 packets, so it holds 27: slot 8 (25 held) admits 2 and drops 2, slot 9 (26) admits 1 and
// drops 3: 5 = 40 - 27 - 8.
TEST(TcpIncast, BuffersAsBuiltAreTheDefaultForACatalogSwitch) {
  PacketConfig cfg = packet_config_for_fabric("tcp");
  cfg.switch_buffer = Bytes(48 * 1728);
  EXPECT_EQ(incast(cfg, "sn5600").stats.drops, 8u);
  cfg.buffers.model_set = true;
  cfg.buffers.as_built = true;
  EXPECT_EQ(incast(cfg, "sn5600").stats.drops, 8u);
  cfg.buffers.as_built = false;
  EXPECT_EQ(incast(cfg, "sn5600").stats.drops, 5u);
  // A switch without a catalog entry keeps the shared model by default.
  cfg.buffers.model_set = false;
  EXPECT_EQ(incast(cfg).stats.drops, 5u);
}

}  // namespace
}  // namespace lockstep
