// The hardware catalog's GPUs, each with its public source. Prices are approximate street
// prices (they move; they are here so that designs can be compared, not quoted). Figures marked
// "estimate" are not published by the vendor; the comment says how the value was chosen.
#include "catalog_tables.hpp"

namespace lockstep::catalog_tables {
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

}  // namespace

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

}  // namespace lockstep::catalog_tables
