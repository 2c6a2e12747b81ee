// The MPI side of `lockstep sweep` (sweep_mpi.hpp). Messages are plain text: "INDEX CODE\n"
// then the point file (CODE 0) or the error message (CODE 2 bad input, 1 internal, -1 not run
// because an earlier point of that rank failed).
#include "sweep_mpi.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

#include "lockstep/core/error.hpp"

#ifdef LOCKSTEP_HAVE_MPI
#include <mpi.h>
#endif

namespace lockstep::cli {
namespace {

constexpr int kResultTag = 24;

// The environment a launcher gives its ranks: OpenMPI's mpirun, PMI (MPICH, Slurm), PMIx.
int launched_size() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"}) {
    if (const char* v = std::getenv(name)) return std::max(1, std::atoi(v));
  }
  return std::getenv("PMIX_RANK") != nullptr ? 2 : 1;  // PMIx alone: MPI says how many
}

struct Outcome {
  std::size_t index = 0;
  int code = 0;
  std::string text;  // the point file, or the error message
};

std::string encode(const Outcome& o) {
  return fmt::format("{} {}\n{}", o.index, o.code, o.text);
}

Outcome decode(const std::string& message) {
  Outcome o;
  std::istringstream in(message);
  in >> o.index >> o.code;
  const std::size_t newline = message.find('\n');
  o.text = newline == std::string::npos ? "" : message.substr(newline + 1);
  return o;
}

// Runs the points of `mine`; after a failure the rest are reported as not run.
std::vector<Outcome> run_share(const sweep::SweepPlan& plan, const std::vector<std::size_t>& mine) {
  std::vector<Outcome> out;
  bool failed = false;
  for (std::size_t i : mine) {
    Outcome o{i, 0, {}};
    if (failed) {
      o.code = -1;
    } else {
      try {
        o.text = sweep::run_point(plan, plan.points[i]);
      } catch (const InputError& e) {
        o.code = 2;
        o.text = e.what();
      } catch (const std::exception& e) {
        o.code = 1;
        o.text = e.what();
      }
      failed = o.code != 0;
    }
    out.push_back(std::move(o));
  }
  return out;
}

}  // namespace

SweepMpi::SweepMpi() {
  if (launched_size() <= 1) return;
#ifdef LOCKSTEP_HAVE_MPI
  MPI_Init(nullptr, nullptr);
  initialised_ = true;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
#else
  throw InputError("mpirun",
                   "this lockstep was built without MPI (no MPI library was found: install "
                   "libopenmpi-dev and build again), so its ranks cannot share a sweep");
#endif
}

SweepMpi::~SweepMpi() {
#ifdef LOCKSTEP_HAVE_MPI
  if (initialised_) MPI_Finalize();
#endif
}

void SweepMpi::quiet_exit(int code) {
#ifdef LOCKSTEP_HAVE_MPI
  if (initialised_) MPI_Finalize();
  initialised_ = false;
#endif
  std::fflush(stdout);
  std::exit(code);
}

bool SweepMpi::share_pending(std::vector<std::size_t>& pending, bool failed) {
  if (size_ == 1) return !failed;
#ifdef LOCKSTEP_HAVE_MPI
  long long count = failed ? -1 : static_cast<long long>(pending.size());
  MPI_Bcast(&count, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
  if (count < 0) return false;
  std::vector<unsigned long long> indices(pending.begin(), pending.end());
  indices.resize(static_cast<std::size_t>(count));
  MPI_Bcast(indices.data(), static_cast<int>(count), MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
  pending.assign(indices.begin(), indices.end());
#endif
  return true;
}

void SweepMpi::run_points(const sweep::SweepPlan& plan, const std::vector<std::size_t>& pending,
                          const std::filesystem::path& points_dir,
                          const std::function<void(std::size_t)>& done) {
  std::vector<std::size_t> mine;
  for (std::size_t k = static_cast<std::size_t>(rank_); k < pending.size();
       k += static_cast<std::size_t>(size_)) {
    mine.push_back(pending[k]);
  }
  // Each rank runs its whole share before sending: a rank never waits on rank 0's own points.
  std::vector<Outcome> outcomes = run_share(plan, mine);
#ifdef LOCKSTEP_HAVE_MPI
  if (rank_ != 0) {
    for (const Outcome& o : outcomes) {
      const std::string message = encode(o);
      MPI_Send(message.data(), static_cast<int>(message.size()), MPI_CHAR, 0, kResultTag,
               MPI_COMM_WORLD);
    }
    return;
  }
  for (std::size_t n = mine.size(); n < pending.size(); ++n) {
    MPI_Status status;
    MPI_Probe(MPI_ANY_SOURCE, kResultTag, MPI_COMM_WORLD, &status);
    int length = 0;
    MPI_Get_count(&status, MPI_CHAR, &length);
    std::string message(static_cast<std::size_t>(length), '\0');
    MPI_Recv(message.data(), length, MPI_CHAR, status.MPI_SOURCE, kResultTag, MPI_COMM_WORLD,
             MPI_STATUS_IGNORE);
    outcomes.push_back(decode(message));
  }
#endif
  const Outcome* failed = nullptr;
  for (const Outcome& o : outcomes) {
    if (o.code == 0) {
      sweep::write_point_file(points_dir, plan.points.at(o.index), o.text);
      done(o.index);
    } else if (o.code > 0 && (failed == nullptr || o.index < failed->index)) {
      failed = &o;
    }
  }
  if (failed != nullptr && failed->code == 2) throw InputError("", failed->text);
  if (failed != nullptr) throw std::runtime_error(failed->text);
}

}  // namespace lockstep::cli
