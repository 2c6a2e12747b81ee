// Staged (temporary name, then rename) output and the Ctrl-C handler that removes temporaries.
// The handler may run at any instruction, so it only touches a fixed table of paths through
// async-signal-safe calls (unlink, write, _exit); the table's slots are claimed and released
// with atomics by the normal code.
#include "lockstep/report/output.hpp"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <system_error>

#include "lockstep/core/error.hpp"

namespace lockstep::report {
namespace {

constexpr std::size_t kMaxTemporaries = 128;
constexpr std::size_t kMaxPath = 4096;

enum SlotState : int { kFree = 0, kClaimed = 1, kReady = 2 };

struct Slot {
  std::atomic<int> state{kFree};
  std::array<char, kMaxPath> path{};
};
std::array<Slot, kMaxTemporaries> g_slots;

void register_temporary(const std::filesystem::path& path) {
  const std::string text = path.string();
  if (text.size() + 1 > kMaxPath) throw std::runtime_error("output path too long: " + text);
  for (auto& slot : g_slots) {
    int expected = kFree;
    if (slot.state.compare_exchange_strong(expected, kClaimed)) {
      std::memcpy(slot.path.data(), text.c_str(), text.size() + 1);
      slot.state.store(kReady);
      return;
    }
  }
  throw std::runtime_error("too many output files staged at once");
}

void unregister_temporary(const std::filesystem::path& path) {
  const std::string text = path.string();
  for (auto& slot : g_slots) {
    if (slot.state.load() == kReady && text == slot.path.data()) {
      slot.state.store(kFree);
      return;
    }
  }
}

// Set once the newest StagedOutput's commit has put its files in place (inside the signal hold,
// so a handler never sees a commit half done): what the interrupt message says.
std::atomic<bool> g_committed{false};

extern "C" void on_interrupt(int signal_number) {
  for (auto& slot : g_slots) {
    if (slot.state.load() == kReady) ::unlink(slot.path.data());
  }
  static const char kNothing[] =
      "\nlockstep: interrupted; no output written (files of earlier runs left as they were)\n";
  static const char kComplete[] =
      "\nlockstep: interrupted after the new output was written in full\n";
  [[maybe_unused]] auto written = g_committed.load()
                                      ? ::write(STDERR_FILENO, kComplete, sizeof kComplete - 1)
                                      : ::write(STDERR_FILENO, kNothing, sizeof kNothing - 1);
  ::_exit(128 + signal_number);
}

// fsync of a file or directory by path; false with errno set on failure.
bool sync_path(const std::filesystem::path& path, int flags) {
  const int fd = ::open(path.c_str(), flags | O_CLOEXEC);
  if (fd < 0) return false;
  const bool ok = ::fsync(fd) == 0;
  const int saved = errno;
  ::close(fd);
  errno = saved;
  return ok;
}

// Writes `content` to a new file at `path` and fsyncs it; false with errno set on failure.
bool write_synced(const std::filesystem::path& path, std::string_view content) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  std::size_t done = 0;
  bool ok = true;
  while (ok && done < content.size()) {
    const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    ok = n > 0;
    if (ok) done += static_cast<std::size_t>(n);
  }
  ok = ok && ::fsync(fd) == 0;
  const int saved = errno;
  ok = ::close(fd) == 0 && ok;
  if (!ok && errno == 0) errno = saved;
  return ok;
}

// ".name.tmp-<pid>" -> pid; 0 when `file` is not a temporary of StagedOutput.
pid_t temporary_owner(const std::string& file) {
  const std::size_t at = file.rfind(".tmp-");
  if (file.size() < 2 || file[0] != '.' || at == std::string::npos || at == 0) return 0;
  const std::string digits = file.substr(at + 5);
  if (digits.empty() || digits.size() > 9) return 0;
  for (char c : digits)
    if (c < '0' || c > '9') return 0;
  return static_cast<pid_t>(std::stol(digits));
}

// Holds SIGINT and SIGTERM back for its lifetime; a signal that arrives meanwhile is delivered
// when the mask is restored.
class SignalHold {
 public:
  SignalHold() {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigprocmask(SIG_BLOCK, &set, &saved_);
  }
  ~SignalHold() { sigprocmask(SIG_SETMASK, &saved_, nullptr); }
  SignalHold(const SignalHold&) = delete;
  SignalHold& operator=(const SignalHold&) = delete;

 private:
  sigset_t saved_;
};

}  // namespace

StagedOutput::StagedOutput(std::filesystem::path dir, std::string field, SourceLocation where)
    : dir_(std::move(dir)), field_(std::move(field)), where_(std::move(where)) {
  std::error_code ec;
  std::filesystem::create_directories(dir_, ec);
  if (ec || !std::filesystem::is_directory(dir_)) {
    fail("cannot create output directory '" + dir_.string() +
         "': " + (ec ? ec.message() : "not a directory"));
  }
  g_committed.store(false);
  remove_orphan_temporaries(dir_);
  // A probe now rather than an error after the whole simulation.
  const std::filesystem::path probe = dir_ / temp_name("lockstep-probe");
  register_temporary(probe);
  const bool writable = write_synced(probe, "");
  const int saved = errno;
  std::filesystem::remove(probe, ec);
  unregister_temporary(probe);
  if (!writable) {
    fail("cannot write in output directory '" + dir_.string() + "': " + std::strerror(saved));
  }
}

StagedOutput::~StagedOutput() {
  if (!committed_) remove_temporaries();
}

void StagedOutput::fail(const std::string& message) const {
  throw InputError(field_, message, where_);
}

std::string StagedOutput::temp_name(const std::string& name) {
  return "." + name + ".tmp-" + std::to_string(::getpid());
}

void StagedOutput::guard(const std::vector<std::string>& names, bool force) {
  guarded_ = true;
  manifest_ = read_manifest(dir_);
  for (const auto& name : names) {
    const std::filesystem::path path = dir_ / name;
    std::error_code ec;
    if (!std::filesystem::exists(std::filesystem::symlink_status(path, ec)) ||
        manifest_.count(name))
      continue;
    // Forced: the file is lockstep's from now on (replaced, or removed as stale at commit).
    if (force) {
      manifest_.insert(name);
      continue;
    }
    fail("'" + path.string() + "' exists and lockstep did not write it (" + kManifestName +
         " does not list it); give --force to replace it, or another output directory");
  }
}

std::filesystem::path StagedOutput::reserve(const std::string& name) {
  if (name.empty() || name.find('/') != std::string::npos) {
    throw std::invalid_argument("output name must be a plain file name: '" + name + "'");
  }
  for (const auto& s : staged_) {
    if (s.name == name) throw std::invalid_argument("output staged twice: " + name);
  }
  std::filesystem::path temp = dir_ / temp_name(name);
  register_temporary(temp);
  staged_.push_back({name, temp});
  return temp;
}

void StagedOutput::add(const std::string& name, std::string_view content) {
  const std::filesystem::path temp = reserve(name);
  if (!write_synced(temp, content)) {
    fail("cannot write '" + temp.string() + "': " + std::strerror(errno));
  }
}

std::vector<std::filesystem::path> StagedOutput::commit() {
  // The manifest lists the old names and the new ones, and lands first: a run killed between
  // two renames leaves a directory whose every file is still known to be lockstep's.
  std::set<std::string> written;
  for (const auto& s : staged_) written.insert(s.name);
  if (guarded_) {
    std::string text = "# lockstep output manifest: files lockstep wrote here\n";
    std::set<std::string> listed = manifest_;
    listed.insert(written.begin(), written.end());
    for (const auto& name : listed) text += name + "\n";
    const std::filesystem::path temp = dir_ / temp_name(kManifestName);
    register_temporary(temp);
    staged_.insert(staged_.begin(), {kManifestName, temp});
    if (!write_synced(temp, text))
      fail("cannot write '" + temp.string() + "': " + std::strerror(errno));
  }
  for (const auto& s : staged_) {
    // Files a writer filled through reserve() reach the disk before their rename too.
    if (!sync_path(s.temp, O_RDONLY)) {
      fail("cannot write '" + s.temp.string() + "': " + std::strerror(errno));
    }
  }
  std::vector<std::filesystem::path> finals;
  SignalHold hold;
  for (const auto& s : staged_) {
    std::filesystem::path final_path = dir_ / s.name;
    std::error_code ec;
    std::filesystem::rename(s.temp, final_path, ec);
    if (ec) {
      fail("cannot rename '" + s.temp.string() + "' to '" + final_path.string() +
           "': " + ec.message());
    }
    unregister_temporary(s.temp);
    if (s.name != kManifestName) finals.push_back(std::move(final_path));
  }
  // Files of an earlier run that this one did not write: the directory never mixes two runs.
  for (const auto& name : manifest_) {
    if (written.count(name) == 0 && name != kManifestName) {
      std::error_code ec;
      std::filesystem::remove(dir_ / name, ec);
    }
  }
  sync_path(dir_, O_RDONLY | O_DIRECTORY);  // the renames themselves
  committed_ = true;
  g_committed.store(true);
  staged_.clear();
  return finals;
}

void StagedOutput::remove_temporaries() {
  for (const auto& s : staged_) {
    std::error_code ec;
    std::filesystem::remove(s.temp, ec);  // best effort: we are already failing
    unregister_temporary(s.temp);
  }
  staged_.clear();
}

std::set<std::string> read_manifest(const std::filesystem::path& dir) {
  std::set<std::string> names;
  std::ifstream in(dir / kManifestName);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#' || line.find('/') != std::string::npos) continue;
    names.insert(line);
  }
  return names;
}

std::size_t remove_orphan_temporaries(const std::filesystem::path& dir) {
  std::size_t removed = 0;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const pid_t owner = temporary_owner(entry.path().filename().string());
    // kill(pid, 0) fails with ESRCH only when no such process exists; EPERM means it lives.
    if (owner <= 0 || owner == ::getpid() || ::kill(owner, 0) == 0 || errno != ESRCH) continue;
    std::error_code remove_ec;
    if (std::filesystem::remove(entry.path(), remove_ec)) ++removed;
  }
  return removed;
}

std::filesystem::path resolve_scenario_output(const ArgNode& node) {
  namespace fs = std::filesystem;
  const fs::path given(node.text());
  const std::string hint =
      " (a scenario file writes only inside its own folder; give the path on the command line "
      "to write elsewhere)";
  if (given.is_absolute()) node.fail("absolute path '" + node.text() + "' refused" + hint);
  for (const auto& part : given) {
    if (part == "..") node.fail("path '" + node.text() + "' goes up with '..'" + hint);
  }
  const fs::path file(node.where().file);
  const fs::path base = file.has_parent_path() ? file.parent_path() : fs::path(".");
  const fs::path resolved = base / given;
  std::error_code ec;
  const fs::path real_base = fs::weakly_canonical(base, ec);
  const fs::path real = fs::weakly_canonical(resolved, ec);
  if (ec) node.fail("cannot resolve '" + resolved.string() + "': " + ec.message());
  // weakly_canonical follows every symlink that exists, the file's own included.
  auto b = real_base.begin();
  auto r = real.begin();
  for (; b != real_base.end() && r != real.end() && *b == *r; ++b, ++r) {
  }
  if (b != real_base.end()) {
    node.fail("path '" + node.text() + "' leaves the scenario's folder through a symlink (to '" +
              real.string() + "')" + hint);
  }
  return resolved;
}

void install_interrupt_handler() {
  struct sigaction action {};
  action.sa_handler = on_interrupt;
  sigemptyset(&action.sa_mask);
  sigaddset(&action.sa_mask, SIGINT);
  sigaddset(&action.sa_mask, SIGTERM);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

}  // namespace lockstep::report
