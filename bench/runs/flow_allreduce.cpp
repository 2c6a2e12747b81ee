// Whole-process run (not Google Benchmark): prints its own figures, see bench/CMakeLists.txt.
// Flow-engine scale benchmark: a 1 GiB ring all-reduce over HGX-H100 nodes on a rail-optimised,
// non-blocking InfiniBand NDR fabric (H1's `preset` path: rail_optimized builder), rail-aligned
// routing. Prints, per GPU count, the wall time of the engine run (topology build and program
// generation reported separately) and its CPU time (the figure to compare on a shared machine),
// peak resident memory (getrusage), events and the predicted collective time.
//
//   bench_flow_allreduce                 # 1K, 4K, 16K, 64K GPUs
//   bench_flow_allreduce 1024 131072     # any list of GPU counts (multiples of 16)
//   bench_flow_allreduce --individual 1024   # also time the run without class aggregation
//   bench_flow_allreduce --full 1024         # also time the run without steady-state skipping
//   bench_flow_allreduce --channels 16 --efficiency 0.92 --overhead-ns 500 1024   # NCCL-like
//   bench_flow_allreduce --window 128 1024   # issue window of the default pass (0: auto)
//   bench_flow_allreduce --nccl 8192     # exactly what `lockstep collective --algo ring --proto
//                                        # simple --engine flow` runs (ECMP, NCCL's options)
//   bench_flow_allreduce --nccl --no-latency 4096   # the same without NCCL's per-step latency
//                                        # (overhead and extra network latency 0): bandwidth only
//   bench_flow_allreduce --routing ecmp 4096   # another routing policy (policy.hpp names)
//   bench_flow_allreduce --loads 4096    # per tier of directed links (NIC->leaf, leaf->spine,
//                                        # ...): links used, bytes on the busiest and the mean
//                                        # used link, and the busiest link's time at line rate
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "../process_usage.hpp"
#include "lockstep/collective/collective.hpp"
#include "lockstep/engine/flow/flow_engine.hpp"
#include "lockstep/nccl/engine_run.hpp"
#include "lockstep/nccl/tuner.hpp"
#include "lockstep/routing/router.hpp"
#include "lockstep/topology/builder.hpp"
#include "lockstep/topology/presets.hpp"

namespace {

using namespace lockstep;
using Clock = std::chrono::steady_clock;
using bench::cpu_seconds;
using bench::peak_rss_mib;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

struct Pass {
  const char* name;
  FlowEngineConfig config;
};

// What the CLI's NCCL model adds (--channels, --efficiency, --overhead-ns); default: none.
struct Shape {
  std::uint16_t channels = 1;
  double efficiency = 1.0;
  Time overhead;
  // Take programs, routing and engine options from the NCCL model as `lockstep collective
  // --algo ring --proto simple --engine flow` does (nccl_engine_run), ignoring the fields above.
  bool nccl = false;
  bool no_latency = false;               // zero per-message overhead and network message latency
  std::optional<RoutingPolicy> routing;  // default: rail_aligned, or ECMP with --nccl
  bool loads = false;                    // print per-tier link loads
};

// Directed links grouped by what they join ("nic>leaf", "leaf>spine", "spine>core", ...), with
// the bytes the run put on them: how evenly the ring loads each tier, and how long its busiest
// link needs at line rate (a lower bound the run cannot beat).
void print_loads(const Topology& topo, const RunResult& r) {
  const auto name = [&](DeviceId d) -> std::string {
    const Device& dev = topo.device(d);
    if (dev.kind == DeviceKind::Switch) return switch_tier_name(dev.tier);
    return to_string(dev.kind);
  };
  struct Tier {
    std::size_t links = 0, used = 0;
    double max = 0, sum = 0, max_time_us = 0;
  };
  std::map<std::string, Tier> tiers;
  for (DirLinkId d = 0; d < topo.num_directed_links(); ++d) {
    Tier& t = tiers[name(topo.source(d)) + ">" + name(topo.target(d))];
    const double b = d < r.link_bytes.size() ? r.link_bytes[d] : 0;
    ++t.links;
    if (b <= 0) continue;
    ++t.used;
    t.sum += b;
    t.max = std::max(t.max, b);
    const double bps = topo.link(Topology::link_of(d)).bandwidth.bytes_per_second();
    t.max_time_us = std::max(t.max_time_us, b / bps * 1e6);
  }
  for (const auto& [tier, t] : tiers) {
    if (t.used == 0) continue;
    std::printf(
        "  %-22s %7zu links, %7zu used: busiest %10.1f MB, mean used %10.1f MB, busiest "
        "at line rate %9.1f us\n",
        tier.c_str(), t.links, t.used, t.max / 1e6, t.sum / t.used / 1e6, t.max_time_us);
  }
}

void run(std::uint32_t gpus, const std::vector<Pass>& passes, const Shape& shape) {
  const std::uint32_t gpn = 8;
  auto t0 = Clock::now();
  PresetRequest request;
  request.system = "hgx-h100";
  request.fabric = "ib-ndr";
  request.nodes = gpus / gpn;
  BuildResult built = build_topology(rail_optimized_args(resolve_preset(request)));
  const Topology& topo = *built.graph;
  const double build_s = seconds_since(t0);

  RouterOptions ro;
  ro.policy = shape.nccl ? RoutingPolicy::Ecmp : RoutingPolicy::RailAligned;
  if (shape.routing) ro.policy = *shape.routing;
  auto router = make_router(topo, ro);
  EngineOptions options;
  options.transfer_efficiency = shape.efficiency;
  options.per_message_overhead = shape.overhead;
  CollectiveSpec spec;
  spec.op = CollectiveOp::AllReduce;
  spec.algorithm = Algorithm::Ring;
  spec.ranks = gpus;
  spec.bytes = Bytes::gib(1);
  spec.type = DataType::Float32;
  spec.ranks_per_node = gpn;
  spec.channels = shape.channels;
  if (shape.nccl) {
    const NcclCluster cluster = nccl_cluster(resolve_preset(request));
    TunerRequest req;
    req.bytes = Bytes::gib(1);
    req.algo = Algorithm::Ring;
    req.proto = nccl::Proto::Simple;
    const NcclEngineRun how = nccl_engine_run(cluster, predict(cluster, req),
                                              CollectiveOp::AllReduce, req.bytes, spec.type, topo);
    spec = how.spec;
    options = EngineOptions{};
    how.apply(options);
    if (shape.no_latency) {
      options.per_message_overhead = Time::zero();
      options.network_message_latency = Time::zero();
    }
    std::printf(
        "nccl: %u channels, overhead %.3f us, efficiency %.4f / network %.4f, network "
        "latency %.3f us, fixed %.3f us (not in the makespan below)\n",
        spec.channels, how.per_message_overhead.microseconds(), how.transfer_efficiency,
        how.network_transfer_efficiency, how.network_message_latency.microseconds(),
        how.fixed.microseconds());
  }
  // The ring declares its rotation symmetry (two nodes) and its periodic steps itself.
  const auto ring = make_collective(spec);
  const ProgramSet& programs = *ring;

  for (const Pass& pass : passes) {
    FlowEngine engine(pass.config);
    t0 = Clock::now();
    const double cpu0 = cpu_seconds();
    const RunResult r =
        engine.run(EngineInput{&topo, &programs, topo.gpus(), router.get(), options});
    const double wall = seconds_since(t0);
    const double cpu = cpu_seconds() - cpu0;
    const double busbw = Bytes::gib(1).as_double() / r.makespan.seconds() *
                         busbw_factor(CollectiveOp::AllReduce, gpus) / 1e9;
    const FlowRunStats& st = engine.last_stats();
    std::printf(
        "%7u GPUs %-10s devices %7zu links %7zu build %6.2f s | run %8.2f s (cpu %8.2f s) peak "
        "%7.0f MiB events %11llu classes %5u x %5u attempts %u jumps %u skipped ops %llu | "
        "all_reduce %lld ps = %9.1f us busbw %6.1f GB/s\n",
        gpus, pass.name, topo.num_devices(), topo.num_links(), build_s, wall, cpu, peak_rss_mib(),
        static_cast<unsigned long long>(r.events), st.simulated_ranks, st.class_size, st.attempts,
        st.fast_forwards, static_cast<unsigned long long>(st.skipped_ops),
        static_cast<long long>(r.makespan.picoseconds()), r.makespan.microseconds(), busbw);
    if (shape.loads) print_loads(topo, r);
    std::fflush(stdout);
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::uint32_t> sizes;
  std::vector<Pass> passes = {{"default", {}}};
  Shape shape;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--individual") {
      passes.push_back({"individual", {.aggregate = false, .fast_forward = false}});
    } else if (a == "--full") {
      passes.push_back({"full", {.fast_forward = false}});
    } else if (a == "--window" && i + 1 < argc) {
      passes.front().config.issue_window =
          static_cast<std::uint32_t>(std::strtoul(argv[++i], nullptr, 10));
    } else if (a == "--nccl") {
      shape.nccl = true;
    } else if (a == "--no-latency") {
      shape.no_latency = true;
    } else if (a == "--loads") {
      shape.loads = true;
    } else if (a == "--routing" && i + 1 < argc) {
      shape.routing = parse_routing_policy(argv[++i], "--routing");
    } else if (a == "--channels" && i + 1 < argc) {
      shape.channels = static_cast<std::uint16_t>(std::strtoul(argv[++i], nullptr, 10));
    } else if (a == "--efficiency" && i + 1 < argc) {
      shape.efficiency = std::strtod(argv[++i], nullptr);
    } else if (a == "--overhead-ns" && i + 1 < argc) {
      shape.overhead = Time::ns(std::strtod(argv[++i], nullptr));
    } else {
      sizes.push_back(static_cast<std::uint32_t>(std::strtoul(argv[i], nullptr, 10)));
    }
  }
  if (sizes.empty()) sizes = {1024, 4096, 16384, 65536};
  for (const auto g : sizes) {
    if (g == 0 || g % 16 != 0) {
      std::fprintf(stderr, "GPU counts must be positive multiples of 16\n");
      return 2;
    }
    run(g, passes, shape);
  }
  return 0;
}
