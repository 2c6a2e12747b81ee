#pragma once
// Paths between devices for the flow engine (internal), cached across the attempts of one run
// (routing is deterministic: the same key gives the same paths whatever was asked before).
// Keys whose paths are the same (labels that hash alike, or a fabric with one shortest path, as
// a dragonfly's minimal routes) share one stored copy: a 576-GPU direct alltoall asks for 5.3 M
// keys over 16 channels but only 331 K distinct paths. So two keys have equal paths exactly when
// get() returns the same reference, which RouteTable uses to find channels of identical routes.
// Relies on the Router; owns the paths it has been asked for.
#include <cstdint>
#include <deque>
#include <unordered_map>
#include <vector>

#include "lockstep/routing/router.hpp"

namespace lockstep::flow_detail {

struct DeviceKey {
  DeviceId src, dst;
  std::uint64_t label;
  bool operator==(const DeviceKey&) const = default;
};
struct DeviceKeyHash {
  std::size_t operator()(const DeviceKey& k) const;
};

class PathCache {
 public:
  explicit PathCache(const Router& router) : router_(router) {}
  const std::vector<PathShare>& get(DeviceId src, DeviceId dst, std::uint64_t label);

 private:
  // Key -> distinct_: open addressing over 16-byte slots for labels below 2^32 (channels,
  // groups), which cost a third of the run in std::unordered_map's nodes at 5.3 M keys; a map
  // for the others.
  struct Slot {
    std::uint64_t ends;  // src << 32 | dst
    std::uint32_t label;
    std::uint32_t id;  // kEmpty: free
  };
  static constexpr std::uint32_t kEmpty = ~std::uint32_t{0};
  // The id stored for the key, or null.
  const std::uint32_t* find(DeviceId src, DeviceId dst, std::uint64_t label) const;
  void insert(DeviceId src, DeviceId dst, std::uint64_t label, std::uint32_t id);
  void grow();
  // Routes the key (which may throw: nothing is stored then) and returns its distinct_ index.
  std::uint32_t route(DeviceId src, DeviceId dst, std::uint64_t label);

  const Router& router_;
  std::vector<Slot> slots_ = std::vector<Slot>(1024, Slot{0, 0, kEmpty});
  std::size_t used_ = 0;
  std::unordered_map<DeviceKey, std::uint32_t, DeviceKeyHash> wide_;
  std::deque<std::vector<PathShare>> distinct_;                       // stable references
  std::unordered_multimap<std::uint64_t, std::uint32_t> by_content_;  // hash -> distinct_
  std::vector<PathShare> scratch_;
};

}  // namespace lockstep::flow_detail
