#include "distance_field.hpp"

#include <algorithm>

namespace lockstep::routing_detail {

DistanceField::DistanceField(const Topology& topo)
    : topo_(topo),
      stamp_(topo.num_devices(), 0),
      dist_(topo.num_devices(), kUnreached),
      chain_(topo.num_devices(), 0),
      latency_(topo.num_devices(), 0) {
  queue_.reserve(64);
}

void DistanceField::restart(DeviceId dst) {
  dst_ = dst;
  if (++stamp_now_ == 0) {  // wrapped: clear the stamps once every 4 billion searches
    std::fill(stamp_.begin(), stamp_.end(), 0);
    stamp_now_ = 1;
  }
  queue_.clear();
  head_ = 0;
  visit(dst, 0, true, 0);
}

void DistanceField::visit(DeviceId v, std::uint32_t d, bool chain, std::int64_t latency) {
  if (stamp_[v] != stamp_now_) {
    stamp_[v] = stamp_now_;
    dist_[v] = d;
    chain_[v] = chain ? 1 : 0;
    latency_[v] = latency;
    queue_.push_back(v);
  } else if (dist_[v] == d) {
    if (chain) chain_[v] = 1;  // another equally short way in, this one through GPUs
    latency_[v] = std::min(latency_[v], latency);
  }
}

void DistanceField::expand_next() {
  const DeviceId w = queue_[head_++];
  if (!forwards(w)) return;
  const std::uint32_t dw = dist_[w];
  const bool w_gpu_relay = w != dst_ && is_gpu(w);
  for (const Port& p : topo_.ports(w)) {
    const DeviceId v = p.peer;
    if (w_gpu_relay && !is_gpu(v)) continue;
    visit(v, dw + 1, is_gpu(v) && (w == dst_ || (is_gpu(w) && chain_[w])),
          latency_[w] + topo_.link(Topology::link_of(p.out)).latency.picoseconds());
  }
}

bool DistanceField::reach(DeviceId dst, DeviceId from) {
  if (dst != dst_ || stamp_now_ == 0) restart(dst);
  // Expand until `from` is known and every device of the layer before it has been expanded
  // (so its flags and all its equal-cost successors are final).
  while (head_ < queue_.size()) {
    if (stamp_[from] == stamp_now_ && dist_[queue_[head_]] + 1 > dist_[from]) break;
    expand_next();
  }
  return stamp_[from] == stamp_now_;
}

bool DistanceField::within(DeviceId dst, DeviceId from, std::uint32_t depth) {
  if (dst != dst_ || stamp_now_ == 0) restart(dst);
  while (head_ < queue_.size() && dist_[queue_[head_]] < depth) expand_next();
  return stamp_[from] == stamp_now_ && dist_[from] <= depth;
}

DistanceField::Gateway DistanceField::find_gateway(DeviceId dst, std::uint32_t max_depth,
                                                   std::size_t max_devices) {
  restart(dst);
  // Layer by layer: when layer `depth` is complete (the one before it expanded), count the
  // devices in it that forward.
  for (std::uint32_t depth = 0; depth <= max_depth && queue_.size() <= max_devices; ++depth) {
    DeviceId only = kNone;
    std::size_t forwarding = 0;
    for (std::size_t i = head_; i < queue_.size() && dist_[queue_[i]] == depth; ++i)
      if (forwards(queue_[i])) ++forwarding, only = queue_[i];
    if (forwarding == 0) return {};
    if (depth > 0 && forwarding == 1 && !is_gpu(only)) {
      bool next_to_gpu = false;
      for (const Port& p : topo_.ports(only)) next_to_gpu = next_to_gpu || is_gpu(p.peer);
      if (!next_to_gpu) return {only, depth};
    }
    while (head_ < queue_.size() && dist_[queue_[head_]] == depth) expand_next();
  }
  return {};
}

bool DistanceField::may_step(DeviceId u, DeviceId v, bool u_is_start) const {
  if (dist(v) == kUnreached || dist(v) + 1 != dist(u)) return false;
  if (v == dst_) return true;
  const bool u_gpu = is_gpu(u);
  if (u_gpu && !u_is_start && !is_gpu(v)) return false;  // a relaying GPU hands on to GPUs only
  if (is_gpu(v)) return u_gpu && gpu_chain(v);
  return true;
}

}  // namespace lockstep::routing_detail
