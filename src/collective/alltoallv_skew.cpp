// Skewed all-to-all matrices (docs/collectives.md "alltoallv with a skew"): Zipf popularity of
// the receivers, as the load of a mixture-of-experts layer's experts is often described.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "lockstep/collective/collective.hpp"
#include "lockstep/core/error.hpp"

namespace lockstep {

std::vector<std::uint64_t> skewed_alltoallv_row(Rank ranks, Bytes bytes, DataType type,
                                                double skew) {
  if (!(skew >= 0) || !std::isfinite(skew)) throw InputError("skew", "must be a number >= 0");
  const std::uint64_t es = size_of(type), e = bytes.count() / es, n = ranks;
  std::vector<std::uint64_t> row(n);
  if (n == 0) return row;
  if (skew == 0) {
    // alltoall's blocks exactly (the first E mod n ranks get one element more).
    for (std::uint64_t j = 0; j < n; ++j) row[j] = block_size(e, n, j) * es;
    return row;
  }
  std::vector<double> ideal(n);
  double total = 0;
  for (std::uint64_t j = 0; j < n; ++j) total += ideal[j] = std::pow(double(j + 1), -skew);
  std::uint64_t given = 0;
  for (std::uint64_t j = 0; j < n; ++j) {
    ideal[j] = ideal[j] / total * static_cast<double>(e);
    row[j] = std::min<std::uint64_t>(e, static_cast<std::uint64_t>(std::floor(ideal[j])));
    given += row[j];
  }
  // Largest remainder: the elements rounding left over go to the largest fractional parts,
  // ties to the lower rank; should rounding have over-given, the smallest fractions give back.
  std::vector<std::uint64_t> by_fraction(n);
  std::iota(by_fraction.begin(), by_fraction.end(), 0);
  const auto fraction = [&](std::uint64_t j) { return ideal[j] - static_cast<double>(row[j]); };
  std::stable_sort(by_fraction.begin(), by_fraction.end(),
                   [&](std::uint64_t a, std::uint64_t b) { return fraction(a) > fraction(b); });
  for (std::uint64_t k = 0; given < e; ++k, ++given) ++row[by_fraction[k % n]];
  for (std::uint64_t k = n; given > e && k-- > 0;) {
    if (row[by_fraction[k]] > 0) --row[by_fraction[k]], --given;
  }
  for (auto& v : row) v *= es;
  return row;
}

std::vector<std::vector<std::uint64_t>> skewed_alltoallv(Rank ranks, Bytes bytes, DataType type,
                                                         double skew) {
  return std::vector<std::vector<std::uint64_t>>(ranks,
                                                 skewed_alltoallv_row(ranks, bytes, type, skew));
}

}  // namespace lockstep
