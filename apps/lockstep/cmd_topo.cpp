// 'lockstep topo': build a cluster's topology and print its bill of materials and figures of
// merit. Either from a scenario file (its cluster: section) or from flags:
//   lockstep topo scenarios/default.yaml --format json
//   lockstep topo --builder fat_tree --k 8 --emit graph.json
// With --builder, every other --KEY VALUE (or --KEY=VALUE) becomes a builder argument; dashes
// in KEY read as underscores, so --gpus-per-node 8 is gpus_per_node: 8.
#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <utility>

#include "command.hpp"
#include "lockstep/report/inventory.hpp"
#include "lockstep/report/output.hpp"
#include "lockstep/scenario/cluster_source.hpp"
#include "lockstep/scenario/memory_estimate.hpp"
#include "lockstep/scenario/scenario.hpp"
#include "lockstep/topology/builder.hpp"
#include "lockstep/topology/graph_json.hpp"
#include "lockstep/topology/racks.hpp"
#include "lockstep/topology/reference.hpp"
#include "memory_options.hpp"

namespace lockstep::cli {
namespace {

struct TopoOptions {
  std::string builder;
  std::string reference;
  std::string format = "table";
  std::string emit;
  MemoryFlags memory;
  bool force = false;
  bool racks = false;
};

// Builder arguments from the flags CLI11 did not recognise.
ArgNode args_from_flags(const std::string& builder, const std::vector<std::string>& extras) {
  // Errors about the whole argument set (a missing key) name the builder flag.
  ArgNode args = ArgNode::map("--builder " + builder);
  args.set("builder", ArgNode::scalar(builder, "--builder"));
  for (std::size_t i = 0; i < extras.size(); ++i) {
    const std::string& flag = extras[i];
    if (flag.rfind("--", 0) != 0 || flag.size() < 3) {
      throw InputError(flag, "unexpected argument (builder arguments are --KEY VALUE pairs)");
    }
    std::string key = flag.substr(2);
    std::string value = "true";  // a flag without a value is a switch
    if (const auto eq = key.find('='); eq != std::string::npos) {
      value = key.substr(eq + 1);
      key = key.substr(0, eq);
    } else if (i + 1 < extras.size() && extras[i + 1].rfind("--", 0) != 0) {
      value = extras[++i];
    }
    const std::string path = "--" + key;
    std::replace(key.begin(), key.end(), '-', '_');
    if (args.has(key)) throw InputError(path, "given twice");
    args.set(key, ArgNode::scalar(value, path));
  }
  return args;
}

// write_graph_json's first lines: `{`, the name, then the traits map on one line (no other tool
// writes this layout), so a graph lockstep emitted may be replaced without --force.
bool is_lockstep_graph(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::string head(4096, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<std::size_t>(in.gcount()));
  return head.rfind("{\n  \"name\": ", 0) == 0 &&
         head.find("\n  \"traits\": {\"gpu\":") != std::string::npos;
}

// The reference architectures, one a line.
void print_references() {
  for (const ReferenceDesign& d : reference_designs()) {
    fmt::print("{:<26} {}\n", d.name, d.title);
  }
}

// The document's counts beside the built ones, in the document's categories.
std::string reference_table(const ReferenceDesign& d, const Inventory& inv) {
  std::string out = fmt::format("{}\nsource: {}\n\n{:<16} {:<34} {:>9} {:>9}\n", d.title, d.source,
                                "category", "item", "lockstep", "document");
  bool all_same = true;
  for (const ReferenceFigure& f : d.figures) {
    const std::uint64_t built = reference_value(inv, f.what);
    std::string doc = "-", mark = "(not stated)";
    if (f.document) {
      doc = std::to_string(*f.document);
      mark = built == *f.document ? "same" : "DIFFERS";
      all_same = all_same && built == *f.document;
    }
    out += fmt::format("{:<16} {:<34} {:>9} {:>9}  {}\n", f.category, f.item, built, doc, mark);
  }
  out += fmt::format("matches the document: {}\nnotes: {}\n\n", all_same ? "yes" : "no", d.notes);
  return out;
}

void run_topo(const TopoOptions& o, const std::vector<std::string>& extras) {
  const report::TopoFormat format = report::parse_topo_format(o.format);
  if (o.racks && format != report::TopoFormat::Table) {
    throw InputError("--racks", "prints a table: give it without --format json or csv");
  }
  ArgNode cluster;
  const ReferenceDesign* reference = nullptr;
  if (!o.reference.empty()) {
    if (!o.builder.empty() || !extras.empty()) {
      throw InputError("--reference", "give a reference alone, without --builder or a scenario");
    }
    if (o.reference == "list") return print_references();
    reference = &reference_design(o.reference, "--reference");
    cluster = reference_args(*reference);
  } else if (!o.builder.empty()) {
    cluster = args_from_flags(o.builder, extras);
  } else {
    if (extras.empty()) {
      throw InputError("topo",
                       "give a scenario file or --builder NAME (see 'lockstep topo --help')");
    }
    if (extras.size() > 1 || extras[0].rfind("--", 0) == 0) {
      const std::string& bad = extras.size() > 1 ? extras[1] : extras[0];
      throw InputError(bad, "unexpected argument (builder arguments need --builder NAME)");
    }
    cluster = load_scenario(extras[0]).cluster;
  }
  const ClusterSource source(std::move(cluster));
  // The inventory is closed-form; only --emit builds the graph (and its size is checked first).
  RunEstimate estimate;
  estimate.add("lockstep", kBaseBytes);
  if (!o.emit.empty())
    add_graph_estimate(estimate, source.build(BuildOptions{.want_graph = false}).inventory.gpus);
  if (!admit(estimate, o.memory.budget(), "emit a smaller design")) return;
  // --emit's file: checked (writable, not a file of the user's) before the graph is built.
  std::optional<report::StagedOutput> emit_out;
  const std::filesystem::path emit_path(o.emit);
  if (!o.emit.empty()) {
    report::install_interrupt_handler();
    std::error_code ec;
    if (!emit_path.has_filename() || std::filesystem::is_directory(emit_path, ec))
      throw InputError("--emit", fmt::format("'{}' is a directory", o.emit));
    if (!o.force && std::filesystem::exists(emit_path, ec) && !is_lockstep_graph(emit_path)) {
      throw InputError("--emit", fmt::format("'{}' exists and is not a graph lockstep wrote; give "
                                             "--force to replace it",
                                             o.emit));
    }
    emit_out.emplace(emit_path.has_parent_path() ? emit_path.parent_path() : ".", "--emit");
  }
  BuildOptions options;
  options.want_graph = !o.emit.empty();
  const BuildResult result = source.build(options);
  if (!o.emit.empty()) {
    if (!result.graph) {
      throw InputError("--emit", "this design is too large to build as a graph; nothing to emit");
    }
    std::ostringstream text;
    write_graph_json(*result.graph, text);
    emit_out->add(emit_path.filename().string(), text.str());
    emit_out->commit();
  }
  if (reference != nullptr && format == report::TopoFormat::Table) {
    fmt::print("{}", reference_table(*reference, result.inventory));
  }
  fmt::print("{}", report::format_inventory(result.inventory, format));
  if (o.racks) {
    const std::optional<RackPlan> plan = rack_plan(result.inventory);
    fmt::print("{}", format_rack_plan(plan));
    fmt::print("{}", format_network_racks(network_racks(result.inventory), plan));
  }
}

std::string builders_footer() {
  std::string out =
      "\nUsage:\n  lockstep topo SCENARIO.yaml [--format table|json|csv] [--emit graph.json]\n"
      "  lockstep topo --builder NAME [--KEY VALUE ...] [--format ...] [--emit ...]\n"
      "  lockstep topo --reference NAME|list [--format ...]\n\n"
      "Builders and their keys (docs/topology.md, docs/scenario.md):\n";
  for (const BuilderInfo* b : all_builders()) {
    out += fmt::format("  {:<15} {}\n", b->name, b->summary);
    std::string keys;
    for (const auto& k : b->keys) keys += (keys.empty() ? "" : ", ") + k;
    if (!keys.empty()) out += fmt::format("  {:<15} keys: {}\n", "", keys);
  }
  return out;
}

const RegisterCommand kTopo(10, [](CLI::App& root) {
  auto* cmd = root.add_subcommand(
      "topo", "Build a cluster topology; print its bill of materials and figures of merit");
  auto o = std::make_shared<TopoOptions>();
  cmd->add_option("--builder", o->builder,
                  "build from flags: the builder name; other --KEY VALUE flags are its arguments");
  cmd->add_option("--reference", o->reference,
                  "build a published reference architecture and print its counts beside the "
                  "document's ('list' names them)");
  cmd->add_option("--format", o->format, "table (default), json or csv");
  cmd->add_option("--emit", o->emit, "also write the graph (devices, links) as JSON to this file");
  cmd->add_flag("--force", o->force, "replace an --emit file that lockstep did not write");
  cmd->add_flag("--racks", o->racks,
                "also print compute racks, kW per rack and cooling where the system's documents "
                "state them, and the network racks, total kW and floor tiles (derived)");
  add_memory_options(*cmd, o->memory);
  cmd->allow_extras();
  cmd->footer(builders_footer());
  cmd->callback([o, cmd] { run_topo(*o, cmd->remaining()); });
});

}  // namespace
}  // namespace lockstep::cli
