// Whole-process run (not Google Benchmark): prints its own figures, see bench/CMakeLists.txt.
// The topology zoo's full table (issue 19): every fabric of tests/unit/nccl/zoo.hpp x all_reduce,
// all_gather, alltoall, sendrecv x 64 KiB, 16 MiB, 1 GiB x analytical, flow, packet, as
// `lockstep collective` runs them (NCCL's tuner choosing). Per row: the algorithm and protocol,
// the time, the hand-derived lower bound and which term sets it (inject, cut, latency),
// time / bound (never below 1), the engine's ratio to the analytical engine, and the CPU seconds
// of the run. ctest runs the part of this table that fits its budget (zoo_test.cpp); this is
// the rest (packet at 1 GiB on 32-72 GPUs takes minutes).
//
//   bench_zoo                          # everything
//   bench_zoo torus-8 nvl72            # some fabrics
//   bench_zoo --engines analytical,flow --max-bytes 16MiB
#include "../../tests/unit/nccl/zoo.hpp"

#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "../process_usage.hpp"
#include "lockstep/core/error.hpp"

namespace {

using namespace lockstep;

const char* binding(const zoo::Bound& b) {
  if (b.latency_us >= b.inject_us && b.latency_us >= b.cut_us) return "latency";
  return b.cut_us >= b.inject_us ? "cut" : "inject";
}

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= s.size()) {
    const std::size_t comma = s.find(',', start);
    out.push_back(s.substr(start, comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  std::set<std::string> only;
  std::vector<std::string> engines{"analytical", "flow", "packet"};
  std::uint64_t max_bytes = ~0ull;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--engines") == 0 && i + 1 < argc) {
      engines = split(argv[++i]);
    } else if (std::strcmp(argv[i], "--max-bytes") == 0 && i + 1 < argc) {
      const std::string v = argv[++i];
      max_bytes = v == "64KiB" ? 65536 : v == "16MiB" ? (16ull << 20) : (1ull << 30);
    } else {
      only.insert(argv[i]);
    }
  }
  std::printf("%-20s %-10s %10s %-10s %-9s %-6s %14s %12s %-7s %8s %8s %8s\n", "fabric", "op",
              "bytes", "engine", "algo", "proto", "time_us", "bound_us", "binds", "t/bound",
              "t/anal", "cpu_s");
  for (const zoo::Fabric& f : zoo::fabrics()) {
    if (!only.empty() && only.count(f.name) == 0) continue;
    const Topology topo = zoo::build(f);
    for (const CollectiveOp op : zoo::ops()) {
      for (const Bytes size : zoo::sizes()) {
        if (size.count() > max_bytes) continue;
        double analytical_us = 0;
        for (const std::string& engine : engines) {
          const double cpu0 = bench::cpu_seconds();
          try {
            const CollectiveRow r = zoo::run(topo, op, size, engine.c_str());
            const double cpu = bench::cpu_seconds() - cpu0;
            const double us = r.time.microseconds();
            if (engine == "analytical") analytical_us = us;
            const zoo::Bound b = zoo::bound(f, op, r.bytes, r.algorithm);
            std::printf("%-20s %-10s %10llu %-10s %-9s %-6s %14.2f %12.2f %-7s %8.3f %8.3f %8.2f\n",
                        f.name, to_string(op), static_cast<unsigned long long>(r.bytes),
                        engine.c_str(), r.algorithm.c_str(), r.protocol.c_str(), us, b.us(),
                        binding(b), us / b.us(), analytical_us > 0 ? us / analytical_us : 0.0, cpu);
          } catch (const InputError& e) {
            std::printf("%-20s %-10s %10llu %-10s error: %s (%.2f cpu s)\n", f.name, to_string(op),
                        static_cast<unsigned long long>(size.count()), engine.c_str(), e.what(),
                        bench::cpu_seconds() - cpu0);
          }
          std::fflush(stdout);
        }
      }
    }
  }
  std::printf("peak memory %.0f MiB\n", bench::peak_rss_mib());
  return 0;
}
