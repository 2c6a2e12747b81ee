// The hardware catalog. Every figure carries its public source. Prices are approximate street
// prices (they move; they are here so that designs can be compared, not quoted). Figures marked
// "estimate" are not published by the vendor; the comment says how the value was chosen.
#include "lockstep/topology/catalog.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "lockstep/core/error.hpp"

namespace lockstep {
namespace {

constexpr double kTera = 1e12;
constexpr double kPeta = 1e15;

// The kernel model's achievable fractions of a dense peak (docs/kernel-model.md), per GPU
// architecture; the SMs and HBM bandwidth are each row's (datasheets and whitepapers).
// - Large GEMMs at BF16, measured: the best sustained torch.matmul over a sweep of shapes (Bekman,
//   "Machine Learning Engineering Open Book", chapter "Accelerators", maximum achievable matmul
//   FLOPS table, mamf-finder.py): A100 SXM 267.9 of 312 TFLOP/s (0.86), H100 SXM 792.1 of 989
//   (0.80). The measurement runs the GEMM long enough to settle at the clocks the power limit
//   allows (H100's 989 is quoted at its boost clock); Hopper's rows take H100 SXM's 0.80.
// - FP8 GEMMs on Hopper: DeepGEMM (DeepSeek 2025, README) reaches 1,300 to 1,550 TFLOP/s on H800
//   for training shapes, 0.66-0.78 of the 1,979 dense peak: the middle, 0.72.
// - FlashAttention-2 on A100 (Dao 2023, section 4.1): up to 73% of peak forward, 63% backward.
// - FlashAttention-3 on H100 (Shah et al. 2024, abstract): BF16 forward up to 740 TFLOP/s,
//   0.75; backward with FlashAttention-2's backward-to-forward ratio, 0.75 x 63 / 73 (assumption).
// - Blackwell: no published measurement of its own known here; Hopper's fractions, FP4 at FP8's
//   (assumption, docs/kernel-model.md).
// - CDNA 3 / 4 (estimate): independent measurements put MI300X's large BF16 and FP8 GEMMs near
//   half their peaks (SemiAnalysis, "MI300X vs H100 vs H200 Benchmark Part 1", Dec 2024);
//   attention with Composable Kernel's FlashAttention at half FA3's fraction on H100.
// - HBM: BabelStream's triad on A100 40GB reaches about 1.4 of its 1.555 TB/s (Deakin et al.,
//   BabelStream results; about 0.9): element-wise kernels and GEMMs' memory terms at 0.9 of the
//   datasheet bandwidth on every GPU (other GPUs: the same fraction, an assumption).
constexpr double kGemmBf16Ampere = 0.86, kGemmBf16 = 0.80, kGemmFp8 = 0.72, kHbm = 0.9;
constexpr double kFa2Fwd = 0.73, kFa2Bwd = 0.63, kFa3Fwd = 0.75;
constexpr double kFa3Bwd = kFa3Fwd * kFa2Bwd / kFa2Fwd;
constexpr double kCdnaGemm = 0.5, kCdnaAttention = kFa3Fwd / 2;

KernelRates ampere(std::uint32_t sms, double hbm_gBps) {
  return {sms, Bandwidth::gBps(hbm_gBps), kGemmBf16Ampere, 0, 0, kFa2Fwd, kFa2Bwd, kHbm};
}
KernelRates hopper(std::uint32_t sms, double hbm_gBps) {
  return {sms, Bandwidth::gBps(hbm_gBps), kGemmBf16, kGemmFp8, 0, kFa3Fwd, kFa3Bwd, kHbm};
}
KernelRates blackwell(std::uint32_t sms, double hbm_gBps) {
  return {sms, Bandwidth::gBps(hbm_gBps), kGemmBf16, kGemmFp8, kGemmFp8, kFa3Fwd, kFa3Bwd, kHbm};
}
KernelRates cdna(std::uint32_t compute_units, double hbm_gBps) {
  return {compute_units,  Bandwidth::gBps(hbm_gBps),          kCdnaGemm, kCdnaGemm, kCdnaGemm,
          kCdnaAttention, kCdnaAttention * kFa2Bwd / kFa2Fwd, kHbm};
}

const std::vector<GpuSpec>& gpus() {
  static const std::vector<GpuSpec> table = {
      // NVIDIA A100 Tensor Core GPU datasheet (2021): SXM4 80GB HBM2e, NVLink 3 at 600 GB/s
      // bidirectional over 12 links, BF16 312 TFLOPS dense, no FP8 or FP4 (Ampere's tensor cores
      // stop at BF16 / TF32 / INT8), 400 W TDP.
      // Approximate street price, ~$15,000 (press reports, 2023).
      // Kernel model: 108 SMs (NVIDIA A100 whitepaper, 2020), HBM2e 2,039 GB/s (datasheet).
      {"a100", "NVIDIA A100 SXM4 80GB", Bandwidth::gBps(300), 12, Bytes::gib(80), 312 * kTera, 400,
       15'000, "hgx_a100", 8, 0, 0, ampere(108, 2039)},
      // NVIDIA A800 40GB/80GB SXM4 product brief (2022): the A100 with NVLink cut to 400 GB/s
      // bidirectional (8 of NVLink 3's links at 50 GB/s); compute, memory and power as the A100.
      {"a800", "NVIDIA A800 SXM4 80GB", Bandwidth::gBps(200), 8, Bytes::gib(80), 312 * kTera, 400,
       15'000, "hgx_a100", 8, 0, 0, ampere(108, 2039)},
      // NVIDIA H100 Tensor Core GPU datasheet (2023): SXM5 80GB HBM3, NVLink 4 at 900 GB/s
      // bidirectional over 18 links, BF16 1,979 TFLOPS with sparsity = 989 dense, 700 W.
      // FP8 3,958 TFLOPS with sparsity = 1,979 dense; no FP4.
      // Approximate street price, ~$30,000 (press reports, 2024).
      // Kernel model: 132 SMs (NVIDIA H100 whitepaper, 2022, SXM5), HBM3 3.35 TB/s (datasheet).
      {"h100", "NVIDIA H100 SXM5 80GB", Bandwidth::gBps(450), 18, Bytes::gib(80), 989 * kTera, 700,
       30'000, "hgx_h100", 8, 1979 * kTera, 0, hopper(132, 3350)},
      // NVIDIA H200 datasheet (2024): 141 GB HBM3e, NVLink 900 GB/s, same Hopper compute as H100
      // SXM (989 TFLOPS dense BF16; FP8 3,958 with sparsity = 1,979 dense), up to 700 W.
      // Approximate street price, ~$35,000 (2024).
      // Kernel model: H100's 132 SMs, HBM3e 4.8 TB/s (H200 datasheet).
      {"h200", "NVIDIA H200 SXM 141GB", Bandwidth::gBps(450), 18, Bytes(141'000'000'000),
       989 * kTera, 700, 35'000, "hgx_h100", 8, 1979 * kTera, 0, hopper(132, 4800)},
      // NVIDIA HGX B200 datasheet (2024): 8 GPUs, 1,440 GB HBM3e total (180 GB each), NVLink 5
      // at 1.8 TB/s per GPU (18 links), FP16/BF16 36 PFLOPS sparse per 8 GPUs = 2.25 PF dense per
      // GPU; FP8 72 and FP4 144 PFLOPS sparse per 8 GPUs = 4.5 and 9 PF dense per GPU; 1,000 W
      // per GPU. Approximate street price, ~$40,000 (NVIDIA CEO, CNBC, 2024).
      // Kernel model: 148 SMs (NVIDIA Blackwell technical brief), HBM3e 8 TB/s (HGX B200
      // datasheet: 64 TB/s per 8 GPUs).
      {"b200", "NVIDIA B200 (HGX)", Bandwidth::gBps(900), 18, Bytes(180'000'000'000), 2.25 * kPeta,
       1000, 40'000, "hgx_b200", 8, 4.5 * kPeta, 9 * kPeta, blackwell(148, 8000)},
      // NVIDIA GB200 NVL72 datasheet (2024): 72 Blackwell GPUs, 13.4 TB HBM3e (186 GB each),
      // NVLink 5 at 1.8 TB/s per GPU, FP16/BF16 360 PFLOPS sparse per rack = 2.5 PF dense per
      // GPU; FP8 720 and FP4 1,440 PFLOPS sparse per rack = 5 and 10 PF dense per GPU; ~1,200 W
      // per GPU (GB200 superchip up to 2,700 W for 2 GPUs + Grace).
      // Approximate street price, ~$35,000 per GPU (half a GB200 superchip, $60-70k, HSBC 2024).
      // Kernel model: B200's 148 SMs, HBM3e 8 TB/s (NVL72 datasheet: 576 TB/s per 72 GPUs).
      {"gb200", "NVIDIA GB200 (Blackwell GPU in NVL72)", Bandwidth::gBps(900), 18,
       Bytes(186'000'000'000), 2.5 * kPeta, 1200, 35'000, "nvl72", 4, 5 * kPeta, 10 * kPeta,
       blackwell(148, 8000)},
      // NVIDIA H20 (Hopper for China; NVIDIA's HGX H20 spec sheet as reported, Nov 2023): 96 GB
      // HBM3 at 4.0 TB/s, NVLink 4 at 900 GB/s over 18 links, BF16 148 TFLOPS dense (296 with
      // sparsity), FP8 296 TFLOPS dense, 400 W. Approximate street price, ~$12,000 (press
      // reports, 2024).
      // Kernel model: 78 SMs (press reports of the spec sheet; estimate), HBM3 4.0 TB/s.
      {"h20", "NVIDIA H20 96GB", Bandwidth::gBps(450), 18, Bytes::gib(96), 148 * kTera, 400, 12'000,
       "hgx_h100", 8, 296 * kTera, 0, hopper(78, 4000)},
      // NVIDIA H800 SXM5 (Hopper for China, 2023): the H100 SXM with NVLink cut to 400 GB/s
      // bidirectional = 8 NVLink 4 links of 50 GB/s; 80 GB HBM3, H100's 989 TFLOPS dense BF16
      // and 1,979 dense FP8 (3,958 with sparsity), 700 W (DeepSeek-V3 technical report, 2024:
      // "NVLink 160 GB/s" achieved, IB 50 GB/s; it trained in FP8).
      // Approximate street price, ~$30,000 (press reports, 2023).
      // Kernel model: the H100 SXM's 132 SMs and HBM3 3.35 TB/s.
      {"h800", "NVIDIA H800 SXM5 80GB", Bandwidth::gBps(200), 8, Bytes::gib(80), 989 * kTera, 700,
       30'000, "hgx_h100", 8, 1979 * kTera, 0, hopper(132, 3350)},
      // NVIDIA H100 PCIe product brief (2023): 80 GB HBM2e, BF16 1,513 TFLOPS with sparsity = 756
      // dense, FP8 3,026 with sparsity = 1,513 dense, 350 W, PCIe Gen5 x16 (128 GB/s
      // bidirectional), NVLink bridges joining two GPUs at
      // 600 GB/s bidirectional (12 NVLink 4 links). Approximate street price, ~$25,000 (2024).
      // Kernel model: 114 SMs (H100 whitepaper, PCIe), HBM2e 2.0 TB/s (product brief).
      {"h100_pcie", "NVIDIA H100 PCIe 80GB", Bandwidth::gBps(300), 12, Bytes::gib(80), 756 * kTera,
       350, 25'000, "nvlink_bridge", 8, 1513 * kTera, 0, hopper(114, 2000)},
      // NVIDIA GH200 Grace Hopper Superchip datasheet (2023): H100 with 96 GB HBM3 (144 GB HBM3e
      // variant), NVLink 4 at 900 GB/s over 18 links, BF16 990 TFLOPS dense, FP8 3,958 with
      // sparsity = 1,979 dense; module power 450 to
      // 1,000 W configurable (680 W per module on HPE Cray EX254n: estimate). HPE Cray EX254n
      // blade (CSCS Alps) joins its 4 GH200 all-to-all, 6 NVLinks per pair. Approximate street
      // price, ~$35,000 per superchip (estimate, 2024).
      // Kernel model: 132 SMs, HBM3 4 TB/s (GH200 datasheet, 96 GB).
      {"gh200", "NVIDIA GH200 Grace Hopper (H100 96GB)", Bandwidth::gBps(450), 18, Bytes::gib(96),
       989 * kTera, 680, 35'000, "gh200_quad", 4, 1979 * kTera, 0, hopper(132, 4000)},
      // NVIDIA HGX B300 datasheet (2025): 8 Blackwell Ultra GPUs, 2.3 TB HBM3e (288 GB each),
      // NVLink 5 at 1.8 TB/s per GPU (18 links), FP16/BF16 36 PFLOPS sparse per 8 GPUs = 2.25 PF
      // dense per GPU (Blackwell Ultra raised FP4, not BF16), FP8 72 PFLOPS sparse = 4.5 PF dense
      // per GPU, FP4 108 PFLOPS dense per 8 GPUs = 13.5 PF, 8 x ConnectX-8 800G, ~1,100 W per
      // GPU. Approximate street price, ~$50,000 (estimate, 2025).
      // Kernel model: 160 SMs (NVIDIA technical blog, "Inside NVIDIA Blackwell Ultra", 2025),
      // HBM3e 8 TB/s (HGX B300 datasheet).
      {"b300", "NVIDIA B300 (HGX, Blackwell Ultra)", Bandwidth::gBps(900), 18,
       Bytes(288'000'000'000), 2.25 * kPeta, 1100, 50'000, "hgx_b200", 8, 4.5 * kPeta, 13.5 * kPeta,
       blackwell(160, 8000)},
      // NVIDIA GB300 NVL72 datasheet (2025): 72 Blackwell Ultra GPUs, up to 20 TB HBM3e (288 GB
      // each), NVLink 5 at 1.8 TB/s per GPU, FP16/BF16 360 PFLOPS sparse per rack = 2.5 PF dense
      // per GPU, FP8 720 PFLOPS sparse = 5 PF dense per GPU, FP4 1,080 PFLOPS dense per rack =
      // 15 PF per GPU, ConnectX-8 800G per GPU; ~1,400 W per GPU (estimate from the superchip's
      // reported power). Approximate street price, ~$45,000 per GPU (estimate, 2025).
      // Kernel model: Blackwell Ultra's 160 SMs, HBM3e 8 TB/s (GB300 NVL72 datasheet: 576 TB/s
      // per 72 GPUs).
      {"gb300", "NVIDIA GB300 (Blackwell Ultra GPU in NVL72)", Bandwidth::gBps(900), 18,
       Bytes(288'000'000'000), 2.5 * kPeta, 1400, 45'000, "nvl72", 4, 5 * kPeta, 15 * kPeta,
       blackwell(160, 8000)},
      // NVIDIA DGX Spark datasheet (2025): GB10 Grace Blackwell superchip, 128 GB LPDDR5x unified
      // memory (273 GB/s), 1 PFLOP FP4 with sparsity, no NVLink peer, ConnectX-7 at 200 Gb/s,
      // 240 W system power (140 W GB10 TDP). BF16 dense is not published: 1/8 of FP4 sparse as
      // on B200 (18 PF FP4 sparse, 2.25 PF BF16 dense) = 125 TFLOPS (estimate); FP4 dense half
      // the sparse figure = 500 TFLOPS, FP8 half of that as on B200 = 250 (estimate).
      // $3,999 list price.
      // Kernel model: 48 SMs (6,144 CUDA cores at 128 per SM; estimate), LPDDR5x 273 GB/s.
      {"gb10", "NVIDIA GB10 (DGX Spark)", Bandwidth(), 0, Bytes::gib(128), 125 * kTera, 140, 3'999,
       "", 1, 250 * kTera, 500 * kTera, blackwell(48, 273)},
      // AMD Instinct MI300X datasheet (2023): 192 GB HBM3, BF16 1,307.4 TFLOPS dense, FP8
      // 2,614.9 TFLOPS dense (5,229.8 with sparsity), no FP4, 750 W,
      // 7 Infinity Fabric links of 128 GB/s bidirectional (64 GB/s per direction) to the 7 peers
      // of an 8-GPU platform. Approximate street price, ~$15,000 (Citi estimate, 2024).
      // Kernel model: 304 compute units, HBM3 5.3 TB/s (MI300X datasheet).
      {"mi300x", "AMD Instinct MI300X", Bandwidth::gBps(448), 7, Bytes(192'000'000'000),
       1307.4 * kTera, 750, 15'000, "xgmi_mesh", 8, 2614.9 * kTera, 0, cdna(304, 5300)},
      // AMD Instinct MI325X datasheet (2024): 256 GB HBM3E, the MI300X's compute (BF16 1,307.4
      // TFLOPS dense, FP8 2,614.9 dense) and Infinity Fabric (7 links of 128 GB/s
      // bidirectional), 1,000 W.
      // Price not published: ~$20,000 (estimate, above the MI300X for the larger HBM3E).
      // Kernel model: 304 compute units, HBM3E 6 TB/s (MI325X datasheet).
      {"mi325x", "AMD Instinct MI325X", Bandwidth::gBps(448), 7, Bytes(256'000'000'000),
       1307.4 * kTera, 1000, 20'000, "xgmi_mesh", 8, 2614.9 * kTera, 0, cdna(304, 6000)},
      // AMD Instinct MI355X datasheet (2025): CDNA 4, 288 GB HBM3E, BF16 2.5 PFLOPS dense, FP8
      // 5 PFLOPS dense (10.1 with sparsity), MXFP4 10 PFLOPS dense,
      // 1,400 W, 7 Infinity Fabric links of 153.6 GB/s bidirectional (76.8 GB/s per direction,
      // 1,075 GB/s in all) to the 7 peers of an 8-GPU UBB. Approximate street price, ~$25,000
      // (press reports, 2025).
      // Kernel model: 256 compute units, HBM3E 8 TB/s (MI355X datasheet).
      {"mi355x", "AMD Instinct MI355X", Bandwidth::gBps(7 * 76.8), 7, Bytes(288'000'000'000),
       2.5 * kPeta, 1400, 25'000, "xgmi_mesh_mi355x", 8, 5 * kPeta, 10 * kPeta, cdna(256, 8000)},
      // NVIDIA L40S datasheet (2023): Ada Lovelace (compute capability 8.9), 48 GB GDDR6 at
      // 864 GB/s, BF16 tensor 362.05 TFLOPS dense (733 with sparsity), FP8 733 dense (1,466 with
      // sparsity), 350 W, PCIe Gen4 x16 (64 GB/s bidirectional), no NVLink: GPUs of a server meet
      // over PCIe. Approximate street price, ~$8,000 (press reports, 2024).
      // Kernel model: 142 SMs (NVIDIA Ada Lovelace architecture whitepaper, L40S); Ampere's
      // measured BF16 and attention fractions (assumption: no L40S measurement is cited; the
      // FP8 fraction is left 0, so FP8 kernels on it need `efficiency`).
      {"l40s", "NVIDIA L40S 48GB (PCIe)", Bandwidth(), 0, Bytes::gib(48), 362.05 * kTera, 350,
       8'000, "pcie_switch", 8, 733 * kTera, 0, ampere(142, 864)},
      // NVIDIA A100 80GB PCIe (A100 datasheet, 2021): the A100's compute (BF16 312 TFLOPS dense)
      // and 80 GB HBM2e at 1,935 GB/s, 300 W, PCIe Gen4 x16; an NVLink bridge joins 2 GPUs at
      // 600 GB/s bidirectional (12 NVLink 3 links), other GPUs are reached over PCIe.
      // Approximate street price, ~$12,000 (press reports, 2023).
      // Kernel model: 108 SMs (A100 whitepaper), HBM2e 1,935 GB/s.
      {"a100_pcie", "NVIDIA A100 PCIe 80GB", Bandwidth::gBps(300), 12, Bytes::gib(80), 312 * kTera,
       300, 12'000, "nvlink_bridge", 8, 0, 0, ampere(108, 1935)},
      // NVIDIA A100 SXM4 40GB (A100 datasheet, 2021): 40 GB HBM2 at 1,555 GB/s, NVLink 3 at
      // 600 GB/s bidirectional over 12 links, BF16 312 TFLOPS dense, 400 W. As NERSC Perlmutter's
      // GPU nodes (HPE Cray EX235n) wire it: 4 GPUs, each pair joined by 4 NVLink 3 links
      // (NERSC, "Perlmutter Architecture"). Approximate street price, ~$10,000 (estimate).
      // Kernel model: 108 SMs, HBM2 1,555 GB/s (datasheet).
      {"a100_40gb", "NVIDIA A100 SXM4 40GB", Bandwidth::gBps(300), 12, Bytes::gib(40), 312 * kTera,
       400, 10'000, "a100_quad", 4, 0, 0, ampere(108, 1555)},
      // NVIDIA Tesla V100 SXM2 32GB (V100 datasheet, 2018): 32 GB HBM2 at 900 GB/s, NVLink 2 at
      // 300 GB/s bidirectional over 6 links (25 GB/s per link and direction), 300 W, PCIe Gen3
      // x16, compute capability 7.0. Tensor cores: 125 TFLOPS mixed precision (FP16); Volta has
      // no BF16, and the FP16 rate stands in the BF16 column for half precision. As the DGX-1
      // with V100 and AWS p3dn.24xlarge wire 8 of them: the hybrid cube mesh (dgx1_cube_mesh).
      // Approximate price, ~$10,000 (estimate, 2018 list prices). Kernel model: no rates (it
      // asks for `efficiency`).
      {"v100", "NVIDIA Tesla V100 SXM2 32GB", Bandwidth::gBps(150), 6, Bytes::gib(32), 125 * kTera,
       300, 10'000, "dgx1_cube_mesh", 8, 0, 0, KernelRates{}},
      // NVIDIA A10G (AWS G5 instances; AWS's G5 page: 24 GB of GPU memory per A10G, PCIe, no
      // NVLink). AWS publishes no A10G datasheet: the NVIDIA A10 datasheet's figures stand in for
      // it (GA102, compute capability 8.6: BF16 tensor 125 TFLOPS dense, 24 GB GDDR6 at 600 GB/s,
      // 150 W, PCIe Gen4 x16), an assumption. Rented with the instance: no price. Kernel model:
      // no rates (it asks for `efficiency`).
      {"a10g", "NVIDIA A10G 24GB (PCIe, AWS G5)", Bandwidth(), 0, Bytes::gib(24), 125 * kTera, 150,
       0, "pcie_switch", 8, 0, 0, KernelRates{}},
  };
  return table;
}

const std::vector<NicSpec>& nics() {
  static const std::vector<NicSpec> table = {
      // NVIDIA ConnectX-6 VPI adapter datasheet: HDR 200 Gb/s InfiniBand (MCX653105A-HDAT).
      // Power ~20 W (estimate from the datasheet's typical-power range).
      // Approximate street price, ~$1,000 (2023).
      {"cx6_hdr", "NVIDIA ConnectX-6 HDR 200G", "infiniband", Bandwidth::gbps(200), 1, 20, 1'000},
      // NVIDIA ConnectX-7 datasheet: NDR 400 Gb/s InfiniBand (MCX75310AAS-NEAT), ~25 W.
      // Approximate street price, ~$2,000 (2024).
      {"cx7_ndr", "NVIDIA ConnectX-7 NDR 400G", "infiniband", Bandwidth::gbps(400), 1, 25, 2'000},
      // Same ConnectX-7 silicon in 400GbE mode with RoCEv2 (ConnectX-7 datasheet).
      {"cx7_400gbe", "NVIDIA ConnectX-7 400GbE (RoCE)", "roce", Bandwidth::gbps(400), 1, 25, 2'000},
      // NVIDIA BlueField-3 SuperNIC datasheet (B3140H): 400GbE RoCE, up to 75 W.
      // Approximate street price, ~$2,500 (2024).
      {"bf3_400gbe", "NVIDIA BlueField-3 SuperNIC 400GbE", "roce", Bandwidth::gbps(400), 1, 75,
       2'500},
      // NVIDIA ConnectX-8 SuperNIC datasheet (2024): 800 Gb/s XDR InfiniBand or 800GbE.
      // Power ~40 W (estimate). Approximate street price, ~$3,000 (estimate, 2025).
      {"cx8_xdr", "NVIDIA ConnectX-8 SuperNIC XDR 800G", "infiniband", Bandwidth::gbps(800), 1, 40,
       3'000},
      {"cx8_800gbe", "NVIDIA ConnectX-8 SuperNIC 800GbE (RoCE)", "roce", Bandwidth::gbps(800), 1,
       40, 3'000},
      // AWS p5.48xlarge product page: 3,200 Gb/s of EFA networking over 32 interfaces, i.e.
      // 4 x 100 Gb/s per H100 (SRD transport). Rented with the instance: no power or price here.
      {"efa_p5", "AWS EFA (p5, 4x100G per GPU)", "efa", Bandwidth::gbps(100), 4, 0, 0},
      // HPE Slingshot-11 Cassini-1 NIC: 200 Gb/s Ethernet (HPE Slingshot datasheet; De Sensi et
      // al., SC20). Power ~25 W and price ~$2,000 are estimates.
      {"cassini1_200g", "HPE Slingshot-11 Cassini-1 200G", "roce", Bandwidth::gbps(200), 1, 25,
       2'000},
      // Google Virtual NIC (gVNIC) at 200 Gb/s: A3 (a3-highgpu-8g) has 4 for GPU traffic, A3 Mega
      // (a3-megagpu-8g) 8 (GCP accelerator-optimized machine types doc). Rented: no power or price.
      {"gvnic_200g", "Google gVNIC 200G (A3 GPUDirect-TCPX/TCPXO)", "roce", Bandwidth::gbps(200), 1,
       0, 0},
      // AMD Pensando Pollara 400 AI NIC product brief (2024): 400GbE, RoCEv2, UEC-ready,
      // programmable pipeline. Power ~25 W and price ~$2,000 are estimates.
      {"pollara_400g", "AMD Pensando Pollara 400 AI NIC", "roce", Bandwidth::gbps(400), 1, 25,
       2'000},
      // NVIDIA (Mellanox) ConnectX-5 VPI adapter datasheet: EDR 100 Gb/s InfiniBand
      // (MCX555A-ECAT), PCIe Gen3 x16; DGX-1's ConnectX-4 EDR runs the same rate. Power ~15 W and
      // price ~$700 are estimates.
      {"cx5_edr", "NVIDIA ConnectX-5 EDR 100G", "infiniband", Bandwidth::gbps(100), 1, 15, 700},
  };
  return table;
}

const std::vector<SwitchSpec>& switches() {
  static const std::vector<SwitchSpec> table = {
      // NVIDIA Quantum QM8700 datasheet: 40 x HDR 200 Gb/s, 16 Tb/s, 130 ns port-to-port,
      // SHARPv2, typical power 253 W with passive cables. Buffer not published: 16 MiB
      // (estimate). Approximate street price, ~$20,000 (2023). SHARP aggregation latency per
      // level: not published; ~0.5 us is an estimate from Graham et al., "Scalable Hierarchical
      // Aggregation Protocol (SHArP)", COMHPC 2016 (a few us for a small all-reduce over a
      // two-level tree of Switch-IB 2, ~1 us of it NIC and host), used for every generation.
      {"qm8700", "NVIDIA Quantum QM8700 (40x200G HDR)", "infiniband", 40, Bandwidth::gbps(200),
       Time::ns(130), Bytes::mib(16), 253, 20'000, true, 2, Time::ns(500)},
      // NVIDIA Quantum-2 QM9700 datasheet: 64 x NDR 400 Gb/s on 32 OSFP cages, 51.2 Tb/s,
      // SHARPv3, typical power 747 W with passive cables. Latency not published: taken equal to
      // Quantum's 130 ns (estimate); buffer 32 MiB (estimate). ~$30,000 approximate street
      // price (2024).
      // SHARPv3 adds multi-tenancy (several jobs' aggregation trees at once, QM9700 datasheet);
      // one nccl-tests job uses one tree per rail either way.
      {"qm9700", "NVIDIA Quantum-2 QM9700 (64x400G NDR)", "infiniband", 64, Bandwidth::gbps(400),
       Time::ns(130), Bytes::mib(32), 747, 30'000, true, 3, Time::ns(500)},
      // NVIDIA Quantum-X800 Q3400 datasheet (2024): 144 x XDR 800 Gb/s, 115.2 Tb/s, SHARPv4.
      // Power ~3,500 W and latency 130 ns are estimates (not published); buffer 64 MiB
      // (estimate). ~$120,000 approximate street price (estimate, 2025).
      // SHARPv4: 14.4 TFLOPS of in-network computing (NVIDIA's Quantum-X800 announcement, GTC
      // 2024), i.e. 100 GFLOPS per 800G port: a reduction of 4-byte elements at line rate needs
      // 25, so the aggregation keeps up with the ports.
      {"q3400", "NVIDIA Quantum-X800 Q3400 (144x800G XDR)", "infiniband", 144, Bandwidth::gbps(800),
       Time::ns(130), Bytes::mib(64), 3'500, 120'000, true, 4, Time::ns(500)},
      // NVIDIA Spectrum-4 SN5600 datasheet: 64 x 800GbE (or 128 x 400GbE), 51.2 Tb/s, 160 MB
      // fully shared buffer. Latency ~600 ns and power ~1,500 W are estimates (store-and-
      // forward Ethernet class). ~$50,000 approximate street price (2024).
      {"sn5600", "NVIDIA Spectrum-4 SN5600 (64x800GbE)", "ethernet", 64, Bandwidth::gbps(800),
       Time::ns(600), Bytes(160'000'000), 1'500, 50'000, false, 0, Time::zero()},
      {"sn5600_400g", "NVIDIA Spectrum-4 SN5600 (128x400GbE)", "ethernet", 128,
       Bandwidth::gbps(400), Time::ns(600), Bytes(160'000'000), 1'500, 50'000, false, 0,
       Time::zero()},
      // Broadcom Tomahawk 5 (BCM78900) product brief: 51.2 Tb/s, 64 x 800GbE or 128 x 400GbE,
      // ~165 MB on-chip buffer. Latency ~700 ns and system power ~1,200 W are estimates.
      // ~$40,000 approximate street price for a 64x800G box (2024).
      {"tomahawk5", "Broadcom Tomahawk 5 switch (64x800GbE)", "ethernet", 64, Bandwidth::gbps(800),
       Time::ns(700), Bytes(165'000'000), 1'200, 40'000, false, 0, Time::zero()},
      {"tomahawk5_400g", "Broadcom Tomahawk 5 switch (128x400GbE)", "ethernet", 128,
       Bandwidth::gbps(400), Time::ns(700), Bytes(165'000'000), 1'200, 40'000, false, 0,
       Time::zero()},
      // Earlier Broadcom and NVIDIA Ethernet generations, for their buffers (the packet engine's
      // `buffers: {model: as_built}`). Tomahawk 3 (BCM56980) product brief: 12.8 Tb/s, 32 x
      // 400GbE, 64 MB shared buffer. Tomahawk 4 (BCM56990) product brief: 25.6 Tb/s, 64 x
      // 400GbE, 113 MB shared buffer. Latency, power and price are estimates as for Tomahawk 5.
      {"tomahawk3", "Broadcom Tomahawk 3 switch (32x400GbE)", "ethernet", 32, Bandwidth::gbps(400),
       Time::ns(700), Bytes(64'000'000), 600, 20'000, false, 0, Time::zero()},
      {"tomahawk4", "Broadcom Tomahawk 4 switch (64x400GbE)", "ethernet", 64, Bandwidth::gbps(400),
       Time::ns(700), Bytes(113'000'000), 900, 30'000, false, 0, Time::zero()},
      // NVIDIA Spectrum-2 SN3700 datasheet: 32 x 200GbE, 12.8 Tb/s, 42 MB fully shared buffer.
      // NVIDIA Spectrum-3 SN4700 datasheet: 32 x 400GbE, 25.6 Tb/s, 64 MB fully shared buffer.
      // Latency ~600 ns, power and price are estimates as for SN5600.
      {"sn3700", "NVIDIA Spectrum-2 SN3700 (32x200GbE)", "ethernet", 32, Bandwidth::gbps(200),
       Time::ns(600), Bytes(42'000'000), 450, 20'000, false, 0, Time::zero()},
      {"sn4700", "NVIDIA Spectrum-3 SN4700 (32x400GbE)", "ethernet", 32, Bandwidth::gbps(400),
       Time::ns(600), Bytes(64'000'000), 700, 30'000, false, 0, Time::zero()},
      // HPE Slingshot Rosetta switch (De Sensi et al., "An In-Depth Analysis of the Slingshot
      // Interconnect", SC20): 64 x 200 Gb/s ports, 12.8 Tb/s, ~350 ns port-to-port. Buffer
      // (32 MiB), power (~250 W) and price (~$30,000) are estimates.
      {"rosetta", "HPE Slingshot Rosetta (64x200G)", "ethernet", 64, Bandwidth::gbps(200),
       Time::ns(350), Bytes::mib(32), 250, 30'000, false, 0, Time::zero()},
      // A modular (chassis) spine. Arista 7800R3 Series data sheet: 7804R3 / 7808R3 / 7812R3 /
      // 7816R3 with 4 / 8 / 12 / 16 line-card slots; the 7800R3-36P line card has 36 x 400G
      // QSFP-DD ports, so a 7816R3 holds 16 x 36 = 576 x 400GbE (460 Tb/s, both directions);
      // one port a cage. Meta's RoCE training cluster (Meta, "Building Meta's GenAI
      // Infrastructure", 2024) is built with Arista 7800 switches. Buffer: the line cards'
      // Broadcom Jericho2 chips with 8 GB of HBM each (Jericho2 brief), 3 for 14.4 Tb/s of 400G
      // ports (4.8 Tb/s each): 24 GB a card, 384 GB in all (derived). Power ~16,000 W for a full
      // chassis (~28 W a 400G port), latency ~4 us (deep-buffer store-and-forward class) and
      // price ~$1,000,000 (~$1,700 a 400G port; no public list price) are estimates.
      {"arista_7816r3", "Arista 7816R3 chassis (16 slots x 36 x 400GbE)", "ethernet", 576,
       Bandwidth::gbps(400), Time::us(4), Bytes(384'000'000'000), 16'000, 1'000'000, false, 0,
       Time::zero()},
  };
  return table;
}

const std::vector<ScaleUpSpec>& scale_ups() {
  // NVSwitch chip power and price are not published: ~100 W (gen2/gen3) and ~150 W (gen4) are
  // estimates. HGX chips sit on the HGX baseboard that NVIDIA sells with its 8 GPUs (NVIDIA HGX
  // A100 / H100 / B200 datasheets: "8 GPUs ... NVSwitch" as one board), and the GPUs' street
  // prices above are per GPU of such a board: the chips are priced 0 and the bill of materials
  // says "included in <GPU>". NVLink Switch trays (NVL72) are not sold alone and have no
  // published price: ~$10,000 per chip is an estimate, shown as one. One-way GPU-to-GPU hardware
  // latency through NVSwitch ~500 ns (estimate; NCCL adds its own per-step protocol latency on top,
  // see HARDWARE.md). NVLink per-link rate per direction: NVLink 3 = 600 GB/s / 12 links / 2
  // directions = 25 GB/s (A100 datasheet); NVLink 4 = 900 / 18 / 2 = 25 GB/s (H100 datasheet);
  // NVLink 5 = 1,800 / 18 / 2 = 50 GB/s (Blackwell datasheets). Infinity Fabric: 128 GB/s
  // bidirectional per link = 64 GB/s per direction (MI300X datasheet), 153.6 = 76.8 per direction
  // on MI355X. NVSwitch buffer sizes are not published.
  constexpr Bandwidth kNvlink3Port = Bandwidth::gBps(25);
  constexpr Bandwidth kNvlink4Port = Bandwidth::gBps(25);
  constexpr Bandwidth kNvlink5Port = Bandwidth::gBps(50);
  static const std::vector<ScaleUpSpec> table = {
      // NVIDIA HGX A100 / DGX A100 user guide: 8 GPUs, 6 NVSwitch (gen2, 36 NVLink3 ports).
      {"hgx_a100", "HGX A100 8-GPU (6x NVSwitch gen2)", "NVSwitch gen2", 8, 8, 8, 36, kNvlink3Port,
       6, Time::ns(500), 100, 0, false, true,
       "on the HGX baseboard, sold with its 8 GPUs: NVIDIA HGX A100 datasheet"},
      // NVIDIA DGX H100 user guide / Hopper whitepaper: 8 GPUs, 4 NVSwitch gen3 (64 NVLink4
      // ports each), NVLink SHARP.
      {"hgx_h100", "HGX H100 8-GPU (4x NVSwitch gen3)", "NVSwitch gen3", 8, 8, 8, 64, kNvlink4Port,
       4, Time::ns(500), 100, 0, true, true,
       "on the HGX baseboard, sold with its 8 GPUs: NVIDIA HGX H100 datasheet"},
      // NVIDIA HGX B200 datasheet / DGX B200 user guide: 8 GPUs, 2 NVSwitch gen4 (72 ports).
      {"hgx_b200", "HGX B200 8-GPU (2x NVSwitch gen4)", "NVSwitch gen4", 8, 8, 8, 72, kNvlink5Port,
       2, Time::ns(500), 150, 0, true, true,
       "on the HGX baseboard, sold with its 8 GPUs: NVIDIA HGX B200 datasheet"},
      // NVIDIA GB200 NVL72 datasheet: 72 GPUs in 18 compute trays of 4, 9 NVLink switch trays of
      // 2 NVLink Switch chips = 18 chips (72 GPUs x 18 links / 72 ports).
      {"nvl72", "GB200 NVL72 rack (18x NVLink Switch chips)", "NVLink Switch gen4", 72, 72, 4, 72,
       kNvlink5Port, 18, Time::ns(500), 150, 10'000, true, false,
       "estimate: NVIDIA publishes no price for NVLink Switch chips or trays"},
      // NVIDIA Blackwell architecture brief: NVLink Switch domains up to 576 GPUs. Beyond 72
      // GPUs the domain needs a second switch level (chips_for() derives the count).
      {"nvlink_domain", "NVLink Switch domain (gen4 chips)", "NVLink Switch gen4", 0, 576, 4, 72,
       kNvlink5Port, 0, Time::ns(500), 150, 10'000, true, false,
       "estimate: NVIDIA publishes no price for NVLink Switch chips or trays"},
      // NVIDIA H100 PCIe product brief: NVLink bridges join two GPUs (3 bridges, 12 NVLink 4
      // links, 600 GB/s bidirectional); other GPUs of the server are reached over PCIe. A mesh
      // of 2: no switch chip.
      {"nvlink_bridge", "NVLink bridge pairs (H100 / A100 PCIe)", "", 2, 2, 8, 0, kNvlink4Port, 0,
       Time::ns(500), 0, 0, false, false, ""},
      // NERSC Perlmutter GPU node (HPE Cray EX235n; NERSC "Perlmutter Architecture"): 4 A100
      // SXM4 joined all-to-all by NVLink 3, 4 links (100 GB/s per direction) per pair; no
      // NVSwitch.
      {"a100_quad", "HPE Cray EX235n 4 x A100 NVLink 3 mesh (Perlmutter)", "", 4, 4, 4, 0,
       kNvlink3Port, 0, Time::ns(500), 0, 0, false, false, ""},
      // Servers without NVLink (L40S; NVIDIA L40S datasheet: PCIe Gen4 x16 only): each GPU is
      // its own scale-up domain and GPUs meet through the server's PCIe switches / root complex
      // at their PCIe link's rate (the builders' host device). No chip, no extra latency beyond
      // PCIe's.
      {"pcie_switch", "PCIe only (no NVLink): GPUs meet through PCIe", "", 1, 1, 8, 0, Bandwidth(),
       0, Time::zero(), 0, 0, false, false, ""},
      // NVIDIA DGX-1 with Tesla V100 system architecture whitepaper (WP-08437-002, 2017): 8 V100
      // SXM2 in a hybrid cube mesh of NVLink 2 (25 GB/s per link and direction), 6 links per GPU,
      // pairs wired unequally (mesh_wiring below); no NVSwitch. AWS p3.16xlarge / p3dn.24xlarge
      // wire the same board. Latency ~500 ns, estimate as above.
      {"dgx1_cube_mesh", "DGX-1 V100 hybrid cube mesh (NVLink 2)", "", 8, 8, 8, 0,
       Bandwidth::gBps(25), 0, Time::ns(500), 0, 0, false, false, ""},
      // HPE Cray EX254n blade (HPE QuickSpecs; CSCS Alps docs): 4 GH200 joined all-to-all by
      // NVLink 4, 6 links (150 GB/s per direction) per pair; no NVSwitch.
      {"gh200_quad", "HPE Cray EX254n 4 x GH200 NVLink mesh", "", 4, 4, 4, 0, kNvlink4Port, 0,
       Time::ns(500), 0, 0, false, false, ""},
      // AMD Instinct MI300X platform brief: 8 GPUs fully connected by Infinity Fabric (no
      // switch), the MI325X's the same. Latency ~500 ns, estimate as above.
      {"xgmi_mesh", "AMD Infinity Fabric 8-GPU mesh", "", 8, 8, 8, 0, Bandwidth::gBps(64), 0,
       Time::ns(500), 0, 0, false, false, ""},
      // AMD Instinct MI355X datasheet: the same 8-GPU full mesh at 76.8 GB/s per link and
      // direction (153.6 GB/s bidirectional).
      {"xgmi_mesh_mi355x", "AMD Infinity Fabric 8-GPU mesh (MI355X UBB)", "", 8, 8, 8, 0,
       Bandwidth::gBps(76.8), 0, Time::ns(500), 0, 0, false, false, ""},
  };
  return table;
}

const std::vector<CableSpec>& cables() {
  // Listed cheapest first within each medium: cable_for() takes the first that fits.
  static const std::vector<CableSpec> table = {
      // NVIDIA LinkX cables datasheets: passive copper DAC, QSFP56 HDR 200G up to 3 m
      // (MCP1650-H), OSFP NDR twin-port 2x400G/800G up to 2 m (MCP4Y10-N). Negligible power.
      // Approximate street prices, ~$150 and ~$300 (2024).
      {"dac_200g", "QSFP56 200G passive copper DAC", LinkMedium::CopperDac, Bandwidth::gbps(200), 3,
       0.1, 150, 0},
      {"dac_800g", "OSFP 800G passive copper DAC", LinkMedium::CopperDac, Bandwidth::gbps(800), 2,
       0.1, 300, 0},
      // Credo HiWire AEC product brief (2023): 400G/800G active electrical cables up to 7 m,
      // ~12 W per cable (both ends). Approximate street price, ~$600 (2024).
      {"aec_800g", "800G active electrical cable", LinkMedium::ActiveElectrical,
       Bandwidth::gbps(800), 7, 12, 600, 0},
      // NVIDIA LinkX transceivers: QSFP56 200G SR4 multimode 100 m (MMA1T00-HS, ~5 W); OSFP 400G
      // SR4 50 m (MMA4Z00-NS400, ~8 W); OSFP 800G 2xSR4 twin-port 50 m (MMA4Z00-NS, 17 W);
      // OSFP 800G 2xDR4 single-mode 500 m (MMS4X00-NM, 17 W); OSFP 800G 2xFR4 2 km
      // (MMS4X50-NM, 17 W). Approximate street prices per transceiver (2024): $400, $700,
      // $1,100, $1,500, $2,000.
      {"sr_200g", "QSFP56 200G SR4 transceiver", LinkMedium::Optical, Bandwidth::gbps(200), 100, 5,
       400, 2},
      {"sr_400g", "OSFP 400G SR4 transceiver", LinkMedium::Optical, Bandwidth::gbps(400), 50, 8,
       700, 2},
      {"sr_800g", "OSFP 800G 2xSR4 transceiver", LinkMedium::Optical, Bandwidth::gbps(800), 50, 17,
       1'100, 2},
      // IEEE 802.3bs 400GBASE-DR4: 500 m over single-mode fibre; OSFP ~8 W (MMS4X00-NS400
      // class). Approximate street price, ~$900 (2024).
      {"dr_400g", "OSFP 400G DR4 transceiver", LinkMedium::Optical, Bandwidth::gbps(400), 500, 8,
       900, 2},
      {"dr_800g", "OSFP 800G 2xDR4 transceiver", LinkMedium::Optical, Bandwidth::gbps(800), 500, 17,
       1'500, 2},
      {"fr_800g", "OSFP 800G 2xFR4 transceiver", LinkMedium::Optical, Bandwidth::gbps(800), 2'000,
       17, 2'000, 2},
      // NVIDIA LinkX XDR twin-port OSFP 1.6T 2xDR4 single-mode transceiver (500 m), one per
      // Quantum-X800 Q3400 cage of 2 x 800G XDR ports (NVIDIA's Quantum-X800 announcement,
      // GTC 2024: LinkX 1.6T twin-port OSFP). No datasheet power or list price found: ~25 W
      // (estimate, below two 800G modules' 2 x 17 W) and ~$3,000 (estimate: two 800G 2xDR4's
      // ~$1,500, the same price per lane).
      {"dr_1600g", "OSFP 1.6T 2xDR4 transceiver (estimate)", LinkMedium::Optical,
       Bandwidth::gbps(1'600), 500, 25, 3'000, 2},
      // OIF 400ZR implementation agreement: 400G coherent DWDM, 120 km amplified, ~20 W
      // (QSFP-DD). OpenZR+ MSA: 400G over 1,000+ km amplified, ~25 W; 800ZR (OIF, 2024) ~30 W.
      // Approximate street prices, ~$6,000 / ~$8,000 / ~$12,000 per module (estimates, 2024).
      {"zr_400g", "400ZR QSFP-DD coherent transceiver", LinkMedium::LongHaulFibre,
       Bandwidth::gbps(400), 120'000, 20, 6'000, 2},
      {"zr_800g", "800ZR coherent transceiver", LinkMedium::LongHaulFibre, Bandwidth::gbps(800),
       120'000, 30, 12'000, 2},
      {"zrplus_400g", "OpenZR+ 400G coherent transceiver", LinkMedium::LongHaulFibre,
       Bandwidth::gbps(400), 2'000'000, 25, 8'000, 2},
  };
  return table;
}

const std::vector<PcieSpec>& pcies() {
  // PCI-SIG base specifications: Gen4 16 GT/s and Gen5 32 GT/s per lane, 128b/130b encoding;
  // x16 per direction = 31.5 GB/s (Gen4) and 63.0 GB/s (Gen5). Gen6 (PCIe 6.0, 2022): 64 GT/s
  // PAM4 per lane in 256 B flits of which 236 B carry TLPs: x16 = 128 x 236 / 256 = 118.0 GB/s
  // (what an 800 Gb/s NIC needs). One-way latency ~250 ns through the root complex / switch
  // (estimate). NCCL's figure (src/graph/topo.cc, kvDictPciGen, "x100 Mbps per lane": 16 GT/s
  // -> 120, 32 -> 240, 64 -> 480; a link is width x that / 80 GB/s) is 75% of the signalling
  // rate: 24, 48 and 96 GB/s for x16, what nvbandwidth / bandwidthTest measure host-to-device
  // within a few percent (~25 GB/s Gen4, ~50-55 Gen5). It caps what a GPU moves to its NICs.
  static const std::vector<PcieSpec> table = {
      {"gen4_x16", Bandwidth::gBps(16 * 16.0 / 8 * 128 / 130), Time::ns(250),
       Bandwidth::gBps(16 * 120 / 80.0)},
      {"gen5_x16", Bandwidth::gBps(16 * 32.0 / 8 * 128 / 130), Time::ns(250),
       Bandwidth::gBps(16 * 240 / 80.0)},
      {"gen6_x16", Bandwidth::gBps(16 * 64.0 / 8 * 236 / 256), Time::ns(250),
       Bandwidth::gBps(16 * 480 / 80.0)},
      // Gen3 (8 GT/s, 128b/130b: 15.75 GB/s per direction at x16; kvDictPciGen 8 GT/s -> 60, so
      // NCCL's 12 GB/s, its PCI_BW): V100's host link (V100 datasheet).
      {"gen3_x16", Bandwidth::gBps(16 * 8.0 / 8 * 128 / 130), Time::ns(250),
       Bandwidth::gBps(16 * 60 / 80.0)},
  };
  return table;
}

template <typename Spec>
std::size_t index_of(const std::vector<Spec>& table, std::string_view name, std::string_view field,
                     const char* what) {
  for (std::size_t i = 0; i < table.size(); ++i) {
    if (table[i].name == name) return i;
  }
  std::string known;
  for (const auto& s : table) {
    if (!known.empty()) known += ", ";
    known += s.name;
  }
  throw InputError(std::string(field),
                   fmt::format("unknown {} '{}' (known: {})", what, name, known));
}

}  // namespace

std::uint64_t ScaleUpSpec::chips_for(std::uint64_t gpus, std::uint32_t links_per_gpu) const {
  if (chip_ports == 0 || gpus == 0) return 0;
  if (fixed_chips != 0 && domain_gpus != 0) {
    return fixed_chips * ((gpus + domain_gpus - 1) / domain_gpus);
  }
  const std::uint64_t gpu_ports = gpus * links_per_gpu;
  if (gpus <= chip_ports) {
    // One level: every GPU link lands on a chip port.
    return (gpu_ports + chip_ports - 1) / chip_ports;
  }
  // Two levels (a non-blocking fat tree of chips): level-1 chips use half their ports down,
  // level-2 chips all of theirs, so chips = gpu_ports * (2/P + 1/P).
  const std::uint64_t level1 = (2 * gpu_ports + chip_ports - 1) / chip_ports;
  const std::uint64_t level2 = (gpu_ports + chip_ports - 1) / chip_ports;
  return level1 + level2;
}

std::span<const GpuSpec> gpu_catalog() {
  return gpus();
}
std::span<const NicSpec> nic_catalog() {
  return nics();
}
std::span<const SwitchSpec> switch_catalog() {
  return switches();
}
std::span<const ScaleUpSpec> scale_up_catalog() {
  return scale_ups();
}
std::span<const CableSpec> cable_catalog() {
  return cables();
}
std::span<const PcieSpec> pcie_catalog() {
  return pcies();
}

const GpuSpec& gpu_spec(std::string_view name, std::string_view field) {
  return gpus()[index_of(gpus(), name, field, "GPU")];
}
const NicSpec& nic_spec(std::string_view name, std::string_view field) {
  return nics()[index_of(nics(), name, field, "NIC")];
}
const SwitchSpec& switch_spec(std::string_view name, std::string_view field) {
  return switches()[index_of(switches(), name, field, "switch")];
}
const ScaleUpSpec& scale_up_spec(std::string_view name, std::string_view field) {
  return scale_ups()[index_of(scale_ups(), name, field, "scale-up system")];
}
const PcieSpec& pcie_spec(std::string_view name, std::string_view field) {
  return pcies()[index_of(pcies(), name, field, "PCIe link")];
}
// The DGX-1 V100 hybrid cube mesh (whitepaper WP-08437-002, figure "DGX-1 uses an 8-GPU hybrid
// cube-mesh interconnection network topology"; as `nvidia-smi topo -m` prints it on a DGX-1V or
// a p3.16xlarge: NV2 = two links, NV1 = one): GPUs 0-3 and 4-7 are two fully connected quads,
// each GPU tied to its twin in the other quad (0-4, 1-5, 2-6, 3-7). Every GPU has 2 peers on 2
// links, 2 on 1, and 3 with none: 6 links each.
const std::vector<std::vector<std::uint32_t>>& mesh_wiring(std::string_view scale_up) {
  static const std::vector<std::vector<std::uint32_t>> none;
  static const std::vector<std::vector<std::uint32_t>> dgx1 = {
      // 0  1  2  3  4  5  6  7
      {0, 1, 1, 2, 2, 0, 0, 0},  // GPU 0
      {1, 0, 2, 1, 0, 2, 0, 0},  // GPU 1
      {1, 2, 0, 2, 0, 0, 1, 0},  // GPU 2
      {2, 1, 2, 0, 0, 0, 0, 1},  // GPU 3
      {2, 0, 0, 0, 0, 1, 1, 2},  // GPU 4
      {0, 2, 0, 0, 1, 0, 2, 1},  // GPU 5
      {0, 0, 1, 0, 1, 2, 0, 2},  // GPU 6
      {0, 0, 0, 1, 2, 1, 2, 0},  // GPU 7
  };
  return scale_up == "dgx1_cube_mesh" ? dgx1 : none;
}

// NVIDIA DGX-1 with Tesla V100 system architecture whitepaper (WP-08437-002), figure "DGX-1
// PCIe topology": four PCIe switches, each joining two GPUs and one EDR NIC to a CPU's root
// complex by a Gen3 x16 link, two switches per CPU (GPUs 0-3 on CPU 0, 4-7 on CPU 1). The two
// Xeon E5-2698 v4 (Intel's product specification: 2 QPI links at 9.6 GT/s) are joined by QPI:
// a link moves 16 data bits per transfer each way, 9.6 x 2 = 19.2 GB/s per direction, 38.4 over
// both links. QPI's hop latency ~100 ns is an estimate (Intel publishes none per hop).
const HostPcieTree& host_pcie_tree(std::string_view scale_up) {
  static const HostPcieTree none;
  static const HostPcieTree dgx1{2, 2, Bandwidth::gBps(2 * 9.6 * 2), Time::ns(100)};
  return scale_up == "dgx1_cube_mesh" ? dgx1 : none;
}

// NVIDIA DGX A100 user guide (PCIe Gen4 switches to the ConnectX-6 NICs); DGX H100 / DGX B200
// datasheets (PCIe Gen5 to ConnectX-7); AMD Instinct MI300X OAM: PCIe Gen5 x16 host interface.
// Blackwell Ultra (B300, GB300) and ConnectX-8 are PCIe Gen6 (HGX B300 / GB300 NVL72
// datasheets; ConnectX-8 SuperNIC datasheet: PCIe Gen6 x16 with a built-in PCIe switch).
const PcieSpec& default_gpu_nic_pcie(std::string_view gpu) {
  // A100-based (SXM4 40 / 80 GB, A800, A100 PCIe) and L40S: PCIe Gen4 x16 (datasheets).
  if (gpu == "a100" || gpu == "a800" || gpu == "a100_pcie" || gpu == "a100_40gb" || gpu == "l40s" ||
      gpu == "a10g")
    return pcie_spec("gen4_x16");
  if (gpu == "b300" || gpu == "gb300") return pcie_spec("gen6_x16");
  if (gpu == "v100") return pcie_spec("gen3_x16");  // V100 SXM2 datasheet
  return pcie_spec("gen5_x16");
}
std::uint16_t gpu_index(std::string_view name) {
  return static_cast<std::uint16_t>(index_of(gpus(), name, "gpu", "GPU"));
}
std::uint16_t nic_index(std::string_view name) {
  return static_cast<std::uint16_t>(index_of(nics(), name, "nic", "NIC"));
}
std::uint16_t switch_index(std::string_view name) {
  return static_cast<std::uint16_t>(index_of(switches(), name, "switch", "switch"));
}
std::uint16_t scale_up_index(std::string_view name) {
  return static_cast<std::uint16_t>(index_of(scale_ups(), name, "scale_up", "scale-up system"));
}

CableChoice cable_for(LinkMedium medium, Bandwidth speed, double length_m) {
  if (medium == LinkMedium::NvLink || medium == LinkMedium::Pcie) return {};  // board traces
  const CableSpec* fastest = nullptr;
  for (const CableSpec& c : cables()) {
    if (c.medium != medium || c.reach_m < length_m) continue;
    if (c.max_speed >= speed) return {&c, 1};
    if (fastest == nullptr || c.max_speed > fastest->max_speed) fastest = &c;
  }
  if (fastest == nullptr) {
    throw InputError("cable", fmt::format("no {} cable or optic in the catalog reaches {} m",
                                          to_string(medium), length_m));
  }
  const double lanes =
      std::ceil(speed.bytes_per_second() / fastest->max_speed.bytes_per_second() - 1e-9);
  return {fastest, static_cast<std::uint32_t>(std::max(1.0, lanes))};
}

std::uint32_t switch_ports_per_cage(const SwitchSpec& sw) {
  // NVIDIA Quantum-2 QM9700 datasheet: 64 NDR 400G ports "in 32 OSFP cages" (each cage a
  // twin-port 2 x 400G module, NVIDIA LinkX MMA4Z00-NS 2xSR4 / MMS4X00-NM 2xDR4). Spectrum-4
  // SN5600 datasheet and Broadcom Tomahawk 5 brief: 64 x 800G OSFP cages, 128 x 400G by
  // splitting each cage's module into two 400G ports. NVIDIA Quantum-X800 Q3400 datasheet: 144
  // XDR 800G ports on 72 OSFP cages, a twin-port 1.6T module each (dr_1600g).
  for (const char* twin : {"qm9700", "sn5600_400g", "tomahawk5_400g", "q3400"}) {
    if (sw.name == twin) return 2;
  }
  return 1;
}

std::uint32_t switch_breakout(const SwitchSpec& sw, Bandwidth link) {
  // NVIDIA Quantum-2 QM9700 datasheet: "64 400Gb/s ports or 128 200Gb/s ports" on its 32 OSFP
  // cages; a twin-port 2 x 400G module drives four 200G ports through splitter cables (NVIDIA
  // LinkX MMA4Z00-NS with MFP7E20 1:2 fibre splitters to NDR200 ConnectX-7 ports). NVIDIA
  // Spectrum-4 SN5600 datasheet: 64 x 800GbE OSFP ports, "128 x 400GbE or 256 x 200GbE" by
  // splitting each port 2 x 400G or 4 x 200G; its 128 x 400G configuration (sn5600_400g) is the
  // 2-way split, so a 200G end takes half of one of those. Other switches' splits are not in
  // the catalog: one link end per port.
  static constexpr std::pair<std::string_view, std::uint32_t> kMostWays[] = {
      {"qm9700", 2}, {"sn5600", 4}, {"sn5600_400g", 2}};
  for (const auto& [name, most] : kMostWays) {
    if (sw.name != name) continue;
    for (std::uint32_t k = 2; k <= most; k *= 2) {
      if (link * static_cast<double>(k) == sw.port_speed) return k;
    }
  }
  return 1;
}

std::uint32_t splitter_legs(Bandwidth link) {
  // A split port's module (OSFP 800G 2xSR4 / 2xDR4) has one MPO-12 per 400G (4 lanes of 100G):
  // a 400G end takes that MPO's patch cord; two 200G ends share it through a 1:2 splitter fibre
  // (NVIDIA LinkX MFP7E20, 2 lanes each).
  return link * 2.0 == Bandwidth::gbps(400) ? 2 : 1;
}

const CableSpec& fibre_patch_cord() {
  // MPO-12/APC multimode or single-mode patch cord, ~$50 approximate street price (fs.com
  // list prices, 2024); passive. Long-haul fibre is leased and not priced here.
  static const CableSpec cord{"fibre_mpo",
                              "MPO fibre patch cord",
                              LinkMedium::Optical,
                              Bandwidth::gbps(800),
                              2'000,
                              0,
                              50,
                              0};
  return cord;
}

const CableSpec& splitter_fibre() {
  // NVIDIA LinkX MFP7E20-Nxxx: a multimode fibre splitter, one MPO-12/APC at the switch's 400G
  // port of a twin-port 2xSR4 module to two MPO-12/APC at 200G ports (ConnectX-7 NDR200);
  // passive. Price an estimate (no public list price): two patch cords and a fan-out, $100.
  static const CableSpec splitter{"fibre_mpo_splitter_1x2",
                                  "MPO 1:2 splitter fibre (estimate)",
                                  LinkMedium::Optical,
                                  Bandwidth::gbps(400),
                                  50,
                                  0,
                                  100,
                                  0};
  return splitter;
}

const CableSpec& splitter_dac(std::uint32_t legs) {
  // NVIDIA LinkX NDR splitter DACs (LinkX cables and transceivers catalogue, InfiniBand NDR
  // passive copper): MCP7Y00-N00x, twin-port 800G OSFP to 2 x 400G OSFP, and MCP7Y10-N00x,
  // twin-port 800G OSFP to 4 x 200G OSFP, the switch end in one cage, each leg into a
  // ConnectX-7 port; lengths as the straight NDR DACs (medium_for_length). Passive: power as
  // the DACs above. No public list price: ~$400 and ~$500 are estimates (an 800G DAC's $300
  // and the fan-out).
  static const CableSpec two{"dac_800g_2x400g",
                             "OSFP 800G to 2x400G passive copper splitter DAC (estimate)",
                             LinkMedium::CopperDac,
                             Bandwidth::gbps(400),
                             2,
                             0.1,
                             400,
                             0};
  static const CableSpec four{"dac_800g_4x200g",
                              "OSFP 800G to 4x200G passive copper splitter DAC (estimate)",
                              LinkMedium::CopperDac,
                              Bandwidth::gbps(200),
                              3,
                              0.1,
                              500,
                              0};
  return legs <= 2 ? two : four;
}

LinkMedium medium_for_length(Bandwidth speed, double length_m) {
  const double dac_reach = speed > Bandwidth::gbps(200) ? 2.0 : 3.0;  // LinkX DAC datasheets
  if (length_m <= dac_reach) return LinkMedium::CopperDac;
  if (length_m <= 7.0) return LinkMedium::ActiveElectrical;  // AEC reach, Credo HiWire
  if (length_m <= 2'000.0) return LinkMedium::Optical;       // 2xFR4 reach
  return LinkMedium::LongHaulFibre;
}

Bytes board_packet_payload(LinkMedium medium) {
  switch (medium) {
    // NVLink moves data in 128-bit (16 B) flits; a packet is a header flit and up to 16 data
    // flits, 256 B of payload at most (Foley and Danskin, "Ultra-Performance Pascal GPU and NVLink
    // Interconnect", IEEE Micro 37(2), 2017). NVIDIA has published no larger packet for later
    // generations. The graph's NVLink medium stands for AMD's xGMI too, whose packet format is
    // not public: it takes the same 256 B (an assumption, docs/packet-engine.md).
    case LinkMedium::NvLink:
      return Bytes(256);
    // PCIe's Max_Payload_Size is 128 to 4096 B per TLP, the smallest a path supports (PCI
    // Express Base Specification, Device Control register); NVIDIA's data-centre GPUs and PCIe
    // switches advertise 256 B (lspci "DevCap: MaxPayload 256 bytes").
    case LinkMedium::Pcie:
      return Bytes(256);
    case LinkMedium::CopperDac:
    case LinkMedium::ActiveElectrical:
    case LinkMedium::Optical:
    case LinkMedium::LongHaulFibre:
      break;
  }
  return Bytes(0);
}

const NicSpec& default_nic_for(const SwitchSpec& sw) {
  for (const NicSpec& n : nics()) {
    const bool same_fabric =
        sw.fabric == "infiniband" ? n.fabric == "infiniband" : n.fabric == "roce";
    if (same_fabric && n.port_speed == sw.port_speed) return n;
  }
  return nics()[index_of(nics(), "cx7_ndr", "nic", "NIC")];
}

}  // namespace lockstep
