#include "lockstep/topology/graph_json.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "lockstep/topology/catalog.hpp"

namespace lockstep {
namespace {

std::string quoted(const std::string& text) {
  return nlohmann::json(text).dump();
}

std::string model_name(const Device& d) {
  switch (d.kind) {
    case DeviceKind::Gpu:
      return d.model < gpu_catalog().size() ? gpu_catalog()[d.model].name : "";
    case DeviceKind::Nic:
      return d.model < nic_catalog().size() ? nic_catalog()[d.model].name : "";
    case DeviceKind::Switch:
    case DeviceKind::Gateway:
      return d.model < switch_catalog().size() ? switch_catalog()[d.model].name : "";
    case DeviceKind::ScaleUpSwitch:
      return d.model < scale_up_catalog().size() ? scale_up_catalog()[d.model].name : "";
    case DeviceKind::Host:
      break;
  }
  return "";
}

void write_traits(const ClusterTraits& t, std::ostream& out) {
  out << "  \"traits\": {\"gpu\": " << quoted(t.gpu) << ", \"fabric\": " << quoted(t.fabric)
      << ", \"scale_up\": " << quoted(t.scale_up);
  if (!t.nic.empty()) out << ", \"nic\": " << quoted(t.nic);
  if (!t.switch_model.empty()) out << ", \"switch\": " << quoted(t.switch_model);
  out << fmt::format(", \"gpus_per_node\": {}, \"nics_per_node\": {}", t.gpus_per_node,
                     t.nics_per_node);
  out << ", \"sharp\": " << (t.sharp ? "true" : "false")
      << ", \"nvls\": " << (t.nvls ? "true" : "false") << "},\n";
}

}  // namespace

void write_graph_json(const Topology& topo, std::ostream& out) {
  out << "{\n  \"name\": " << quoted(topo.name()) << ",\n";
  write_traits(topo.traits(), out);
  out << "  \"devices\": [\n";
  for (DeviceId i = 0; i < topo.num_devices(); ++i) {
    const Device& d = topo.device(i);
    out << fmt::format("    {{\"id\": {}, \"kind\": \"{}\"", i, to_string(d.kind));
    if (d.node != kNone) out << fmt::format(", \"node\": {}", d.node);
    out << fmt::format(", \"tier\": {}, \"site\": {}, \"local_index\": {}", d.tier, d.site,
                       d.local_index);
    const std::string model = model_name(d);
    if (!model.empty()) out << ", \"model\": " << quoted(model);
    if (d.radix != 0) out << fmt::format(", \"radix\": {}", d.radix);
    out << (i + 1 < topo.num_devices() ? "},\n" : "}\n");
  }
  out << "  ],\n  \"links\": [\n";
  for (LinkId i = 0; i < topo.num_links(); ++i) {
    const Link& l = topo.link(i);
    // Shortest round-trip renderings: parsing them back yields the identical doubles.
    out << fmt::format(
        "    {{\"a\": {}, \"b\": {}, \"bandwidth\": \"{}B/s\", \"latency\": \"{}ps\", "
        "\"medium\": \"{}\", \"length\": \"{}m\"}}{}\n",
        l.a, l.b, l.bandwidth.bytes_per_second(), l.latency.picoseconds(), to_string(l.medium),
        l.length_m, i + 1 < topo.num_links() ? "," : "");
  }
  out << "  ]\n}\n";
}

}  // namespace lockstep
