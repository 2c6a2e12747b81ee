#include "lockstep/topology/graph_json.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "lockstep/topology/catalog.hpp"

namespace lockstep {
namespace {

using Json = nlohmann::ordered_json;

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

Json traits_json(const ClusterTraits& t) {
  Json j = {{"gpu", t.gpu}, {"fabric", t.fabric}, {"scale_up", t.scale_up}};
  if (!t.nic.empty()) j["nic"] = t.nic;
  if (!t.switch_model.empty()) j["switch"] = t.switch_model;
  j["gpus_per_node"] = t.gpus_per_node;
  j["nics_per_node"] = t.nics_per_node;
  j["sharp"] = t.sharp;
  j["nvls"] = t.nvls;
  if (!t.routing.empty()) j["routing"] = t.routing;
  if (t.qps_per_connection != 0) j["qps_per_connection"] = t.qps_per_connection;
  return j;
}

Json device_json(const Topology& topo, DeviceId i) {
  const Device& d = topo.device(i);
  Json j = {{"id", i}, {"kind", to_string(d.kind)}};
  if (d.node != kNone) j["node"] = d.node;
  j["tier"] = d.tier;
  j["site"] = d.site;
  j["local_index"] = d.local_index;
  if (std::string model = model_name(d); !model.empty()) j["model"] = std::move(model);
  if (d.radix != 0) j["radix"] = d.radix;
  return j;
}

// Quantities as text with their unit, in shortest round-trip form: parsing them back yields the
// identical doubles.
Json link_json(const Link& l) {
  return {{"a", l.a},
          {"b", l.b},
          {"bandwidth", fmt::format("{}B/s", l.bandwidth.bytes_per_second())},
          {"latency", fmt::format("{}ps", l.latency.picoseconds())},
          {"medium", to_string(l.medium)},
          {"length", fmt::format("{}m", l.length_m)}};
}

// One device or link per line keeps a large graph's file readable and diffable; each is dumped by
// nlohmann (invalid UTF-8 in names replaced, not thrown on).
std::string line(const Json& j) {
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

}  // namespace

void write_graph_json(const Topology& topo, std::ostream& out) {
  out << "{\n  \"name\": " << line(Json(topo.name())) << ",\n";
  out << "  \"traits\": " << line(traits_json(topo.traits())) << ",\n";
  out << "  \"devices\": [\n";
  for (DeviceId i = 0; i < topo.num_devices(); ++i)
    out << "    " << line(device_json(topo, i)) << (i + 1 < topo.num_devices() ? ",\n" : "\n");
  out << "  ],\n  \"links\": [\n";
  for (LinkId i = 0; i < topo.num_links(); ++i)
    out << "    " << line(link_json(topo.link(i))) << (i + 1 < topo.num_links() ? ",\n" : "\n");
  out << "  ]";
  // What the bill of materials counts beyond the routed links (Topology::management_links,
  // cages), so that from_file reads back the same counts; absent when there is none.
  const auto managed = topo.management_links();
  if (!managed.empty()) {
    out << ",\n  \"management_links\": [\n";
    for (std::size_t i = 0; i < managed.size(); ++i) {
      const Link& l = managed[i];
      const Json j = {{"switch", l.b},
                      {"bandwidth", fmt::format("{}B/s", l.bandwidth.bytes_per_second())},
                      {"latency", fmt::format("{}ps", l.latency.picoseconds())},
                      {"medium", to_string(l.medium)},
                      {"length", fmt::format("{}m", l.length_m)}};
      out << "    " << line(j) << (i + 1 < managed.size() ? ",\n" : "\n");
    }
    out << "  ]";
  }
  if (topo.num_cages() != 0) {
    out << ",\n  \"cages\": [\n";
    for (std::size_t c = 0; c < topo.num_cages(); ++c) {
      Json ends = Json::array();
      for (const CageEnd& e : topo.cage(c)) ends.push_back(Json::array({e.link, e.device}));
      const Json cage = {{"ports", topo.cage_ports(c)}, {"ends", std::move(ends)}};
      out << "    " << line(cage) << (c + 1 < topo.num_cages() ? ",\n" : "\n");
    }
    out << "  ]";
  }
  out << "\n}\n";
}

}  // namespace lockstep
