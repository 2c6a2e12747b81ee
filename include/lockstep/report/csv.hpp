#pragma once
// CSV files, one per table of the report (RFC 4180: comma separated, fields holding a comma,
// quote or line break are quoted, quotes doubled, lines end with \n). The first column of every
// table is the variant, so the tables of all variants sit in one file each.
#include <string>
#include <vector>

#include "lockstep/report/results.hpp"

namespace lockstep::report {

struct CsvTable {
  std::string name;  // file name without ".csv": "collectives", "inventory", ...
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
};

/// One field, quoted only when it must be.
std::string csv_field(const std::string& text);
/// A number in its shortest form that reads back to the same double ("0.5", "1e+20", "361.2").
std::string csv_number(double value);
/// The whole table as CSV text, header first.
std::string to_csv(const CsvTable& table);

/// Every table of the run; tables with no rows (no training ran, say) are left out.
std::vector<CsvTable> results_tables(const RunResults& results);
/// The names of every table results_tables can produce, in its order.
std::vector<std::string> all_table_names();

}  // namespace lockstep::report
