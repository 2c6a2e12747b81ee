// DeepSeek-V3's expert all-to-all in a training step (docs/training.md, "DeepSeek-V3's expert
// all-to-all"): DeepEP's normal two-hop kernels over each expert-parallel group, the same
// exchange in both expansions (measured once as a delay in the reduced one, spliced into the
// rank programs in the full one).
#include <algorithm>
#include <map>
#include <memory>
#include <tuple>
#include <utility>

#include "lockstep/routing/pxn.hpp"
#include "lockstep/workload/moe_comm.hpp"
#include "lockstep/workload/step_builder.hpp"
#include "step_builder_detail.hpp"
#include "training_detail.hpp"

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

namespace train_detail {

namespace {

// NCCL's sends by the PXN relays, DeepEP's by the sender's own NIC. Every engine routes a send
// by its op's channel as the flow label, and a DeepEP job's EP channels carry DeepEP's
// exchanges alone; normal dispatch crosses InfiniBand to the GPU of the peer node that DeepEP
// pairs it with, then NVLink (arXiv:2412.19437 section 3.2.2), NVSHMEM's RDMA from the GPU's
// own NIC, which NCCL_PXN_DISABLE and NCCL's relays do not touch.
class DeepEpApartRouter final : public Router {
 public:
  DeepEpApartRouter(std::unique_ptr<Router> nccl, std::unique_ptr<Router> deepep)
      : nccl_(std::move(nccl)), deepep_(std::move(deepep)) {}
  void route(const FlowKey& key, const LinkLoadView* load,
             std::vector<PathShare>& out) const override {
    (step_detail::is_ep_channel(key.label) ? *deepep_ : *nccl_).route(key, load, out);
  }
  RoutingPolicy policy() const override { return nccl_->policy(); }

 private:
  std::unique_ptr<Router> nccl_, deepep_;
};

}  // namespace

std::unique_ptr<Router> make_step_router(const Topology& topo, bool pxn, bool deepep) {
  const RouterOptions options = fabric_routing(topo);
  if (!pxn) return make_router(topo, options);
  std::unique_ptr<Router> relayed = make_pxn_router(topo, options);
  if (!deepep) return relayed;
  return std::make_unique<DeepEpApartRouter>(std::move(relayed), make_router(topo, options));
}

Time deepep_exchange_time(Runner& runner, const MoeSpec& spec, MoePhase phase,
                          const std::vector<std::vector<std::uint32_t>>& groups) {
  const MoeExchangeFactory exchanges = deepep_training_exchanges(runner.topology(), spec);
  // Program ranks in global rank order, as the full expansion numbers them: an engine that
  // serves a link's transfers one at a time takes simultaneous ones in that order.
  std::vector<std::uint32_t> globals;
  for (const auto& g : groups) globals.insert(globals.end(), g.begin(), g.end());
  std::sort(globals.begin(), globals.end());
  MaterializedProgramSet set(static_cast<Rank>(globals.size()), DataType::Uint8);
  for (const auto& g : groups) {
    const PlannedExchange x = exchanges(phase, g);
    std::vector<Rank> members;
    for (std::uint32_t global : x.order) {
      const auto at = std::lower_bound(globals.begin(), globals.end(), global);
      members.push_back(static_cast<Rank>(at - globals.begin()));
    }
    // On the EP channels, as the full expansion splices them: the step's router sends them
    // as DeepEP does (make_step_router).
    append_collective(set, *x.programs, members, std::vector<OpIndex>(members.size(), kNone),
                      step_detail::kEpChannel);
  }
  return runner.run(set, globals, false, false).makespan;
}

}  // namespace train_detail
}  // namespace lockstep
