// The packet engine on 5 GPUs of a DGX-1 (rings relayed through GPU 0, PATH_NVB): the same
// programs as the flow engine, moved in NVLink's 256 B packets as on-board copies (no fabric
// headers, docs/packet-engine.md "On-board copies"), paced per channel at the channel's speed.
#include <gtest/gtest.h>

#include <vector>

#include "lockstep/nccl/cluster.hpp"
#include "lockstep/nccl/sweep.hpp"
#include "preset_views.hpp"

namespace lockstep {
namespace {

double ring_simple_us(const char* engine, Bytes bytes) {
  const Topology topo = test::preset_graph("dgx1-v100", 1, 5);
  CollectiveSweep s;
  s.algo = Algorithm::Ring;
  s.proto = nccl::Proto::Simple;
  s.min_bytes = s.max_bytes = bytes;
  s.engine = engine;
  return run_collective_sweep(s, test::from_preset("dgx1-v100", 1, 5), &topo)
      .at(0)
      .time.microseconds();
}

// What grows with the size is the bandwidth term: from 16 to 64 MiB, 2 x 4/5 x 48 MiB at the
// model's 40 GB/s = 2,013.27 us, on both engines: the on-board copies carry no headers, so the
// packet engine moves the same bytes, each of the 4 channels paced at its 10 GB/s share with the
// 0 <-> 4 links full. The packet engine may lose at most one 256 B packet's pacing (25.6 ns at
// 10 GB/s) per NCCL step of 512 KiB: a channel's 12 MiB is 24 steps, each crossing 8 ring
// steps, 192 x 25.6 ns = 4.9 us, 0.24% of 2,013.27. Measured (load 19): flow 746.09 / 2,759.36
// us, packet 742.02 / 2,756.35 at 16 / 64 MiB: increments 2,013.26 and 2,014.33 (+0.05%). The
// fixed part differs by 3-4 us (-0.55% at 16 MiB): the packet engine moves a step's data as it
// arrives, 256 B at a time, within the step latency the flow engine charges whole; the bound
// below on the total (1%) only holds that difference to the fixed part's size.
TEST(Dgx1Relay, PacketAgreesWithFlow) {
  const double inc = 2.0 * 4 / 5 * Bytes::mib(48).as_double() / 40e3;
  const double flow16 = ring_simple_us("flow", Bytes::mib(16));
  const double flow64 = ring_simple_us("flow", Bytes::mib(64));
  const double packet16 = ring_simple_us("packet", Bytes::mib(16));
  const double packet64 = ring_simple_us("packet", Bytes::mib(64));
  EXPECT_NEAR((flow64 - flow16) / inc, 1.0, 1e-4);
  EXPECT_NEAR((packet64 - packet16) / inc, 1.0, 0.0024);
  EXPECT_NEAR(packet16 / flow16, 1.0, 0.01);
}

}  // namespace
}  // namespace lockstep
