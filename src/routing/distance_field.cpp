#include "distance_field.hpp"

#include <algorithm>

namespace lockstep::routing_detail {

DistanceField::Layout::Layout(const Topology& topo, bool transit)
    : gpu(topo.num_devices(), 0), gpu_transit(transit) {
  for (DeviceId d = 0; d < topo.num_devices(); ++d) {
    gpu[d] = topo.device(d).kind == DeviceKind::Gpu ? 1 : 0;
    for (const Port& p : topo.ports(d))
      port_latency.push_back(topo.link(Topology::link_of(p.out)).latency.picoseconds());
  }
}

DistanceField::DistanceField(const Topology& topo, std::shared_ptr<const Layout> layout)
    : topo_(topo),
      layout_(layout ? std::move(layout) : std::make_shared<const Layout>(topo)),
      first_port_(topo.num_devices() > 0 ? topo.ports(0).data() : nullptr),
      state_(topo.num_devices(), State{0, 0, 0, 0}) {
  queue_.reserve(64);
}

void DistanceField::restart(DeviceId dst) {
  dst_ = dst;
  if (++stamp_now_ == 0) {  // wrapped: clear the stamps once every 4 billion searches
    for (State& s : state_) s.stamp = 0;
    stamp_now_ = 1;
  }
  queue_.clear();
  head_ = 0;
  visit(dst, 0, true, 0);
}

void DistanceField::visit(DeviceId v, std::uint32_t d, bool chain, std::int64_t latency) {
  State& s = state_[v];
  chain = chain && layout_->gpu_transit;  // without transit no GPU relays (forwards())
  if (s.stamp != stamp_now_) {
    s.stamp = stamp_now_;
    s.dist = d;
    s.chain = chain ? 1 : 0;
    s.latency = latency;
    queue_.push_back(v);
  } else if (s.dist == d) {
    if (chain) s.chain = 1;  // another equally short way in, this one through GPUs
    s.latency = std::min(s.latency, latency);
  }
}

void DistanceField::expand_next() {
  const DeviceId w = queue_[head_++];
  if (!forwards(w)) return;
  const State& sw = state_[w];
  const std::uint32_t dw = sw.dist;
  const std::int64_t lw = sw.latency;
  const bool w_gpu = is_gpu(w);
  const bool w_gpu_relay = w != dst_ && w_gpu;
  const bool relays_chain = w == dst_ || (w_gpu && sw.chain);
  for (const Port& p : topo_.ports(w)) {
    const DeviceId v = p.peer;
    const bool v_gpu = is_gpu(v);
    if (w_gpu_relay && !v_gpu) continue;
    visit(v, dw + 1, v_gpu && relays_chain, lw + port_latency(p));
  }
}

bool DistanceField::reach(DeviceId dst, DeviceId from) {
  if (dst != dst_ || stamp_now_ == 0) restart(dst);
  // Expand until `from` is known. Its walk needs the distance, flags and latency of its next
  // hops, and of theirs: a device d hops away is stamped by a device of layer d - 1, once every
  // layer before that one is expanded, which makes those of layer d - 1 and below final (the
  // flags and latency of `from` itself, which its walk does not read, become final when its
  // layer's predecessors are expanded, as a later query through it needs).
  while (head_ < queue_.size() && state_[from].stamp != stamp_now_) {
    if (layer_starts_at_head() && pull(from)) break;
    expand_next();
  }
  return state_[from].stamp == stamp_now_;
}

bool DistanceField::layer_starts_at_head() const {
  return head_ == 0 || state_[queue_[head_ - 1]].dist < state_[queue_[head_]].dist;
}

// With head_ at the first device of layer L, every layer before L is expanded, so every device
// within L hops is stamped with its final distance, flags and latency. An unstamped `from` is
// then L + 1 hops away exactly when a device of layer L would step to it, and what expanding
// layer L would give it is what its own ports see there: visiting it from them gives the same
// distance, flags and least latency, and puts it first in layer L + 1 of the queue, which the
// expansion of layer L continues. Its walk needs no more: its next hops lie in layer L, whose
// flags and latencies the layer before set. (Expanding layer L would visit the whole next
// layer: towards a leaf of a 131,072-GPU rail fabric, every spine of every pod.)
bool DistanceField::pull(DeviceId from) {
  const std::uint32_t layer = state_[queue_[head_]].dist;
  const bool from_gpu = is_gpu(from);
  bool found = false;
  for (const Port& p : topo_.ports(from)) {
    const DeviceId w = p.peer;
    const State& sw = state_[w];
    if (sw.stamp != stamp_now_ || sw.dist != layer || !forwards(w)) continue;
    const bool w_gpu_relay = w != dst_ && is_gpu(w);
    if (w_gpu_relay && !from_gpu) continue;
    // The link's latency is the same both ways: the one from w to `from` is this port's.
    visit(from, layer + 1, from_gpu && (w == dst_ || (is_gpu(w) && sw.chain)),
          sw.latency + port_latency(p));
    found = true;
  }
  return found;
}

bool DistanceField::within(DeviceId dst, DeviceId from, std::uint32_t depth) {
  if (dst != dst_ || stamp_now_ == 0) restart(dst);
  while (head_ < queue_.size() && state_[queue_[head_]].dist < depth) expand_next();
  return dist(from) <= depth;
}

DistanceField::Gateway DistanceField::find_gateway(DeviceId dst, std::uint32_t max_depth,
                                                   std::size_t max_devices) {
  restart(dst);
  // Layer by layer: when layer `depth` is complete (the one before it expanded), count the
  // devices in it that forward.
  for (std::uint32_t depth = 0; depth <= max_depth && queue_.size() <= max_devices; ++depth) {
    DeviceId only = kNone;
    std::size_t forwarding = 0;
    for (std::size_t i = head_; i < queue_.size() && state_[queue_[i]].dist == depth; ++i)
      if (forwards(queue_[i])) ++forwarding, only = queue_[i];
    if (forwarding == 0) return {};
    if (depth > 0 && forwarding == 1 && !is_gpu(only)) {
      bool next_to_gpu = false;
      for (const Port& p : topo_.ports(only)) next_to_gpu = next_to_gpu || is_gpu(p.peer);
      if (!next_to_gpu) return {only, depth};
    }
    while (head_ < queue_.size() && state_[queue_[head_]].dist == depth) expand_next();
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
