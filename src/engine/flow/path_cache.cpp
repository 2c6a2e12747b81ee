#include "path_cache.hpp"

#include "lockstep/core/rng.hpp"

namespace lockstep::flow_detail {

std::size_t DeviceKeyHash::operator()(const DeviceKey& k) const {
  return mix64((static_cast<std::uint64_t>(k.src) << 32 | k.dst) ^ mix64(k.label));
}

const std::vector<PathShare>& PathCache::get(DeviceId src, DeviceId dst, std::uint64_t label) {
  auto [it, inserted] = paths_.try_emplace(DeviceKey{src, dst, label});
  if (inserted) router_.route(FlowKey{src, dst, label}, nullptr, it->second);
  return it->second;
}

}  // namespace lockstep::flow_detail
