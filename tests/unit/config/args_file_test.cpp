// Configuration files: errors name the field that referred to the file.
#include "lockstep/config/args_file.hpp"

#include <gtest/gtest.h>

#include <string>

#include "../core/error_of.hpp"

namespace lockstep {
namespace {

TEST(Files, MissingFileNamesTheField) {
  const std::string message =
      error_of([] { load_args_file("/nonexistent/x.yaml", "", "cluster.path"); });
  EXPECT_EQ(message, "cluster.path: cannot read '/nonexistent/x.yaml': no such file");
}

}  // namespace
}  // namespace lockstep
