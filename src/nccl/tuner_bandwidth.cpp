// The bandwidth NCCL's tuner ranks the tree with (tuning.cc ncclTopoTuneModel), from the tree
// graph NCCL's search builds (search.cc ncclTopoCompute), docs/nccl-model.md "How NCCL ranks
// the tree". The tree's predicted time stays the model's own (tree_cost): this is only what
// NCCL's formula compares.
#include <algorithm>

#include "cost.hpp"

namespace lockstep {

std::uint32_t tree_graph_channels(const NcclCluster& c) {
  // init.cc: the tree graph is searched with minChannels = maxChannels = the ring graph's
  // nChannels, the channels before connect.cc duplicates them.
  return std::max(1u, c.max_channels() / nccl::kChannelDuplication);
}

double tree_graph_intra_speed(const NcclCluster& c) {
  const double inter = c.net_channel_GBps();
  if (c.nodes > 2) return inter;
  // search.cc, pass 2, "increase bwIntra for trees (2 nodes or collnet)": from the NIC's speed
  // the search tries the next entry of the inter-node speed array while bwIntra < 2 bwInter and
  // the last try found the same channels. A channel's chain charges bwIntra to the NVLink (or
  // PCIe) link of each GPU that forwards to another, g - 1 of the g: over the channels, whose
  // chains start at different GPUs, a GPU's link carries channels x (g - 1) / g of them.
  const double g = c.gpus_per_node;
  const double per_gpu = tree_graph_channels(c) * (g - 1) / g;
  double speed = inter;
  while (speed < 2 * inter) {
    const double next = nccl::net_search_speed_above(c.generation, speed);
    if (!(next > speed) || next * per_gpu > c.intra_GBps + 1e-9) break;
    speed = next;
  }
  return speed;
}

double tree_tuner_algbw_GBps(const NcclCluster& c, nccl::Proto p) {
  // tuning.cc: bw = nNodes <= 2 ? bwIntra : bwInter; busBw = nChannels x bw; then, in order,
  // the all-reduce's min(busBw x 0.92, nChannels x perChMaxTreeBw), LL's min(busBw / 3.8,
  // llMaxBw), LL128's min(busBw x 120/128, nChannels x perChMaxTreeLL128Bw); the tree's bus
  // bandwidth becomes algorithm bandwidth at a flat 0.5.
  const double ch = tree_graph_channels(c);
  double bus = ch * tree_graph_intra_speed(c);
  bus = std::min(bus * nccl::kTreeSimpleEfficiency,
                 ch * nccl::tree_simple_per_channel_bw(c.generation, c.nodes));
  if (p == nccl::Proto::LL)
    bus = std::min(bus / nccl::kTreeLLDivisor, nccl::ll_max_bw(c.generation, c.nodes));
  if (p == nccl::Proto::LL128) {
    const double f = c.nodes == 1 ? nccl::kTreeLL128SingleNode : nccl::kTreeLL128MultiNode;
    bus = std::min(bus * f, ch * nccl::tree_ll128_per_channel_bw(c.generation, c.nodes));
  }
  return bus * 0.5;
}

}  // namespace lockstep
