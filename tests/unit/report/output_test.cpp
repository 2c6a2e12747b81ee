#include "lockstep/report/output.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "lockstep/core/error.hpp"

namespace lockstep::report {
namespace {

namespace fs = std::filesystem;

// A fresh directory per test under the build tree, removed afterwards.
class StagedOutputTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(LOCKSTEP_BINARY_DIR) / "test-output" /
           (std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) + "-" +
            std::to_string(::getpid()));
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::vector<std::string> listing() const {
    std::vector<std::string> names;
    if (!fs::exists(dir_)) return names;
    for (const auto& e : fs::directory_iterator(dir_)) names.push_back(e.path().filename());
    std::sort(names.begin(), names.end());
    return names;
  }
  static std::string read(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  fs::path dir_;
};

TEST_F(StagedOutputTest, NothingVisibleUnderFinalNamesBeforeCommit) {
  StagedOutput out(dir_);
  out.add("report.html", "<html>");
  out.add("results.json", "{}");
  EXPECT_EQ(listing(), (std::vector<std::string>{StagedOutput::temp_name("report.html"),
                                                 StagedOutput::temp_name("results.json")}));
  const auto finals = out.commit();
  ASSERT_EQ(finals.size(), 2u);
  EXPECT_EQ(finals[0], dir_ / "report.html");
  EXPECT_EQ(listing(), (std::vector<std::string>{"report.html", "results.json"}));
  EXPECT_EQ(read(dir_ / "results.json"), "{}");
}

TEST_F(StagedOutputTest, AbandonedRunRemovesTemporariesAndKeepsOldFiles) {
  fs::create_directories(dir_);
  std::ofstream(dir_ / "report.html") << "old report";
  {
    StagedOutput out(dir_);
    out.add("report.html", "new report, never committed");
    // Leaves scope without commit, as when an exception unwinds.
  }
  EXPECT_EQ(listing(), (std::vector<std::string>{"report.html"}));
  EXPECT_EQ(read(dir_ / "report.html"), "old report");
}

TEST_F(StagedOutputTest, CommitReplacesOldFileWhole) {
  fs::create_directories(dir_);
  std::ofstream(dir_ / "results.json") << "old";
  StagedOutput out(dir_);
  out.add("results.json", "new");
  out.commit();
  EXPECT_EQ(read(dir_ / "results.json"), "new");
}

TEST_F(StagedOutputTest, ReservedPathFilledByAnotherWriter) {
  StagedOutput out(dir_);
  const fs::path temp = out.reserve("trace.json");
  EXPECT_EQ(temp.parent_path(), dir_);
  std::ofstream(temp) << "[]";
  out.commit();
  EXPECT_EQ(read(dir_ / "trace.json"), "[]");
}

TEST_F(StagedOutputTest, RejectsPathsAndDuplicates) {
  StagedOutput out(dir_);
  EXPECT_THROW(out.add("sub/file.csv", "x"), std::invalid_argument);
  EXPECT_THROW(out.add("", "x"), std::invalid_argument);
  out.add("a.csv", "x");
  EXPECT_THROW(out.add("a.csv", "y"), std::invalid_argument);
}

TEST_F(StagedOutputTest, UncreatableDirectoryIsInputError) {
  fs::create_directories(dir_);
  std::ofstream(dir_ / "file") << "x";
  EXPECT_THROW(StagedOutput(dir_ / "file" / "sub"), InputError);
}

TEST_F(StagedOutputTest, InterruptRemovesTemporariesAndExits130) {
  fs::create_directories(dir_);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    install_interrupt_handler();
    StagedOutput out(dir_);
    out.add("report.html", "half a report");
    out.add("results.json", "{");
    ::raise(SIGINT);  // the handler exits; reaching the next line would be a failure
    ::_exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 128 + SIGINT);
  EXPECT_TRUE(listing().empty());
}

}  // namespace
}  // namespace lockstep::report
