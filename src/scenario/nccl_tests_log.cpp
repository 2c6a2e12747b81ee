// nccl-tests logs read back and compared with lockstep's prediction (docs/nccl-tests.md). The
// row layout is nccl-tests' src/common.cu: "%12li  %12li  %8s  %6s  %6i" (size, count, type,
// redop, root; logs before nccl-tests 2.11 have no root) then "  %7s  %6.2f  %6.2f  %5s" (time,
// algbw, busbw, #wrong) for the out-of-place and the in-place group.
#include "lockstep/scenario/nccl_tests_log.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <regex>

#include "lockstep/core/error.hpp"
#include "lockstep/core/error_stats.hpp"
#include "lockstep/scenario/collective_sweep.hpp"

namespace lockstep {
namespace {

struct Token {
  std::string text;
  int column = 0;  // 1-based
};

std::vector<Token> tokens_of(const std::string& line) {
  std::vector<Token> out;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i]))) ++i;
    const std::size_t start = i;
    while (i < line.size() && !std::isspace(static_cast<unsigned char>(line[i]))) ++i;
    if (i > start) out.push_back({line.substr(start, i - start), static_cast<int>(start) + 1});
  }
  return out;
}

bool all_digits(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return std::isdigit(static_cast<unsigned char>(c)) != 0;
  });
}

bool is_int(const std::string& s) {
  return all_digits(s) || (s.size() > 1 && s[0] == '-' && all_digits(s.substr(1)));
}

class LineReader {
 public:
  LineReader(const std::string& file, int line) : file_(file), line_(line) {}
  [[noreturn]] void fail(int column, const std::string& message) const {
    throw InputError("", message, SourceLocation{file_, line_, column});
  }
  double number(const Token& t, const char* what) const {
    double v = 0;
    const auto [end, ec] = std::from_chars(t.text.data(), t.text.data() + t.text.size(), v);
    if (ec != std::errc() || end != t.text.data() + t.text.size() || !std::isfinite(v) || v < 0)
      fail(t.column, fmt::format("{}: '{}' is not a number", what, t.text));
    return v;
  }
  std::uint64_t count(const Token& t, const char* what) const {
    std::uint64_t v = 0;
    const auto [end, ec] = std::from_chars(t.text.data(), t.text.data() + t.text.size(), v);
    if (ec != std::errc() || end != t.text.data() + t.text.size())
      fail(t.column, fmt::format("{}: '{}' is not a whole number", what, t.text));
    return v;
  }

 private:
  const std::string& file_;
  int line_;
};

int decimals(const std::string& number) {
  const auto dot = number.find('.');
  return dot == std::string::npos ? 0 : static_cast<int>(number.size() - dot - 1);
}

}  // namespace

NcclTestsLog read_nccl_tests_log(std::istream& in, const std::string& file,
                                 std::optional<CollectiveOp> op, bool in_place) {
  static const std::regex starting(R"(^#\s*Collective test starting:\s*(\S+))");
  static const std::regex rank_line(R"(^#\s+Rank\s+(\d+)\s)");
  // Launchers' tags in front of a line: mpirun --tag-output "[1,0]<stdout>:", srun -l "0: ".
  static const std::regex launcher_tag(R"(^(\[\d+,\d+\]<std(out|err)>:|\s*\d+: ))");
  NcclTestsLog log;
  log.file = file;
  const bool op_given = op.has_value();
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    std::smatch m;
    int offset = 0;  // columns stay the file's with a tag cut off
    if (std::regex_search(line, m, launcher_tag)) {
      offset = static_cast<int>(m.length(0));
      line = m.suffix();
    }
    if (std::regex_search(line, m, starting)) {
      if (!op_given) {
        const std::string name = m[1];
        try {
          op = parse_sweep_op(name, "collective");
        } catch (const InputError& e) {
          throw InputError(
              "", e.bare_message(),
              SourceLocation{file, number, offset + static_cast<int>(m.position(1)) + 1});
        }
      }
      continue;
    }
    if (std::regex_search(line, m, rank_line)) {
      const auto rank = static_cast<std::uint32_t>(std::stoul(m[1]));
      if (log.ranks_line == 0) log.ranks_line = number;
      log.ranks = std::max(log.ranks, rank + 1);
      continue;
    }
    std::vector<Token> t = tokens_of(line);
    for (Token& token : t) token.column += offset;
    // A result row starts with two whole numbers (size, count); anything else is another
    // program's chatter (NCCL INFO, warnings, comments) and skipped.
    if (t.size() < 2 || !all_digits(t[0].text) || !all_digits(t[1].text)) continue;
    const LineReader r(file, number);
    const std::size_t n = t.size();
    std::size_t first_group = 0;
    if (n >= 9 && (n - 5) % 4 == 0 && is_int(t[4].text)) {
      first_group = 5;
    } else if (n >= 8 && (n - 4) % 4 == 0 && !is_int(t[4].text)) {
      first_group = 4;
    } else {
      r.fail(t[0].column,
             fmt::format("expected an nccl-tests row: size count type redop root, then time "
                         "algbw busbw #wrong per group (13 columns), found {} columns",
                         n));
    }
    NcclTestsLogRow row;
    row.line = number;
    row.bytes = r.count(t[0], "size");
    row.count = r.count(t[1], "count");
    if (row.bytes == 0) continue;  // gathers print tiny sizes that round to no element per rank
    try {
      row.type = nccl_tests_type(t[2].text);
    } catch (const std::invalid_argument&) {
      // -d all logs carry half, uint64 and fp8 rows: those are passed over, and counted.
      if (std::find(log.unmodelled_types.begin(), log.unmodelled_types.end(), t[2].text) ==
          log.unmodelled_types.end())
        log.unmodelled_types.push_back(t[2].text);
      ++log.unmodelled_rows;
      continue;
    }
    row.redop = t[3].text;
    if (first_group == 5) row.root = std::stoi(t[4].text);
    const std::size_t group = first_group + (in_place ? 4 : 0);
    if (group + 4 > n)
      r.fail(t[n - 1].column + static_cast<int>(t[n - 1].text.size()),
             "the row has no in-place group");
    const Token& time = t[group];
    row.time_us = r.number(time, "time");
    if (row.time_us == 0) r.fail(time.column, "time: 0 us cannot be compared with");
    row.time_decimals = decimals(time.text);
    row.algbw_GBps = r.number(t[group + 1], "algbw");
    row.busbw_GBps = r.number(t[group + 2], "busbw");
    if (!op) {
      r.fail(t[0].column,
             "the log does not name its collective before this row (no '# Collective test "
             "starting: X_perf' line); give --op");
    }
    row.op = *op;
    log.rows.push_back(row);
  }
  if (log.rows.empty() && log.unmodelled_rows > 0) {
    throw InputError(
        "",
        fmt::format("no rows of a type lockstep models ({} rows of {}; lockstep has {})",
                    log.unmodelled_rows, fmt::join(log.unmodelled_types, ", "),
                    fmt::join(nccl_tests_type_names(), ", ")),
        SourceLocation{file, std::max(number, 1), 1});
  }
  if (log.rows.empty()) {
    throw InputError("",
                     "no nccl-tests result rows (size count type redop root time algbw busbw "
                     "#wrong ...)",
                     SourceLocation{file, std::max(number, 1), 1});
  }
  return log;
}

CollectiveSweep calibration_sweep(const NcclTestsLog& log, const NcclTestsLogRow& row,
                                  const CalibrationRequest& request) {
  const SourceLocation where{log.file, row.line, 1};
  if (row.op == CollectiveOp::Barrier)
    throw InputError("", "the NCCL model has no barrier to compare with", where);
  CollectiveSweep s;
  s.op = row.op;
  s.algo = request.algo;
  s.proto = request.proto;
  s.algo_field = request.algo_field;
  s.engine = request.engine;
  s.sharp = request.sharp;
  s.type = row.type;
  s.min_bytes = s.max_bytes = Bytes(row.bytes);
  s.min_bytes_field = s.max_bytes_field = "size";
  s.min_bytes_where = s.max_bytes_where = where;
  return s;
}

std::vector<LogComparison> compare_nccl_tests_log(const NcclTestsLog& log,
                                                  const NcclCluster& cluster,
                                                  const Topology* topology,
                                                  const CalibrationRequest& request) {
  if (log.ranks != 0 && log.ranks != cluster.ranks()) {
    throw InputError("",
                     fmt::format("the log ran {} ranks ('#  Rank' lines), the cluster has {}; "
                                 "give --nodes and --gpus-per-node (or -g) to match",
                                 log.ranks, cluster.ranks()),
                     SourceLocation{log.file, log.ranks_line, 1});
  }
  std::vector<LogComparison> out;
  for (const NcclTestsLogRow& m : log.rows) {
    const SourceLocation where{log.file, m.line, 1};
    const std::vector<CollectiveRow> rows =
        run_collective_sweep(calibration_sweep(log, m, request), cluster, topology);
    if (rows.empty() || rows.front().bytes != m.bytes) {
      throw InputError("size",
                       fmt::format("{} B is not a whole number of {} elements{} on {} ranks",
                                   m.bytes, nccl_tests_type_name(m.type),
                                   rows.empty() ? "" : " per rank", cluster.ranks()),
                       where);
    }
    LogComparison c;
    c.measured = m;
    c.predicted = rows.front();
    // The measurement is only known to its printed digits: the prediction is rounded alike, so
    // a log lockstep printed reads back with no error at all.
    const double scale = std::pow(10.0, m.time_decimals);
    const double us = std::round(c.predicted.time.microseconds() * scale) / scale;
    c.error_pct = (us - m.time_us) / m.time_us * 100;
    c.predicted.time = Time::us(us);
    out.push_back(std::move(c));
  }
  return out;
}

CalibrationSummary summarise(const std::vector<LogComparison>& rows) {
  CalibrationSummary s;
  s.rows = rows.size();
  if (rows.empty()) return s;
  std::vector<double> e;
  for (const LogComparison& r : rows) e.push_back(std::abs(r.error_pct));
  s.median_pct = median(e);
  s.p90_pct = p90(e);
  s.max_pct = *std::max_element(e.begin(), e.end());
  return s;
}

}  // namespace lockstep
