#include "lockstep/topology/device_names.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

namespace lockstep {
namespace {

// Classes in the order errors list them: endpoints first, then the network outwards.
int class_rank(const Device& d) {
  switch (d.kind) {
    case DeviceKind::Gpu:
      return 0;
    case DeviceKind::Nic:
      return 1;
    case DeviceKind::Host:
      return 2;
    case DeviceKind::ScaleUpSwitch:
      return 3;
    case DeviceKind::Switch:
      return 4 + d.tier;
    case DeviceKind::Gateway:
      return 4 + 256;
  }
  return 1000;
}

std::string prefix_of(const Device& d) {
  if (d.kind != DeviceKind::Switch) return to_string(d.kind);
  if (d.tier <= 2) return switch_tier_name(d.tier);
  return fmt::format("tier{}_", d.tier);
}

}  // namespace

DeviceNames::DeviceNames(const Topology& topo)
    : class_of_(topo.num_devices(), 0), ordinal_(topo.num_devices(), 0) {
  std::vector<int> ranks;  // class_rank of each class
  auto class_for = [&](const Device& d) {
    const int r = class_rank(d);
    const auto it = std::find(ranks.begin(), ranks.end(), r);
    if (it != ranks.end()) return static_cast<std::uint32_t>(it - ranks.begin());
    ranks.push_back(r);
    classes_.push_back(Class{prefix_of(d), {}});
    return static_cast<std::uint32_t>(classes_.size() - 1);
  };
  auto add = [&](DeviceId id) {
    const std::uint32_t c = class_for(topo.device(id));
    class_of_[id] = c;
    ordinal_[id] = static_cast<std::uint32_t>(classes_[c].members.size());
    classes_[c].members.push_back(id);
  };
  for (DeviceId g : topo.gpus()) add(g);  // GPUs by rank
  for (DeviceId d = 0; d < topo.num_devices(); ++d)
    if (topo.device(d).kind != DeviceKind::Gpu) add(d);
  // List the classes in class_rank order (class_of_ indices follow the permutation).
  std::vector<std::uint32_t> order(classes_.size());
  for (std::uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](auto a, auto b) { return ranks[a] < ranks[b]; });
  std::vector<Class> sorted;
  std::vector<std::uint32_t> new_index(classes_.size());
  for (std::uint32_t i = 0; i < order.size(); ++i) {
    new_index[order[i]] = i;
    sorted.push_back(std::move(classes_[order[i]]));
  }
  classes_ = std::move(sorted);
  for (auto& c : class_of_) c = new_index[c];
}

std::string DeviceNames::name(DeviceId d) const {
  if (d >= class_of_.size()) return fmt::format("dev{}", d);
  return classes_[class_of_[d]].prefix + std::to_string(ordinal_[d]);
}

DeviceId DeviceNames::find(std::string_view name) const {
  std::size_t digits = name.size();
  while (digits > 0 && name[digits - 1] >= '0' && name[digits - 1] <= '9') --digits;
  const std::string_view prefix = name.substr(0, digits);
  const std::string_view number = name.substr(digits);
  std::uint32_t i = 0;
  const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), i);
  if (number.empty() || ec != std::errc() || end != number.data() + number.size()) return kNone;
  if (prefix == "dev") return i < class_of_.size() ? i : kNone;
  for (const Class& c : classes_)
    if (c.prefix == prefix) return i < c.members.size() ? c.members[i] : kNone;
  return kNone;
}

std::string DeviceNames::summary() const {
  std::string out;
  auto range = [&](const std::string& prefix, std::size_t count) {
    if (!out.empty()) out += ", ";
    out += count == 1 ? prefix + "0" : fmt::format("{0}0 .. {0}{1}", prefix, count - 1);
  };
  for (const Class& c : classes_) range(c.prefix, c.members.size());
  if (!class_of_.empty()) range("dev", class_of_.size());
  return out;
}

}  // namespace lockstep
