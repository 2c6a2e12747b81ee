#pragma once
// DeepSeek-V3's DualPipe (arXiv:2412.19437, section 3.2.1, Table 2): a bidirectional pipeline
// whose ranks hold two stages (stage s and stage pp - 1 - s, two copies of the parameters), feed
// micro-batches from both ends, and run a forward chunk of one direction beside a backward chunk
// of the other so that each one's all-to-all and pipeline transfers hide behind the other's
// compute. docs/training.md, "DualPipe".
#include <array>
#include <cstdint>
#include <vector>

#include "lockstep/core/units.hpp"

namespace lockstep {

struct TrainBreakdown;

/// A pass of DualPipe's schedule: a forward, a full backward, a backward for the inputs only
/// (its weight gradients deferred, zero-bubble style) or those deferred weight gradients.
enum class DualPass : std::uint8_t { Forward, Backward, BackwardInput, Weight };

/// A pass of `micro` (counted per direction, 0 .. m / 2 - 1) of `direction`: 0 enters at rank 0
/// (rank s runs stage s), 1 at rank pp - 1 (rank s runs stage pp - 1 - s).
struct DualPipeUnit {
  DualPass pass = DualPass::Forward;
  std::uint32_t direction = 0;
  std::uint32_t micro = 0;
};

/// One step of a rank's schedule: a pass, or a forward and a backward of the other direction run
/// as an overlapped pair (the forward first).
struct DualPipeStep {
  DualPipeUnit first;
  bool paired = false;
  DualPipeUnit second;
};

/// The order of rank `rank` of `pp` (even) under DualPipe with `micro_batches` (even, at least
/// 2 pp) per replica, half from each end, as DeepSeek's dualpipe.py (DualPipe.step) runs it in
/// eight phases, from the rank's near end (chunk 0) and far end (chunk 1): with h = min(rank,
/// pp - 1 - rank), (pp / 2 - h - 1) x 2 forwards of chunk 0; h + 1 pairs of forwards chunk 0,
/// chunk 1; pp / 2 - h - 1 times B1 (inputs only), W, F1; m / 2 - pp + h + 1 times the pairs
/// F0&B1, F1&B0 (on a middle rank the first F0, B1 unpaired); pp / 2 - h - 1 times B1, F1&B0;
/// h + 1 times B1, B0, the weight gradients deferred from the middle one on; pp / 2 - h - 1
/// times W, B0 (inputs only); h + 1 W. Deferred weight passes run first in, first out.
std::vector<DualPipeStep> dualpipe_order(std::uint32_t pp, std::uint64_t micro_batches,
                                         std::uint32_t rank);

/// The most activation bytes rank `rank` holds at once over its dualpipe_order, each forward of
/// direction d keeping `per_micro_batch[d]` (its stage's activations of one micro-batch) until
/// the pass that frees them: a full backward, or the weight pass a backward split off (the
/// deferred weight gradients read the inputs the forward saved; Qi et al. 2023, "Zero Bubble
/// Pipeline Parallelism", arXiv:2311.09241, section 2). In a pair the forward's bytes count
/// before the backward's are freed (they run block by block: an upper bound by at most one
/// micro-batch's chunk). With equal stages: pp + 1 micro-batches on every rank (DeepSeek-V3's
/// Table 2).
double dualpipe_activation_peak(std::uint32_t pp, std::uint64_t micro_batches, std::uint32_t rank,
                                const std::array<double, 2>& per_micro_batch);

/// Table 2's bubble of DualPipe: (pp / 2 - 1) (F&B + B - 3W), with F&B the time of a forward and
/// a backward chunk run together, B a full backward chunk and W its weight-gradient part. Never
/// below zero. pp must be even.
Time dualpipe_bubble(std::uint32_t pp, Time f_and_b, Time b, Time w);

/// The 1F1B bubble of the same table, (pp - 1)(F + B), for comparison.
Time one_f_one_b_bubble(std::uint32_t pp, Time f, Time b);

/// The shares of a chunk's compute that are its full backward (B) and its weight gradients (W),
/// from the plan's kernel times (docs/training.md, "DualPipe").
struct ChunkShares {
  double backward = 2.0 / 3.0;
  double weight_grad = 1.0 / 3.0;
};

/// A pair's time: its all-to-all E beside its compute C, which runs on the SMs the
/// communication kernels leave (a fraction `comm_sm_share` held while E runs): E when C / (1 -
/// share) ends within E, else E plus what is left at full speed, C + share x E; in all,
/// max(E, C + share x E), max(C, E) when communication takes no SMs.
Time dualpipe_pair(Time compute, Time all_to_all, double comm_sm_share);

/// Table 2's closed form, kept as a check on the simulated schedule (the step runs
/// dualpipe_order as programs): DualPipe's iteration from a 1F1B step's mean breakdown over m
/// micro-batches per replica on pp stages: each rank still runs m forward and m backward chunks
/// (C = compute / m per pair), now in pairs whose all-to-all (E = ep / m per pair) hides behind
/// the pair's compute, F&B = dualpipe_pair(C, E, comm_sm_share); what F&B adds to C counts as
/// exposed EP; the bubble is Table 2's with B and W the shares of C; TP, CP, PP, DP and
/// imbalance are kept as simulated.
TrainBreakdown dualpipe_breakdown(const TrainBreakdown& one_f_one_b, std::uint64_t micro_batches,
                                  std::uint32_t pp, ChunkShares shares, double comm_sm_share = 0);

}  // namespace lockstep
