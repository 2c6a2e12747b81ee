#include "path_cache.hpp"

#include <bit>

#include "lockstep/core/rng.hpp"

namespace lockstep::flow_detail {

std::size_t DeviceKeyHash::operator()(const DeviceKey& k) const {
  return mix64((static_cast<std::uint64_t>(k.src) << 32 | k.dst) ^ mix64(k.label));
}

namespace {

std::uint64_t hash_of(const std::vector<PathShare>& paths) {
  std::uint64_t h = mix64(paths.size());
  for (const PathShare& share : paths) {
    h = mix64(h ^ std::bit_cast<std::uint64_t>(share.fraction));
    for (const DirLinkId l : share.hops) h = mix64(h ^ l);
  }
  return h;
}

bool same(const std::vector<PathShare>& a, const std::vector<PathShare>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t s = 0; s < a.size(); ++s)
    if (a[s].fraction != b[s].fraction || a[s].hops != b[s].hops) return false;
  return true;
}

}  // namespace

const std::vector<PathShare>& PathCache::get(DeviceId src, DeviceId dst, std::uint64_t label) {
  const auto [it, inserted] = index_.try_emplace(DeviceKey{src, dst, label}, 0);
  if (!inserted) return distinct_[it->second];
  router_.route(FlowKey{src, dst, label}, nullptr, scratch_);
  const std::uint64_t h = hash_of(scratch_);
  for (auto [d, end] = by_content_.equal_range(h); d != end; ++d) {
    if (same(distinct_[d->second], scratch_)) {
      it->second = d->second;
      return distinct_[d->second];
    }
  }
  it->second = static_cast<std::uint32_t>(distinct_.size());
  distinct_.push_back(scratch_);
  by_content_.emplace(h, it->second);
  return distinct_.back();
}

}  // namespace lockstep::flow_detail
