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

const std::uint32_t* PathCache::find(DeviceId src, DeviceId dst, std::uint64_t label) const {
  if (label > 0xFFFFFFFFu) {
    const auto it = wide_.find(DeviceKey{src, dst, label});
    return it == wide_.end() ? nullptr : &it->second;
  }
  const std::uint64_t ends = static_cast<std::uint64_t>(src) << 32 | dst;
  const auto lab = static_cast<std::uint32_t>(label);
  const std::size_t mask = slots_.size() - 1;
  for (std::size_t i = mix64(ends ^ mix64(lab)) & mask;; i = (i + 1) & mask) {
    const Slot& s = slots_[i];
    if (s.id == kEmpty) return nullptr;
    if (s.ends == ends && s.label == lab) return &s.id;
  }
}

void PathCache::insert(DeviceId src, DeviceId dst, std::uint64_t label, std::uint32_t id) {
  if (label > 0xFFFFFFFFu) {
    wide_.emplace(DeviceKey{src, dst, label}, id);
    return;
  }
  if (4 * (used_ + 1) > 3 * slots_.size()) grow();
  const std::uint64_t ends = static_cast<std::uint64_t>(src) << 32 | dst;
  const auto lab = static_cast<std::uint32_t>(label);
  const std::size_t mask = slots_.size() - 1;
  std::size_t i = mix64(ends ^ mix64(lab)) & mask;
  while (slots_[i].id != kEmpty) i = (i + 1) & mask;
  slots_[i] = Slot{ends, lab, id};
  ++used_;
}

void PathCache::grow() {
  std::vector<Slot> old(slots_.size() * 2, Slot{0, 0, kEmpty});
  old.swap(slots_);
  const std::size_t mask = slots_.size() - 1;
  for (const Slot& s : old) {
    if (s.id == kEmpty) continue;
    std::size_t i = mix64(s.ends ^ mix64(s.label)) & mask;
    while (slots_[i].id != kEmpty) i = (i + 1) & mask;
    slots_[i] = s;
  }
}

const std::vector<PathShare>& PathCache::get(DeviceId src, DeviceId dst, std::uint64_t label) {
  if (const std::uint32_t* id = find(src, dst, label)) return distinct_[*id];
  const std::uint32_t id = route(src, dst, label);
  insert(src, dst, label, id);
  return distinct_[id];
}

std::uint32_t PathCache::route(DeviceId src, DeviceId dst, std::uint64_t label) {
  router_.route(FlowKey{src, dst, label}, nullptr, scratch_);
  const std::uint64_t h = hash_of(scratch_);
  for (auto [d, end] = by_content_.equal_range(h); d != end; ++d)
    if (same(distinct_[d->second], scratch_)) return d->second;
  const auto id = static_cast<std::uint32_t>(distinct_.size());
  distinct_.push_back(scratch_);
  by_content_.emplace(h, id);
  return id;
}

}  // namespace lockstep::flow_detail
