#pragma once
// Writing results so that nobody ever sees half a file and no file of the user's is replaced:
// each file is written under a hidden temporary name in the destination directory and fsynced,
// then commit() renames them all to their final names (rename within one directory is atomic on
// POSIX) and fsyncs the directory. A run stopped before commit() leaves only its temporaries,
// and those are removed: by the destructor when an exception unwinds, by the SIGINT/SIGTERM
// handler (install_interrupt_handler) on Ctrl-C, and by a later run's StagedOutput when the
// process that made them is gone (SIGKILL). docs/report.md, "Output files".
#include <filesystem>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "lockstep/config/arg_node.hpp"

namespace lockstep::report {

/// The list of files lockstep wrote in an output directory, one name a line after a header line:
/// a file of the directory that it does not list is the user's, never replaced without --force.
inline constexpr const char* kManifestName = ".lockstep-manifest";

class StagedOutput {
 public:
  /// Creates `dir` (and its parents) if needed, removes the temporaries of processes that are
  /// gone, and creates and removes a probe file there, so that an unwritable directory is an
  /// InputError naming `field` before any simulation.
  explicit StagedOutput(std::filesystem::path dir, std::string field = "--out",
                        SourceLocation where = {});
  ~StagedOutput();
  StagedOutput(const StagedOutput&) = delete;
  StagedOutput& operator=(const StagedOutput&) = delete;

  /// Refuses, with an InputError naming the field, to ever replace an existing file of `names`
  /// that the directory's manifest does not list, unless `force`. From then on commit() also
  /// writes the manifest and removes the files the old manifest lists that this run did not
  /// write (so the directory never mixes two runs, and never loses a file of the user's).
  void guard(const std::vector<std::string>& names, bool force);

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
  void fail(const std::string& message) const;
  std::filesystem::path dir_;
  std::string field_;
  SourceLocation where_;
  std::vector<Staged> staged_;
  bool guarded_ = false;
  std::set<std::string> manifest_;  // the names the directory's manifest listed (guard())
  bool committed_ = false;
};

/// The names of an output directory's manifest (empty when it has none).
std::set<std::string> read_manifest(const std::filesystem::path& dir);

/// Removes `dir`'s ".name.tmp-<pid>" files whose process no longer exists (a run killed with
/// SIGKILL); a live process's temporaries, this one's included, are left alone. Returns how many
/// were removed.
std::size_t remove_orphan_temporaries(const std::filesystem::path& dir);

/// An output path named inside a scenario file (`node`, with its location): resolved against
/// the folder of the file. An absolute path, a `..` component, or a path that leaves the folder
/// through a symlink is an InputError at the node's file:line:col (the same path given on the
/// command line is the user's own choice and is not checked).
std::filesystem::path resolve_scenario_output(const ArgNode& node);

/// Installs handlers for SIGINT and SIGTERM that remove every uncommitted temporary of every
/// StagedOutput, print on stderr whether the output was left as it was ("lockstep: interrupted;
/// no output written ...") or had already been written in full, and exit with 130 (128 +
/// SIGINT) or 143. Computation needs no cleanup (results live in memory until written), so
/// stopping at once is safe wherever the signal lands. Idempotent.
void install_interrupt_handler();

}  // namespace lockstep::report
