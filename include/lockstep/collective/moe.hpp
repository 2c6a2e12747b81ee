#pragma once
// Mixture-of-experts dispatch and combine as DeepSeek's DeepEP runs them (docs/moe-dispatch.md),
// compiled to per-rank programs that every timing engine prices on the topology.
//
//   MoeSpec s;                       // 4096 tokens per rank, hidden 7168, top-8 of 256 experts
//   s.ranks = 32;                    // EP 32 on 4 nodes of 8 GPUs
//   s.ranks_per_node = 8;
//   MoeTraffic t = moe_traffic(s, MoePhase::Dispatch);   // expected bytes per pair, by hop
//   std::unique_ptr<ProgramSet> p = make_moe_programs(s, MoePhase::Dispatch);
//
// Routing is uniform: each token picks `topk` distinct experts out of `experts`, every set of
// them equally likely; experts are spread evenly, rank r holding experts r x E/R .. (r+1) x E/R-1.
// With node-limited routing (DeepSeek-V3, arXiv:2412.19437 section 2.1.2: each token goes to at
// most M nodes) a token picks M of the N nodes, then its top-k among their experts.
// Two kernels (github.com/deepseek-ai/DeepEP, README):
//   normal       a token crosses the network once per destination node, to the GPU of its own
//                local index there (its rail), which forwards it over NVLink to every GPU of
//                that node holding one of its experts (once per GPU, however many of its experts
//                that GPU holds); its own node's GPUs get it over NVLink directly. The RDMA
//                message is cut into `chunks` that forward as they arrive (DeepEP streams).
//   low_latency  a token goes straight to each selected expert's GPU, once per expert (the
//                buffers are per local expert), over the network across nodes and over NVLink
//                inside one (DeepEP's allow_nvlink_for_low_latency_mode, on by default).
// Dispatch carries FP8 (1 B per element plus one float32 scale per 128 elements, DeepEP's
// per-token, per-128-channel scales; or BF16 with fp8_dispatch false); combine carries BF16
// expert outputs back along the reverse paths, summed per GPU before they leave it and, in the
// normal kernel, per node at the forwarding GPU before they cross the network.
// Expected message sizes are rounded to whole bytes (the matrices are all-equal under uniform
// routing, so one size per hop describes them).
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "lockstep/collective/program.hpp"

namespace lockstep {

enum class MoeKernel : std::uint8_t { Normal, LowLatency };
enum class MoePhase : std::uint8_t { Dispatch, Combine };

/// "normal", "low_latency"; "moe_dispatch", "moe_combine".
const char* to_string(MoeKernel kernel);
const char* to_string(MoePhase phase);
/// InputError naming `field` for other names.
MoeKernel parse_moe_kernel(std::string_view name, std::string_view field = "kernel");
MoePhase parse_moe_phase(std::string_view name, std::string_view field = "op");

struct MoeSpec {
  std::uint64_t tokens = 4096;       // T, tokens per rank per step (the most, with rank_tokens)
  std::uint32_t hidden = 7168;       // H, elements per token
  std::uint32_t topk = 8;            // K, experts per token
  std::uint32_t experts = 256;       // E, routed experts (a multiple of ranks)
  Rank ranks = 8;                    // R, expert-parallel ranks
  std::uint32_t ranks_per_node = 8;  // G, GPUs per node (NVLink domain); divides ranks
  std::uint32_t max_nodes = 0;       // M, node-limited routing; 0 or >= N: unrestricted
  MoeKernel kernel = MoeKernel::Normal;
  bool fp8_dispatch = true;  // dispatch in FP8 with scales (DeepEP's default); false: BF16
  std::uint32_t chunks = 4;  // normal kernel: pieces of each RDMA message that forward alone
  // Tokens of the busiest rank's experts over the mean (1 to R): rank 0's experts are hot and
  // the others share the rest equally (the figure DeepSeek's EPLB balances by replicating
  // experts). Messages to (dispatch) or from (combine) a rank scale by its share, a node's
  // network message by its GPUs' mean share.
  double imbalance = 1;
  // Tokens each rank routes, when they differ (SGLang's DP attention: an attention group's GPUs
  // route its own sequences' tokens, an idle group's none); empty: `tokens` each. A message
  // carries its origin rank's tokens (the sender's in dispatch, the owner's in combine); a rank
  // with none still sends its empty messages, the token counts DeepEP's dispatch signals to
  // every peer before the data (a message latency, no bytes).
  std::vector<std::uint64_t> rank_tokens;
  // The load of each rank's experts relative to the mean (one a rank, mean 1), when the experts
  // are not equally popular (docs/inference.md, "Expert load and redundant experts"): messages
  // to (dispatch) or from (combine) rank r scale by rank_load[r], as with `imbalance`, which it
  // replaces; empty: every rank 1 (or `imbalance`'s hot rank 0).
  std::vector<double> rank_load;
  // The normal kernels under rank_load (both empty, or one a rank): the probability that a token
  // reaches rank r's GPU (one of its experts there) and rank r's node (one anywhere on it, the
  // same for every rank of the node). A network message to a node then carries tokens x the
  // node's reach, a forwarded NVLink one tokens x the GPU's: a token crosses to a node once and
  // reaches a GPU once however many of its experts they hold, so its reach is not the uniform
  // reach x the load (which passes 1 on a hot node). Empty: the uniform reach x the load.
  std::vector<double> rank_reach, node_reach;

  std::uint32_t nodes() const { return ranks / ranks_per_node; }
  std::uint64_t tokens_of(Rank r) const { return rank_tokens.empty() ? tokens : rank_tokens[r]; }
};

/// Checks the spec; InputError naming the field (tokens, hidden, topk, experts, ranks,
/// ranks_per_node, max_nodes, chunks, imbalance, rank_tokens: one a rank, none above tokens;
/// rank_load: one a rank, none negative, mean 1, not with imbalance; rank_reach, node_reach: one a
/// rank each, in [0, 1], node_reach equal on a node's ranks).
void validate(const MoeSpec& spec);

/// Bytes of one token's message in `phase`: dispatch H + 4 ceil(H / 128) (FP8) or 2H (BF16);
/// combine 2H.
std::uint64_t moe_token_bytes(const MoeSpec& spec, MoePhase phase);
/// Probability that a token selects at least one expert on a given node other than its own
/// (uniform: 1 - C(E - E/N, K) / C(E, K); node-limited: M/N x (1 - C((M-1)E/N, K) / C(ME/N, K))).
double moe_node_probability(const MoeSpec& spec);
/// The same for one given GPU (E/R experts).
double moe_rank_probability(const MoeSpec& spec);

/// The expected traffic of one rank, per hop (docs/moe-dispatch.md derives each line).
struct MoeTraffic {
  std::uint64_t token_bytes = 0;  // one token's message
  // normal: bytes a rank sends to the same-rail GPU of each other node (T x P(node) x b);
  // low_latency: to each GPU of another node (T x K / R x b).
  std::uint64_t network_message = 0;
  // normal: bytes of tokens from one source GPU that one forwarding GPU passes to one other GPU
  // of its node (T x P(rank) x b; the source's own node: sent by the source itself);
  // low_latency: to each other GPU of its own node (T x K / R x b).
  std::uint64_t nvlink_message = 0;
  std::uint64_t network_messages = 0;  // per rank: N - 1 (normal) or (N - 1) G (low latency)
  std::uint64_t nvlink_messages = 0;   // per rank: N (G - 1) (normal) or G - 1 (low latency)
  std::uint64_t network_bytes() const { return network_message * network_messages; }
  std::uint64_t nvlink_bytes() const { return nvlink_message * nvlink_messages; }
};
MoeTraffic moe_traffic(const MoeSpec& spec, MoePhase phase);
/// The expected traffic of rank r's own tokens (spec.tokens_of(r) of them; none: empty messages).
MoeTraffic moe_rank_traffic(const MoeSpec& spec, MoePhase phase, Rank r);

/// The programs of one dispatch or combine over spec.ranks ranks (rank r on node r / G as local
/// GPU r % G). Normal: chunk c of a network message on channel c, of an NVLink one on channel
/// chunks + c (one size per channel); a forwarded
/// chunk waits for its network chunk (dispatch) or for every local GPU's part of it (combine).
/// Translation by G ranks maps the programs onto themselves (ProgramSet::symmetry_period) unless
/// a rank is hot (imbalance > 1, rank_load) or the ranks route different token counts
/// (rank_tokens).
std::unique_ptr<ProgramSet> make_moe_programs(const MoeSpec& spec, MoePhase phase);

}  // namespace lockstep
