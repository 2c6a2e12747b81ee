// Whole-process run (not Google Benchmark): prints its own figures, see bench/CMakeLists.txt.
// One training iteration of llama3-405b on 16,384 H100s (2,048 HGX nodes, rail-optimised NDR),
// TP 8, PP 16, DP 128, 16M-token global batch (Llama 3 pre-training's; Dubey et al. 2024), on the
// flow engine. Prints the iteration figures, wall time and peak memory (target: under 60 s).
//   bench_train_405b [engine] [nodes]      (defaults: flow 2048)
//
// With --suite, the largest published configurations (issue 21's speed target: each under
// 30 s and 2 GB), each in a child process so that its CPU time and peak RSS are its own:
//   bench_train_405b --suite [--expansion auto|reduced|full] [--engine flow|analytical]
//  - GPT-3 175B, TP 4, PP 8, virtual pipeline 12 (the MLPerf Training GPT-3 configuration on
//    H100 that issue 21 names) on 6,144 and 10,752 H100, 2,048-token sequences, 8 micro-batches
//    per replica (an assumption: gbs 8 x dp, 1,536 and 2,688 sequences);
//  - Llama 3 405B on 16,384 H100 as Dubey et al. 2024 Table 4 lists it: TP 8, PP 16, CP 1,
//    DP 128, 8,192-token sequences, and the long-context stage TP 8, CP 16, PP 16, DP 8, 131,072
//    tokens; 16 sequences per DP replica (16M tokens) either way, full recomputation.
#include <fmt/format.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <string>
#include <vector>

#include "lockstep/report/training.hpp"
#include "lockstep/topology/builder.hpp"
#include "lockstep/topology/presets.hpp"
#include "lockstep/workload/training.hpp"

namespace {

using namespace lockstep;

struct Job {
  const char* name;
  const char* model;
  std::uint32_t nodes, tp, cp, pp, interleave;
  std::uint64_t seq, sequences_per_replica;
  Recompute recompute;
};

const std::vector<Job> kSuite = {
    {"gpt3-175b 6,144 H100 tp4 pp8 vp12", "gpt3-175b", 768, 4, 1, 8, 12, 2048, 8, Recompute::None},
    {"gpt3-175b 10,752 H100 tp4 pp8 vp12", "gpt3-175b", 1344, 4, 1, 8, 12, 2048, 8,
     Recompute::None},
    {"llama3-405b 16,384 H100 tp8 pp16", "llama3-405b", 2048, 8, 1, 16, 1, 8192, 16,
     Recompute::Full},
    {"llama3-405b 16,384 H100 tp8 cp16 pp16", "llama3-405b", 2048, 8, 16, 16, 1, 131072, 16,
     Recompute::Full},
};

Topology h100_cluster(std::uint32_t nodes) {
  PresetRequest request;
  request.system = "hgx-h100";
  request.fabric = "ib-ndr";
  request.nodes = nodes;
  return *build_topology(rail_optimized_args(resolve_preset(request))).graph;
}

TrainConfig config_of(const Job& j, const std::string& engine, Expansion expansion) {
  TrainConfig c;
  c.model = model_preset(j.model);
  c.par.tp = j.tp;
  c.par.cp = j.cp;
  c.par.pp = j.pp;
  c.par.interleave = j.interleave;
  c.par.dp = j.nodes * 8 / (j.tp * j.cp * j.pp);
  c.par.zero = ZeroStage::Optimizer;
  c.seq = j.seq;
  c.global_batch = j.sequences_per_replica * c.par.dp;
  c.recompute = j.recompute;
  c.engine = engine;
  c.expansion = expansion;
  return c;
}

double seconds(const timeval& t) {
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) * 1e-6;
}

int suite(const std::string& engine, Expansion expansion, const char* expansion_name) {
  fmt::print("bench_train_405b --suite: engine {}, expansion {}\n", engine, expansion_name);
  fmt::print("{:<40} {:>10} {:>9} {:>7} {:>7} {:>9}  {}\n", "job", "iteration", "expansion",
             "wall s", "CPU s", "peak MB", "micro-batches run");
  for (const Job& j : kSuite) {
    std::fflush(stdout);
    int fds[2];
    if (pipe(fds) != 0) return 1;
    const auto t0 = std::chrono::steady_clock::now();
    const pid_t child = fork();
    if (child == 0) {
      close(fds[0]);
      std::string line;
      try {
        const Topology topo = h100_cluster(j.nodes);
        const TrainResult r = simulate_training(topo, config_of(j, engine, expansion));
        line = fmt::format("{:>8.3f} s {:>9}", r.iteration.seconds(), r.expansion);
        line += fmt::format("|{} of {}", r.expanded_micro_batches,
                            config_of(j, engine, expansion).micro_batches());
      } catch (const std::exception& e) {
        line = fmt::format("error: {}|", e.what());
      }
      if (write(fds[1], line.data(), line.size()) < 0) _exit(1);
      _exit(0);
    }
    close(fds[1]);
    std::string line;
    char buf[512];
    for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;) line.append(buf, std::size_t(n));
    close(fds[0]);
    int status = 0;
    rusage usage{};
    wait4(child, &status, 0, &usage);
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const auto bar = line.find('|');
    fmt::print("{:<40} {:>20} {:>7.2f} {:>7.2f} {:>9.1f}  {}\n", j.name, line.substr(0, bar), wall,
               seconds(usage.ru_utime) + seconds(usage.ru_stime), usage.ru_maxrss / 1024.0,
               bar == std::string::npos ? "" : line.substr(bar + 1));
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "--suite") == 0) {
    std::string engine = "flow", expansion = "auto";
    for (int i = 2; i + 1 < argc; i += 2) {
      if (std::strcmp(argv[i], "--engine") == 0) engine = argv[i + 1];
      if (std::strcmp(argv[i], "--expansion") == 0) expansion = argv[i + 1];
    }
    const Expansion e = expansion == "full"      ? Expansion::Full
                        : expansion == "reduced" ? Expansion::Reduced
                                                 : Expansion::Auto;
    return suite(engine, e, expansion.c_str());
  }
  const std::string engine = argc > 1 ? argv[1] : "flow";
  const std::uint32_t nodes = argc > 2 ? static_cast<std::uint32_t>(std::stoul(argv[2])) : 2048;
  const auto t0 = std::chrono::steady_clock::now();
  const Topology topo = h100_cluster(nodes);
  const auto t1 = std::chrono::steady_clock::now();

  TrainConfig c;
  c.model = model_preset("llama3-405b");
  c.par.tp = 8;
  c.par.pp = 16;
  c.par.dp = nodes * 8 / (8 * 16);
  c.par.zero = ZeroStage::Optimizer;
  c.global_batch = 16 * c.par.dp;  // 2,048 sequences of 8,192 tokens at dp 128
  c.recompute = Recompute::Full;
  c.engine = engine;
  const TrainResult r = simulate_training(topo, c);
  const auto t2 = std::chrono::steady_clock::now();

  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  fmt::print("{}", report::format_training_text(r, c));
  fmt::print("\nbench_train_405b: {} GPUs, {} links, engine {}\n", topo.gpus().size(),
             topo.num_links(), engine);
  fmt::print("topology build  {:.2f} s\n", std::chrono::duration<double>(t1 - t0).count());
  fmt::print("simulation      {:.2f} s wall\n", std::chrono::duration<double>(t2 - t1).count());
  fmt::print("peak memory     {:.1f} MB (ru_maxrss)\n", usage.ru_maxrss / 1024.0);
  return 0;
}
