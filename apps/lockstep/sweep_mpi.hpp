#pragma once
// `lockstep sweep` under mpirun: ranks split the pending points (rank r runs the r-th, the
// (r+N)-th ...), and every rank's point files travel to rank 0, which writes them and the merged
// report. Only the ranks need MPI: started without mpirun (or built without MPI, where no MPI
// library was found) this is rank 0 of 1 and the sweep runs on the local cores. docs/sweeps.md.
#include <cstddef>
#include <filesystem>
#include <functional>
#include <vector>

#include "lockstep/sweep/sweep.hpp"

namespace lockstep::cli {

class SweepMpi {
 public:
  /// Initialises MPI when the process was started by mpirun (OpenMPI's OMPI_COMM_WORLD_SIZE,
  /// PMI's PMI_SIZE or PMIx's PMIX_RANK in the environment). Without MPI support, such a start
  /// with more than one rank is an InputError (each would run the whole sweep).
  SweepMpi();
  ~SweepMpi();
  SweepMpi(const SweepMpi&) = delete;
  SweepMpi& operator=(const SweepMpi&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }

  /// Rank 0's pending point indices to every rank; `failed` (on rank 0) tells every rank to
  /// stop instead. Returns false when they stop.
  bool share_pending(std::vector<std::size_t>& pending, bool failed);

  /// Runs this rank's share of `pending`; rank 0 writes every rank's point files in
  /// `points_dir` and calls `done` for each. The first failed point is rethrown on rank 0 once
  /// every rank has reported.
  void run_points(const sweep::SweepPlan& plan, const std::vector<std::size_t>& pending,
                  const std::filesystem::path& points_dir,
                  const std::function<void(std::size_t)>& done);

  /// Leaves MPI and exits with `code` without a message (rank 0 prints it).
  [[noreturn]] void quiet_exit(int code);

 private:
  int rank_ = 0;
  int size_ = 1;
  bool initialised_ = false;
};

}  // namespace lockstep::cli
