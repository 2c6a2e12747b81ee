#pragma once
// nccl-tests' own flags on `lockstep collective` (all_reduce_perf -b 8 -e 128M -f 2 -g 8), with
// nccl-tests' meanings (src/common.cu, docs/nccl-tests.md): sizes, steps, GPUs, reduction op,
// datatype and root shape the sweep; the flags that tune a real run (iterations, warmup, CUDA
// graphs, blocking, checks) are accepted and ignored with a note, since a prediction has no
// iterations to average.
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "lockstep/config/arg_node.hpp"

namespace lockstep::cli {

struct NcclTestsFlags {
  std::string minbytes, maxbytes, stepbytes, stepfactor;  // -b -e -i -f
  std::string nthreads, ngpus;                            // -t -g
  std::string op, datatype, root;                         // -o -d -r
  // Accepted for the header or ignored with a note: -n -w -m -c -a -z -G -N -p -C -R -T -y -M.
  std::string iters, warmup, agg_iters, check, average, blocking, cudagraph, cycles, parallel,
      cputime, local_register, timeout, stream_null, memory_report;

  /// Whether -b, -e, -i or -f was given: then the sweep is nccl-tests' (defaults 32M..32M, +1M).
  bool names_sizes() const;
};

void add_nccl_tests_options(CLI::App& cmd, NcclTestsFlags& flags);

/// Puts the sizes and the datatype into `sweep` (the map lockstep's --min-bytes and friends fill)
/// with nccl-tests' defaults and size suffixes; InputError naming the flag when both spellings
/// of one setting are given or a value is malformed.
void put_nccl_tests_sweep(const NcclTestsFlags& flags, ArgNode& sweep);
/// GPUs per node from -t x -g ("" when neither is given): lockstep runs one nccl-tests process
/// per node, so a process's GPUs are its node's.
std::string nccl_tests_gpus_per_node(const NcclTestsFlags& flags);
/// The reduction ops to print (-o, "all" is nccl-tests' five), default {"sum"}.
std::vector<std::string> nccl_tests_ops(const NcclTestsFlags& flags);
/// The datatypes to sweep (-d, "all" is nccl-tests' list that lockstep has), empty when not given.
std::vector<std::string> nccl_tests_types(const NcclTestsFlags& flags);
/// One note per flag given that a prediction ignores, as "-n 20 (iters): why"; InputError naming
/// the flag when one is not an integer.
std::vector<std::string> nccl_tests_notes(const NcclTestsFlags& flags);
/// nccl-tests' size syntax (parsesize): digits with an optional K, M or G (either case,
/// binary multiples); "B" or "iB" may follow the letter. InputError naming `flag` otherwise.
std::uint64_t parse_nccl_tests_size(const std::string& text, const std::string& flag);

}  // namespace lockstep::cli
