// Every row of the public calibration files (../shared/calibration/nccl_tests_public.csv and
// nccl_tests_public_more.csv, beside the source tree as CI lays it out) run as bench_calibration
// runs it (run_calibration_row) on the analytical engine: the row must read, its preset cluster
// must build a connected graph with the cluster's GPUs, and the prediction must be a finite,
// positive time and bus bandwidth. A row the bench would print as "skipped" fails here: a builder
// check that refused the GB300 rows (a fused 800G NIC port above a 400G switch port) once left 13
// of them out of the bench's figures without a test noticing. unseen_rows_test.cpp reads other
// sites' rows without running them; this runs the rows the figures come from.
#include <gtest/gtest.h>

#include <cmath>
#include <exception>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "lockstep/scenario/calibration_row.hpp"
#include "lockstep/scenario/calibration_run.hpp"

namespace lockstep {
namespace {

std::filesystem::path calibration_file(const char* name) {
  return std::filesystem::path(LOCKSTEP_SOURCE_DIR) / ".." / "shared" / "calibration" / name;
}

// Runs every row of `name`, one failure per bad row naming its file line; returns the rows read.
std::size_t run_every_row(const char* name) {
  const std::filesystem::path path = calibration_file(name);
  std::ifstream in(path);
  if (!in) {
    ADD_FAILURE() << "cannot read " << path << ": the public measurements live in ../shared "
                  << "beside the source tree (as CI lays it out)";
    return 0;
  }
  const std::vector<CalibrationRow> rows = read_calibration_csv(in, name);
  std::size_t ran = 0;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const std::string where =
        std::string(name) + ":" + std::to_string(i + 2) + " (" + rows[i].system + ")";
    try {
      const CalibrationRun run = run_calibration_row(rows[i], "analytical");
      const std::size_t gpus = std::size_t{run.preset.nodes} * run.preset.gpus_per_node;
      EXPECT_TRUE(run.graph.connected()) << where;
      EXPECT_EQ(run.graph.gpus().size(), gpus) << where;
      EXPECT_LE(run.c.ranks, gpus) << where;
      EXPECT_TRUE(std::isfinite(run.c.measured_busbw_GBps) && run.c.measured_busbw_GBps > 0)
          << where << ": measured " << run.c.measured_busbw_GBps << " GB/s";
      const double us = run.prediction.time.microseconds();
      EXPECT_TRUE(std::isfinite(us) && us > 0) << where << ": predicted " << us << " us";
      const double bus = run.prediction.busbw_GBps;
      EXPECT_TRUE(std::isfinite(bus) && bus > 0) << where << ": predicted " << bus << " GB/s";
      ++ran;
    } catch (const std::exception& e) {
      ADD_FAILURE() << where << " refused: " << e.what();
    }
  }
  EXPECT_EQ(ran, rows.size()) << name;
  return rows.size();
}

// At least the files' rows as published (20 and 112): fewer rows read means the reader or a
// file lost some, which the per-row checks would not see.
TEST(PublicRows, EveryRowOfTheFirstFileBuildsAndPredicts) {
  EXPECT_GE(run_every_row("nccl_tests_public.csv"), 20u);
}

TEST(PublicRows, EveryRowOfTheSecondFileBuildsAndPredicts) {
  EXPECT_GE(run_every_row("nccl_tests_public_more.csv"), 112u);
}

}  // namespace
}  // namespace lockstep
