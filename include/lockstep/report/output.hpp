#pragma once
// Writing results so that nobody ever sees half a file: each file is written under a hidden
// temporary name in the destination directory, then commit() renames them all to their final
// names (rename within one directory is atomic on POSIX). A run stopped before commit() leaves
// only its temporaries, and those are removed: by the destructor when an exception unwinds, and
// by the SIGINT/SIGTERM handler (install_interrupt_handler) when the user presses Ctrl-C.
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace lockstep::report {

class StagedOutput {
 public:
  /// Creates `dir` (and its parents) if needed; an unwritable directory is an InputError.
  explicit StagedOutput(std::filesystem::path dir);
  ~StagedOutput();
  StagedOutput(const StagedOutput&) = delete;
  StagedOutput& operator=(const StagedOutput&) = delete;

  /// Writes `content` to the temporary of `name` (a plain file name, no directories).
  void add(const std::string& name, std::string_view content);
  /// Reserves the temporary of `name` for a writer that wants a path; the caller fills it.
  std::filesystem::path reserve(const std::string& name);
  /// Renames every staged file to its final name, with SIGINT and SIGTERM held back meanwhile
  /// so that the set lands whole. Returns the final paths in the order they were staged.
  std::vector<std::filesystem::path> commit();

  const std::filesystem::path& dir() const { return dir_; }
  /// ".name.tmp-<pid>": hidden, unique per process, in the destination directory.
  static std::string temp_name(const std::string& name);

 private:
  struct Staged {
    std::string name;
    std::filesystem::path temp;
  };
  void remove_temporaries();
  std::filesystem::path dir_;
  std::vector<Staged> staged_;
  bool committed_ = false;
};

/// Installs handlers for SIGINT and SIGTERM that remove every uncommitted temporary of every
/// StagedOutput, print "lockstep: interrupted" on stderr and exit with 130 (128 + SIGINT) or 143.
/// Computation needs no cleanup (results live in memory until written), so stopping at once is
/// safe wherever the signal lands. Idempotent.
void install_interrupt_handler();

}  // namespace lockstep::report
