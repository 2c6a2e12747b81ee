#pragma once
// Shared by the inference tests: a job read from YAML text, and a fixed-time stand-in for the
// MoE and KV traffic (the contract DeepEP-style primitives fill in).
#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "lockstep/config/arg_node.hpp"
#include "lockstep/config/yaml_reader.hpp"
#include "lockstep/workload/inference.hpp"

namespace lockstep::testing {

/// The `job:` map `yaml`, read as the file s.yaml.
inline InferenceConfig inference_config(const std::string& yaml) {
  return parse_inference_config(parse_yaml_args(yaml, "s.yaml", "job"));
}

/// Dispatch 3 us, combine 5 us, any KV transfer 1 ms; remembers the last exchange's shape and
/// the last transfer's bytes and GPU pairs.
class FixedComm : public InferenceComm {
 public:
  Time moe_dispatch(const MoeExchange& x) override {
    last = x;
    return Time::us(3);
  }
  Time moe_combine(const MoeExchange&) override { return Time::us(5); }
  Time kv_transfer(const KvTransfer& x) override {
    kv_bytes = x.bytes.count();
    pairs = x.from.size();
    ++transfers;
    return Time::ms(1);
  }
  MoeExchange last;
  std::uint64_t kv_bytes = 0;
  std::size_t pairs = 0, transfers = 0;
};

/// Options that price MoE and KV traffic with `comm`, recording the steps when asked.
inline InferenceOptions options_with(std::shared_ptr<InferenceComm> comm, bool record_steps) {
  InferenceOptions o;
  o.comm = std::move(comm);
  o.record_steps = record_steps;
  return o;
}

}  // namespace lockstep::testing
