// Builder "from_file": any irregular topology listed as devices and links, inline under
// `cluster:` or in a YAML or JSON file named by `path:` (relative to the file that names it).
// Every problem (duplicate id, link to an unknown device, self-link, zero bandwidth, a graph in
// several pieces) is an InputError at the file:line:column of the offending entry.
// The format is documented in docs/scenario.md; `lockstep topo --emit` writes it.
#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>

#include "graph_figures.hpp"
#include "length_arg.hpp"
#include "lockstep/config/args_file.hpp"
#include "lockstep/topology/builder.hpp"
#include "lockstep/topology/catalog.hpp"
#include "lockstep/topology/inventory_count.hpp"
#include "registrars.hpp"

namespace lockstep::builders {
namespace {

// Same order as DeviceKind and LinkMedium, so a choice's index converts directly.
const std::vector<std::string> kKinds{"gpu", "nic", "host", "scale_up_switch", "switch", "gateway"};
const std::vector<std::string> kMedia{
    "nvlink", "pcie", "copper_dac", "active_electrical", "optical", "long_haul_fibre", "cpu_link"};
const std::vector<std::string> kFabrics{"infiniband", "roce", "ethernet", "ultra_ethernet",
                                        "efa",        "tcp",  "slingshot"};
const std::vector<std::string> kScaleUps{"nvswitch", "nvl72", "nvlink_domain",
                                         "mesh",     "pcie",  "none"};

std::size_t index_of(const std::vector<std::string>& list, const std::string& value) {
  return static_cast<std::size_t>(std::find(list.begin(), list.end(), value) - list.begin());
}

// Catalog lookups report their own field name; re-throw them at the node that named the part.
template <typename F>
auto at_node(const ArgNode& node, F lookup) {
  try {
    return lookup();
  } catch (const InputError& e) {
    node.fail(e.bare_message());
  }
}

const ArgNode& require_list(const ArgNode& scope, const std::string& key) {
  const ArgNode& list = scope.at(key);
  if (list.kind() != ArgNode::Kind::List) {
    list.fail(fmt::format("expected a list of {}", key));
  }
  if (list.items().empty()) list.fail(fmt::format("the list of {} is empty", key));
  return list;
}

const std::string& require_text(const ArgNode& node) {
  if (node.kind() != ArgNode::Kind::Scalar || node.text().empty()) {
    node.fail("expected a device id");
  }
  return node.text();
}

ClusterTraits read_traits(const ArgNode* traits) {
  ClusterTraits t;
  t.nic = "cx7_ndr";
  t.switch_model = "qm9700";
  if (traits == nullptr) return t;
  if (traits->kind() != ArgNode::Kind::Map) traits->fail("expected a map of cluster traits");
  if (const ArgNode* gpu = traits->find("gpu")) {
    t.gpu = at_node(*gpu, [&] { return gpu_spec(gpu->text()).name; });
  }
  if (const ArgNode* nic = traits->find("nic")) {
    t.nic = at_node(*nic, [&] { return nic_spec(nic->text()).name; });
  }
  if (const ArgNode* sw = traits->find("switch")) {
    t.switch_model = at_node(*sw, [&] { return switch_spec(sw->text()).name; });
  }
  if (const ArgNode* fabric = traits->find("fabric")) t.fabric = fabric->as_choice(kFabrics);
  if (const ArgNode* scale_up = traits->find("scale_up"))
    t.scale_up = scale_up->as_choice(kScaleUps);
  t.gpus_per_node = static_cast<std::uint32_t>(traits->get_int("gpus_per_node", 0, 0, 1 << 20));
  t.nics_per_node = static_cast<std::uint32_t>(traits->get_int("nics_per_node", 0, 0, 1 << 20));
  t.sharp = traits->get_bool("sharp", false);
  t.nvls = traits->get_bool("nvls", false);
  if (const ArgNode* routing = traits->find("routing"))
    t.routing = routing->as_choice(routing_policy_names());
  t.qps_per_connection =
      static_cast<std::uint32_t>(traits->get_int("qps_per_connection", 0, 1, 128));
  traits->check_all_used();
  return t;
}

struct LinkDefaults {
  std::optional<Bandwidth> bandwidth;
  std::optional<Time> latency;
  std::optional<LinkMedium> medium;
  std::optional<double> length_m;
};

LinkDefaults read_link_defaults(const ArgNode* node) {
  LinkDefaults d;
  if (node == nullptr) return d;
  if (node->kind() != ArgNode::Kind::Map) node->fail("expected a map of link settings");
  if (const ArgNode* bw = node->find("bandwidth")) d.bandwidth = bw->as_bandwidth();
  if (const ArgNode* lat = node->find("latency")) d.latency = lat->as_time();
  if (const ArgNode* m = node->find("medium")) {
    d.medium = static_cast<LinkMedium>(index_of(kMedia, m->as_choice(kMedia)));
  }
  if (const ArgNode* len = node->find("length")) d.length_m = length_metres(*len);
  node->check_all_used();
  return d;
}

class GraphReader {
 public:
  GraphReader(const ArgNode& scope, const ClusterTraits& traits, LinkDefaults defaults)
      : scope_(scope), traits_(traits), defaults_(defaults) {}

  Topology read(const std::string& name) {
    TopologyBuilder tb(name);
    const ArgNode& devices = require_list(scope_, "devices");
    for (const ArgNode& d : devices.items()) add_device(tb, d);
    if (gpu_count_ == 0) devices.fail("no device has kind 'gpu'");
    const ArgNode& links = require_list(scope_, "links");
    for (const ArgNode& l : links.items()) add_link(tb, l);
    check_connected(tb.num_devices());
    if (const ArgNode* managed = scope_.find("management_links")) {
      for (const ArgNode& m : optional_list(*managed).items()) add_management_link(tb, m);
    }
    if (const ArgNode* cages = scope_.find("cages")) {
      for (const ArgNode& c : optional_list(*cages).items()) add_cage(tb, c);
    }
    ClusterTraits traits = traits_;
    if (traits.gpus_per_node == 0) traits.gpus_per_node = uniform_gpus_per_node();
    tb.set_traits(traits);
    return std::move(tb).build();
  }

 private:
  void add_device(TopologyBuilder& tb, const ArgNode& d) {
    if (d.kind() != ArgNode::Kind::Map) d.fail("expected a map with an id and a kind");
    const ArgNode& id_node = d.at("id");
    const std::string& id = require_text(id_node);
    Device dev;
    dev.kind = static_cast<DeviceKind>(index_of(kKinds, d.at("kind").as_choice(kKinds)));
    if (const ArgNode* node = d.find("node")) {
      dev.node = static_cast<std::uint32_t>(node->as_int(0, 1 << 30));
    }
    dev.tier = static_cast<std::uint8_t>(d.get_int("tier", 0, 0, 7));
    dev.site = static_cast<std::uint32_t>(d.get_int("site", 0, 0, 1 << 20));
    const ArgNode* model = d.find("model");
    dev.model = model_index(dev.kind, model);
    if (dev.kind == DeviceKind::Switch || dev.kind == DeviceKind::Gateway) {
      dev.radix = static_cast<std::uint16_t>(switch_catalog()[dev.model].radix);
    }
    if (const ArgNode* radix = d.find("radix")) {
      dev.radix = static_cast<std::uint16_t>(radix->as_int(1, 65535));
    }
    // GPUs and NICs are numbered within their node in listing order unless told otherwise.
    const auto counter_key = std::make_pair(dev.node, static_cast<int>(dev.kind));
    if (const ArgNode* local = d.find("local_index")) {
      dev.local_index = static_cast<std::uint32_t>(local->as_int(0, 1 << 20));
    } else {
      dev.local_index = next_local_[counter_key];
    }
    next_local_[counter_key] = std::max(next_local_[counter_key], dev.local_index + 1);
    d.check_all_used();

    const auto [it, inserted] = ids_.emplace(id, static_cast<DeviceId>(id_nodes_.size()));
    if (!inserted) {
      id_node.fail(fmt::format("duplicate device id '{}' (first defined at {})", id,
                               id_nodes_[it->second]->where().str()));
    }
    id_nodes_.push_back(&id_node);
    if (dev.kind == DeviceKind::Gpu) {
      ++gpu_count_;
      if (dev.node != kNone) ++gpus_in_node_[dev.node];
    }
    tb.add_device(dev);
  }

  std::uint16_t model_index(DeviceKind kind, const ArgNode* model) const {
    const std::string name = model ? model->text() : "";
    auto pick = [&](auto index_fn, const std::string& fallback) {
      if (model == nullptr) return index_fn(fallback);
      return at_node(*model, [&] { return index_fn(name); });
    };
    switch (kind) {
      case DeviceKind::Gpu:
        return pick(gpu_index, traits_.gpu);
      case DeviceKind::Nic:
        return pick(nic_index, traits_.nic);
      case DeviceKind::Switch:
      case DeviceKind::Gateway:
        return pick(switch_index, traits_.switch_model);
      case DeviceKind::ScaleUpSwitch:
        return model ? pick(scale_up_index, "") : std::uint16_t{0};
      case DeviceKind::Host:
        if (model != nullptr) model->fail("a host has no catalog model");
        return 0;
    }
    return 0;
  }

  DeviceId lookup(const ArgNode& end) const {
    const std::string& id = require_text(end);
    auto it = ids_.find(id);
    if (it == ids_.end()) end.fail(fmt::format("unknown device '{}' (not in devices)", id));
    return it->second;
  }

  static const ArgNode& optional_list(const ArgNode& list) {
    if (list.kind() != ArgNode::Kind::List) list.fail("expected a list");
    return list;
  }

  // A fabric-management appliance's cable into a switch port (`switch`, then a link's keys):
  // counted in the bill of materials, never routed over.
  void add_management_link(TopologyBuilder& tb, const ArgNode& m) {
    if (m.kind() != ArgNode::Kind::Map) m.fail("expected a map with switch and bandwidth");
    const ArgNode& sw = m.at("switch");
    const DeviceId b = lookup(sw);
    if (tb.device(b).kind != DeviceKind::Switch) {
      sw.fail(fmt::format("device '{}' is not a switch", sw.text()));
    }
    Link link = read_link_body(m);
    link.a = kNone;
    link.b = b;
    m.check_all_used();
    tb.add_management_link(link);
    ++managed_;
  }

  // Ports sharing one pluggable module: {ports: N, ends: [[link, device], ...]}, link an index
  // into `links` (management link i is links + i), device the end's id; at most N ends of one
  // kind (speed, medium, length), each in one cage at most.
  void add_cage(TopologyBuilder& tb, const ArgNode& cage) {
    if (cage.kind() != ArgNode::Kind::Map) cage.fail("expected a map with ports and ends");
    const ArgNode& ports = cage.at("ports");
    const auto n = static_cast<std::uint32_t>(ports.as_int(1, 64));
    const ArgNode& c = cage.at("ends");
    if (c.kind() != ArgNode::Kind::List || c.items().empty()) {
      c.fail("expected a list of [link, device] ends");
    }
    if (c.items().size() > n) {
      c.fail(fmt::format("{} ends in a cage of {} ports", c.items().size(), n));
    }
    cage.check_all_used();
    const std::uint64_t total = tb.num_links() + managed_;
    std::vector<CageEnd> ends;
    const Link* first = nullptr;
    for (const ArgNode& e : c.items()) {
      if (e.kind() != ArgNode::Kind::List || e.items().size() != 2) {
        e.fail("expected [link, device]");
      }
      const ArgNode& ln = e.items()[0];
      const auto link = static_cast<std::uint64_t>(ln.as_int(0, 1LL << 40));
      if (link >= total) {
        ln.fail(fmt::format("link {} does not exist ({} links and management links)", link, total));
      }
      const DeviceId at = lookup(e.items()[1]);
      const Link& l = link < tb.num_links() ? tb.link(static_cast<LinkId>(link))
                                            : tb.management_link(link - tb.num_links());
      if (at != l.b && at != l.a) {
        e.items()[1].fail(
            fmt::format("device '{}' is not an end of link {}", e.items()[1].text(), link));
      }
      if (!caged_.insert({link, at == l.b}).second) {
        e.fail(
            fmt::format("link {}'s end at '{}' is already in a cage", link, e.items()[1].text()));
      }
      if (first != nullptr && (first->bandwidth != l.bandwidth || first->medium != l.medium ||
                               first->length_m != l.length_m)) {
        e.fail("a cage's ports share one module: same bandwidth, medium and length");
      }
      first = &l;
      ends.push_back({link, at});
    }
    tb.add_cage(ends, n);
  }

  void add_link(TopologyBuilder& tb, const ArgNode& l) {
    if (l.kind() != ArgNode::Kind::Map) l.fail("expected a map with a, b and bandwidth");
    Link link;
    link.a = lookup(l.at("a"));
    link.b = lookup(l.at("b"));
    if (link.a == link.b) {
      l.at("b").fail(fmt::format("link connects device '{}' to itself", l.at("a").text()));
    }
    const Link body = read_link_body(l);
    link.bandwidth = body.bandwidth;
    link.length_m = body.length_m;
    link.latency = body.latency;
    link.medium = body.medium;
    l.check_all_used();
    unite(link.a, link.b);
    tb.add_link(link);
  }

  // A link's bandwidth, length, latency and medium, from its keys or the defaults.
  Link read_link_body(const ArgNode& l) const {
    Link link;
    if (const ArgNode* bw = l.find("bandwidth")) {
      link.bandwidth = bw->as_bandwidth();
    } else if (defaults_.bandwidth) {
      link.bandwidth = *defaults_.bandwidth;
    } else {
      l.fail("missing required key 'bandwidth' (and no link_defaults.bandwidth)");
    }
    const ArgNode* length = l.find("length");
    link.length_m = length ? length_metres(*length) : defaults_.length_m.value_or(0.0);
    if (const ArgNode* lat = l.find("latency")) {
      link.latency = lat->as_time();
    } else {
      // Without a stated latency, a link costs its propagation delay.
      link.latency = defaults_.latency.value_or(Time::ns(link.length_m * kPropagationNsPerMetre));
    }
    if (const ArgNode* m = l.find("medium")) {
      link.medium = static_cast<LinkMedium>(index_of(kMedia, m->as_choice(kMedia)));
    } else if (defaults_.medium) {
      link.medium = *defaults_.medium;
    } else {
      link.medium = medium_for_length(link.bandwidth, link.length_m);
    }
    return link;
  }

  // Union-find over device ids, to name a device that the links leave unreachable.
  std::uint32_t root(std::uint32_t x) {
    while (parent_[x] != x) x = parent_[x] = parent_[parent_[x]];
    return x;
  }
  void unite(std::uint32_t a, std::uint32_t b) {
    if (parent_.size() < id_nodes_.size()) {
      const auto old = static_cast<std::uint32_t>(parent_.size());
      parent_.resize(id_nodes_.size());
      for (auto i = old; i < parent_.size(); ++i) parent_[i] = i;
    }
    parent_[root(a)] = root(b);
  }

  void check_connected(std::size_t devices) {
    unite(0, 0);  // sizes the forest even when there are no links
    std::map<std::uint32_t, std::uint32_t> parts;
    for (std::uint32_t i = 0; i < devices; ++i) parts.emplace(root(i), i);
    if (parts.size() <= 1) return;
    const std::uint32_t first_root = root(0);
    for (std::uint32_t i = 0; i < devices; ++i) {
      if (root(i) != first_root) {
        id_nodes_[i]->fail(
            fmt::format("device '{}' is not connected to device '{}' (the graph falls into {} "
                        "separate parts)",
                        id_nodes_[i]->text(), id_nodes_[0]->text(), parts.size()));
      }
    }
  }

  std::uint32_t uniform_gpus_per_node() const {
    if (gpus_in_node_.empty()) return 0;
    std::uint64_t placed = 0;
    const std::uint32_t first = gpus_in_node_.begin()->second;
    for (const auto& [node, count] : gpus_in_node_) {
      if (count != first) return 0;
      placed += count;
    }
    return placed == gpu_count_ ? first : 0;
  }

  const ArgNode& scope_;
  const ClusterTraits& traits_;
  LinkDefaults defaults_;
  std::unordered_map<std::string, DeviceId> ids_;
  std::vector<const ArgNode*> id_nodes_;
  std::map<std::pair<std::uint32_t, int>, std::uint32_t> next_local_;
  std::map<std::uint32_t, std::uint32_t> gpus_in_node_;
  std::vector<std::uint32_t> parent_;
  std::set<std::pair<std::uint64_t, bool>> caged_;  // (link, end at b)
  std::uint64_t managed_ = 0;                       // management links read
  std::uint64_t gpu_count_ = 0;
};

// count_inventory leaves gateways out (builders price them); priced here as their switch model,
// like multi_site does. A link faster than the gateway's ports takes as many ports as it needs.
void add_gateways(const Topology& topo, Inventory& inv) {
  std::map<std::uint16_t, std::pair<std::uint64_t, std::uint64_t>> by_model;  // count, ports
  for (DeviceId id = 0; id < topo.num_devices(); ++id) {
    const Device& d = topo.device(id);
    if (d.kind != DeviceKind::Gateway) continue;
    const double port = switch_catalog()[d.model].port_speed.bytes_per_second();
    by_model[d.model].first += 1;
    for (const Port& p : topo.ports(id)) {
      const double bw = topo.link(Topology::link_of(p.out)).bandwidth.bytes_per_second();
      by_model[d.model].second += static_cast<std::uint64_t>(std::max(1.0, std::ceil(bw / port)));
    }
  }
  if (by_model.empty()) return;
  TierFigures tier;
  tier.tier = "dci";
  for (const auto& [model, counts] : by_model) {
    const SwitchSpec& sw = switch_catalog()[model];
    inv.lines.push_back(
        {sw.display + " as DCI gateway", "switch", "dci", counts.first, sw.power_w, sw.price_usd});
    inv.power_w += sw.power_w * static_cast<double>(counts.first);
    inv.cost_usd += sw.price_usd * static_cast<double>(counts.first);
    tier.switches += counts.first;
    tier.ports_used += counts.second;
    const std::uint64_t total = std::uint64_t{sw.radix} * counts.first;
    tier.ports_free += total > counts.second ? total - counts.second : 0;
  }
  inv.tiers.push_back(tier);
}

std::string resolve_path(const ArgNode& path_node) {
  if (path_node.kind() != ArgNode::Kind::Scalar || path_node.text().empty()) {
    path_node.fail("expected a file name");
  }
  std::filesystem::path p(path_node.text());
  const std::string& from = path_node.where().file;
  if (p.is_relative() && !from.empty()) p = std::filesystem::path(from).parent_path() / p;
  return p.lexically_normal().string();
}

BuildResult build_from_file(const ArgNode& args, const BuildOptions& /*options*/) {
  // The listing is either the cluster map itself or the root of the file it names.
  std::optional<ArgNode> file_root;
  const ArgNode* scope = &args;
  std::string source = "inline";
  if (const ArgNode* path = args.find("path")) {
    if (args.has("devices") || args.has("links")) {
      path->fail("give either 'path' or inline 'devices' and 'links', not both");
    }
    const std::string file = resolve_path(*path);
    file_root = load_args_file(file, "", path->path(), path->where());
    if (is_empty_document(*file_root)) {
      throw InputError("", "the graph file is empty (expected devices: and links:)",
                       SourceLocation{file, 1, 1});
    }
    if (file_root->kind() != ArgNode::Kind::Map)
      file_root->fail("expected a map with devices and links");
    scope = &*file_root;
    source = file;
  }
  const ClusterTraits traits = read_traits(scope->find("traits"));
  const LinkDefaults defaults = read_link_defaults(scope->find("link_defaults"));
  std::string name = scope->get_string("name", "from_file");
  GraphReader reader(*scope, traits, defaults);
  Topology topo = reader.read(name);
  if (file_root) file_root->check_all_used();

  BuildResult result;
  Inventory& inv = result.inventory;
  count_inventory(topo, inv);
  inv.design = fmt::format("from_file {}: {} devices, {} links", source, topo.num_devices(),
                           topo.num_links());
  describe_measured_graph(topo, inv);
  add_gateways(topo, inv);
  result.graph = std::move(topo);
  return result;
}

}  // namespace

void register_from_file_builder() {
  register_builder(BuilderInfo{
      "from_file",
      "an irregular topology listed as devices and links (inline or in a YAML/JSON file)",
      {"path", "devices", "links", "management_links", "cages", "link_defaults", "traits", "name"},
      build_from_file});
}

}  // namespace lockstep::builders
