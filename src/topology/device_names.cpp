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

std::string DeviceNames::describe(const Topology& topo, DeviceId d) const {
  const Device& dev = topo.device(d);
  const std::uint32_t ordinal = ordinal_[d];
  if (dev.kind != DeviceKind::Switch && dev.kind != DeviceKind::Gateway && dev.node != kNone) {
    // In a server: its node and its index there (a GPU's index is its rail on rail fabrics).
    if (dev.kind == DeviceKind::ScaleUpSwitch) return fmt::format("node {} nvswitch", dev.node);
    return fmt::format("node {} {} {}", dev.node, to_string(dev.kind), dev.local_index);
  }
  std::string prefix = classes_[class_of_[d]].prefix;
  if (dev.kind == DeviceKind::Switch && dev.tier > 2) prefix = fmt::format("tier {}", dev.tier);
  std::string out = fmt::format("{} {}", prefix, ordinal);
  if (dev.kind == DeviceKind::Switch && dev.tier == 0) {
    // A rail leaf: every NIC below it has the same index in its server.
    std::uint32_t rail = kNone;
    bool one_rail = true, any = false;
    for (const Port& p : topo.ports(d)) {
      const Device& peer = topo.device(p.peer);
      if (peer.kind != DeviceKind::Nic && peer.kind != DeviceKind::Gpu) continue;
      if (any && peer.local_index != rail) one_rail = false;
      rail = peer.local_index;
      any = true;
    }
    std::uint32_t nodes = 0;
    if (any && one_rail) {
      std::uint32_t last = kNone;
      for (const Port& p : topo.ports(d)) {
        const Device& peer = topo.device(p.peer);
        if ((peer.kind == DeviceKind::Nic || peer.kind == DeviceKind::Gpu) && peer.node != last) {
          last = peer.node;
          ++nodes;
        }
      }
    }
    if (any && one_rail && nodes > 1) out += fmt::format(" (rail {})", rail);
  }
  return out;
}

std::string DeviceNames::link_name(const Topology& topo, DirLinkId link) const {
  return describe(topo, topo.source(link)) + " -> " + describe(topo, topo.target(link));
}

}  // namespace lockstep
