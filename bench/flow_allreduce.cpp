// Flow-engine scale benchmark: a 1 GiB ring all-reduce over HGX-H100 nodes on a rail-optimised,
// non-blocking InfiniBand NDR fabric (H1's `preset` path: rail_optimized builder), rail-aligned
// routing. Prints, per GPU count, the wall time of the engine run (topology build and program
// generation reported separately) and its CPU time (the figure to compare on a shared machine),
// peak resident memory (getrusage), events and the predicted collective time.
//
//   bench_flow_allreduce                 # 1K, 4K, 16K, 64K GPUs
//   bench_flow_allreduce 1024 131072     # any list of GPU counts (multiples of 16)
//   bench_flow_allreduce --individual 1024   # also time the run without class aggregation
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "lockstep/collective/collective.hpp"
#include "lockstep/engine/flow/flow_engine.hpp"
#include "lockstep/routing/router.hpp"
#include "lockstep/topology/builder.hpp"
#include "lockstep/topology/presets.hpp"

namespace {

using namespace lockstep;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

double peak_rss_mib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;  // Linux reports KiB
}

// The ring of make_collective visits the GPUs of even nodes in one local order and of odd nodes
// in the reverse one (rail-aligned hops between nodes), so rotating the ranks by two nodes maps
// the programs onto themselves whenever every block and slice has the same size. The engine
// still verifies through routing that the classes this implies are indistinguishable.
class RotationSymmetric final : public ProgramSet {
 public:
  RotationSymmetric(const ProgramSet& inner, Rank period) : inner_(inner), period_(period) {}
  Rank num_ranks() const override { return inner_.num_ranks(); }
  OpIndex num_ops(Rank r) const override { return inner_.num_ops(r); }
  Op op(Rank r, OpIndex i) const override { return inner_.op(r, i); }
  BufferSizes buffers(Rank r) const override { return inner_.buffers(r); }
  Rank symmetry_period() const override {
    return inner_.symmetry_period() ? inner_.symmetry_period() : period_;
  }
  std::string label() const override { return inner_.label(); }

 private:
  const ProgramSet& inner_;
  Rank period_;
};

void run(std::uint32_t gpus, bool individual) {
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
  ro.policy = RoutingPolicy::RailAligned;
  auto router = make_router(topo, ro);
  CollectiveSpec spec;
  spec.op = CollectiveOp::AllReduce;
  spec.algorithm = Algorithm::Ring;
  spec.ranks = gpus;
  spec.bytes = Bytes::gib(1);
  spec.type = DataType::Float32;
  spec.ranks_per_node = gpn;
  auto ring = make_collective(spec);
  const RotationSymmetric programs(*ring, 2 * gpn);

  for (int pass = 0; pass < (individual ? 2 : 1); ++pass) {
    FlowEngine engine({.aggregate = pass == 0});
    t0 = Clock::now();
    const double cpu0 = cpu_seconds();
    const RunResult r =
        engine.run(EngineInput{&topo, &programs, topo.gpus(), router.get(), EngineOptions{}});
    const double wall = seconds_since(t0);
    const double cpu = cpu_seconds() - cpu0;
    const double busbw = Bytes::gib(1).as_double() / r.makespan.seconds() *
                         busbw_factor(CollectiveOp::AllReduce, gpus) / 1e9;
    std::printf(
        "%7u GPUs %-10s devices %7zu links %7zu build %6.2f s | run %8.2f s (cpu %8.2f s) peak "
        "%7.0f MiB "
        "events %11llu classes %5u x %5u attempts %u | all_reduce %9.1f us busbw %6.1f GB/s\n",
        gpus, pass == 0 ? "aggregated" : "individual", topo.num_devices(), topo.num_links(),
        build_s, wall, cpu, peak_rss_mib(), static_cast<unsigned long long>(r.events),
        engine.last_stats().simulated_ranks, engine.last_stats().class_size,
        engine.last_stats().attempts, r.makespan.microseconds(), busbw);
    std::fflush(stdout);
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::uint32_t> sizes;
  bool individual = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--individual") {
      individual = true;
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
    run(g, individual);
  }
  return 0;
}
