#include "lockstep/report/output.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <tuple>
#include <utility>

#include "lockstep/config/yaml_reader.hpp"
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

TEST_F(StagedOutputTest, GuardRefusesAFileLockstepDidNotWriteUnlessForced) {
  fs::create_directories(dir_);
  std::ofstream(dir_ / "report.html") << "the user's page";
  {
    StagedOutput out(dir_);
    EXPECT_THROW(out.guard({"report.html", "results.json"}, false), InputError);
  }
  EXPECT_EQ(read(dir_ / "report.html"), "the user's page");
  StagedOutput out(dir_);
  out.guard({"report.html", "results.json"}, true);
  out.add("report.html", "new");
  out.commit();
  EXPECT_EQ(read(dir_ / "report.html"), "new");
  EXPECT_EQ(read(dir_ / kManifestName),
            "# lockstep output manifest: files lockstep wrote here\nreport.html\n");
}

TEST_F(StagedOutputTest, ManifestLetsTheNextRunReplaceAndRemoveOnlyLockstepsFiles) {
  {
    StagedOutput out(dir_);
    out.guard({"a.csv", "b.csv"}, false);
    out.add("a.csv", "1");
    out.add("b.csv", "1");
    out.commit();
  }
  std::ofstream(dir_ / "notes.txt") << "mine";
  StagedOutput out(dir_);
  out.guard({"a.csv", "b.csv"}, false);  // both listed: no --force needed
  out.add("a.csv", "2");
  out.commit();
  // b.csv was the earlier run's and this run did not write it: removed; notes.txt is not ours.
  EXPECT_EQ(listing(), (std::vector<std::string>{kManifestName, "a.csv", "notes.txt"}));
  EXPECT_EQ(read(dir_ / "a.csv"), "2");
}

TEST_F(StagedOutputTest, OrphanTemporariesOfDeadProcessesAreRemoved) {
  fs::create_directories(dir_);
  // A PID that is surely gone: a child's that has been waited for.
  const pid_t gone = ::fork();
  if (gone == 0) ::_exit(0);
  ::waitpid(gone, nullptr, 0);
  const std::string dead = ".report.html.tmp-" + std::to_string(gone);
  const std::string live = ".report.html.tmp-" + std::to_string(::getppid());
  std::ofstream(dir_ / dead) << "half";
  std::ofstream(dir_ / live) << "in progress";
  std::ofstream(dir_ / "x.tmp-1") << "not hidden: not ours";
  StagedOutput out(dir_);
  EXPECT_EQ(listing(), (std::vector<std::string>{live, "x.tmp-1"}));
}

TEST_F(StagedOutputTest, UnwritableTargetIsReportedBeforeAnythingRuns) {
  fs::create_directories(dir_);
  std::ofstream(dir_ / "file") << "x";
  try {
    StagedOutput out(dir_ / "file", "trace");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "trace");
  }
}

// The exit status and stderr of a child that runs `body` with SIGINT pending.
std::pair<int, std::string> interrupted_child(const fs::path& dir, bool commit_first) {
  const fs::path err = dir.string() + ".stderr";
  const pid_t child = ::fork();
  if (child == 0) {
    const int fd = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(fd, STDERR_FILENO);
    install_interrupt_handler();
    sigset_t set, saved;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigprocmask(SIG_BLOCK, &set, &saved);
    ::raise(SIGINT);  // pending, as if it arrived while commit() held signals back
    StagedOutput out(dir);
    out.add("report.html", "new");
    if (commit_first) out.commit();
    sigprocmask(SIG_SETMASK, &saved, nullptr);  // delivered here: the handler exits
    ::_exit(0);
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  std::ifstream in(err);
  std::stringstream text;
  text << in.rdbuf();
  fs::remove(err);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, text.str()};
}

TEST_F(StagedOutputTest, InterruptSaysWhetherTheNewOutputIsComplete) {
  fs::create_directories(dir_);
  std::ofstream(dir_ / "report.html") << "old";
  auto [rc, message] = interrupted_child(dir_, false);
  EXPECT_EQ(rc, 128 + SIGINT);
  EXPECT_NE(message.find("no output written"), std::string::npos) << message;
  EXPECT_EQ(read(dir_ / "report.html"), "old");
  std::tie(rc, message) = interrupted_child(dir_, true);
  EXPECT_EQ(rc, 128 + SIGINT);
  EXPECT_NE(message.find("new output was written in full"), std::string::npos) << message;
  EXPECT_EQ(read(dir_ / "report.html"), "new");
  EXPECT_EQ(listing(), (std::vector<std::string>{"report.html"}));
}

// A `trace:` value as a scenario file at `file` would give it.
ArgNode trace_node(const std::string& value, const fs::path& file) {
  return ArgNode::scalar(value, "job.trace", SourceLocation{file.string(), 3, 10});
}

TEST_F(StagedOutputTest, ScenarioOutputPathsStayInTheScenarioFolder) {
  const fs::path folder = dir_ / "scenarios";
  fs::create_directories(folder / "out");
  fs::create_directories(dir_ / "victim");
  const fs::path file = folder / "s.yaml";
  EXPECT_EQ(resolve_scenario_output(trace_node("out/t.json", file)), folder / "out/t.json");
  EXPECT_EQ(resolve_scenario_output(trace_node("t.json", "s.yaml")), fs::path("./t.json"));
  for (const std::string bad : {"../victim/keep.txt", "/etc/passwd", "out/../../victim/x"}) {
    try {
      resolve_scenario_output(trace_node(bad, file));
      ADD_FAILURE() << bad << " accepted";
    } catch (const InputError& e) {
      EXPECT_EQ(e.field(), "job.trace");
      EXPECT_EQ(e.where().line, 3);
    }
  }
  fs::create_directory_symlink(dir_ / "victim", folder / "out-link");
  fs::create_directory_symlink(folder / "out", folder / "in-link");
  EXPECT_THROW(resolve_scenario_output(trace_node("out-link/keep.txt", file)), InputError);
  EXPECT_EQ(resolve_scenario_output(trace_node("in-link/t.json", file)), folder / "in-link/t.json");
}

}  // namespace
}  // namespace lockstep::report
