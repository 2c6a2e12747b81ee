#include "lockstep/workload/dualpipe.hpp"

#include <algorithm>

#include "lockstep/workload/training.hpp"

namespace lockstep {

Time dualpipe_bubble(std::uint32_t pp, Time f_and_b, Time b, Time w) {
  const Time per = f_and_b + b - w.scaled(3.0);
  if (pp < 2 || per <= Time::zero()) return Time::zero();
  return per.scaled(static_cast<double>(pp / 2 - 1));
}

Time one_f_one_b_bubble(std::uint32_t pp, Time f, Time b) {
  return (f + b).scaled(static_cast<double>(pp > 0 ? pp - 1 : 0));
}

Time dualpipe_pair(Time compute, Time all_to_all, double comm_sm_share) {
  return std::max(all_to_all, compute + all_to_all.scaled(comm_sm_share));
}

TrainBreakdown dualpipe_breakdown(const TrainBreakdown& one_f_one_b, std::uint64_t micro_batches,
                                  std::uint32_t pp, ChunkShares shares, double comm_sm_share) {
  TrainBreakdown d = one_f_one_b;
  const double m = static_cast<double>(std::max<std::uint64_t>(micro_batches, 1));
  const Time pair = one_f_one_b.compute.scaled(1.0 / m);
  const Time comm = one_f_one_b.ep.scaled(1.0 / m);
  const Time f_and_b = dualpipe_pair(pair, comm, comm_sm_share);
  d.ep = (f_and_b - pair).scaled(m);
  d.bubble =
      dualpipe_bubble(pp, f_and_b, pair.scaled(shares.backward), pair.scaled(shares.weight_grad));
  return d;
}

}  // namespace lockstep
