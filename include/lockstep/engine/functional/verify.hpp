#pragma once
// Checking a collective's programs on real data: deterministic inputs, one run of the functional
// executor (executor.hpp), and a direct reference computation of what every rank must hold.
//
//   auto programs = make_collective(spec);
//   VerifyReport v = verify_collective(spec, *programs);   // v.ok, v.message
#include <cstdint>
#include <string>

#include "lockstep/collective/collective.hpp"
#include "lockstep/collective/program.hpp"
#include "lockstep/engine/functional/executor.hpp"

namespace lockstep {

/// Result of checking a collective against a direct reference computation.
struct VerifyReport {
  bool ok = false;
  std::string message;     // "correct" or the first mismatch (rank, element, got, expected)
  double tolerance = 0.0;  // (n-1) x u for floating-point sums; 0 when the check is exact
  FunctionalResult run;
};

/// Fills each rank's input with deterministic pseudo-random data (from `seed`), executes the
/// programs and compares every rank's output with the reference for spec.op. Integers must match
/// exactly (sums wrap modulo 2^bits). Floating-point sums must be within
/// (n - 1) x u x sum_i |x_i| + tiny of the exact sum, u = unit roundoff of the type
/// (2^-24 float, 2^-53 double, 2^-8 bfloat16); copies must be bit-exact.
VerifyReport verify_collective(const CollectiveSpec& spec, const ProgramSet& programs,
                               const FunctionalOptions& options = {}, std::uint64_t seed = 1);

}  // namespace lockstep
