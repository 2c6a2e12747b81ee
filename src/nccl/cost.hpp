#pragma once
// Internal to the tuner: the cost of one (algorithm, protocol, channels) choice, split the way
// NCCL's model splits it. cost.cpp computes costs; tuner.cpp picks among them.
#include <cstdint>

#include "lockstep/nccl/tuner.hpp"

namespace lockstep {

struct Cost {
  double latency_us = 0;   // base + steps x per-step latency
  double transfer_us = 0;  // bytes / effective bandwidth
  double bus_GBps = 0;     // effective bandwidth of the transfer term
  double step_us = 0;      // per-step latency on the local path (flow engine overhead)
  double fill_us = 0;      // pipeline fill NCCL's formula leaves out (docs/nccl-model.md)
};

/// Channels NCCL runs for a message (enqueue.cc: fewer for small messages).
std::uint32_t pick_channels(std::uint32_t max_channels, Algorithm a, nccl::Proto p,
                            std::uint64_t bytes, std::uint32_t ranks);

Cost ring_cost(const NcclCluster& c, CollectiveOp op, double S, nccl::Proto p, std::uint32_t ch);
Cost tree_cost(const NcclCluster& c, double S, nccl::Proto p, std::uint32_t ch);
Cost nvls_cost(const NcclCluster& c, CollectiveOp op, double S);
Cost nvls_tree_cost(const NcclCluster& c, double S, std::uint32_t ch);
Cost collnet_cost(const NcclCluster& c, double S);
Cost pat_cost(const NcclCluster& c, double S, nccl::Proto p);
Cost halving_doubling_cost(const NcclCluster& c, double S, nccl::Proto p, std::uint32_t ch);
Cost direct_cost(const NcclCluster& c, CollectiveOp op, double S, nccl::Proto p);
// Algorithms NCCL does not have, and the latency SHARP's aggregation tree adds above a
// one-level (leaf) tree in us (cost_extra.cpp).
double sharp_depth_us(const NcclCluster& c);
Cost hierarchical_cost(const NcclCluster& c, double S);
Cost torus_ring_cost(const NcclCluster& c, CollectiveOp op, double S);
namespace nccl {
/// The next entry of the generation's inter-node speed array (search.cc) above `speed`, or
/// `speed` itself when none is above it: search.cc's pass 2 raising a tree's bwIntra
/// (constants.cpp, beside the arrays).
double net_search_speed_above(Generation g, double speed);
}  // namespace nccl

// The tree graph NCCL's search builds across nodes and the algorithm bandwidth NCCL's tuner
// ranks the tree with (GB/s; tuner_bandwidth.cpp).
std::uint32_t tree_graph_channels(const NcclCluster& c);
double tree_graph_intra_speed(const NcclCluster& c);
double tree_tuner_algbw_GBps(const NcclCluster& c, nccl::Proto p);
Cost alltoallv_cost(const NcclCluster& c, double S, nccl::Proto p, double skew);

}  // namespace lockstep
