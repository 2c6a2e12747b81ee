// Staged (temporary name, then rename) output and the Ctrl-C handler that removes temporaries.
// The handler may run at any instruction, so it only touches a fixed table of paths through
// async-signal-safe calls (unlink, write, _exit); the table's slots are claimed and released
// with atomics by the normal code.
#include "lockstep/report/output.hpp"

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

extern "C" void on_interrupt(int signal_number) {
  for (auto& slot : g_slots) {
    if (slot.state.load() == kReady) ::unlink(slot.path.data());
  }
  static const char kMessage[] = "\nlockstep: interrupted\n";
  [[maybe_unused]] auto written = ::write(STDERR_FILENO, kMessage, sizeof kMessage - 1);
  ::_exit(128 + signal_number);
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

StagedOutput::StagedOutput(std::filesystem::path dir) : dir_(std::move(dir)) {
  std::error_code ec;
  std::filesystem::create_directories(dir_, ec);
  if (ec || !std::filesystem::is_directory(dir_)) {
    throw InputError("--out", "cannot create output directory '" + dir_.string() +
                                  "': " + (ec ? ec.message() : "not a directory"));
  }
}

StagedOutput::~StagedOutput() {
  if (!committed_) remove_temporaries();
}

std::string StagedOutput::temp_name(const std::string& name) {
  return "." + name + ".tmp-" + std::to_string(::getpid());
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
  std::ofstream out(temp, std::ios::binary | std::ios::trunc);
  out.write(content.data(), static_cast<std::streamsize>(content.size()));
  out.close();
  if (!out) {
    throw InputError("--out", "cannot write '" + temp.string() + "': " + std::strerror(errno));
  }
}

std::vector<std::filesystem::path> StagedOutput::commit() {
  std::vector<std::filesystem::path> finals;
  SignalHold hold;
  for (const auto& s : staged_) {
    std::filesystem::path final_path = dir_ / s.name;
    std::error_code ec;
    std::filesystem::rename(s.temp, final_path, ec);
    if (ec) {
      throw InputError("--out", "cannot rename '" + s.temp.string() + "' to '" +
                                    final_path.string() + "': " + ec.message());
    }
    unregister_temporary(s.temp);
    finals.push_back(std::move(final_path));
  }
  committed_ = true;
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
