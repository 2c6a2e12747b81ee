#pragma once
// Paths between devices for the flow engine (internal), cached across the attempts of one run
// (routing is deterministic: the same key gives the same paths whatever was asked before).
// Relies on the Router; owns the paths it has been asked for.
#include <cstdint>
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
  const Router& router_;
  std::unordered_map<DeviceKey, std::vector<PathShare>, DeviceKeyHash> paths_;
};

}  // namespace lockstep::flow_detail
