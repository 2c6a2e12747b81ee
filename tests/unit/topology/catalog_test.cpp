#include "lockstep/topology/catalog.hpp"

#include <gtest/gtest.h>

#include "lockstep/core/error.hpp"

namespace lockstep {
namespace {

TEST(Catalog, LooksUpPartsByName) {
  // H100 SXM5: NVLink 4 at 900 GB/s bidirectional = 450 GB/s per direction over 18 links.
  const GpuSpec& h100 = gpu_spec("h100");
  EXPECT_DOUBLE_EQ(h100.scale_up_bandwidth.bytes_per_second(), 450e9);
  EXPECT_EQ(h100.scale_up_links, 18u);
  EXPECT_EQ(h100.hbm, Bytes::gib(80));
  // Quantum-2 QM9700: 64 ports of 400 Gb/s = 25.6 Tb/s per direction (51.2 Tb/s counting both).
  const SwitchSpec& qm9700 = switch_spec("qm9700");
  EXPECT_EQ(qm9700.radix, 64u);
  EXPECT_DOUBLE_EQ(qm9700.port_speed.gigabits_per_second() * qm9700.radix * 2, 51'200);
  EXPECT_TRUE(qm9700.sharp);
  EXPECT_FALSE(switch_spec("sn5600").sharp);
  // PCIe Gen5 x16: 32 GT/s x 16 lanes x 128/130 / 8 bits = 63.0 GB/s per direction.
  EXPECT_NEAR(pcie_spec("gen5_x16").bandwidth.gigabytes_per_second(), 63.015, 1e-3);
  EXPECT_NEAR(pcie_spec("gen6_x16").bandwidth.gigabytes_per_second(), 118.0, 1e-9);
  // EFA on p5: 3,200 Gb/s over 8 GPUs = 400 Gb/s each, as 4 x 100G.
  EXPECT_DOUBLE_EQ(nic_spec("efa_p5").injection().gigabits_per_second(), 400);
  EXPECT_EQ(gpu_catalog()[gpu_index("mi300x")].name, "mi300x");
}

TEST(Catalog, UnknownNameListsTheKnownOnes) {
  try {
    gpu_spec("h1000", "cluster.gpu");
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "cluster.gpu");
    const std::string m = e.what();
    EXPECT_NE(m.find("unknown GPU 'h1000'"), std::string::npos) << m;
    for (const char* name : {"a100", "h100", "h200", "b200", "gb200", "mi300x"}) {
      EXPECT_NE(m.find(name), std::string::npos) << name;
    }
  }
  EXPECT_THROW(switch_spec("qm9999"), InputError);
  EXPECT_THROW(nic_spec(""), InputError);
  EXPECT_THROW(scale_up_spec("nvl1000"), InputError);
}

TEST(Catalog, NvSwitchChipsPerDomain) {
  // Products fix the chip count: HGX H100 4 per 8 GPUs, HGX A100 6, NVL72 18 per 72 GPUs.
  EXPECT_EQ(scale_up_spec("hgx_h100").chips_for(8, 18), 4u);
  EXPECT_EQ(scale_up_spec("hgx_a100").chips_for(8, 12), 6u);
  EXPECT_EQ(scale_up_spec("nvl72").chips_for(72, 18), 18u);
  // A 576-GPU NVLink domain of 72-port chips needs two levels: 576 x 18 = 10,368 GPU links;
  // level 1 uses half of each chip for GPUs: 10,368 / 36 = 288 chips; level 2: 10,368 / 72 = 144.
  EXPECT_EQ(scale_up_spec("nvlink_domain").chips_for(576, 18), 288u + 144u);
  // Up to 72 GPUs one level suffices: 72 x 18 / 72 = 18.
  EXPECT_EQ(scale_up_spec("nvlink_domain").chips_for(72, 18), 18u);
  EXPECT_EQ(scale_up_spec("xgmi_mesh").chips_for(8, 7), 0u);
}

TEST(Catalog, NvlinkPortsAddUpToTheGpuScaleUpBandwidth) {
  // Per-link rate x links = the GPU's scale-up bandwidth per direction, for every GPU with its
  // default scale-up system (H100: 25 GB/s x 18 = 450 GB/s; B200 in NVL72: 50 x 18 = 900).
  for (const GpuSpec& g : gpu_catalog()) {
    if (g.default_scale_up.empty()) {  // GB10: no NVLink peer
      EXPECT_EQ(g.scale_up_links, 0u) << g.name;
      continue;
    }
    const ScaleUpSpec& s = scale_up_spec(g.default_scale_up);
    EXPECT_DOUBLE_EQ(s.port_speed.bytes_per_second() * g.scale_up_links,
                     g.scale_up_bandwidth.bytes_per_second())
        << g.name;
  }
}

TEST(Catalog, CablesFollowLengthAndSpeed) {
  const Bandwidth g400 = Bandwidth::gbps(400);
  EXPECT_EQ(medium_for_length(g400, 1), LinkMedium::CopperDac);
  EXPECT_EQ(medium_for_length(g400, 5), LinkMedium::ActiveElectrical);
  EXPECT_EQ(medium_for_length(g400, 30), LinkMedium::Optical);
  EXPECT_EQ(medium_for_length(g400, 50'000), LinkMedium::LongHaulFibre);
  EXPECT_EQ(cable_for(LinkMedium::Optical, g400, 30).spec->name, "sr_400g");
  EXPECT_EQ(cable_for(LinkMedium::Optical, Bandwidth::gbps(800), 300).spec->name, "dr_800g");
  EXPECT_EQ(cable_for(LinkMedium::Optical, g400, 30).spec->transceivers_per_link, 2u);
  EXPECT_EQ(cable_for(LinkMedium::CopperDac, g400, 1).spec->transceivers_per_link, 0u);
  EXPECT_EQ(cable_for(LinkMedium::Pcie, g400, 0).spec, nullptr);
  // 12.8 Tb/s between sites 50 km apart: 16 parallel 800ZR pairs.
  const CableChoice dci = cable_for(LinkMedium::LongHaulFibre, Bandwidth::gbps(12'800), 50'000);
  EXPECT_EQ(dci.spec->name, "zr_800g");
  EXPECT_EQ(dci.parallel, 16u);
  EXPECT_THROW(cable_for(LinkMedium::CopperDac, g400, 100), InputError);
}

TEST(Catalog, DefaultNicMatchesSwitch) {
  EXPECT_EQ(default_nic_for(switch_spec("qm9700")).name, "cx7_ndr");
  EXPECT_EQ(default_nic_for(switch_spec("qm8700")).name, "cx6_hdr");
  EXPECT_EQ(default_nic_for(switch_spec("q3400")).name, "cx8_xdr");
  EXPECT_EQ(default_nic_for(switch_spec("sn5600")).name, "cx8_800gbe");
  EXPECT_EQ(default_nic_for(switch_spec("sn5600_400g")).name, "cx7_400gbe");
}

}  // namespace
}  // namespace lockstep
