// Names, the (op, algorithm) support table, validation and dispatch to the algorithm factories.
#include "lockstep/collective/collective.hpp"

#include <fmt/format.h>

#include <array>

#include "generated.hpp"
#include "lockstep/core/error.hpp"

namespace lockstep {
namespace collective_detail {
std::unique_ptr<ProgramSet> make_nvls_tree(const CollectiveSpec& spec);  // nvls_tree.cpp
std::unique_ptr<ProgramSet> make_collnet(const CollectiveSpec& spec);    // net_reduce.cpp
}  // namespace collective_detail
namespace {

using collective_detail::make_chain;
using collective_detail::make_collnet;
using collective_detail::make_direct;
using collective_detail::make_halving_doubling;
using collective_detail::make_hierarchical;
using collective_detail::make_net_reduce;
using collective_detail::make_nvls_tree;
using collective_detail::make_pat;
using collective_detail::make_recursive_doubling;
using collective_detail::make_ring;
using collective_detail::make_torus_ring;
using collective_detail::make_tree;

constexpr std::array<const char*, kNumCollectiveOps> kOpNames = {
    "all_reduce", "all_gather", "reduce_scatter", "broadcast", "reduce",
    "alltoall",   "alltoallv",  "sendrecv",       "barrier"};
constexpr std::array<const char*, kNumAlgorithms> kAlgorithmNames = {"ring",
                                                                     "tree",
                                                                     "chain",
                                                                     "halving_doubling",
                                                                     "recursive_doubling",
                                                                     "direct",
                                                                     "hierarchical",
                                                                     "netreduce",
                                                                     "pat",
                                                                     "nvls_tree",
                                                                     "collnet",
                                                                     "torus_ring"};

using Factory = std::unique_ptr<ProgramSet> (*)(const CollectiveSpec&);

struct Entry {
  CollectiveOp op;
  Algorithm algorithm;
  Factory factory;
};

// The support table. For each op the first entry is its default algorithm. Ring broadcast and
// reduce are NCCL's: a pipelined chain along the ring order (the same programs as chain).
constexpr Entry kTable[] = {
    {CollectiveOp::AllReduce, Algorithm::Ring, make_ring},
    {CollectiveOp::AllReduce, Algorithm::Tree, make_tree},
    {CollectiveOp::AllReduce, Algorithm::HalvingDoubling, make_halving_doubling},
    {CollectiveOp::AllReduce, Algorithm::RecursiveDoubling, make_recursive_doubling},
    {CollectiveOp::AllReduce, Algorithm::Direct, make_direct},
    {CollectiveOp::AllReduce, Algorithm::Hierarchical, make_hierarchical},
    {CollectiveOp::AllReduce, Algorithm::NetReduce, make_net_reduce},
    {CollectiveOp::AllReduce, Algorithm::NvlsTree, make_nvls_tree},
    {CollectiveOp::AllReduce, Algorithm::CollNet, make_collnet},
    {CollectiveOp::AllReduce, Algorithm::TorusRing, make_torus_ring},
    {CollectiveOp::AllGather, Algorithm::Ring, make_ring},
    {CollectiveOp::AllGather, Algorithm::HalvingDoubling, make_halving_doubling},
    {CollectiveOp::AllGather, Algorithm::Direct, make_direct},
    {CollectiveOp::AllGather, Algorithm::Pat, make_pat},
    {CollectiveOp::AllGather, Algorithm::TorusRing, make_torus_ring},
    {CollectiveOp::ReduceScatter, Algorithm::Ring, make_ring},
    {CollectiveOp::ReduceScatter, Algorithm::HalvingDoubling, make_halving_doubling},
    {CollectiveOp::ReduceScatter, Algorithm::Direct, make_direct},
    {CollectiveOp::ReduceScatter, Algorithm::Pat, make_pat},
    {CollectiveOp::ReduceScatter, Algorithm::TorusRing, make_torus_ring},
    {CollectiveOp::Broadcast, Algorithm::Ring, make_chain},
    {CollectiveOp::Broadcast, Algorithm::Chain, make_chain},
    {CollectiveOp::Broadcast, Algorithm::Tree, make_tree},
    {CollectiveOp::Broadcast, Algorithm::Direct, make_direct},
    {CollectiveOp::Reduce, Algorithm::Ring, make_chain},
    {CollectiveOp::Reduce, Algorithm::Chain, make_chain},
    {CollectiveOp::Reduce, Algorithm::Tree, make_tree},
    {CollectiveOp::Reduce, Algorithm::Direct, make_direct},
    {CollectiveOp::Reduce, Algorithm::NetReduce, make_net_reduce},
    {CollectiveOp::AllToAll, Algorithm::Direct, make_direct},
    {CollectiveOp::AllToAllV, Algorithm::Direct, make_direct},
    {CollectiveOp::SendRecv, Algorithm::Direct, make_direct},
    {CollectiveOp::Barrier, Algorithm::RecursiveDoubling, make_recursive_doubling},
    {CollectiveOp::Barrier, Algorithm::Ring, make_ring},
    {CollectiveOp::Barrier, Algorithm::NetReduce, make_net_reduce},
};

const Entry* find(CollectiveOp op, Algorithm algorithm) {
  for (const Entry& e : kTable)
    if (e.op == op && e.algorithm == algorithm) return &e;
  return nullptr;
}

std::string algorithm_list(CollectiveOp op) {
  std::string out;
  for (Algorithm a : algorithms_for(op))
    out += (out.empty() ? "" : ", ") + std::string(to_string(a));
  return out;
}

}  // namespace

const char* to_string(CollectiveOp op) {
  return kOpNames[static_cast<int>(op)];
}
const char* to_string(Algorithm algorithm) {
  return kAlgorithmNames[static_cast<int>(algorithm)];
}

CollectiveOp parse_collective_op(std::string_view name, std::string_view field) {
  for (int i = 0; i < kNumCollectiveOps; ++i)
    if (name == kOpNames[i]) return static_cast<CollectiveOp>(i);
  throw InputError(std::string(field), fmt::format("unknown collective '{}' (expected one of: {})",
                                                   name, fmt::join(kOpNames, ", ")));
}

Algorithm parse_algorithm(std::string_view name, std::string_view field) {
  for (int i = 0; i < kNumAlgorithms; ++i)
    if (name == kAlgorithmNames[i]) return static_cast<Algorithm>(i);
  throw InputError(std::string(field), fmt::format("unknown algorithm '{}' (expected one of: {})",
                                                   name, fmt::join(kAlgorithmNames, ", ")));
}

bool is_supported(CollectiveOp op, Algorithm algorithm) {
  return find(op, algorithm) != nullptr;
}

std::vector<std::pair<CollectiveOp, Algorithm>> supported_collectives() {
  std::vector<std::pair<CollectiveOp, Algorithm>> out;
  for (int o = 0; o < kNumCollectiveOps; ++o)
    for (int a = 0; a < kNumAlgorithms; ++a)
      if (is_supported(static_cast<CollectiveOp>(o), static_cast<Algorithm>(a)))
        out.emplace_back(static_cast<CollectiveOp>(o), static_cast<Algorithm>(a));
  return out;
}

std::vector<Algorithm> algorithms_for(CollectiveOp op) {
  std::vector<Algorithm> out;
  for (const Entry& e : kTable)
    if (e.op == op) out.push_back(e.algorithm);
  return out;
}

double busbw_factor(CollectiveOp op, Rank ranks) {
  const double n = ranks;
  switch (op) {
    case CollectiveOp::AllReduce:
      return ranks ? 2.0 * (n - 1) / n : 0.0;
    case CollectiveOp::AllGather:
    case CollectiveOp::ReduceScatter:
    case CollectiveOp::AllToAll:
    case CollectiveOp::AllToAllV:
      return ranks ? (n - 1) / n : 0.0;
    default:
      return 1.0;
  }
}

void validate(const CollectiveSpec& spec) {
  if (spec.ranks == 0) throw InputError("ranks", "must be at least 1");
  if (spec.ranks > (1u << 24)) throw InputError("ranks", "at most 16,777,216 ranks");
  if (!is_supported(spec.op, spec.algorithm)) {
    throw InputError("algorithm", fmt::format("{} does not support algorithm '{}' (supported: {})",
                                              to_string(spec.op), to_string(spec.algorithm),
                                              algorithm_list(spec.op)));
  }
  const std::size_t es = size_of(spec.type);
  if (spec.bytes.count() % es != 0) {
    throw InputError("bytes", fmt::format("{} bytes is not a whole number of {} elements ({} B)",
                                          spec.bytes.count(), to_string(spec.type), es));
  }
  if (spec.bytes.count() > (std::uint64_t{1} << 50)) throw InputError("bytes", "at most 1 PiB");
  if (spec.channels == 0 || spec.channels > 64)
    throw InputError("channels", "must be between 1 and 64");
  if (spec.root >= spec.ranks)
    throw InputError("root",
                     fmt::format("root {} is not a rank (ranks: {})", spec.root, spec.ranks));
  const std::uint32_t g = spec.ranks_per_node;
  if (g != 0 && (g > spec.ranks || spec.ranks % g != 0)) {
    throw InputError("ranks_per_node", fmt::format("{} does not divide the {} ranks into whole "
                                                   "nodes",
                                                   g, spec.ranks));
  }
  const std::uint32_t per_server = spec.ranks_per_server;
  if (g != 0 && per_server != 0 && (per_server > g || g % per_server != 0)) {
    throw InputError(
        "ranks_per_server",
        fmt::format("{} does not divide the {} ranks of a node into whole servers", per_server, g));
  }
  if (spec.nics_per_node > 4096)
    throw InputError("nics_per_node",
                     fmt::format("{} NICs per node is absurd (at most 4096)", spec.nics_per_node));
  if (spec.algorithm == Algorithm::TorusRing && !spec.torus_dims.empty()) {
    std::uint64_t product = 1;
    for (std::uint32_t d : spec.torus_dims) {
      if (d == 0) throw InputError("torus_dims", "a torus dimension has size 0");
      product *= d;
      if (product > spec.ranks) break;
    }
    if (spec.torus_dims.size() > 8 || product != spec.ranks)
      throw InputError("torus_dims", fmt::format("{} does not describe a torus of the {} ranks "
                                                 "(at most 8 sizes whose product is the rank "
                                                 "count)",
                                                 fmt::join(spec.torus_dims, "x"), spec.ranks));
  }
  if (spec.op == CollectiveOp::AllToAllV) {
    if (spec.alltoallv.size() != spec.ranks)
      throw InputError("alltoallv", fmt::format("needs {} rows (one per rank), got {}", spec.ranks,
                                                spec.alltoallv.size()));
    for (std::size_t i = 0; i < spec.alltoallv.size(); ++i) {
      if (spec.alltoallv[i].size() != spec.ranks)
        throw InputError("alltoallv", fmt::format("row {} needs {} entries, got {}", i, spec.ranks,
                                                  spec.alltoallv[i].size()));
      for (std::uint64_t v : spec.alltoallv[i])
        if (v % es != 0)
          throw InputError("alltoallv", fmt::format("row {}: {} bytes is not a whole number of "
                                                    "{} elements",
                                                    i, v, to_string(spec.type)));
    }
  }
}

std::unique_ptr<ProgramSet> make_collective(const CollectiveSpec& spec) {
  validate(spec);
  CollectiveSpec s = spec;
  if (s.op == CollectiveOp::Barrier) s.bytes = Bytes(0);
  if (s.op != CollectiveOp::AllToAllV) s.alltoallv.clear();
  if (s.algorithm != Algorithm::TorusRing) s.torus_dims.clear();
  return find(s.op, s.algorithm)->factory(s);
}

Rank ring_rank_at(Rank ranks, std::uint32_t ranks_per_node, std::uint32_t channel, Rank position) {
  const std::uint32_t g = ranks_per_node ? ranks_per_node : ranks;
  const Rank node = position / g, j = position % g, c = channel % g;
  const Rank local = node % 2 == 0 ? (c + j) % g : (c + g - 1 - j) % g;
  return node * g + local;
}

Rank ring_position_of(Rank ranks, std::uint32_t ranks_per_node, std::uint32_t channel, Rank rank) {
  const std::uint32_t g = ranks_per_node ? ranks_per_node : ranks;
  const Rank node = rank / g, local = rank % g, c = channel % g;
  const Rank j = node % 2 == 0 ? (local + g - c) % g : (c + g - 1 - local) % g;
  return node * g + j;
}

}  // namespace lockstep
