// The topology zoo (issue 19): every fabric family lockstep builds (zoo.hpp, each with its
// bounds derived by hand) x all_reduce, all_gather, alltoall, sendrecv, as `lockstep collective`
// runs them. Each result lies above its lower bound (the GPU's links, the fabric's cut, the
// fibre), and the engines agree -- analytical with flow and packet within 10%, flow with packet
// within 5% -- except where they differ by design, each such case named below with its reason.
//
// Split (docs/collectives.md "The topology zoo"): ctest runs 64 KiB and 16 MiB on the three
// engines, and 1 GiB on analytical and flow everywhere and on packet where it takes under a
// second (direct-wired fabrics of 4-8 GPUs); about 30 s of CPU in all. The full table, packet
// at 1 GiB on 32-72 GPUs included (minutes), is `bench_zoo` (bench/runs/zoo.cpp).
#include "zoo.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "lockstep/core/error.hpp"

namespace lockstep {
namespace {

enum Engine { kAnalytical, kFlow, kPacket, kEngines };
const char* const kEngineNames[kEngines] = {"analytical", "flow", "packet"};

// Packet at 1 GiB: on the fabrics of 4-8 GPUs, and NVL72's all-reduce (NVLS: 20 ms). Before,
// the packet engine gave each of the NVLS chunks' concurrent NetReduce rounds the GPU's whole
// link: 45.58 us at 16 MiB and 1 GiB alike, below the 1,193 us a GPU needs to send 1 GiB once
// at 900 GB/s (flow: 2,083.18 us, packet now the same).
bool in_ctest(const zoo::Fabric& f, CollectiveOp op, Engine e, Bytes size) {
  if (size < Bytes::gib(1) || e != kPacket) return true;
  return f.gpus <= 8 || (std::strcmp(f.name, "nvl72") == 0 && op == CollectiveOp::AllReduce);
}

// Rows where one engine differs from the other two by design (or by a defect named below), and
// why: `odd` is compared with neither of the others there. `op` empty: every op; sizes from
// `from` to `to` (64 KiB, 16 MiB, 1 GiB).
struct Exception {
  const char* fabric;
  const char* op;
  Bytes from, to;
  Engine odd;
  const char* why;
};

// Congestion dynamics: where several transfers want one link, the flow engine shares it max-min
// fairly and at once (fluid), and the analytical engine prices the busiest link as flow loads
// it (they agree within 2% on these rows), while the packet engine queues packets behind
// credits: a packet waits behind those ahead of it in a shared buffer, and collisions resolve
// differently. Since the packet engine runs fabric transfers at NCCL's network efficiency (not
// NVLink's), most of these rows agree within 5% at 16 MiB; the rail fabric's all-to-all and
// all-reduce are 11% and 6% slower, the ring all-gathers 19% (leaf-spine), 25% (rail) and 6%
// (two sites) faster. The dragonfly's all-to-all is 1.6-1.8x
// slower on packet (16 MiB: 4,189.89 us against flow's 2,373.47; 1 GiB: 238,713 against
// 149,174): 47 senders per GPU through three groups' FIFOs behind credits; the ports' buffers
// split over two lane levels are not the cause (with the earlier pairwise global links, a whole
// buffer per level ran 5% slower still). The bound holds on every engine.
constexpr const char* kCongestion =
    "congestion: flows share a link (ECMP collisions, oversubscribed uplinks, tapered global "
    "links, the long-haul link); packets queue behind credits where flows share at once";
// NVLS tree at 16 MiB, NCCL's choice on 4+ HGX H100 servers
// (TreeGraph.FourHgxH100RunNvlsTreeAt16MiBAsNcclRanksIt). The analytical engine walks NVLS
// tree's stages between nodes as the tree's (docs/analytical-engine.md "Stages"): on the
// dragonfly that adds 76.46 us from 64 MiB on, a quarter of flow's fixed 301.7 us more, and
// 16 MiB agrees within the zoo's 10% (978.38 against flow's 1,044.93 us, +6.8%; 901.92 before
// the walk), so the dragonfly needs no exception; flow is still 225.3 us slower from 64 MiB to
// 1 GiB (Zoo.DragonflyNvlsTreePaysAFixedFillOnItsSlowLinks). On the leaf-spine and the rail
// fabric, where the walk finds no excess, flow is 11.0% and 10.8% faster at 16 MiB than the
// model, whose NVLS-tree fill is 71.19 us there (cost.cpp nvls_tree_fill_us); they agree within
// 2.3% at 64 MiB and 0.1% at 1 GiB. Not yet traced.
constexpr const char* kNvlsTreeFill =
    "NVLS tree's pipeline fill at mid size: the model's, at the NICs' share, where the stage "
    "walk finds no excess";
const std::vector<Exception>& exceptions() {
  const Bytes k64 = Bytes::kib(64), m16 = Bytes::mib(16), g1 = Bytes::gib(1);
  static const std::vector<Exception> kList = {
      {"dragonfly", "", k64, g1, kPacket, kCongestion},
      {"leaf-spine-2to1", "", m16, g1, kPacket, kCongestion},
      {"leaf-spine-2to1", "all_reduce", m16, m16, kAnalytical, kNvlsTreeFill},
      {"rail-3-tier", "", k64, g1, kPacket, kCongestion},
      {"rail-3-tier", "all_reduce", m16, m16, kAnalytical, kNvlsTreeFill},
      {"two-sites-50km", "", m16, g1, kPacket, kCongestion},
      // The ring's channels share the one 12.5 GB/s link; packet is 5.6% faster than flow at
      // 64 KiB and 16 MiB (agreeing at 1 GiB, where the link's rate is all that matters).
      {"from-file-slow-link", "all_gather", k64, m16, kPacket, kCongestion},
      // All-to-all through NVL72's NVSwitch (an incast into every GPU's port) agrees since the
      // packet engine moves on-board copies in NVLink's 256 B packets: 16 MiB 83.96 -> 56.17 us
      // (flow 54.72), the NVLS all-gather 91.47 -> 76.94 (75.97). In the fabric's 4 KiB
      // packets, 71 inputs' packets queued at a busy output outgrew their ports' credits past
      // the round trip: head-of-line blocking (docs/packet-engine.md "Packet size per medium").
  };
  return kList;
}

const Exception* exception_for(const zoo::Fabric& f, CollectiveOp op, Bytes size, Engine a,
                               Engine b) {
  for (const Exception& e : exceptions()) {
    if (std::strcmp(e.fabric, f.name) != 0) continue;
    if (e.op[0] != '\0' && std::strcmp(e.op, to_string(op)) != 0) continue;
    if (size < e.from || size > e.to || (e.odd != a && e.odd != b)) continue;
    return &e;
  }
  return nullptr;
}

// Engine defects the zoo found, which the lead must decide on: the run fails with an InputError.
// Asserted so that a fix shows here.
struct KnownFailure {
  const char* fabric;
  const char* op;
  Bytes from, to;
  Engine engine;
  const char* error;  // substring of the InputError
  const char* why;
};

const std::vector<KnownFailure>& known_failures() {
  // None left. The dragonfly on packet stopped with "fabric deadlock" at 16 MiB (all-reduce and
  // all-to-all with pairwise global links, all-gather, all-to-all and send/recv with circulant
  // ones): credits with minimal routing closed a cycle of buffers through three groups, until
  // the packet engine moved packets to another lane level at a down-up turn, as dragonflies do
  // at the global hop (docs/packet-engine.md "Lane change at turns").
  static const std::vector<KnownFailure> kList = {};
  return kList;
}

const KnownFailure* known_failure(const zoo::Fabric& f, CollectiveOp op, Bytes size, Engine e) {
  for (const KnownFailure& k : known_failures())
    if (std::strcmp(k.fabric, f.name) == 0 && std::strcmp(k.op, to_string(op)) == 0 &&
        size >= k.from && size <= k.to && k.engine == e)
      return &k;
  return nullptr;
}

class Zoo : public testing::TestWithParam<zoo::Fabric> {};

TEST_P(Zoo, ResultsLieWithinTheirBoundsAndTheEnginesAgree) {
  const zoo::Fabric& f = GetParam();
  const Topology topo = zoo::build(f);
  ASSERT_EQ(topo.gpus().size(), f.gpus);
  for (const CollectiveOp op : zoo::ops()) {
    for (const Bytes size : zoo::sizes()) {
      std::optional<CollectiveRow> row[kEngines];
      for (int e = 0; e < kEngines; ++e) {
        const auto engine = static_cast<Engine>(e);
        if (!in_ctest(f, op, engine, size)) continue;
        const std::string where = std::string(to_string(op)) + " " + std::to_string(size.count()) +
                                  " B on " + kEngineNames[e];
        SCOPED_TRACE(where);
        const KnownFailure* known = known_failure(f, op, size, engine);
        if (known != nullptr) {
          try {
            zoo::run(topo, op, size, kEngineNames[e]);
            ADD_FAILURE() << "known failure no longer fails (" << known->why << ")";
          } catch (const InputError& err) {
            EXPECT_NE(std::string(err.what()).find(known->error), std::string::npos) << err.what();
          }
          continue;
        }
        const CollectiveRow r = zoo::run(topo, op, size, kEngineNames[e]);
        const zoo::Bound b = zoo::bound(f, op, r.bytes, r.algorithm);
        const double us = r.time.microseconds();
        EXPECT_GE(us, b.us()) << r.algorithm << " " << r.protocol << ": inject " << b.inject_us
                              << " us, cut " << b.cut_us << " us, latency " << b.latency_us
                              << " us";
        row[e] = r;
      }
      for (const auto& [a, b, tolerance] :
           {std::tuple{kAnalytical, kFlow, 0.10}, std::tuple{kAnalytical, kPacket, 0.10},
            std::tuple{kFlow, kPacket, 0.05}}) {
        if (!row[a] || !row[b] || exception_for(f, op, size, a, b) != nullptr) continue;
        const double ratio = row[b]->time.seconds() / row[a]->time.seconds();
        EXPECT_NEAR(ratio, 1.0, tolerance)
            << to_string(op) << " " << size.count() << " B: " << kEngineNames[a] << " "
            << row[a]->time.microseconds() << " us (" << row[a]->algorithm << " "
            << row[a]->protocol << "), " << kEngineNames[b] << " " << row[b]->time.microseconds()
            << " us";
      }
    }
  }
}

std::string fabric_name(const testing::TestParamInfo<zoo::Fabric>& info) {
  std::string s = info.param.name;
  for (char& c : s)
    if (c == '-') c = '_';
  return s;
}

INSTANTIATE_TEST_SUITE_P(Fabrics, Zoo, testing::ValuesIn(zoo::fabrics()), fabric_name);

// The 2:1 leaf-spine (4 HGX H100 servers) at 16 MiB, the tree asked for (NCCL's tuner runs NVLS
// tree there: TreeGraph.FourHgxH100RunNvlsTreeAt16MiBAsNcclRanksIt), with LL128 and 16 channels
// as it picks for the tree. The model's bus is the chain's, NVLink's 370.8 GB/s x 120/128 / 2 (a
// chain GPU climbs and descends on its port) = 173.81 GB/s, under the NICs' 384 x 120/128; flow
// caps each channel at its share, 2 x 173.81 / 16 = 21.73 GB/s (nccl/engine_run.cpp
// tree_channel_share_GBps). The model's LL128 fill has NVLink forward lines as they land; the
// tree program forwards each 72,000 B chunk (NCCL's 76,800 B step x 15/16) whole at each of the
// 2 (8 - 1) = 14 NVLink stages of the chain, so flow's first chunk takes up to 14 x 72,000 B /
// 21.73 GB/s = 46.39 us more than the model's, and its stream no less than the model's: flow
// lies between the model and the model plus 46.39 us (194.09 and 221.46 us), beyond the zoo's
// 10%. Packet is compared with neither at this size (congestion, above).
TEST(Zoo, LeafSpineTreePaysItsChainsStoreAndForward) {
  zoo::Fabric leaf_spine;
  for (const zoo::Fabric& f : zoo::fabrics())
    if (std::strcmp(f.name, "leaf-spine-2to1") == 0) leaf_spine = f;
  const Topology topo = zoo::build(leaf_spine);
  const auto run = [&](const char* engine) {
    return zoo::run(topo, CollectiveOp::AllReduce, Bytes::mib(16), engine, Algorithm::Tree);
  };
  const CollectiveRow model = run("analytical");
  const CollectiveRow flow = run("flow");
  EXPECT_EQ(model.algorithm, "tree");
  EXPECT_EQ(flow.protocol, "LL128");
  const double bus_GBps = 370.8 * 120 / 128 / 2;
  const double store_and_forward_us = 14 * 72000 / (2 * bus_GBps / 16 * 1e3);
  EXPECT_NEAR(store_and_forward_us, 46.39, 0.005);
  EXPECT_GE(flow.time.microseconds(), model.time.microseconds());
  EXPECT_LE(flow.time.microseconds(), model.time.microseconds() + store_and_forward_us);
}

// The dragonfly (zoo.hpp: 6 HGX H100 servers, one per router, 2 routers per group, one 400G
// local and one 400G global link per router), NVLS tree asked for: the steady state is the
// graph's busiest link on both engines, so they agree within 1% at 1 GiB (44,942.11 and
// 45,243.86 us), and what separates them is a fill that does not grow with S (flow's chunks
// queue at the slow links' share; the analytical engine walks the stages a chunk at a time,
// kNvlsTreeFill above): the same 225.3 us at 256 MiB and 1 GiB (301.7 before the walk).
TEST(Zoo, DragonflyNvlsTreePaysAFixedFillOnItsSlowLinks) {
  zoo::Fabric dragonfly;
  for (const zoo::Fabric& f : zoo::fabrics())
    if (std::strcmp(f.name, "dragonfly") == 0) dragonfly = f;
  const Topology topo = zoo::build(dragonfly);
  const auto gap_us = [&](Bytes size) {
    const auto run = [&](const char* engine) {
      return zoo::run(topo, CollectiveOp::AllReduce, size, engine, Algorithm::NvlsTree)
          .time.microseconds();
    };
    const double model = run("analytical"), flow = run("flow");
    EXPECT_NEAR(flow / model, 1.0, size >= Bytes::gib(1) ? 0.01 : 0.05) << size.count();
    return flow - model;
  };
  const double at_256_mib = gap_us(Bytes::mib(256));
  EXPECT_GT(at_256_mib, 0);
  EXPECT_NEAR(gap_us(Bytes::gib(1)), at_256_mib, 1.0);
}

// Two sites 50 km apart (the zoo's: two HGX-H100 servers per site, ranks 0-15 east, 16-31
// west): a 1 MiB all-reduce cannot finish before its chain of dependent messages has crossed the
// fibre as often as the algorithm makes it, 250 us each time (5 ns/m), whatever the bandwidth.
//  - ring: every channel's ring visits the east ranks then the west ones, crossing the fibre
//    twice per lap (15 -> 16, 31 -> 0). A block's chain is 2 (n-1) = 62 consecutive hops of
//    the 32-hop lap: two laps less two hops, so it crosses four times unless one of the two hops
//    it skips is a crossing; the block whose chain starts at rank 5 skips hops 3 -> 4 and
//    4 -> 5. Four crossings: 1,000 us.
//  - tree (and nvls_tree, which uses the same tree over servers): NCCL's in-order tree over the
//    4 servers at positions 1-4 has root 4 (server 3, west), whose child is 2 (server 1, east),
//    whose children are 1 and 3 (servers 0, east, and 2, west). Server 2's data climbs 2 -> 1 ->
//    3, west -> east -> west, and the sum comes back 3 -> 1 -> 2: four crossings, 1,000 us.
//    The second tree mirrors the first (position 5 - x) and crosses as often.
TEST(Zoo, TwoSitesAllReducePaysTheFibreCrossingsOfItsAlgorithm) {
  zoo::Fabric sites;
  for (const zoo::Fabric& f : zoo::fabrics())
    if (std::strcmp(f.name, "two-sites-50km") == 0) sites = f;
  const Topology topo = zoo::build(sites);
  Time fibre;
  for (const Link& l : topo.links())
    if (l.medium == LinkMedium::LongHaulFibre) fibre = l.latency;
  ASSERT_GE(fibre, Time::us(250));
  const NcclCluster cluster = nccl_cluster(topo);
  for (const std::optional<Algorithm> algo :
       {std::optional<Algorithm>{}, std::optional{Algorithm::Ring},
        std::optional{Algorithm::Tree}}) {
    for (const char* engine : kEngineNames) {
      CollectiveSweep s;
      s.algo = algo;
      s.min_bytes = s.max_bytes = Bytes::mib(1);
      s.engine = engine;
      const CollectiveRow r = run_collective_sweep(s, cluster, &topo).at(0);
      SCOPED_TRACE(std::string(engine) + " " + (algo ? to_string(*algo) : "auto") + " ran " +
                   r.algorithm);
      ASSERT_TRUE(r.algorithm == "ring" || r.algorithm == "tree" || r.algorithm == "nvls_tree");
      EXPECT_GE(r.time.microseconds(), 4 * 250.0);
    }
  }
}

}  // namespace
}  // namespace lockstep
