#include "lockstep/workload/dualpipe.hpp"

#include <algorithm>
#include <deque>

#include "lockstep/workload/training.hpp"

namespace lockstep {

std::vector<DualPipeStep> dualpipe_order(std::uint32_t pp, std::uint64_t micro_batches,
                                         std::uint32_t rank) {
  const std::uint32_t halves = pp / 2, h = std::min(rank, pp - 1 - rank);
  const auto half = static_cast<std::int64_t>(micro_batches / 2);
  const bool middle = h + 1 == halves;
  // dualpipe.py writes the schedule from the rank's near end: its chunk 0 is direction 0 on the
  // first half of the ranks and direction 1 on the second (phase ^= is_in_second_half).
  const std::uint32_t flip = rank >= halves ? 1 : 0;
  std::uint32_t forwards[2] = {0, 0}, backwards[2] = {0, 0};
  std::deque<DualPipeUnit> deferred;  // WeightGradStore's queue
  std::vector<DualPipeStep> order;
  auto f = [&](std::uint32_t chunk) {
    const std::uint32_t d = chunk ^ flip;
    return DualPipeUnit{DualPass::Forward, d, forwards[d]++};
  };
  auto b = [&](std::uint32_t chunk, bool zero_bubble = false) {
    const std::uint32_t d = chunk ^ flip;
    const DualPipeUnit u{zero_bubble ? DualPass::BackwardInput : DualPass::Backward, d,
                         backwards[d]++};
    if (zero_bubble) deferred.push_back({DualPass::Weight, d, u.micro});
    return u;
  };
  auto w = [&] {
    const DualPipeUnit u = deferred.front();
    deferred.pop_front();
    return u;
  };
  auto one = [&](DualPipeUnit u) { order.push_back({u, false, {}}); };
  auto pair = [&](DualPipeUnit fwd, DualPipeUnit bwd) { order.push_back({fwd, true, bwd}); };
  const std::uint32_t far = halves - h - 1;  // phases 1, 3, 5 and 7 count ranks to the middle
  for (std::uint32_t i = 0; i < 2 * far; ++i) one(f(0));
  for (std::uint32_t i = 0; i <= h; ++i) {
    one(f(0));
    one(f(1));
  }
  for (std::uint32_t i = 0; i < far; ++i) {
    one(b(1, true));
    one(w());
    one(f(1));
  }
  const std::int64_t steady = half - static_cast<std::int64_t>(pp) + h + 1;
  for (std::int64_t i = 0; i < steady; ++i) {
    if (i == 0 && middle) {
      // dualpipe.py: "we don't overlap these two chunks to further reduce bubble size".
      one(f(0));
      one(b(1));
    } else {
      const DualPipeUnit fwd = f(0);
      pair(fwd, b(1));
    }
    const DualPipeUnit fwd = f(1);
    pair(fwd, b(0));
  }
  for (std::uint32_t i = 0; i < far; ++i) {
    one(b(1));
    const DualPipeUnit fwd = f(1);
    pair(fwd, b(0));
  }
  bool zero_bubble = false;
  for (std::uint32_t i = 0; i <= h; ++i) {
    if (i == (h + 1) / 2 && h % 2 == 1) zero_bubble = true;
    one(b(1, zero_bubble));
    if (i == (h + 1) / 2 && h % 2 == 0) zero_bubble = true;
    one(b(0, zero_bubble));
  }
  for (std::uint32_t i = 0; i < far; ++i) {
    one(w());
    one(b(0, true));
  }
  for (std::uint32_t i = 0; i <= h; ++i) one(w());
  return order;
}

double dualpipe_activation_peak(std::uint32_t pp, std::uint64_t micro_batches, std::uint32_t rank,
                                const std::array<double, 2>& per_micro_batch) {
  double live = 0, peak = 0;
  auto run = [&](const DualPipeUnit& u) {
    const double bytes = per_micro_batch[u.direction];
    switch (u.pass) {
      case DualPass::Forward:
        live += bytes;
        peak = std::max(peak, live);
        break;
      case DualPass::Backward:
      case DualPass::Weight:
        live -= bytes;
        break;
      case DualPass::BackwardInput:
        break;  // the weight pass still reads the saved inputs
    }
  };
  for (const DualPipeStep& step : dualpipe_order(pp, micro_batches, rank)) {
    run(step.first);
    if (step.paired) run(step.second);
  }
  return peak;
}

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
