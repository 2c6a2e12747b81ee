// nccl-tests rows read as clusters: every system and interconnect text of
// ../shared/calibration/*.csv as written there, plus variants other clusters' rows use.
#include "lockstep/scenario/calibration_row.hpp"

#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "../core/error_of.hpp"

namespace lockstep {
namespace {

struct SystemCase {
  const char* text;
  const char* preset;
  std::uint32_t node_gpus;
};

TEST(CalibrationRow, SystemTextsOfBothFilesNameTheirPresetAndNodeSize) {
  const SystemCase cases[] = {
      {"8xH100 SXM", "hgx-h100", 8},
      {"H100 2x1", "hgx-h100", 0},
      {"2x p4de.24xlarge (8x A100-80GB each)", "dgx-a100", 8},
      {"2x p5.48xlarge (8x H100 80GB each)", "hgx-h100", 8},
      {"p5.48xlarge (8x H100) SageMaker HyperPod", "hgx-h100", 8},
      {"8x AWS p5 (8x H100 each)", "hgx-h100", 8},
      {"CSCS Alps GH200 120GB; 4 per node", "gh200-quad", 4},
      {"OCI BM.GPU.GB300.4 (4x GB300 per node) NVL72", "gb300-nvl72", 4},
      {"OCI BM.GPU.GB200.4 (4x B200 per node) NVL72", "gb200-nvl72", 4},
      {"OCI BM.GPU.MI355x.v0.8 (8x AMD MI355X per node)", "mi355x", 8},
      {"OCI BM.GPU.MI355x (8x AMD MI355X)", "mi355x", 8},
      {"Azure Standard_ND96asr_v4 (8x A100 40GB) on AKS; per tests/README.md default "
       "NODE_POOL_VM_SIZE",
       "dgx-a100", 8},
      {"ABCI 2.0 Compute Node (A): 8x A100-SXM4-40GB", "dgx-a100", 8},
      {"GCP A3 (a3-highgpu-8g; 8x H100) GKE; 2 VMs (per README: A3 nodepool; GPU not printed)",
       "hgx-h100", 8},
      {"NREL Kestrel GPU nodes; 4x NVIDIA H100 per node", "hgx-h100", 4},
      {"2x NVIDIA DGX Spark (GB10); 1 GPU each", "dgx-spark", 1},
      {"32 nodes x 8x A100-SXM4", "dgx-a100", 8},
      {"2x DGX A100 (8x A100 each)", "dgx-a100", 8},
      {"OCI BM.GPU.GB200-v3.4 (4x GB200 per node) NVL72", "gb200-nvl72", 4},
      {"OCI GB200 NVL72 (grace-blackwell branch; GPU name not printed); 2 hosts x 4 GPUs",
       "gb200-nvl72", 4},
      {"OCI BM.GPU.MI300X.8 (8x AMD MI300X per node; GPU name not printed in log)", "mi300x", 8},
      {"OCI A100-SXM4-40GB x8 per node (BM.GPU4.8/B4.8 class; shape not named for this log)",
       "dgx-a100", 8},
      {"OCI BM.GPU.B4.8 (8x A100-SXM4-40GB)", "dgx-a100", 8},
      // Other clusters' spellings.
      {"8x H20 96GB", "hgx-h20", 8},
      {"HGX H800 (8x H800 80GB)", "hgx-h800", 8},
      {"H200 NVL 141GB", "hgx-h200", 0},
      {"DGX B300", "hgx-b300", 0},
      {"2x H100 PCIe with NVLink bridge", "h100-pcie", 2},
      {"MI325X 8-GPU node", "mi325x", 0},
      {"p4d.24xlarge", "dgx-a100", 0},
      {"p5e.48xlarge", "hgx-h200", 0},
      {"a3-megagpu-8g", "hgx-h100", 0},
      {"Azure ND96asr_v4", "dgx-a100", 0},
      {"H100 SXM5, 8 GPUs/node", "hgx-h100", 8},
      {"Grace Hopper superchip nodes", "gh200-quad", 0},
      {"Azure Standard_ND96isr_MI300X_v5", "mi300x", 0},
      {"p6-b200.48xlarge", "hgx-b200", 0},
  };
  for (const SystemCase& c : cases) {
    const RowSystem s = read_row_system(c.text);
    EXPECT_EQ(s.preset, c.preset) << c.text;
    EXPECT_EQ(s.node_gpus, c.node_gpus) << c.text;
    EXPECT_FALSE(s.nvlink_partitions) << c.text;
  }
  EXPECT_TRUE(read_row_system("GB200 NVL72; 3x NVL4 partitions (4 GPUs each)").nvlink_partitions);
  EXPECT_EQ(error_of([] { read_row_system("Cerebras CS-3"); }),
            "system: no GPU or cloud shape named in 'Cerebras CS-3'");
}

TEST(CalibrationRow, CloudShapesBringTheirNetwork) {
  // AWS: p4d 400 Gbps = 4 x 100G EFA, p5 3,200 Gbps = 32 x 100G; GCP a3-highgpu 4 x 200G TCPX.
  const RowSystem p4de = read_row_system("2x p4de.24xlarge (8x A100-80GB each)");
  EXPECT_EQ(p4de.shape_fabric, "efa");
  EXPECT_EQ(p4de.shape_nics, 4u);
  EXPECT_DOUBLE_EQ(p4de.shape_nic_speed.gigabits_per_second(), 100);
  const RowSystem p5 = read_row_system("8x AWS p5 (8x H100 each)");
  EXPECT_EQ(p5.shape_fabric, "efa");
  EXPECT_EQ(p5.shape_nics, 32u);
  const RowSystem a3 = read_row_system("GCP A3 (a3-highgpu-8g; 8x H100) GKE");
  EXPECT_EQ(a3.shape_fabric, "tcpx");
  EXPECT_EQ(a3.shape_nics, 4u);
  EXPECT_DOUBLE_EQ(a3.shape_nic_speed.gigabits_per_second(), 200);
  EXPECT_EQ(read_row_system("a3-megagpu-8g").shape_fabric, "tcpxo");
  EXPECT_EQ(read_row_system("Azure Standard_ND96isr_MI300X_v5").shape_fabric, "ib-ndr");
  EXPECT_EQ(read_row_system("p6-b200.48xlarge").shape_nics, 8u);
  EXPECT_EQ(read_row_system("8xH100 SXM").shape_fabric, "");
}

const SystemPreset& a100_of() {
  return system_preset("dgx-a100");
}
// Pollara 400 is a RoCE NIC: its own preset where one exists, else RoCE 400G.
const char* pollara() {
  for (const FabricPreset& f : fabric_presets())
    if (f.name == "pollara-400g") return "pollara-400g";
  return "roce-400g";
}

struct FabricCase {
  const char* text;
  const char* fabric;
  std::uint32_t nics;
  double gbps;
};

TEST(CalibrationRow, InterconnectTextsOfBothFilesNameFabricNicsAndSpeed) {
  const SystemPreset& h100 = system_preset("hgx-h100");  // ships ib-ndr, 400G
  const FabricCase cases[] = {
      {"NVL4/NVSwitch", "", 0, 0},
      {"RoCE 4x400G", "roce-400g", 4, 400},
      {"AWS EFA 4x100G per node (400 Gbps); NCCL version not printed", "efa", 4, 100},
      {"AWS EFA 32x100G per node (3200 Gbps); NCCL version not printed", "efa", 32, 100},
      {"AWS EFA 32 EFA per node (4 per GPU); aws-ofi-nccl tuner; NCCL version not stated", "efa",
       32, 0},
      {"AWS EFA (p5); NCCL 2.19.3", "efa", 0, 0},
      {"HPE Slingshot-11 via aws-ofi-nccl/libfabric CXI; nccl-tests 2.17.1; NCCL version not "
       "printed",
       "slingshot", 0, 0},
      {"GB200 NVL72: 3 NVL partitions on different racks; IB only between partitions; "
       "NCCL_NVLS_ENABLE=0; NCCL 2.27.3+cuda12.9",
       "ib-ndr", 0, 0},
      {"NVL72 MNNVL within rack; RoCE 8x400G per node (CX-8) between racks; NCCL "
       "2.28.7+cuda13.0; NVLS enabled",
       "roce-400g", 8, 400},
      {"NVL72 MNNVL within rack; RoCE 4x400G per node between racks; NCCL 2.27.3+cuda12.8; NVLS "
       "enabled",
       "roce-400g", 4, 400},
      {"xGMI (single node); RCCL version not printed", "", 0, 0},
      {"RoCE AMD Pensando Pollara 400 AI NIC 8x400G per node; xGMI intra-node; rccl-tests; RCCL "
       "version not printed (README recommends RCCL 2.26.6; ROCm 7.x)",
       pollara(), 8, 400},
      {"xGMI (single node; -g 8 single process); rccl-tests HEAD:e1b8a3a; RCCL version not "
       "printed",
       "", 0, 0},
      {"InfiniBand HDR 200G per NIC (ib_read_bw ~197 Gb/s in same doc); SR-IOV; NCCL version not "
       "printed; -c 0",
       "ib-hdr", 0, 200},
      {"InfiniBand HDR (NIC count/speed not stated in repo); NCCL 2.8.4-1; UCX pml", "ib-hdr", 0,
       0},
      {"GPUDirect-TCPX (README: TCPX NCCL plugin + RxDM); NCCL/plugin version not printed; "
       "validation 0",
       "tcpx", 0, 0},
      {"HPE Slingshot via NERSC nccl-ofi-plugin (libfabric CXI); NIC count and NCCL version not "
       "stated",
       "slingshot", 0, 0},
      {"AWS EFA 32x100G per node; NCCL 2.18.5; aws-ofi-nccl v1.7.3-aws", "efa", 32, 100},
      // No RoCE preset at 200G on this system's generation is needed: 200 is stated.
      {"RoCE single QSFP cable 200 Gbps (per PR title; ConnectX-7 in DGX Spark); nccl-tests "
       "2.20.0; NCCL 2.31.2 (nccl-library=23102)",
       "roce-200g", 1, 200},
      {"InfiniBand 4x HDR 200G per node (issue text); NCCL version not shown in excerpt", "ib-hdr",
       4, 200},
      {"RDMA network (type/NIC count not stated in excerpt); NCCL 2.16.5+cuda11.0", "", 0, 0},
      {"NVL72 MNNVL within rack; OCI RoCE between the two racks (NIC count not stated in this "
       "file); NCCL 2.29.2+cuda13.1",
       "roce-400g", 0, 0},
      {"Multi-node NVLink (NCCL_MNNVL_ENABLE=1; NVLS on); image "
       "nccl-tests:pytorch-25.03-nccl-2.26.6-1",
       "", 0, 0},
      {"OCI RoCE; 8 mlx5 HCAs per node per docs/recommended-nccl-rccl-parameters-by-shape.md "
       "(speed not stated); rccl-tests develop:a52452e; RCCL version not printed",
       "roce-400g", 8, 0},
      {"OCI RoCE cluster network; repo manifests for these shapes list 16 mlx5 HCAs per node "
       "(speed not stated); NCCL version not printed",
       "roce-400g", 16, 0},
      {"OCI RoCE; NCCL_IB_HCA lists 16 mlx5 HCAs (speed not stated); QPS_PER_CONNECTION=4; NCCL "
       "2.29.3+cuda13.1; nccl-tests 2.17.9",
       "roce-400g", 16, 0},
      // Other clusters' spellings.
      {"IB NDR 8x400G SHARP", "ib-ndr", 8, 400},
      {"InfiniBand XDR", "ib-xdr", 0, 0},
      {"InfiniBand 400G", "ib-ndr", 0, 400},
      {"InfiniBand (8 NICs)", "ib-ndr", 8, 0},
      {"RoCE 8x100G", "roce-400g", 8, 100},  // no 100G RoCE preset: the 400G one at 100G
      {"GPUDirect-TCPXO 8x200G", "tcpxo", 8, 200},
      {"TCP sockets, 100GbE", "tcp", 0, 100},
      {"AWS EFA, 4 EFA per node (400 Gbps)", "efa", 4, 100},  // the node's total over 4
      {"EFA 4 per GPU", "efa", 0, 0},
      {"EFA 2x200G per GPU", "efa", 0, 200},
      {"8x ConnectX-7 400G NDR InfiniBand", "ib-ndr", 8, 400},
      {"IB NDR400 x8", "ib-ndr", 8, 400},
      {"InfiniBand 400Gb/s x 8 (ConnectX-7)", "ib-ndr", 8, 400},
      {"Quantum-2 fabric", "ib-ndr", 0, 0},
      {"Spectrum-X 8x400G", "roce-400g", 8, 400},
      {"Ethernet 8x200G", "roce-200g", 8, 200},
      {"RoCE 8x400G; NCCL_IB_DISABLE=1", "tcp", 8, 400},
  };
  for (const FabricCase& c : cases) {
    const RowFabric f = read_row_fabric(c.text, h100);
    EXPECT_EQ(f.fabric, c.fabric) << c.text;
    EXPECT_EQ(f.nics, c.nics) << c.text;
    EXPECT_DOUBLE_EQ(f.nic_speed.gigabits_per_second(), c.gbps) << c.text;
  }
  EXPECT_EQ(read_row_fabric("EFA 4 per GPU", h100).nics_per_gpu, 4u);
  EXPECT_EQ(read_row_fabric("EFA 2x200G per GPU", h100).nics_per_gpu, 2u);
  EXPECT_EQ(read_row_fabric("Quantum-2 fabric", a100_of()).fabric, "ib-ndr");
  EXPECT_EQ(read_row_fabric("HDR200 InfiniBand", a100_of()).fabric, "ib-hdr");
  EXPECT_DOUBLE_EQ(read_row_fabric("HDR200 InfiniBand", a100_of()).nic_speed.gigabits_per_second(),
                   200);
  // A transport without speed takes the generation the system ships: HDR with an A100.
  const SystemPreset& a100 = system_preset("dgx-a100");
  EXPECT_EQ(read_row_fabric("OCI RoCE; 16 mlx5 HCAs", a100).fabric, "roce-200g");
  EXPECT_EQ(read_row_fabric("InfiniBand", a100).fabric, "ib-hdr");
  EXPECT_EQ(read_row_fabric("InfiniBand", system_preset("mi300x")).fabric, "ib-ndr");
}

TEST(CalibrationRow, SharpAndNvlsSwitchesAreReadWithTheirNegations) {
  const SystemPreset& h100 = system_preset("hgx-h100");
  EXPECT_TRUE(read_row_fabric("IB NDR 8x400G SHARP", h100).sharp);
  EXPECT_TRUE(read_row_fabric("IB NDR, NCCL_COLLNET_ENABLE=1", h100).sharp);
  EXPECT_FALSE(read_row_fabric("IB NDR, no SHARP", h100).sharp);
  EXPECT_FALSE(read_row_fabric("IB NDR, SHARP disabled", h100).sharp);
  EXPECT_FALSE(read_row_fabric("IB NDR 8x400G", h100).sharp);
  EXPECT_TRUE(read_row_fabric("IB only between partitions; NCCL_NVLS_ENABLE=0", h100).nvls_off);
  EXPECT_TRUE(read_row_fabric("NVLS off", h100).nvls_off);
  EXPECT_FALSE(read_row_fabric("NVL72 MNNVL within rack; NVLS enabled", h100).nvls_off);
  EXPECT_FALSE(read_row_fabric("Multi-node NVLink (NCCL_MNNVL_ENABLE=1; NVLS on)", h100).nvls_off);
}

TEST(CalibrationRow, QueuePairsFromTheRowOrOracleCloudsScripts) {
  const char* oci = "OCI BM.GPU.GB200.4 (4x B200 per node) NVL72";
  const char* roce = "NVL72 MNNVL within rack; RoCE 4x400G per node between racks";
  EXPECT_EQ(read_row_qps(oci, roce, "roce-400g"), 4u);
  EXPECT_EQ(read_row_qps("8x H100 SXM", "RoCE 8x400G; NCCL_IB_QPS_PER_CONNECTION=2", "roce-400g"),
            2u);
  EXPECT_EQ(read_row_qps("8x H100 SXM", "RoCE 8x400G", "roce-400g"), 0u);  // NCCL's default
  EXPECT_EQ(read_row_qps(oci, "IB NDR 4x400G", "ib-ndr"), 0u);  // destination-routed anyway
  EXPECT_EQ(read_row_qps("Socio 8x H100", "RoCE 8x400G", "roce-400g"), 0u);  // "oci" in a word
}

TEST(CalibrationRow, AlgorithmColumnNamesAnAlgorithmOrAuto) {
  EXPECT_EQ(read_row_algorithm("Ring"), Algorithm::Ring);
  EXPECT_EQ(read_row_algorithm("Tree"), Algorithm::Tree);
  EXPECT_EQ(read_row_algorithm("Ring (default)"), Algorithm::Ring);
  EXPECT_EQ(read_row_algorithm("Tree (forced)"), Algorithm::Tree);
  EXPECT_EQ(read_row_algorithm("Ring (per issue text)"), Algorithm::Ring);
  EXPECT_EQ(read_row_algorithm("NVLSTree (NCCL 2.19.3 regression; before fix)"),
            Algorithm::NvlsTree);
  EXPECT_EQ(read_row_algorithm("NVLSTree (after fix from nccl PR #1112)"), Algorithm::NvlsTree);
  EXPECT_EQ(read_row_algorithm("NCCL_ALGO=NVLS"), Algorithm::NetReduce);
  EXPECT_EQ(read_row_algorithm("CollNetDirect"), Algorithm::CollNet);
  EXPECT_EQ(read_row_algorithm("PAT"), Algorithm::Pat);
  EXPECT_EQ(read_row_algorithm("default (not stated)"), std::nullopt);
  EXPECT_EQ(read_row_algorithm("n/a (alltoall)"), std::nullopt);
  EXPECT_EQ(read_row_algorithm(""), std::nullopt);
}

TEST(CalibrationRow, CollectiveSpellings) {
  EXPECT_EQ(read_row_collective("all_reduce"), CollectiveOp::AllReduce);
  EXPECT_EQ(read_row_collective("all_reduce_perf"), CollectiveOp::AllReduce);
  EXPECT_EQ(read_row_collective("AllGather"), CollectiveOp::AllGather);
  EXPECT_EQ(read_row_collective("reduce_scatter"), CollectiveOp::ReduceScatter);
  EXPECT_EQ(read_row_collective("alltoall"), CollectiveOp::AllToAll);
  EXPECT_EQ(read_row_collective("bcast"), CollectiveOp::Broadcast);
  EXPECT_NE(error_of([] { read_row_collective("all_mix"); }).find("collective:"),
            std::string::npos);
}

CalibrationRow row(const char* system, const char* gpus, const char* nodes,
                   const char* interconnect, const char* bytes, const char* time_us,
                   const char* algorithm = "default (not stated)") {
  CalibrationRow r;
  r.system = system;
  r.gpus = gpus;
  r.nodes = nodes;
  r.interconnect = interconnect;
  r.collective = "all_reduce";
  r.bytes = bytes;
  r.time_us = time_us;
  r.algorithm = algorithm;
  return r;
}

TEST(CalibrationRow, EfaP4deRowIsFourNicsOf100G) {
  const CalibrationCase c = calibration_case(
      row("2x p4de.24xlarge (8x A100-80GB each)", "16", "2",
          "AWS EFA 4x100G per node (400 Gbps); NCCL version not printed", "268435456", "7201.7"));
  EXPECT_EQ(c.preset.system, "dgx-a100");
  EXPECT_EQ(c.preset.fabric, "efa");
  EXPECT_EQ(c.preset.nodes, 2u);
  EXPECT_EQ(c.preset.gpus_per_node, 8u);
  EXPECT_EQ(c.preset.nics_per_node, 4u);
  EXPECT_DOUBLE_EQ(c.preset.nic_speed.gigabits_per_second(), 100);
  EXPECT_EQ(c.tuner.algo, std::nullopt);
  EXPECT_EQ(c.ranks, 16u);
  // busbw = S / t x 2 (n - 1) / n = 268,435,456 B / 7,201.7 us x 30 / 16 = 69.889 GB/s.
  EXPECT_NEAR(c.measured_busbw_GBps, 268435456.0 / 7201.7e3 * 30 / 16, 1e-9);
  EXPECT_NEAR(c.measured_busbw_GBps, 69.889, 1e-3);
}

TEST(CalibrationRow, NamedSystemBringsItsNics) {
  // ABCI 2.0's Compute Node (A): InfiniBand HDR (200 Gbps) x 4 (ABCI User Guide), not the
  // DGX A100's 8; a row stating no NICs takes those 4.
  const CalibrationCase abci = calibration_case(row(
      "ABCI 2.0 Compute Node (A): 8x A100-SXM4-40GB", "16", "2",
      "InfiniBand HDR (NIC count/speed not stated in repo); NCCL 2.8.4-1; UCX pml", "8", "32.62"));
  EXPECT_EQ(abci.preset.fabric, "ib-hdr");
  EXPECT_EQ(abci.preset.nics_per_node, 4u);
  EXPECT_DOUBLE_EQ(abci.preset.nic_speed.gigabits_per_second(), 200);
}

TEST(CalibrationRow, UnusedGpusTakeTheirNicsAlong) {
  // 2 x 1 H100 with RoCE 4x400G: a node of 8 GPUs (the preset's) uses 1, so 4 x 1/8 -> 1 NIC.
  const CalibrationCase c =
      calibration_case(row("H100 2x1", "2", "2", "RoCE 4x400G", "2097152", "113.2", "Tree"));
  EXPECT_EQ(c.preset.gpus_per_node, 1u);
  EXPECT_EQ(c.preset.nics_per_node, 1u);
  EXPECT_EQ(c.preset.fabric, "roce-400g");
  EXPECT_EQ(c.tuner.algo, Algorithm::Tree);
  // A node of 4 H100 (the text says so) uses all 4: the 4 stated NICs stay.
  const CalibrationCase kestrel =
      calibration_case(row("NREL Kestrel GPU nodes; 4x NVIDIA H100 per node", "64", "16",
                           "Slingshot 4x200G", "256", "58.16"));
  EXPECT_EQ(kestrel.preset.gpus_per_node, 4u);
  EXPECT_EQ(kestrel.preset.nics_per_node, 4u);
  EXPECT_EQ(kestrel.preset.fabric, "slingshot");
}

TEST(CalibrationRow, ShapeNicsUnlessTheTextStatesOthers) {
  const CalibrationCase p5 =
      calibration_case(row("8x AWS p5 (8x H100 each)", "64", "8", "AWS EFA (p5); NCCL 2.19.3",
                           "4294967296", "30222", "NVLSTree (after fix from nccl PR #1112)"));
  EXPECT_EQ(p5.preset.fabric, "efa");
  EXPECT_EQ(p5.preset.nics_per_node, 32u);
  EXPECT_DOUBLE_EQ(p5.preset.nic_speed.gigabits_per_second(), 100);
  EXPECT_EQ(p5.tuner.algo, Algorithm::NvlsTree);
  const CalibrationCase stated =
      calibration_case(row("p5.48xlarge", "16", "2", "AWS EFA 16x200G per node", "8", "69"));
  EXPECT_EQ(stated.preset.nics_per_node, 16u);
  EXPECT_DOUBLE_EQ(stated.preset.nic_speed.gigabits_per_second(), 200);
  // "32 EFA per node (4 per GPU)": the count, the speed from the shape (100G).
  const CalibrationCase hyperpod = calibration_case(
      row("p5.48xlarge (8x H100) SageMaker HyperPod", "16", "2",
          "AWS EFA 32 EFA per node (4 per GPU); aws-ofi-nccl tuner", "8589934592", "33715"));
  EXPECT_EQ(hyperpod.preset.nics_per_node, 32u);
  EXPECT_DOUBLE_EQ(hyperpod.preset.nic_speed.gigabits_per_second(), 100);
}

TEST(CalibrationRow, EmptyTimeComesFromAlgbwElseBusbw) {
  CalibrationRow r = row("p5.48xlarge (8x H100) SageMaker HyperPod", "16", "2",
                         "AWS EFA 32 EFA per node (4 per GPU)", "8589934592", "");
  r.algbw_GBps = "254.78";
  r.busbw_GBps = "477.71";
  // t = S / algbw = 8,589,934,592 B / 254.78 GB/s = 33,715.11 us; busbw = 254.78 x 30 / 16.
  const CalibrationCase a = calibration_case(r);
  EXPECT_NEAR(a.measured_time_us, 8589934592.0 / 254.78e3, 1e-6);
  EXPECT_NEAR(a.measured_busbw_GBps, 254.78 * 30 / 16, 1e-9);
  r.algbw_GBps = "";
  // t = S x 2 (n - 1) / n / busbw; busbw is then the column itself.
  const CalibrationCase b = calibration_case(r);
  EXPECT_NEAR(b.measured_time_us, 8589934592.0 * 30 / 16 / 477.71e3, 1e-6);
  EXPECT_NEAR(b.measured_busbw_GBps, 477.71, 1e-9);
  r.busbw_GBps = "0.0";
  EXPECT_EQ(error_of([&] { calibration_case(r); }),
            "time_us: no time: time_us, algbw_GBps and busbw_GBps are empty or zero");
  // A time_us that is not a number gives way to the bandwidths, and is the error without them.
  r.time_us = "N/A";
  EXPECT_EQ(error_of([&] { calibration_case(r); }), "time_us: 'N/A' is not a number");
  r.algbw_GBps = "254.78";
  EXPECT_NEAR(calibration_case(r).measured_time_us, 8589934592.0 / 254.78e3, 1e-6);
}

TEST(CalibrationRow, Nvl72RowsAreTraysAndRacksAreAnyTrayCount) {
  // 128 GPUs, 32 trays of 4 across two racks: 32 trays (the presets decide what that builds).
  const CalibrationCase two_racks = calibration_case(
      row("OCI BM.GPU.GB200.4 (4x B200 per node) NVL72", "128", "32",
          "NVL72 MNNVL within rack; RoCE 4x400G per node between racks; NVLS enabled", "4294967296",
          "11311"));
  EXPECT_EQ(two_racks.preset.system, "gb200-nvl72");
  EXPECT_EQ(two_racks.preset.nodes, 32u);
  EXPECT_EQ(two_racks.preset.gpus_per_node, 4u);
  EXPECT_EQ(two_racks.preset.nics_per_node, 4u);
  EXPECT_EQ(two_racks.preset.fabric, "roce-400g");
  // A rack given as one node of 72 GPUs: 18 trays of 4.
  const CalibrationCase rack =
      calibration_case(row("GB200 NVL72 rack", "72", "1", "NVLink", "8", "20"));
  EXPECT_EQ(rack.preset.nodes, 18u);
  EXPECT_EQ(rack.preset.gpus_per_node, 4u);
  // NCCL_NVLS_ENABLE=0 turns NVLS off in NCCL's view of the cluster.
  CalibrationCase off = calibration_case(
      row("OCI GB200 NVL72; 2 hosts x 4 GPUs", "8", "2", "MNNVL; NCCL_NVLS_ENABLE=0", "8", "20"));
  EXPECT_TRUE(off.nvls_off);
  const PresetCluster preset = resolve_preset(off.preset);
  EXPECT_FALSE(calibration_nccl_cluster(off, preset).nvls);
  off.nvls_off = false;
  EXPECT_TRUE(calibration_nccl_cluster(off, preset).nvls);
}

TEST(CalibrationRow, NvlinkPartitionsAreHgxNodesOfTheirTrays) {
  // 3 partitions of one tray (4 GB200): 3 nodes of 4 Blackwell GPUs on NVLink 5, 1 NIC each.
  const CalibrationCase nvl4 = calibration_case(
      row("GB200 NVL72; 3x NVL4 partitions (4 GPUs each)", "12", "3",
          "GB200 NVL72: 3 NVL partitions on different racks; IB only between partitions; "
          "NCCL_NVLS_ENABLE=0; NCCL 2.27.3+cuda12.9",
          "17179869184", "159983", "Ring (default)"));
  EXPECT_EQ(nvl4.preset.system, "hgx-b200");
  EXPECT_EQ(nvl4.preset.nodes, 3u);
  EXPECT_EQ(nvl4.preset.gpus_per_node, 4u);
  EXPECT_EQ(nvl4.preset.fabric, "ib-ndr");
  EXPECT_TRUE(nvl4.nvls_off);
  // hgx-b200 ships 8 NDR NICs for 8 GPUs: 4 GPUs keep 4, one per GPU as on the trays.
  EXPECT_EQ(resolve_preset(nvl4.preset).nics_per_node, 4u);
  // 3 partitions of two trays: 3 nodes of 8; NICs stated per tray count twice.
  const CalibrationCase nvl8 = calibration_case(
      row("GB200 NVL72; 3x NVL8 partitions (8 GPUs each)", "24", "6",
          "3 NVL partitions; IB 4x400G per node", "17179869184", "83650", "Tree (forced)"));
  EXPECT_EQ(nvl8.preset.nodes, 3u);
  EXPECT_EQ(nvl8.preset.gpus_per_node, 8u);
  EXPECT_EQ(nvl8.preset.nics_per_node, 8u);
  EXPECT_EQ(nvl8.tuner.algo, Algorithm::Tree);
  EXPECT_EQ(
      error_of([] {
        calibration_case(row("GB200 NVL72; 2x NVL36 partitions", "72", "18", "IB", "8", "20"));
      }),
      "system: NVLink partitions of 36 GPUs (4 per tray): only partitions of whole trays up "
      "to 8 GPUs have a preset");
}

TEST(CalibrationRow, RowsThatDoNotReadFailNamingTheColumn) {
  EXPECT_EQ(error_of([] { calibration_case(row("8xH100", "16x", "2", "IB", "8", "20")); }),
            "gpus: '16x' is not a whole number");
  EXPECT_EQ(error_of([] { calibration_case(row("8xH100", "12", "5", "IB", "8", "20")); }),
            "gpus: 12 GPUs on 5 nodes is not a whole number per node of at least one");
  EXPECT_EQ(error_of([] {
              calibration_case(row("2x DGX A100 (8x A100 each)", "32", "2", "IB", "8", "20"));
            }),
            "gpus: 16 GPUs per node, but the system says 8 per node");
  EXPECT_EQ(error_of([] { calibration_case(row("8xH100", "8", "1", "", "8", "fast")); }),
            "time_us: 'fast' is not a number");
  EXPECT_EQ(error_of([] { calibration_case(row("8xH100", "8.5", "1", "", "8", "20")); }),
            "gpus: '8.5' is not a whole number");
}

TEST(CalibrationRow, ABlankGpusOrNodesComesFromTheNodeSize) {
  // 2 nodes of "8x A100": 16 GPUs; 16 GPUs of an 8-GPU preset: 2 nodes; 72 GB200: 18 trays.
  EXPECT_EQ(calibration_case(row("2x DGX A100 (8x A100 each)", "", "2", "IB", "8", "20")).ranks,
            16u);
  EXPECT_EQ(calibration_case(row("HGX H100", "16", "", "IB", "8", "20")).preset.nodes, 2u);
  EXPECT_EQ(calibration_case(row("GB200 NVL72", "72", "", "MNNVL", "8", "20")).preset.nodes, 18u);
}

TEST(CalibrationRow, SpreadsheetNumbersAndSizesWithUnits) {
  const CalibrationCase c = calibration_case(row("8xH100", "16.0", "2", "", "1GiB", "5000"));
  EXPECT_EQ(c.ranks, 16u);
  EXPECT_EQ(c.tuner.bytes.count(), 1073741824u);
  // 2 (n - 1) / n x S / t = 30 / 16 x 1,073,741,824 B / 5,000 us = 402.65 GB/s.
  EXPECT_NEAR(c.measured_busbw_GBps, 402.653184, 1e-9);
}

TEST(CalibrationRow, CsvLinesAndFiles) {
  EXPECT_EQ(split_csv_line(R"(a,"b, c",d)"), (std::vector<std::string>{"a", "b, c", "d"}));
  EXPECT_EQ(split_csv_line("a,\"say \"\"hi\"\"\",\r"),
            (std::vector<std::string>{"a", "say \"hi\"", ""}));
  std::istringstream csv(
      "system,gpus,nodes,interconnect,collective,bytes,time_us,algbw_GBps,busbw_GBps,algorithm,"
      "source\n"
      "8xH100 SXM,8,1,NVL4/NVSwitch,all_reduce,8,34.98,0.0,0.0,Ring,x\n"
      "\n"
      "H100 2x1,2,2,RoCE 4x400G,all_reduce,2097152\n");
  const auto rows = read_calibration_csv(csv, "t.csv");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].time_us, "34.98");
  EXPECT_EQ(rows[0].algorithm, "Ring");
  EXPECT_EQ(rows[1].interconnect, "RoCE 4x400G");
  EXPECT_EQ(rows[1].time_us, "");  // a short line: the missing columns are empty
  // Column names in another case or with spaces, fields with spaces around them.
  std::istringstream spaced(
      "System, GPUs, Nodes, Interconnect, Collective, Bytes, Time_us\n"
      "8xH100 SXM , 8 , 1 , NVL4/NVSwitch , all_reduce , 8 , 34.98\n");
  const auto spaced_rows = read_calibration_csv(spaced, "spaced.csv");
  ASSERT_EQ(spaced_rows.size(), 1u);
  EXPECT_EQ(spaced_rows[0].system, "8xH100 SXM");
  EXPECT_EQ(spaced_rows[0].gpus, "8");
  EXPECT_EQ(spaced_rows[0].time_us, "34.98");
  std::istringstream training("source,model,params_B,gpu,gpus\n");
  EXPECT_EQ(error_of([&] { read_calibration_csv(training, "training_public.csv"); }),
            "csv: training_public.csv lacks the nccl-tests columns (system, gpus, nodes, "
            "interconnect, collective, bytes, time_us or algbw_GBps)");
}

}  // namespace
}  // namespace lockstep
