#pragma once
// The report's "why" section: where each variant's step goes, what differs between variants,
// and what a faster network, a slow GPU or a failed spine would change, in sentences generated
// from the numbers (docs/report.md, "Why"). The sensitivity cases are measured, not guessed:
// the noise-free step is re-run on the analytical engine with one thing changed.
//
//   run_sensitivity(graph, config, engines, variant);  // per variant, after its training step
//   explain(results);                                  // once every variant has run
#include <string>

#include "lockstep/report/results.hpp"
#include "lockstep/workload/train_config.hpp"
#include "lockstep/workload/training.hpp"

namespace lockstep::report {

/// Fills variant.sensitivity_baseline_us and variant.sensitivity: the noise-free step of
/// `config` on the analytical engine (one trial, no jitter, the job's own faults kept) as given
/// and with (a) every link to or between switches at twice its bandwidth, (b) rank 0 1.5x
/// slower (slow-gpu:rank=0,x=1.5), (c) the first spine switch failed (all its links removed).
/// A case that cannot be built (no spine; the failure disconnects a GPU) has a null time and
/// says why.
void run_sensitivity(const Topology& topo, const TrainConfig& config, const EngineFactory& engines,
                     Variant& variant);

/// Fills every trained variant's `why` sentences from its breakdown, jitter, heat map and
/// sensitivity, comparing each with the fastest variant.
void explain(RunResults& results);

/// A duration with a unit that keeps it readable: "21.4 s", "87.9 ms", "12.5 us" (three
/// significant digits from 1 up).
std::string readable_time_us(double us);

/// The breakdown part's name in words: exposed_tp -> "exposed TP communication".
std::string part_words(const std::string& part);

}  // namespace lockstep::report
