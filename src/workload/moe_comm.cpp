// MoE dispatch / combine and KV-cache transfers run on an engine (workload/moe_comm.hpp).
#include "lockstep/workload/moe_comm.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "lockstep/core/error.hpp"
#include "lockstep/engine/registry/registry.hpp"
#include "lockstep/routing/router.hpp"

namespace lockstep {
namespace {

bool is_fabric(DeviceKind k) {
  return k == DeviceKind::Switch || k == DeviceKind::Nic || k == DeviceKind::Gateway;
}

// Heads of GPU `i` of `gpus` sharing `heads` KV heads: h with h x gpus / heads == i, or, with
// fewer heads than GPUs, the one head i x heads / gpus (replicated, as Megatron does).
std::vector<std::uint32_t> heads_of(std::size_t i, std::size_t gpus, std::uint32_t heads) {
  if (heads < gpus) return {static_cast<std::uint32_t>(i * heads / gpus)};
  std::vector<std::uint32_t> out;
  for (std::uint32_t h = 0; h < heads; ++h)
    if (std::size_t{h} * gpus / heads == i) out.push_back(h);
  return out;
}

// Prefill rank i (0 .. P-1) sends decode rank P + j `messages` messages of bytes[i][j] x
// `scale` bytes; with `compute` > 0 each message follows a compute of that long (a layer).
std::unique_ptr<ProgramSet> kv_programs(const std::vector<std::vector<std::uint64_t>>& bytes,
                                        std::uint32_t messages, std::uint64_t scale, Time compute) {
  const std::size_t p = bytes.size(), d = bytes.front().size();
  auto set = std::make_unique<MaterializedProgramSet>(static_cast<Rank>(p + d), DataType::Uint8);
  const bool layered = compute > Time::zero();
  for (Rank i = 0; i < p; ++i) {
    OpIndex prev = 0;
    for (std::uint32_t m = 0; m < messages; ++m) {
      if (layered) {
        Op c = make_compute(compute);
        if (m > 0) c.add_dep(prev);
        prev = set->add(i, c);
      }
      for (Rank j = 0; j < d; ++j) {
        if (bytes[i][j] == 0) continue;
        Op send = make_send(static_cast<Rank>(p + j), {Buffer::Input, 0, bytes[i][j] * scale});
        if (layered) send.add_dep(prev);
        set->add(i, send);
      }
    }
  }
  for (Rank j = 0; j < d; ++j)
    for (std::uint32_t m = 0; m < messages; ++m)
      for (Rank i = 0; i < p; ++i)
        if (bytes[i][j] != 0)
          set->add(static_cast<Rank>(p + j),
                   make_recv(i, {Buffer::Output, 0, bytes[i][j] * scale}, RecvMode::Copy));
  set->set_label("kv_transfer");
  return set;
}

// No GPU listed twice among the prefill and decode GPUs.
std::vector<std::uint32_t> kv_placement(const std::vector<std::uint32_t>& from,
                                        const std::vector<std::uint32_t>& to) {
  std::vector<std::uint32_t> placement = from;
  placement.insert(placement.end(), to.begin(), to.end());
  for (std::size_t i = 0; i < placement.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (placement[i] == placement[j])
        throw InputError(i < from.size() ? "prefill_gpus" : "decode_gpus",
                         fmt::format("GPU {} is listed twice", placement[i]));
  return placement;
}

}  // namespace

void count_link_bytes(const Topology& topo, const std::vector<double>& link_bytes, CommRun& out) {
  for (DirLinkId d = 0; d < link_bytes.size() && d < topo.num_directed_links(); ++d) {
    const Device& from = topo.device(topo.source(d));
    const Device& to = topo.device(topo.target(d));
    if (from.kind == DeviceKind::Gpu &&
        topo.link(Topology::link_of(d)).medium == LinkMedium::NvLink)
      out.nvlink_bytes += link_bytes[d];
    if (from.kind == DeviceKind::Nic && is_fabric(to.kind)) out.network_bytes += link_bytes[d];
  }
}

CommRun run_programs(const ProgramSet& programs, const Topology& topo, std::string_view engine,
                     const std::vector<std::uint32_t>& placement) {
  const Rank n = programs.num_ranks();
  if (n > topo.gpus().size())
    throw InputError("ranks",
                     fmt::format("{} ranks on a topology of {} GPUs", n, topo.gpus().size()));
  std::vector<DeviceId> where(n);
  for (Rank r = 0; r < n; ++r) {
    const std::uint32_t g = placement.empty() ? r : placement[r];
    if (g >= topo.gpus().size())
      throw InputError(
          "gpus", fmt::format("GPU {} is not in the topology ({} GPUs)", g, topo.gpus().size()));
    where[r] = topo.gpus()[g];
  }
  const auto router = make_router(topo, fabric_routing(topo));
  const auto eng = make_engine(engine);
  EngineInput in;
  in.topology = &topo;
  in.programs = &programs;
  in.placement = where;
  in.router = router.get();
  const RunResult r = eng->run(in);
  CommRun out;
  out.time = r.makespan;
  count_link_bytes(topo, r.link_bytes, out);
  return out;
}

CommRun run_moe(const MoeSpec& spec, MoePhase phase, const Topology& topo,
                std::string_view engine) {
  validate(spec);
  return run_programs(*make_moe_programs(spec, phase), topo, engine);
}

std::vector<std::uint32_t> nvlink_domains(const Topology& topo,
                                          const std::vector<std::uint32_t>& gpus) {
  const auto router = make_router(topo, fabric_routing(topo));
  std::vector<PathShare> paths;
  // Whether the routed path between two GPUs stays off the scale-out fabric (no NIC on it).
  const auto same_domain = [&](std::uint32_t a, std::uint32_t b) {
    router->route(FlowKey{topo.gpus()[a], topo.gpus()[b], 0}, nullptr, paths);
    for (const PathShare& p : paths)
      for (DirLinkId l : p.hops)
        if (topo.device(topo.source(l)).kind == DeviceKind::Nic) return false;
    return true;
  };
  std::vector<std::uint32_t> domain(gpus.size()), first;  // first: a GPU of each domain
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    std::size_t d = 0;
    while (d < first.size() && !same_domain(first[d], gpus[i])) ++d;
    if (d == first.size()) first.push_back(gpus[i]);
    domain[i] = static_cast<std::uint32_t>(d);
  }
  return domain;
}

MoeSpec moe_group_spec(MoeSpec spec, const std::vector<std::uint32_t>& gpus, const Topology& topo,
                       std::vector<std::uint32_t>& placement) {
  if (gpus.empty()) throw InputError("ranks", "an expert-parallel group of no GPU");
  for (std::uint32_t g : gpus)
    if (g >= topo.gpus().size())
      throw InputError(
          "ranks", fmt::format("GPU {} is not in the topology ({} GPUs)", g, topo.gpus().size()));
  // Ranks domain by domain; equal domains make the nodes, else every GPU is its own.
  const std::vector<std::uint32_t> domain = nvlink_domains(topo, gpus);
  const std::uint32_t domains = *std::max_element(domain.begin(), domain.end()) + 1;
  if (!spec.rank_tokens.empty() && spec.rank_tokens.size() != gpus.size())
    throw InputError("rank_tokens", fmt::format("{} counts for a group of {} GPUs",
                                                spec.rank_tokens.size(), gpus.size()));
  if (!spec.rank_load.empty() && spec.rank_load.size() != gpus.size())
    throw InputError("rank_load", fmt::format("{} loads for a group of {} GPUs",
                                              spec.rank_load.size(), gpus.size()));
  for (const std::vector<double>* given : {&spec.rank_reach, &spec.node_reach})
    if (!given->empty() && given->size() != gpus.size())
      throw InputError(given == &spec.rank_reach ? "rank_reach" : "node_reach",
                       fmt::format("{} values for a group of {} GPUs", given->size(), gpus.size()));
  // Each rank keeps its GPU's token count, expert load and reach as the ranks are reordered.
  placement.clear();
  std::vector<std::uint64_t> tokens;
  std::vector<double> load, rank_reach, node_reach;
  const auto keep = [](const std::vector<double>& from, std::size_t i, std::vector<double>& to) {
    if (!from.empty()) to.push_back(from[i]);
  };
  for (std::uint32_t d = 0; d < domains; ++d)
    for (std::size_t i = 0; i < gpus.size(); ++i)
      if (domain[i] == d) {
        placement.push_back(gpus[i]);
        if (!spec.rank_tokens.empty()) tokens.push_back(spec.rank_tokens[i]);
        keep(spec.rank_load, i, load);
        keep(spec.rank_reach, i, rank_reach);
        keep(spec.node_reach, i, node_reach);
      }
  spec.rank_tokens = std::move(tokens);
  spec.rank_load = std::move(load);
  spec.rank_reach = std::move(rank_reach);
  spec.node_reach = std::move(node_reach);
  const Rank r = static_cast<Rank>(gpus.size());
  spec.ranks = r;
  spec.ranks_per_node = r % domains == 0 ? r / domains : 1;
  for (std::size_t i = 0; i < gpus.size() && spec.ranks_per_node > 1; ++i)
    if (std::count(domain.begin(), domain.end(), domain[i]) != spec.ranks_per_node)
      spec.ranks_per_node = 1;
  // Each GPU its own node: a token reaches the node when it reaches the GPU.
  if (spec.ranks_per_node == 1 && !spec.node_reach.empty()) spec.node_reach = spec.rank_reach;
  // Experts spread evenly: round up to whole experts per rank; top-k at most what is reachable.
  spec.experts = std::max<std::uint32_t>(1, (spec.experts + r - 1) / r) * r;
  const std::uint32_t nodes = r / spec.ranks_per_node;
  const std::uint32_t reach =
      spec.max_nodes == 0 || spec.max_nodes >= nodes ? nodes : spec.max_nodes;
  spec.topk = std::min<std::uint32_t>(spec.topk, reach * (spec.experts / nodes));
  return spec;
}

CommRun run_moe_group(MoeSpec spec, MoePhase phase, const std::vector<std::uint32_t>& gpus,
                      const Topology& topo, std::string_view engine) {
  if (gpus.empty()) throw InputError("ranks", "an expert-parallel group of no GPU");
  if (spec.tokens == 0) return {};
  std::vector<std::uint32_t> placement;
  spec = moe_group_spec(spec, gpus, topo, placement);
  return run_programs(*make_moe_programs(spec, phase), topo, engine, placement);
}

std::uint64_t kv_cache_bytes(const KvTransferSpec& s) {
  if (s.prompt == 0) throw InputError("prompt", "must be at least 1 token");
  if (s.layers == 0) throw InputError("layers", "must be at least 1");
  if (s.kv_heads == 0) throw InputError("kv_heads", "must be at least 1");
  if (s.head_dim == 0) throw InputError("head_dim", "must be at least 1");
  if (s.bytes_per_element == 0 || s.bytes_per_element > 8)
    throw InputError("bytes_per_element", "must be between 1 and 8");
  if (s.prefill_gpus.empty()) throw InputError("prefill_gpus", "no GPU");
  if (s.decode_gpus.empty()) throw InputError("decode_gpus", "no GPU");
  return s.prompt * 2 * s.layers * s.kv_heads * s.head_dim * s.bytes_per_element;
}

std::unique_ptr<ProgramSet> make_kv_transfer_programs(const KvTransferSpec& s) {
  kv_cache_bytes(s);
  const std::size_t p = s.prefill_gpus.size(), d = s.decode_gpus.size();
  const std::uint64_t per_head_layer =
      s.prompt * 2 * std::uint64_t{s.head_dim} * s.bytes_per_element;
  // bytes[i][j]: one layer's bytes prefill GPU i sends decode GPU j.
  std::vector<std::vector<std::uint64_t>> bytes(p, std::vector<std::uint64_t>(d, 0));
  std::vector<std::vector<std::size_t>> holders(s.kv_heads);
  for (std::size_t i = 0; i < p; ++i)
    for (std::uint32_t h : heads_of(i, p, s.kv_heads)) holders[h].push_back(i);
  // Each decode GPU pulls each of its heads from one copy, the GPUs needing a head taking turns.
  for (std::size_t j = 0; j < d; ++j)
    for (std::uint32_t h : heads_of(j, d, s.kv_heads))
      bytes[holders[h][j % holders[h].size()]][j] += per_head_layer;
  const bool layered = s.layer_compute > Time::zero();
  return kv_programs(bytes, layered ? s.layers : 1, layered ? 1 : s.layers, s.layer_compute);
}

CommRun run_kv_transfer(const KvTransferSpec& s, const Topology& topo, std::string_view engine) {
  const auto programs = make_kv_transfer_programs(s);
  return run_programs(*programs, topo, engine, kv_placement(s.prefill_gpus, s.decode_gpus));
}

CommRun run_kv_bytes(const std::vector<std::uint32_t>& from, const std::vector<std::uint32_t>& to,
                     Bytes bytes, const Topology& topo, std::string_view engine) {
  if (from.empty()) throw InputError("prefill_gpus", "no GPU");
  if (to.empty()) throw InputError("decode_gpus", "no GPU");
  if (bytes.count() == 0) return {};
  // P x D equal shares: prefill GPU i holds shares [i D, (i + 1) D), decode GPU j needs
  // [j P, (j + 1) P); the first shares take the remainder's bytes.
  const std::uint64_t p = from.size(), d = to.size(), n = p * d;
  std::vector<std::vector<std::uint64_t>> matrix(p, std::vector<std::uint64_t>(d, 0));
  for (std::uint64_t k = 0; k < n; ++k)
    matrix[k / d][k / p] += bytes.count() / n + (k < bytes.count() % n ? 1 : 0);
  return run_programs(*kv_programs(matrix, 1, 1, Time::zero()), topo, engine,
                      kv_placement(from, to));
}

}  // namespace lockstep
