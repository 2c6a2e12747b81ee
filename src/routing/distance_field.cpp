#include "distance_field.hpp"

namespace lockstep::routing_detail {

DistanceField::DistanceField(const Topology& topo)
    : topo_(topo),
      stamp_(topo.num_devices(), 0),
      dist_(topo.num_devices(), kUnreached),
      chain_(topo.num_devices(), 0) {
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
  visit(dst, 0, true);
}

void DistanceField::visit(DeviceId v, std::uint32_t d, bool chain) {
  if (stamp_[v] != stamp_now_) {
    stamp_[v] = stamp_now_;
    dist_[v] = d;
    chain_[v] = chain ? 1 : 0;
    queue_.push_back(v);
  } else if (dist_[v] == d && chain) {
    chain_[v] = 1;  // another equally short way in, this one through GPUs
  }
}

bool DistanceField::reach(DeviceId dst, DeviceId from) {
  if (dst != dst_ || stamp_now_ == 0) restart(dst);
  // Expand until `from` is known and every device of the layer before it has been expanded
  // (so its flags and all its equal-cost successors are final).
  while (head_ < queue_.size()) {
    const DeviceId w = queue_[head_];
    const std::uint32_t dw = dist_[w];
    if (stamp_[from] == stamp_now_ && dw + 1 > dist_[from]) break;
    ++head_;
    const bool w_gpu_relay = w != dst_ && is_gpu(w);
    if (w_gpu_relay && !chain_[w]) continue;  // a GPU that cannot relay: an endpoint only
    for (const Port& p : topo_.ports(w)) {
      const DeviceId v = p.peer;
      if (w_gpu_relay && !is_gpu(v)) continue;
      visit(v, dw + 1, is_gpu(v) && (w == dst_ || (is_gpu(w) && chain_[w])));
    }
  }
  return stamp_[from] == stamp_now_;
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
