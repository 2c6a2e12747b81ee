#include "lockstep/core/units.hpp"

#include <gtest/gtest.h>

#include "lockstep/core/error.hpp"

namespace lockstep {
namespace {

TEST(Units, ParsesTimesExactly) {
  EXPECT_EQ(parse_time("1.5us").picoseconds(), 1'500'000);
  EXPECT_EQ(parse_time("250ns").picoseconds(), 250'000);
  EXPECT_EQ(parse_time("2 ms").picoseconds(), 2'000'000'000);
  EXPECT_EQ(parse_time("3ps").picoseconds(), 3);
  EXPECT_EQ(parse_time("1s").picoseconds(), 1'000'000'000'000);
}

TEST(Units, ParsesSizesWithSiAndBinaryPrefixesAsWritten) {
  EXPECT_EQ(parse_bytes("8GiB").count(), 8ULL << 30);
  EXPECT_EQ(parse_bytes("64KB").count(), 64'000ULL);
  EXPECT_EQ(parse_bytes("64KiB").count(), 65'536ULL);
  EXPECT_EQ(parse_bytes("1.5KB").count(), 1'500ULL);
  EXPECT_EQ(parse_bytes("1000").count(), 1'000ULL);
  EXPECT_EQ(parse_bytes("8G").count(), 8ULL << 30);  // nccl-tests style
}

TEST(Units, ParsesBandwidthBitsAndBytes) {
  EXPECT_DOUBLE_EQ(parse_bandwidth("400Gbps").bytes_per_second(), 50e9);
  EXPECT_DOUBLE_EQ(parse_bandwidth("50GB/s").bytes_per_second(), 50e9);
  EXPECT_DOUBLE_EQ(parse_bandwidth("1Tbps").bytes_per_second(), 125e9);
  EXPECT_DOUBLE_EQ(parse_bandwidth("1GiB/s").bytes_per_second(), 1073741824.0);
}

TEST(Units, RejectsBadInputNamingTheField) {
  EXPECT_THROW(parse_time("fast", "link.latency"), InputError);
  EXPECT_THROW(parse_time("-1us"), InputError);
  EXPECT_THROW(parse_time("5 parsecs"), InputError);
  EXPECT_THROW(parse_bytes("1.5B"), InputError);
  EXPECT_THROW(parse_bytes("1e30B"), InputError);
  EXPECT_THROW(parse_bandwidth("0Gbps"), InputError);
  EXPECT_THROW(parse_bandwidth("400"), InputError);
  try {
    parse_bandwidth("400 furlongs", "cluster.nic_speed");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "cluster.nic_speed");
    EXPECT_NE(std::string(e.what()).find("furlongs"), std::string::npos);
  }
}

TEST(Units, TransferTimeRoundsUpToWholePicoseconds) {
  // 1 GiB at 50 GB/s = 1073741824 / 5e10 s = 21.47483648 ms.
  EXPECT_EQ(transfer_time(Bytes::gib(1), Bandwidth::gBps(50)).picoseconds(), 21'474'836'480);
  EXPECT_EQ(transfer_time(Bytes(1), Bandwidth::gBps(3)).picoseconds(), 334);
  EXPECT_EQ(transfer_time(Bytes(0), Bandwidth::gBps(3)).picoseconds(), 0);
}

TEST(Units, PrintsHumanUnits) {
  EXPECT_EQ(to_string(Time::us(1.5)), "1.5 us");
  EXPECT_EQ(to_string(Bytes::gib(8)), "8 GiB");
  EXPECT_EQ(to_string(Bandwidth::gbps(400)), "400 Gb/s");
}

}  // namespace
}  // namespace lockstep
