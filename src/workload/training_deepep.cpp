// DeepSeek-V3's expert all-to-all in a training step (docs/training.md, "DeepSeek-V3's expert
// all-to-all"): DeepEP's normal two-hop kernels over each expert-parallel group, the same
// exchange in both expansions (measured once as a delay in the reduced one, spliced into the
// rank programs in the full one).
#include <map>
#include <memory>
#include <tuple>
#include <utility>

#include "lockstep/workload/moe_comm.hpp"
#include "lockstep/workload/step_builder.hpp"

namespace lockstep {

MoeSpec deepep_training_spec(const TrainConfig& c, const StepPlan& plan) {
  MoeSpec s;
  s.tokens = plan.tokens_per_rank / c.par.tp;
  s.hidden = static_cast<std::uint32_t>(c.model.hidden);
  s.topk = c.model.top_k;
  s.experts = c.model.experts;
  s.max_nodes = c.model.moe_max_nodes;
  s.kernel = MoeKernel::Normal;
  s.fp8_dispatch = c.model.moe_fp8_dispatch;
  s.imbalance = c.moe_imbalance;
  return s;
}

namespace {

// Every EP group's exchange of one step, per phase: the programs depend only on the group's
// shape (its ranks per NVLink domain), so groups of one shape share them; the rank order is each
// group's own.
class Exchanges {
 public:
  Exchanges(const Topology& topo, const MoeSpec& spec) : topo_(topo), spec_(spec) {}

  PlannedExchange plan(MoePhase phase, const std::vector<std::uint32_t>& globals) {
    const auto key = std::make_pair(phase, globals);
    if (auto it = planned_.find(key); it != planned_.end()) return it->second;
    PlannedExchange x;
    // Rank g of the job runs on the topology's GPU g: the placement is the group's order.
    const MoeSpec s = moe_group_spec(spec_, globals, topo_, x.order);
    const auto shape = std::make_tuple(phase, s.ranks, s.ranks_per_node);
    auto& programs = programs_[shape];
    if (!programs) {
      if (s.tokens > 0) {
        programs = make_moe_programs(s, phase);
      } else {
        programs = std::make_shared<MaterializedProgramSet>(s.ranks, DataType::Uint8);
      }
    }
    x.programs = programs;
    return planned_.emplace(key, std::move(x)).first->second;
  }

 private:
  const Topology& topo_;
  MoeSpec spec_;
  std::map<std::tuple<MoePhase, Rank, std::uint32_t>, std::shared_ptr<const ProgramSet>> programs_;
  std::map<std::pair<MoePhase, std::vector<std::uint32_t>>, PlannedExchange> planned_;
};

}  // namespace

MoeExchangeFactory deepep_training_exchanges(const Topology& topo, const MoeSpec& spec) {
  auto exchanges = std::make_shared<Exchanges>(topo, spec);
  return [exchanges](MoePhase phase, const std::vector<std::uint32_t>& globals) {
    return exchanges->plan(phase, globals);
  };
}

}  // namespace lockstep
