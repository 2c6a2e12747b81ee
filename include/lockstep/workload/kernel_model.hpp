#pragma once
// A per-operation kernel model of a transformer layer's forward and backward passes on one GPU
// (docs/kernel-model.md): each GEMM a roofline (FLOPs at the precision's dense peak against bytes
// at HBM bandwidth) times wave quantisation of its output tiles over the SMs times the fraction
// of the peak large GEMMs reach; the attention core at FlashAttention's published fraction of the
// BF16 peak with the causal mask's half of the FLOPs; normalisation, activation, rotary,
// residual, router and permutation kernels as bytes moved at HBM bandwidth. The GPU's figures
// come from the hardware catalog (KernelRates), each with its source.
#include <algorithm>
#include <cstdint>

#include "lockstep/topology/catalog.hpp"
#include "lockstep/workload/train_config.hpp"

namespace lockstep {

/// A GEMM kernel's output tile, rows x columns of C: cuBLAS's Hopper BF16 / FP8 kernels for
/// large GEMMs (sm90_xmma_gemm_..._tilesize128x256x64, as Nsight Systems names them; A100's
/// ampere_..._256x128 has the same area). Each tile is one thread block's work, one per SM.
inline constexpr double kGemmTileRows = 128, kGemmTileCols = 256;
/// FlashAttention-2 / -3 give each thread block 128 query rows of one head (head dim 128).
inline constexpr double kAttentionQueryBlock = 128;
/// Backward FLOPs of the attention core over its forward's: 5 matrix products (S recomputed,
/// dP, dV, dQ, dK) against 2; flash-attn's benchmarks count 2.5x (benchmark_flash_attention.py).
inline constexpr double kAttentionBackwardFlops = 2.5;

/// One GEMM C[m x n] = A[m x k] B[k x n] (or `groups` of them in one grouped launch).
struct GemmTime {
  double flops = 0;
  double tiles = 0;    // output tiles of all groups
  double waves = 0;    // ceil(tiles / SMs)
  double compute = 0;  // s: flops / (peak x achievable x tiles / (waves x SMs))
  double memory = 0;   // s: A, B and C once through HBM
  double seconds() const { return std::max(compute, memory); }
};

/// Kernel time of one layer on one TP rank for one micro-batch, seconds; the attention block
/// (norm, QKV, rotary, core, output projection, residual) includes the core.
struct LayerKernelTimes {
  double attention_fwd = 0, core_fwd = 0, mlp_fwd = 0;
  double attention_bwd = 0, core_bwd = 0, mlp_bwd = 0;
  double forward() const { return attention_fwd + mlp_fwd; }
  double backward() const { return attention_bwd + mlp_bwd; }
};

class KernelModel {
 public:
  /// `bf16_peak`: the GPU's dense BF16 FLOP/s (or a peak_tflops override); `gemm_peak`: the
  /// weight GEMMs' at `precision` (ignored at BF16). InputError("gpu") when the catalog has no
  /// kernel rates.
  KernelModel(const GpuSpec& gpu, double bf16_peak, double gemm_peak, Precision precision);

  /// `weights`: a layer's weight GEMM (at the precision), else BF16.
  GemmTime gemm(double m, double n, double k, bool weights, double groups = 1) const;
  /// The forward GEMM's time plus its backward's data-gradient (m x k = m x n . n x k) and
  /// weight-gradient (k x n = k x m . m x n) GEMMs, into `fwd` and `bwd`; at FP8 / FP4 with the
  /// casts of the input and the output gradient.
  void gemm_pass(double m, double n, double k, bool weights, double& fwd, double& bwd,
                 double groups = 1) const;
  /// Attention core, forward: `sequences` x `heads` of `queries` rows each attending to `keys`
  /// keys on average, head sizes qk and v.
  double attention_forward(double sequences, double heads, double queries, double keys, double qk,
                           double v) const;
  /// Seconds to move `bytes` through HBM once.
  double memory(double bytes) const;
  /// The HBM bandwidth streaming kernels reach, bytes/s: the catalog's fraction of the peak.
  double hbm() const { return rates_.hbm_bandwidth.bytes_per_second() * rates_.hbm_fraction; }

  /// Layer `layer` of `c` on one TP rank, `tokens` tokens of a micro-batch (one CP rank's).
  LayerKernelTimes layer(const TrainConfig& c, std::uint32_t layer, double tokens) const;
  /// The output layer (final norm, LM-head GEMM at BF16, cross-entropy), forward and backward.
  void head(const TrainConfig& c, double tokens, double& fwd, double& bwd) const;
  /// The input embedding's lookup (forward) and gradient scatter into FP32 (backward).
  void embedding(const TrainConfig& c, double tokens, double& fwd, double& bwd) const;
  /// One multi-token-prediction module's own kernels besides its transformer block and the
  /// shared head (DeepSeek-V3, arXiv:2412.19437 section 2.2): the shared embedding's lookup of
  /// the next tokens, the RMSNorms of the hidden state and of that embedding, their
  /// concatenation and the projection M (2 hidden -> hidden, a layer weight at the precision).
  void mtp_module(const TrainConfig& c, double tokens, double& fwd, double& bwd) const;

 private:
  KernelRates rates_;
  double bf16_peak_, gemm_peak_, gemm_bytes_, gemm_fraction_ = 0;
  bool low_precision_;  // FP8 / FP4 weight GEMMs: their inputs are cast (and transposed)
};

}  // namespace lockstep
