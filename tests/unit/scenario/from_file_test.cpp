// The from_file builder: irregular graphs from inline lists or YAML/JSON files, their inventory,
// and errors at the offending entry's file:line:column.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "../core/error_of.hpp"
#include "../topology/topology_test_util.hpp"
#include "lockstep/scenario/scenario.hpp"
#include "lockstep/topology/builder.hpp"
#include "lockstep/topology/graph_json.hpp"
#include "lockstep/topology/inventory_count.hpp"
#include "lockstep/topology/reference.hpp"

namespace lockstep {
namespace {

BuildResult build_yaml(const std::string& cluster_yaml, const std::string& file = "t.yaml") {
  const Scenario s = parse_scenario("version: 1\ncluster:\n" + cluster_yaml, file);
  return build_topology(s.cluster);
}

// Four GPUs in two nodes, each on one port of a single QM9700 (64 ports) by 10 m links.
const char* kStar = R"(  builder: from_file
  devices:
    - {id: g0, kind: gpu, node: 0}
    - {id: g1, kind: gpu, node: 0}
    - {id: g2, kind: gpu, node: 1}
    - {id: g3, kind: gpu, node: 1}
    - {id: s, kind: switch, model: qm9700}
  link_defaults: {bandwidth: 400Gbps, length: 10m}
  links:
    - {a: g0, b: s}
    - {a: g1, b: s}
    - {a: g2, b: s}
    - {a: g3, b: s}
)";

TEST(FromFile, StarGraphFigures) {
  const BuildResult r = build_yaml(kStar);
  ASSERT_TRUE(r.graph.has_value());
  const Topology& t = *r.graph;
  EXPECT_EQ(t.num_devices(), 5u);
  EXPECT_EQ(t.num_links(), 4u);
  EXPECT_EQ(t.num_nodes(), 2u);
  EXPECT_EQ(t.traits().gpus_per_node, 2u);  // both nodes hold two GPUs
  // Local indices are numbered per node in listing order: g2 is GPU 0 of node 1.
  EXPECT_EQ(t.device(2).local_index, 0u);
  const Inventory& inv = r.inventory;
  EXPECT_EQ(inv.gpus, 4u);
  ASSERT_EQ(inv.tiers.size(), 1u);
  EXPECT_EQ(inv.tiers[0].switches, 1u);
  EXPECT_EQ(inv.tiers[0].ports_used, 4u);
  EXPECT_EQ(inv.tiers[0].ports_free, 60u);  // 64 - 4
  // Each GPU has one 400 Gb/s scale-out port.
  EXPECT_DOUBLE_EQ(inv.injection_per_gpu.gigabits_per_second(), 400.0);
  EXPECT_EQ(inv.ports_per_gpu, 1u);
  // Halves {g0, g1} | {g2, g3}: the cut is their two links, 2 x 400 Gb/s.
  EXPECT_DOUBLE_EQ(inv.bisection.gigabits_per_second(), 800.0);
  // A 10 m link costs 10 x 5 ns = 50 ns; GPU -> switch -> GPU is two of them.
  EXPECT_EQ(t.link(0).latency, Time::ns(50));
  EXPECT_EQ(inv.max_one_way_latency, Time::ns(100));
  // Two hops (GPU-switch, switch-GPU), both between forwarding elements.
  EXPECT_EQ(inv.diameter_switch_hops, 2u);
  EXPECT_TRUE(inv.feasible);
}

TEST(FromFile, RingBisectionCutsTwoLinks) {
  // A ring g0-g1-g2-g3-g0 of 100 Gb/s links: halves {g0,g1} | {g2,g3} are separated by the
  // links g1-g2 and g3-g0, 200 Gb/s; the farthest GPU is two GPU-GPU hops away.
  const BuildResult r = build_yaml(R"(  builder: from_file
  devices: [{id: g0, kind: gpu, node: 0}, {id: g1, kind: gpu, node: 1},
            {id: g2, kind: gpu, node: 2}, {id: g3, kind: gpu, node: 3}]
  links:
    - {a: g0, b: g1, bandwidth: 100Gbps}
    - {a: g1, b: g2, bandwidth: 100Gbps}
    - {a: g2, b: g3, bandwidth: 100Gbps}
    - {a: g3, b: g0, bandwidth: 100Gbps}
)");
  EXPECT_DOUBLE_EQ(r.inventory.bisection.gigabits_per_second(), 200.0);
  EXPECT_EQ(r.inventory.diameter_switch_hops, 2u);
  // Every GPU drives two 100 Gb/s ports.
  EXPECT_DOUBLE_EQ(r.inventory.injection_per_gpu.gigabits_per_second(), 200.0);
  EXPECT_EQ(r.inventory.ports_per_gpu, 2u);
}

TEST(FromFile, ErrorsPointAtTheEntry) {
  const std::string head = R"(  builder: from_file
  devices:
    - {id: g0, kind: gpu, node: 0}
    - {id: g1, kind: gpu, node: 1}
  links:
)";
  // Line 8 of the scenario is the first link ("version", "cluster:", then 5 lines of head):
  // '    - {a: g0, b: g9, bandwidth: 1Gbps, colour: red}' has 'g9' in column 18, the bandwidth
  // value in column 33 and the value of 'colour' in column 48 (unknown keys are reported at
  // their value).
  EXPECT_EQ(error_of([&] { build_yaml(head + "    - {a: g0, b: g9, bandwidth: 1Gbps}\n"); }),
            "t.yaml:8:18: cluster.links[0].b: unknown device 'g9' (not in devices)");
  EXPECT_EQ(error_of([&] { build_yaml(head + "    - {a: g1, b: g1, bandwidth: 1Gbps}\n"); }),
            "t.yaml:8:18: cluster.links[0].b: link connects device 'g1' to itself");
  EXPECT_EQ(error_of([&] { build_yaml(head + "    - {a: g0, b: g1, bandwidth: 0Gbps}\n"); }),
            "t.yaml:8:33: cluster.links[0].bandwidth: '0Gbps' is zero");
  EXPECT_EQ(error_of([&] { build_yaml(head + "    - {a: g0, b: g1}\n"); }),
            "t.yaml:8:7: cluster.links[0]: missing required key 'bandwidth' (and no "
            "link_defaults.bandwidth)");
  EXPECT_EQ(
      error_of([&] { build_yaml(head + "    - {a: g0, b: g1, bandwidth: 1Gbps, colour: red}\n"); }),
      "t.yaml:8:48: cluster.links[0].colour: unknown key 'colour'");
}

TEST(FromFile, DuplicateIdNamesTheFirstDefinition) {
  EXPECT_EQ(error_of([] {
              build_yaml(R"(  builder: from_file
  devices:
    - {id: g0, kind: gpu}
    - {id: g0, kind: gpu}
  links: [{a: g0, b: g0, bandwidth: 1Gbps}]
)");
            }),
            "t.yaml:6:12: cluster.devices[1].id: duplicate device id 'g0' (first defined at "
            "t.yaml:5:12)");
}

TEST(FromFile, DisconnectedGraphNamesAnUnreachableDevice) {
  const std::string message = error_of([] {
    build_yaml(R"(  builder: from_file
  devices:
    - {id: g0, kind: gpu}
    - {id: g1, kind: gpu}
    - {id: g2, kind: gpu}
  links: [{a: g0, b: g1, bandwidth: 1Gbps}]
)");
  });
  EXPECT_EQ(message,
            "t.yaml:7:12: cluster.devices[2].id: device 'g2' is not connected to device 'g0' "
            "(the graph falls into 2 separate parts)");
}

TEST(FromFile, GraphWithoutGpusIsRefused) {
  const std::string message = error_of([] {
    build_yaml("  builder: from_file\n  devices: [{id: s, kind: switch}]\n  links: []\n");
  });
  EXPECT_EQ(message, "t.yaml:4:3: cluster.devices: no device has kind 'gpu'");
}

class TempDir {
 public:
  TempDir() {
    path_ =
        std::filesystem::temp_directory_path() /
        ("lockstep_from_file_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
         "_" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(path_);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  std::string file(const std::string& name, const std::string& text) const {
    const auto p = path_ / name;
    std::ofstream(p) << text;
    return p.string();
  }

 private:
  std::filesystem::path path_;
};

TEST(FromFile, JsonFileIsResolvedNextToTheScenario) {
  TempDir dir;
  dir.file("g.json",
           "{\"devices\": [{\"id\": 0, \"kind\": \"gpu\"}, {\"id\": 1, \"kind\": \"gpu\"}],\n"
           " \"links\": [{\"a\": 0, \"b\": 1, \"bandwidth\": \"8Gbps\"}]}\n");
  const std::string scenario =
      dir.file("s.yaml", "version: 1\ncluster: {builder: from_file, path: g.json}\n");
  const BuildResult r = build_topology(load_scenario(scenario).cluster);
  EXPECT_EQ(r.inventory.gpus, 2u);
  EXPECT_DOUBLE_EQ(r.inventory.bisection.gigabits_per_second(), 8.0);
}

TEST(FromFile, ErrorsInsideAGraphFileNameThatFile) {
  TempDir dir;
  const std::string graph =
      dir.file("g.json",
               "{\"devices\": [{\"id\": 0, \"kind\": \"gpu\"}, {\"id\": 1, \"kind\": \"gpu\"}],\n"
               " \"links\": [{\"a\": 0, \"b\": 5, \"bandwidth\": \"8Gbps\"}]}\n");
  const std::string scenario =
      dir.file("s.yaml", "version: 1\ncluster: {builder: from_file, path: g.json}\n");
  // Line 2 of g.json: ' "links": [{"a": 0, "b": 5, ...': '[' is column 11, '"b"' 21-23, and
  // the 5 column 26.
  EXPECT_EQ(error_of([&] { build_topology(load_scenario(scenario).cluster); }),
            graph + ":2:26: links[0].b: unknown device '5' (not in devices)");
}

// A two-socket server by hand: each GPU on its CPU's root complex by PCIe, the CPUs joined by
// their socket link (`medium: cpu_link`, Broadwell's 2 QPI links: 38.4 GB/s per direction). Both
// are board traces: no cable, no module. A medium the graph does not know is a one-line error at
// its value: '    - {a: c0, b: c1, bandwidth: 38.4GB/s, medium: qpi}' is line 12 of the scenario
// ("version", "cluster:", 9 lines of head), 'qpi' in column 51.
TEST(FromFile, CpuLinkIsABoardLinkOfItsOwn) {
  const std::string head = R"(  builder: from_file
  devices:
    - {id: g0, kind: gpu, node: 0}
    - {id: g1, kind: gpu, node: 0}
    - {id: c0, kind: host, node: 0}
    - {id: c1, kind: host, node: 0}
  links:
    - {a: g0, b: c0, bandwidth: 15.75GB/s, medium: pcie}
    - {a: g1, b: c1, bandwidth: 15.75GB/s, medium: pcie}
)";
  const BuildResult r =
      build_yaml(head + "    - {a: c0, b: c1, bandwidth: 38.4GB/s, medium: cpu_link}\n");
  ASSERT_TRUE(r.graph.has_value());
  EXPECT_EQ(r.graph->link(2).medium, LinkMedium::CpuLink);
  EXPECT_EQ(r.inventory.cables, 0u);
  EXPECT_EQ(r.inventory.transceivers, 0u);
  EXPECT_EQ(tally_topology(*r.graph).links(LinkMedium::CpuLink), 1u);
  EXPECT_EQ(tally_topology(*r.graph).links(LinkMedium::Pcie), 2u);
  EXPECT_EQ(
      error_of(
          [&] { build_yaml(head + "    - {a: c0, b: c1, bandwidth: 38.4GB/s, medium: qpi}\n"); }),
      "t.yaml:12:51: cluster.links[2].medium: unknown value 'qpi' (expected one of nvlink, pcie, "
      "copper_dac, active_electrical, optical, long_haul_fibre, cpu_link)");
}

TEST(FromFile, EmittedGraphReadsBackIdentically) {
  ArgNode args = ArgNode::map("");
  args.set("builder", ArgNode::scalar("fat_tree", "builder"));
  args.set("k", ArgNode::scalar("4", "k"));
  // A graph holds links, not which link ends share a twin-port module: per port, the bill of
  // materials is the graph's alone.
  args.set("optics", ArgNode::scalar("per_port", "optics"));
  const BuildResult original = build_topology(args);
  ASSERT_TRUE(original.graph.has_value());
  std::ostringstream json;
  write_graph_json(*original.graph, json);
  TempDir dir;
  const std::string file = dir.file("graph.json", json.str());
  ArgNode reread_args = ArgNode::map("");
  reread_args.set("builder", ArgNode::scalar("from_file", "builder"));
  reread_args.set("path", ArgNode::scalar(file, "path"));
  const BuildResult reread = build_topology(reread_args);
  const Topology& a = *original.graph;
  const Topology& b = *reread.graph;
  ASSERT_EQ(a.num_devices(), b.num_devices());
  ASSERT_EQ(a.num_links(), b.num_links());
  for (DeviceId i = 0; i < a.num_devices(); ++i) {
    const Device& x = a.device(i);
    const Device& y = b.device(i);
    EXPECT_TRUE(x.kind == y.kind && x.tier == y.tier && x.node == y.node && x.site == y.site &&
                x.local_index == y.local_index && x.model == y.model && x.radix == y.radix)
        << "device " << i;
  }
  for (LinkId i = 0; i < a.num_links(); ++i) {
    const Link& x = a.link(i);
    const Link& y = b.link(i);
    EXPECT_TRUE(x.a == y.a && x.b == y.b && x.bandwidth == y.bandwidth && x.latency == y.latency &&
                x.medium == y.medium && x.length_m == y.length_m)
        << "link " << i;
  }
  EXPECT_EQ(a.traits().gpu, b.traits().gpu);
  EXPECT_EQ(a.traits().nics_per_node, b.traits().nics_per_node);
  // Same parts, so the same bill of materials.
  EXPECT_EQ(original.inventory.cables, reread.inventory.cables);
  EXPECT_EQ(original.inventory.transceivers, reread.inventory.transceivers);
  EXPECT_DOUBLE_EQ(original.inventory.cost_usd, reread.inventory.cost_usd);
  EXPECT_DOUBLE_EQ(original.inventory.power_w, reread.inventory.power_w);
  // The measured bisection of the non-blocking k=4 tree equals its formula: 16 hosts / 2 x 400G.
  EXPECT_DOUBLE_EQ(reread.inventory.bisection.gigabits_per_second(), 8 * 400.0);
  EXPECT_EQ(original.inventory.diameter_switch_hops, reread.inventory.diameter_switch_hops);
}

// The graph carries what the bill of materials counts: the DGX SuperPOD H100 1-SU fabric emitted
// and read back counts 512 transceivers, as built (per module) and as the closed form, not
// the 1,016 link ends a graph of links alone gave. Its cages (TwinPort.OneH100SuByHand, by
// hand): 31 DGX x 4 twin cages + 8 leaves x (16 down + 16 up) + 4 spines x 32 = 508 twin-port
// cages; the 4 UFM links appear as management links into rails 0-3 of the SU (252 node + UFM
// cables with the 248 node links), their appliance ends one single-port module each.
TEST(FromFile, ReferenceGraphReadsBackTheSameBillOfMaterials) {
  const ReferenceDesign& ref = reference_design("dgx-superpod-h100-1su", "--reference");
  const BuildResult built = build_topology(reference_args(ref), {.want_graph = true});
  ASSERT_TRUE(built.graph.has_value());
  const Topology& g = *built.graph;
  EXPECT_EQ(g.management_links().size(), 4u);
  EXPECT_EQ(g.num_cages(), 508u);
  for (std::size_t c = 0; c < g.num_cages(); ++c) ASSERT_EQ(g.cage_ports(c), 2u);
  std::ostringstream json;
  write_graph_json(g, json);
  TempDir dir;
  ArgNode args = ArgNode::map("");
  args.set("builder", ArgNode::scalar("from_file", "builder"));
  args.set("path", ArgNode::scalar(dir.file("graph.json", json.str()), "path"));
  const BuildResult reread = build_topology(args);
  const Inventory closed = build_topology(reference_args(ref), {.want_graph = false}).inventory;
  for (const Inventory* inv : {&built.inventory, &reread.inventory, &closed}) {
    EXPECT_EQ(inv->cables, 508u);
    EXPECT_EQ(inv->transceivers, 512u);
    for (const ReferenceFigure& f : ref.figures) {
      if (f.document) {
        EXPECT_EQ(reference_value(*inv, f.what), *f.document) << f.item;
      }
    }
  }
  ASSERT_EQ(reread.inventory.lines.size(), closed.lines.size());
  for (std::size_t i = 0; i < closed.lines.size(); ++i) {
    EXPECT_EQ(reread.inventory.lines[i].item, closed.lines[i].item);
    EXPECT_EQ(reread.inventory.lines[i].count, closed.lines[i].count) << closed.lines[i].item;
  }
  ASSERT_EQ(reread.inventory.tiers.size(), closed.tiers.size());
  for (std::size_t i = 0; i < closed.tiers.size(); ++i) {
    EXPECT_EQ(reread.inventory.tiers[i].ports_used, closed.tiers[i].ports_used);
    EXPECT_EQ(reread.inventory.tiers[i].ports_free, closed.tiers[i].ports_free);
  }
  EXPECT_DOUBLE_EQ(reread.inventory.cost_usd, closed.cost_usd);
  EXPECT_DOUBLE_EQ(reread.inventory.power_w, closed.power_w);
}

// Copper host links into QM9700 twin cages read back as one splitter DAC per cage: 64 one-GPU
// nodes on 2 leaves at 2 m (LeafSpine.CopperHostLinksTakeOneSplitterDacPerCageByHand): 32 1:2
// DACs + 64 leaf-spine patch cords = 96 cables, 64 modules, emitted and re-read.
TEST(FromFile, SplitterDacsReadBackFromTheirCages) {
  const BuildResult built = test::build({{"builder", "leaf_spine"},
                                         {"gpus_per_node", "1"},
                                         {"scale_up", "none"},
                                         {"nodes", "64"},
                                         {"host_link_m", "2"}});
  ASSERT_TRUE(built.graph.has_value());
  std::ostringstream json;
  write_graph_json(*built.graph, json);
  TempDir dir;
  ArgNode file = ArgNode::map("");
  file.set("builder", ArgNode::scalar("from_file", "builder"));
  file.set("path", ArgNode::scalar(dir.file("graph.json", json.str()), "path"));
  const BuildResult reread = build_topology(file);
  for (const Inventory* inv : {&built.inventory, &reread.inventory}) {
    EXPECT_EQ(inv->cables, 96u);
    EXPECT_EQ(inv->transceivers, 64u);
    std::uint64_t dacs = 0;
    for (const InventoryLine& l : inv->lines) {
      if (l.item == "OSFP 800G to 2x400G passive copper splitter DAC (estimate)") dacs = l.count;
    }
    EXPECT_EQ(dacs, 32u);
  }
}

// Two GPUs on a switch by 10 m optical links (one transceiver per end): a twin cage at the switch
// holding both links' ends makes 2 + 1 modules; a management cable adds a cable, a switch port
// and its two ends. Bad cages and management links are named at their entry.
TEST(FromFile, CagesAndManagementLinks) {
  const std::string head = R"(  builder: from_file
  devices:
    - {id: g0, kind: gpu, node: 0}
    - {id: g1, kind: gpu, node: 1}
    - {id: s, kind: switch, model: qm9700}
  link_defaults: {bandwidth: 400Gbps, length: 10m}
  links:
    - {a: g0, b: s}
    - {a: g1, b: s}
)";
  EXPECT_EQ(build_yaml(head).inventory.transceivers, 4u);
  const BuildResult r = build_yaml(head + R"(  management_links:
    - {switch: s, bandwidth: 400Gbps, length: 10m}
  cages:
    - {ports: 2, ends: [[0, s], [1, s]]}
)");
  EXPECT_EQ(r.inventory.transceivers, 2u + 1u + 2u);
  EXPECT_EQ(r.inventory.cables, 3u);
  EXPECT_EQ(r.inventory.tiers.at(0).ports_used, 3u);
  // Line 13 holds the first management link or cage ("version", "cluster:", 9 lines of head,
  // the list's key): '    - {switch: g0, ...' has g0 in column 16; '    - {ports: 2, ends:
  // [[0, g1]]}' the ends' key in 18, the link in 26 and the device in 29.
  EXPECT_EQ(error_of([&] {
              build_yaml(head + "  management_links:\n    - {switch: g0, bandwidth: 400Gbps}\n");
            }),
            "t.yaml:13:16: cluster.management_links[0].switch: device 'g0' is not a switch");
  EXPECT_EQ(error_of([&] { build_yaml(head + "  cages:\n    - {ports: 2, ends: [[0, g1]]}\n"); }),
            "t.yaml:13:29: cluster.cages[0].ends[0][1]: device 'g1' is not an end of link 0");
  EXPECT_EQ(error_of([&] { build_yaml(head + "  cages:\n    - {ports: 2, ends: [[2, s]]}\n"); }),
            "t.yaml:13:26: cluster.cages[0].ends[0][0]: link 2 does not exist (2 links and "
            "management links)");
  EXPECT_EQ(
      error_of([&] { build_yaml(head + "  cages:\n    - {ports: 1, ends: [[0, s], [1, s]]}\n"); }),
      "t.yaml:13:18: cluster.cages[0].ends: 2 ends in a cage of 1 ports");
}

}  // namespace
}  // namespace lockstep
