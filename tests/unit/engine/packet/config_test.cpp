// Fabric presets and scenario parsing of the packet engine's configuration.
#include <gtest/gtest.h>

#include <string>

#include "lockstep/core/error.hpp"
#include "lockstep/engine/packet/packet_config.hpp"
#include "lockstep/engine/packet/packet_engine.hpp"

namespace lockstep {
namespace {

TEST(PacketConfig, PresetsPickTheirFabricMechanisms) {
  const PacketConfig ib = packet_config_for_fabric("infiniband");
  EXPECT_EQ(ib.flow_control, FlowControl::Credit);
  EXPECT_EQ(ib.payload, Bytes(4096));
  const PacketConfig roce = packet_config_for_fabric("roce");
  EXPECT_EQ(roce.flow_control, FlowControl::Pfc);
  EXPECT_EQ(roce.congestion, CongestionControl::Dcqcn);
  EXPECT_TRUE(roce.ecn);
  const PacketConfig tcp = packet_config_for_fabric("tcp");
  EXPECT_EQ(tcp.flow_control, FlowControl::None);
  EXPECT_EQ(tcp.congestion, CongestionControl::Reno);
  EXPECT_EQ(tcp.payload, Bytes(1448));  // 1500 - 20 IP - 20 TCP - 12 timestamps
  EXPECT_EQ(packet_config_for_fabric("ethernet").model, FabricModel::Ethernet);
  const PacketConfig uec = packet_config_for_fabric("ultra_ethernet");
  EXPECT_TRUE(uec.spray);
  EXPECT_EQ(packet_config_for_fabric("ib-ndr").model, FabricModel::InfiniBand);
  EXPECT_EQ(packet_config_for_fabric("roce-400g").model, FabricModel::RoCE);
}

TEST(PacketConfig, UnknownFabricNamesTheKnownOnes) {
  try {
    packet_config_for_fabric("token_ring");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("infiniband"), std::string::npos);
  }
}

ArgNode node(std::initializer_list<std::pair<const char*, const char*>> kv) {
  ArgNode n = ArgNode::map("packet", SourceLocation{"s.yaml", 3, 1});
  int line = 4;
  for (const auto& [k, v] : kv)
    n.set(k, ArgNode::scalar(v, std::string("packet.") + k, SourceLocation{"s.yaml", line++, 3}));
  return n;
}

TEST(PacketConfig, ArgsOverrideThePreset) {
  const PacketConfig c =
      packet_config_from_args(node({{"fabric", "tcp"}, {"mtu", "9000"}, {"rto_min", "200us"}}));
  EXPECT_EQ(c.model, FabricModel::Ethernet);
  EXPECT_EQ(c.payload, Bytes(9000 - 52));
  EXPECT_EQ(c.rto_min, Time::us(200));
  const PacketConfig ib = packet_config_from_args(node({{"fabric", "ib"}, {"mtu", "2048"}}));
  EXPECT_EQ(ib.payload, Bytes(2048));
  EXPECT_EQ(ib.lane_levels, 0u);          // auto
  EXPECT_EQ(ib.board_payload, Bytes(0));  // on-board copies: the medium's packets
  EXPECT_EQ(packet_config_from_args(node({{"board_mtu", "2KiB"}})).board_payload, Bytes(2048));
  EXPECT_EQ(packet_config_from_args(node({{"fabric", "ib"}, {"lane_levels", "3"}})).lane_levels,
            3u);
}

// Control packets: each preset's ACK size is its header definition added up (docs/packet-engine.md
// "Control packets"); the keys override them, and a zero size names its field.
TEST(PacketConfig, ControlPacketKeys) {
  EXPECT_EQ(packet_config_for_fabric("ib").ack_wire, Bytes(8 + 12 + 4 + 4 + 2));
  const PacketConfig roce = packet_config_for_fabric("roce");
  EXPECT_EQ(roce.ack_wire, Bytes(14 + 20 + 8 + 12 + 4 + 4 + 4 + 8 + 12));
  EXPECT_EQ(roce.cnp_wire, Bytes(14 + 20 + 8 + 12 + 16 + 4 + 4 + 8 + 12));
  EXPECT_TRUE(roce.control_priority);
  EXPECT_EQ(packet_config_for_fabric("tcp").ack_wire, Bytes(14 + 20 + 20 + 12 + 4 + 8 + 12));
  EXPECT_EQ(packet_config_for_fabric("tcp").ack_every, 2u);
  const PacketConfig c = packet_config_from_args(node({{"fabric", "tcp"},
                                                       {"ack_every", "4"},
                                                       {"ack_wire", "64B"},
                                                       {"ack_delay", "200us"},
                                                       {"control_priority", "true"}}));
  EXPECT_EQ(c.ack_every, 4u);
  EXPECT_EQ(c.ack_wire, Bytes(64));
  EXPECT_EQ(c.ack_delay, Time::us(200));
  EXPECT_TRUE(c.control_priority);
  try {
    packet_config_from_args(node({{"ack_wire", "0"}}));
    ADD_FAILURE() << "ack_wire 0 accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("ack_wire"), std::string::npos) << e.what();
  }
}

// 8 lane classes x 4 levels would need 32 lanes; InfiniBand has at most 15 data VLs, and the
// engine's lane masks hold 16.
TEST(PacketConfig, TooManyLanesNameTheField) {
  try {
    packet_config_from_args(node({{"fabric", "ib"}, {"virtual_lanes", "8"}, {"lane_levels", "4"}}));
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("lane_levels"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("s.yaml:6"), std::string::npos) << e.what();
  }
}

TEST(PacketConfig, UnknownKeyIsReportedWithItsLocation) {
  try {
    packet_config_from_args(node({{"fabric", "roce"}, {"mtuu", "9000"}}));
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("mtuu"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("s.yaml:5"), std::string::npos);
  }
}

TEST(PacketConfig, InconsistentSettingsAreRejected) {
  EXPECT_THROW(packet_config_from_args(node({{"fabric", "infiniband"}, {"trimming", "true"}})),
               InputError);
  EXPECT_THROW(packet_config_from_args(node({{"fabric", "roce"}, {"congestion", "reno"}})),
               InputError);
  PacketConfig c;
  c.payload = Bytes(0);
  EXPECT_THROW(PacketEngine{c}, InputError);
  try {
    packet_config_from_args(node({{"board_mtu", "0"}}));
    ADD_FAILURE() << "board_mtu 0 accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("packet.board_mtu"), std::string::npos) << e.what();
  }
  c = PacketConfig{};
  c.board_payload = Bytes(2u << 20);
  EXPECT_THROW(PacketEngine{c}, InputError);
}

TEST(PacketConfig, MtuOutsideTheMediumsRangeIsRefused) {
  // InfiniBand path MTUs are 256 B .. 4 KiB (IBTA Vol. 1, 7.7.2); IPv4 carries at least 576 B
  // (RFC 791), jumbo frames at most 9216 B.
  auto mtu_error = [](const char* fabric, const char* mtu) {
    try {
      packet_config_from_args(node({{"fabric", fabric}, {"mtu", mtu}}));
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_EQ(mtu_error("ib", "256"), "");
  EXPECT_EQ(mtu_error("ib", "4096"), "");
  EXPECT_NE(mtu_error("ib", "3").find("packet.mtu: 3 B is outside 256 to 4096 B"),
            std::string::npos)
      << mtu_error("ib", "3");
  EXPECT_NE(mtu_error("roce", "4097").find("outside 256 to 4096 B"), std::string::npos);
  EXPECT_EQ(mtu_error("tcp", "576"), "");
  EXPECT_EQ(mtu_error("tcp", "9216"), "");
  EXPECT_NE(mtu_error("tcp", "575").find("outside 576 to 9216 B (the IP MTU range)"),
            std::string::npos);
  EXPECT_NE(mtu_error("tcp", "9217").find("outside 576 to 9216 B"), std::string::npos);
}

// Ultra Ethernet keys (docs/packet-engine.md section 4).
TEST(PacketConfig, UltraEthernetKeysAndTheirErrors) {
  const PacketConfig c = packet_config_from_args(node({{"fabric", "uec"},
                                                       {"congestion", "nscc+rccc"},
                                                       {"delivery", "rod"},
                                                       {"llr", "true"},
                                                       {"loss_rate", "0.001"}}));
  EXPECT_EQ(c.congestion, CongestionControl::NsccRccc);
  EXPECT_EQ(c.delivery, Delivery::Rod);
  EXPECT_FALSE(c.spray);  // ordered delivery keeps one path
  EXPECT_TRUE(c.llr);
  EXPECT_DOUBLE_EQ(c.loss_rate, 0.001);
  auto error = [](std::initializer_list<std::pair<const char*, const char*>> kv) {
    try {
      packet_config_from_args(node(kv));
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  const std::string rod = error({{"fabric", "uec"}, {"delivery", "rod"}, {"spray", "true"}});
  EXPECT_NE(rod.find("s.yaml:5"), std::string::npos) << rod;
  EXPECT_NE(rod.find("one path"), std::string::npos) << rod;
  EXPECT_NE(error({{"fabric", "uec"}, {"delivery", "uud"}}).find("s.yaml:5"), std::string::npos);
  EXPECT_NE(error({{"fabric", "uec"}, {"loss_rate", "1"}}).find("loss_rate"), std::string::npos);
  EXPECT_NE(error({{"fabric", "roce"}, {"congestion", "nscc"}}).find("congestion"),
            std::string::npos);
}

}  // namespace
}  // namespace lockstep
