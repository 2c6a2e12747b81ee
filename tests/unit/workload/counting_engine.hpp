#pragma once
// An engine that sums the bytes every directed link carried over all its runs (the PXN tests of
// training and serving steps: pxn_training_test.cpp, pxn_inference_test.cpp).
#include <memory>
#include <string_view>
#include <utility>
#include <vector>

#include "lockstep/engine/registry/registry.hpp"
#include "lockstep/workload/training.hpp"

namespace lockstep::testing {

/// The registry's engine `name`, with the bytes every directed link carried summed into `bytes`.
class CountingEngine final : public Engine {
 public:
  CountingEngine(std::string_view name, std::shared_ptr<std::vector<double>> bytes)
      : inner_(make_engine(name)), bytes_(std::move(bytes)) {}
  std::string_view name() const override { return inner_->name(); }
  RunResult run(const EngineInput& in) override {
    RunResult r = inner_->run(in);
    bytes_->resize(r.link_bytes.size(), 0.0);
    for (std::size_t d = 0; d < r.link_bytes.size(); ++d) (*bytes_)[d] += r.link_bytes[d];
    return r;
  }

 private:
  std::unique_ptr<Engine> inner_;
  std::shared_ptr<std::vector<double>> bytes_;
};

/// Builds CountingEngines that all sum into `bytes`.
inline EngineFactory counting_engines(std::shared_ptr<std::vector<double>> bytes) {
  return [bytes](std::string_view name) { return std::make_unique<CountingEngine>(name, bytes); };
}

}  // namespace lockstep::testing
