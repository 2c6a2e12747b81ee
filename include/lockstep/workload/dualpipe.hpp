#pragma once
// DeepSeek-V3's DualPipe (arXiv:2412.19437, section 3.2.1, Table 2): a bidirectional pipeline
// whose ranks hold two stages (stage s and stage pp - 1 - s, two copies of the parameters), feed
// micro-batches from both ends, and run a forward chunk of one direction beside a backward chunk
// of the other so that each one's all-to-all and pipeline transfers hide behind the other's
// compute. docs/training.md, "DualPipe".
#include <cstdint>

#include "lockstep/core/units.hpp"

namespace lockstep {

struct TrainBreakdown;

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

/// DualPipe's iteration from the simulated 1F1B step's mean breakdown over m micro-batches per
/// replica on pp stages: each rank still runs m forward and m backward chunks (C = compute / m
/// per pair), now in pairs whose all-to-all (E = ep / m per pair) hides behind the pair's
/// compute, F&B = dualpipe_pair(C, E, comm_sm_share); what F&B adds to C counts as exposed EP;
/// the bubble is Table 2's with B and W the shares of C; TP, CP, PP, DP and imbalance are kept
/// as simulated.
TrainBreakdown dualpipe_breakdown(const TrainBreakdown& one_f_one_b, std::uint64_t micro_batches,
                                  std::uint32_t pp, ChunkShares shares, double comm_sm_share = 0);

}  // namespace lockstep
