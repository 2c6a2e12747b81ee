#include "nccl_tests_options.hpp"

#include <fmt/format.h>

#include <cctype>
#include <charconv>

#include "lockstep/core/error.hpp"

namespace lockstep::cli {
namespace {

// nccl-tests' defaults (README "Arguments", src/common.cu): -b 32M -e 32M -i 1M, no factor.
constexpr std::uint64_t kDefaultBytes = 32ull << 20;
constexpr std::uint64_t kDefaultStep = 1ull << 20;

long parse_int(const std::string& text, const std::string& flag) {
  long v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size())
    throw InputError(flag, fmt::format("'{}' is not an integer", text));
  return v;
}

struct Ignored {
  std::string NcclTestsFlags::*value;
  const char* flag;
  const char* name;
  const char* why;
};
// Why each real-run flag changes nothing in a prediction.
constexpr const char* kSteady = "a prediction is the steady-state time of one call";
const Ignored kIgnored[] = {
    {&NcclTestsFlags::iters, "-n", "iters", kSteady},
    {&NcclTestsFlags::warmup, "-w", "warmup_iters", kSteady},
    {&NcclTestsFlags::agg_iters, "-m", "agg_iters", kSteady},
    {&NcclTestsFlags::cycles, "-N", "run_cycles", kSteady},
    {&NcclTestsFlags::check, "-c", "check", "nothing is computed to check; #wrong prints N/A"},
    {&NcclTestsFlags::average, "-a", "average", "every rank of a prediction has the same time"},
    {&NcclTestsFlags::blocking, "-z", "blocking",
     "the launch overhead is already in each call's time"},
    {&NcclTestsFlags::cudagraph, "-G", "cudagraph",
     "the launch overhead is already in each call's time"},
    {&NcclTestsFlags::parallel, "-p", "parallel_init", "initialisation is not timed"},
    {&NcclTestsFlags::cputime, "-C", "report_cputime", "the time printed is the GPU time"},
    {&NcclTestsFlags::local_register, "-R", "local_register",
     "buffer registration is not modelled"},
    {&NcclTestsFlags::timeout, "-T", "timeout", "nothing runs long enough to time out"},
    {&NcclTestsFlags::stream_null, "-y", "stream_null", "streams are not modelled"},
    {&NcclTestsFlags::memory_report, "-M", "memory_report",
     "see lockstep's own --dry-run memory estimate"},
};

}  // namespace

bool NcclTestsFlags::names_sizes() const {
  return !minbytes.empty() || !maxbytes.empty() || !stepbytes.empty() || !stepfactor.empty();
}

std::uint64_t parse_nccl_tests_size(const std::string& text, const std::string& flag) {
  std::size_t digits = 0;
  while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits]))) ++digits;
  const std::string unit = text.substr(digits);
  std::uint64_t scale = 0;
  if (unit.empty()) scale = 1;
  const char u = unit.empty() ? '\0' : static_cast<char>(std::toupper(unit[0]));
  const std::string rest = unit.empty() ? "" : unit.substr(1);
  if (rest.empty() || rest == "B" || rest == "iB") {
    if (u == 'K') scale = 1ull << 10;
    if (u == 'M') scale = 1ull << 20;
    if (u == 'G') scale = 1ull << 30;
  }
  if (digits == 0 || scale == 0 || digits > 12) {
    throw InputError(flag, fmt::format("'{}' is not an nccl-tests size (bytes, or a number with "
                                       "K, M or G: 8, 64K, 128M, 8G)",
                                       text));
  }
  return std::stoull(text.substr(0, digits)) * scale;
}

void add_nccl_tests_options(CLI::App& cmd, NcclTestsFlags& f) {
  const std::string group = "nccl-tests flags (docs/nccl-tests.md)";
  auto opt = [&](const char* names, std::string& value, const char* help) {
    cmd.add_option(names, value, help)->group(group);
  };
  opt("-b,--minbytes", f.minbytes, "smallest size, nccl-tests style (8, 64K, 128M; default 32M)");
  opt("-e,--maxbytes", f.maxbytes, "largest size (default 32M)");
  opt("-i,--stepbytes", f.stepbytes, "add this to the size each row (default 1M)");
  opt("-f,--stepfactor", f.stepfactor, "multiply the size by this each row (instead of -i)");
  opt("-t,--nthreads", f.nthreads, "threads per process; GPUs per node = -t x -g");
  opt("-g,--ngpus", f.ngpus, "GPUs per thread: lockstep runs one process per node");
  opt("-o,--redop", f.op, "sum | prod | min | max | avg | all (printed; same time)");
  opt("-d,--datatype", f.datatype,
      "int8 | uint8 | int32 | uint32 | int64 | float | double | "
      "bfloat16 | all");
  opt("-r,--root", f.root, "root rank of broadcast and reduce (printed; same time)");
  for (const Ignored& i : kIgnored) {
    cmd.add_option(fmt::format("{},--{}", i.flag, i.name), f.*(i.value),
                   fmt::format("accepted and ignored: {}", i.why))
        ->group(group);
  }
}

void put_nccl_tests_sweep(const NcclTestsFlags& f, ArgNode& sweep) {
  if (!f.datatype.empty() && f.datatype != "all") {
    if (sweep.has("type")) throw InputError("-d", "give -d or --type, not both");
    sweep.set("type", ArgNode::scalar(f.datatype, "-d"));
  }
  if (!f.names_sizes()) return;
  for (const char* key : {"min_bytes", "max_bytes", "step_factor"}) {
    if (sweep.has(key)) {
      throw InputError(sweep.at(key).path(),
                       "give nccl-tests' -b -e -f -i or lockstep's --min-bytes --max-bytes "
                       "--step-factor, not both");
    }
  }
  auto size = [](const std::string& text, const char* flag, std::uint64_t fallback) {
    return text.empty() ? fallback : parse_nccl_tests_size(text, flag);
  };
  const std::uint64_t min = size(f.minbytes, "-b", kDefaultBytes);
  const std::uint64_t max = size(f.maxbytes, "-e", kDefaultBytes);
  if (max < min) {
    throw InputError(f.maxbytes.empty() ? "-b" : "-e",
                     fmt::format("maxbytes {} is below minbytes {}{}", max, min,
                                 f.maxbytes.empty() || f.minbytes.empty()
                                     ? " (nccl-tests' default -b and -e are 32M)"
                                     : ""));
  }
  sweep.set("min_bytes", ArgNode::scalar(std::to_string(min), "-b"));
  sweep.set("max_bytes", ArgNode::scalar(std::to_string(max), "-e"));
  // nccl-tests reads -f as an integer and steps by -i unless it is above 1.
  const long factor = f.stepfactor.empty() ? 0 : parse_int(f.stepfactor, "-f");
  if (factor < 0) throw InputError("-f", fmt::format("'{}' is negative", f.stepfactor));
  if (factor > 1) {
    sweep.set("step_factor", ArgNode::scalar(std::to_string(factor), "-f"));
  } else {
    sweep.set("step_bytes",
              ArgNode::scalar(std::to_string(size(f.stepbytes, "-i", kDefaultStep)), "-i"));
  }
}

std::string nccl_tests_gpus_per_node(const NcclTestsFlags& f) {
  if (f.ngpus.empty() && f.nthreads.empty()) return "";
  const long threads = f.nthreads.empty() ? 1 : parse_int(f.nthreads, "-t");
  const long gpus = f.ngpus.empty() ? 1 : parse_int(f.ngpus, "-g");
  if (threads < 1) throw InputError("-t", "must be at least 1");
  if (gpus < 1) throw InputError("-g", "must be at least 1");
  return std::to_string(threads * gpus);
}

std::vector<std::string> nccl_tests_ops(const NcclTestsFlags& f) {
  // nccl-tests' order for -o all (src/common.cu test_ops).
  const std::vector<std::string> all = {"sum", "prod", "max", "min", "avg"};
  if (f.op.empty()) return {"sum"};
  if (f.op == "all") return all;
  for (const auto& name : all)
    if (f.op == name) return {name};
  throw InputError("-o", fmt::format("unknown reduction '{}' (expected sum, prod, min, max, avg "
                                     "or all)",
                                     f.op));
}

std::vector<std::string> nccl_tests_types(const NcclTestsFlags& f) {
  // nccl-tests' order for -d all, less the types lockstep has no size for (uint64, half, fp8).
  if (f.datatype == "all")
    return {"int8", "uint8", "int32", "uint32", "int64", "float", "double", "bfloat16"};
  if (f.datatype.empty()) return {};
  return {f.datatype};
}

std::vector<std::string> nccl_tests_notes(const NcclTestsFlags& f) {
  std::vector<std::string> notes;
  // nccl-tests reads each of these as an integer (strtol): so does lockstep, before it ignores it.
  for (const Ignored& i : kIgnored)
    if (!(f.*(i.value)).empty()) parse_int(f.*(i.value), i.flag);
  for (const Ignored& i : kIgnored) {
    if (!(f.*(i.value)).empty())
      notes.push_back(fmt::format("{} {} ({}) ignored: {}", i.flag, f.*(i.value), i.name, i.why));
  }
  if (f.datatype == "all")
    notes.push_back("-d all: uint64, half and the fp8 types are left out (not modelled)");
  return notes;
}

}  // namespace lockstep::cli
