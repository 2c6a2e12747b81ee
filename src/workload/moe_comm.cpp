// MoE dispatch / combine and KV-cache transfers run on an engine (workload/moe_comm.hpp).
#include "lockstep/workload/moe_comm.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string>

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
  const auto router = make_router(topo, RouterOptions{});
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
  auto set = std::make_unique<MaterializedProgramSet>(static_cast<Rank>(p + d), DataType::Uint8);
  const bool layered = s.layer_compute > Time::zero();
  const std::uint32_t messages = layered ? s.layers : 1;
  const std::uint64_t layers_per_message = layered ? 1 : s.layers;
  for (Rank i = 0; i < p; ++i) {
    OpIndex prev = 0;
    for (std::uint32_t m = 0; m < messages; ++m) {
      if (layered) {
        Op c = make_compute(s.layer_compute);
        if (m > 0) c.add_dep(prev);
        prev = set->add(i, c);
      }
      for (Rank j = 0; j < d; ++j) {
        if (bytes[i][j] == 0) continue;
        Op send = make_send(static_cast<Rank>(p + j),
                            {Buffer::Input, 0, bytes[i][j] * layers_per_message});
        if (layered) send.add_dep(prev);
        set->add(i, send);
      }
    }
  }
  for (Rank j = 0; j < d; ++j)
    for (std::uint32_t m = 0; m < messages; ++m)
      for (Rank i = 0; i < p; ++i)
        if (bytes[i][j] != 0)
          set->add(
              static_cast<Rank>(p + j),
              make_recv(i, {Buffer::Output, 0, bytes[i][j] * layers_per_message}, RecvMode::Copy));
  set->set_label("kv_transfer");
  return set;
}

CommRun run_kv_transfer(const KvTransferSpec& s, const Topology& topo, std::string_view engine) {
  const auto programs = make_kv_transfer_programs(s);
  std::vector<std::uint32_t> placement = s.prefill_gpus;
  placement.insert(placement.end(), s.decode_gpus.begin(), s.decode_gpus.end());
  for (std::size_t i = 0; i < placement.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (placement[i] == placement[j])
        throw InputError(i < s.prefill_gpus.size() ? "prefill_gpus" : "decode_gpus",
                         fmt::format("GPU {} is listed twice", placement[i]));
  return run_programs(*programs, topo, engine, placement);
}

}  // namespace lockstep
