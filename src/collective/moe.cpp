// MoE dispatch and combine programs, DeepEP's normal and low-latency kernels (collective/moe.hpp,
// docs/moe-dispatch.md).
#include "lockstep/collective/moe.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <vector>

#include "lockstep/core/error.hpp"

namespace lockstep {
namespace {

// C(a, k) / C(b, k) for a <= b: the chance that k distinct picks out of b all miss b - a of them.
double choose_ratio(std::uint64_t a, std::uint64_t b, std::uint64_t k) {
  double p = 1;
  for (std::uint64_t i = 0; i < k; ++i) {
    if (a <= i) return 0;
    p *= static_cast<double>(a - i) / static_cast<double>(b - i);
  }
  return p;
}

// Nodes a token may reach: M when node-limited routing restricts it, else every node.
std::uint32_t reachable_nodes(const MoeSpec& s) {
  return s.max_nodes == 0 || s.max_nodes >= s.nodes() ? s.nodes() : s.max_nodes;
}

std::uint64_t expected_bytes(double tokens, std::uint64_t token_bytes) {
  return static_cast<std::uint64_t>(std::llround(tokens * static_cast<double>(token_bytes)));
}

constexpr OpIndex kNoDep = 0xFFFFFFFFu;

// Programs with the translation symmetry by one node that make_moe_programs' orders give them.
class MoeProgramSet final : public MaterializedProgramSet {
 public:
  MoeProgramSet(Rank ranks, Rank period) : MaterializedProgramSet(ranks, DataType::Uint8) {
    period_ = period;
  }
  Rank symmetry_period() const override { return period_; }
  Lookahead lookahead() const override { return Lookahead::Program; }

 private:
  Rank period_ = 0;
};

// Size of chunk c of `bytes` cut into `chunks` near-equal pieces.
std::uint64_t chunk(std::uint64_t bytes, std::uint32_t chunks, std::uint32_t c) {
  return bytes / chunks + (c < bytes % chunks ? 1 : 0);
}

// One rank's ops as the builders below add them: sends read the input, receives fill the output
// (offsets are not tracked: only the timing engines run these programs).
struct Builder {
  MoeProgramSet& set;
  Rank rank;
  OpIndex send(Rank peer, std::uint64_t bytes, std::uint16_t channel, OpIndex dep = kNoDep) {
    Op op = make_send(peer, {Buffer::Input, 0, bytes}, channel);
    if (dep != kNoDep) op.add_dep(dep);
    return set.add(rank, op);
  }
  OpIndex recv(Rank peer, std::uint64_t bytes, std::uint16_t channel) {
    return set.add(rank, make_recv(peer, {Buffer::Output, 0, bytes}, RecvMode::Copy, channel));
  }
  // One op that waits for every op of `ops` (chained joins of kMaxDeps - 1 plus the previous).
  OpIndex join(const std::vector<OpIndex>& ops) {
    OpIndex last = kNoDep;
    for (std::size_t i = 0; i < ops.size();) {
      Op j = make_compute(Time::zero());
      if (last != kNoDep) j.add_dep(last);
      while (i < ops.size() && j.num_deps < kMaxDeps) j.add_dep(ops[i++]);
      last = set.add(rank, j);
    }
    return last;
  }
  // Sends each (peer, message) of `to` (a peer may repeat) chunk by chunk, chunk c on channel
  // first_channel + c, each chunk's sends waiting for the previous chunk's: one sender walking
  // its tokens in order (DeepEP's senders do), so the first chunks arrive, and are forwarded,
  // while the later ones travel.
  void in_order(const std::vector<std::pair<Rank, std::uint64_t>>& to, std::uint32_t chunks,
                std::uint16_t first_channel) {
    OpIndex after = kNoDep;
    for (std::uint32_t c = 0; c < chunks && !to.empty(); ++c) {
      std::vector<OpIndex> sent;
      for (const auto& [peer, message] : to)
        sent.push_back(send(peer, chunk(message, chunks, c),
                            static_cast<std::uint16_t>(first_channel + c), after));
      after = join(sent);
    }
  }
};

// Chunk c of a network message travels on channel c, of an NVLink one on channel chunks + c: a
// channel then carries messages of one size only, so that sends matching their receives in the
// order they start (a forwarded chunk starts when its input arrives) still pair equal sizes.
std::uint16_t net_channel(std::uint32_t c) {
  return static_cast<std::uint16_t>(c);
}
std::uint16_t nvl_channel(const MoeSpec& s, std::uint32_t c) {
  return static_cast<std::uint16_t>(s.chunks + c);
}

// The load of each rank's experts relative to the mean: the hot rank (rank 0) takes `imbalance`
// times the mean, the others equally less, so that the total stays the uniform one. A message
// to (dispatch) or from (combine) a rank scales by its share; a node's network message by the
// mean share of its GPUs.
struct Load {
  const MoeSpec& s;
  double rank(Rank d) const {
    if (!s.rank_load.empty()) return s.rank_load[d];
    if (s.imbalance == 1 || s.ranks == 1) return 1;
    return d == 0 ? s.imbalance : (s.ranks - s.imbalance) / (s.ranks - 1);
  }
  double node(Rank n) const {
    if (!s.node_reach.empty()) return reach_factor(s.node_reach[n * s.ranks_per_node], node_p);
    double sum = 0;
    for (Rank l = 0; l < s.ranks_per_node; ++l) sum += rank(n * s.ranks_per_node + l);
    return sum / s.ranks_per_node;
  }
  // A normal kernel's forwarded message to GPU d over its mean.
  double forward(Rank d) const {
    return s.rank_reach.empty() ? rank(d) : reach_factor(s.rank_reach[d], rank_p);
  }
  static double reach_factor(double reach, double uniform) {
    return uniform > 0 ? reach / uniform : 1;
  }
  // The uniform reach the mean messages were sized with (moe_traffic).
  double node_p = moe_node_probability(s), rank_p = moe_rank_probability(s);
  static std::uint64_t bytes(std::uint64_t mean, double share) {
    return static_cast<std::uint64_t>(std::llround(static_cast<double>(mean) * share));
  }
};

// The traffic of `tokens` tokens of one rank (none: its empty messages).
MoeTraffic own_traffic(const MoeSpec& s, MoePhase phase, std::uint64_t tokens) {
  MoeSpec one = s;
  one.rank_tokens.clear();
  one.tokens = std::max<std::uint64_t>(1, tokens);
  MoeTraffic t = moe_traffic(one, phase);
  if (tokens == 0) t.network_message = t.nvlink_message = 0;
  return t;
}

// The traffic of each rank's own tokens: a message carries its origin's (the rank whose tokens
// it holds: the sender in dispatch, the owner the outputs go back to in combine).
struct Origins {
  std::vector<MoeTraffic> by_rank;
  Origins(const MoeSpec& s, MoePhase phase) {
    if (s.rank_tokens.empty()) {
      by_rank.assign(1, moe_traffic(s, phase));
      return;
    }
    by_rank.reserve(s.ranks);
    std::map<std::uint64_t, MoeTraffic> known;  // by token count: a few distinct ones
    for (Rank r = 0; r < s.ranks; ++r) {
      const std::uint64_t n = s.rank_tokens[r];
      auto it = known.find(n);
      if (it == known.end()) it = known.emplace(n, own_traffic(s, phase, n)).first;
      by_rank.push_back(it->second);
    }
  }
  const MoeTraffic& operator()(Rank r) const {
    return by_rank.size() == 1 ? by_rank[0] : by_rank[r];
  }
};

// Where rank r sits in the normal kernels' two-hop layout: its node and local index, and the
// rank at local index `local` of node n (both taken modulo the node count and node size, so
// that "node + dn" and "l + dl" wrap around).
struct Place {
  Rank g, nodes, node, l;
  Place(const MoeSpec& s, Rank r) : g(s.ranks_per_node), nodes(s.nodes()), node(r / g), l(r % g) {}
  Rank at(Rank n, Rank local) const { return (n % nodes) * g + local % g; }
};

void normal_dispatch(const MoeSpec& s, const Origins& t, MoeProgramSet& set) {
  const Load load{s};
  for (Rank r = 0; r < s.ranks; ++r) {
    Builder b{set, r};
    const Place p(s, r);
    const Rank g = p.g, nodes = p.nodes, node = p.node, l = p.l;
    // The network hop: once per other node, to this GPU's rail peer there; then this node's
    // tokens to its other GPUs.
    std::vector<std::pair<Rank, std::uint64_t>> rails, locals;
    for (Rank dn = 1; dn < nodes; ++dn)
      rails.emplace_back(p.at(node + dn, l),
                         load.bytes(t(r).network_message, load.node((node + dn) % nodes)));
    for (Rank dl = 1; dl < g; ++dl)
      locals.emplace_back(p.at(node, l + dl),
                          load.bytes(t(r).nvlink_message, load.forward(p.at(node, l + dl))));
    b.in_order(rails, s.chunks, net_channel(0));
    b.in_order(locals, s.chunks, nvl_channel(s, 0));
    // Forwarding: each chunk from node - dn's rail peer goes on to this node's other GPUs.
    for (Rank dn = 1; dn < nodes; ++dn) {
      const Rank origin = p.at(node + nodes - dn, l);
      const std::uint64_t in_net = load.bytes(t(origin).network_message, load.node(node));
      for (std::uint32_t c = 0; c < s.chunks; ++c) {
        const OpIndex in = b.recv(origin, chunk(in_net, s.chunks, c), net_channel(c));
        for (Rank dl = 1; dl < g; ++dl) {
          const Rank peer = p.at(node, l + dl);
          const std::uint64_t message = load.bytes(t(origin).nvlink_message, load.forward(peer));
          b.send(peer, chunk(message, s.chunks, c), nvl_channel(s, c), in);
        }
      }
    }
    // What the other GPUs of the node pass on: their own tokens, then node - 1's, node - 2's...
    for (Rank dl = 1; dl < g; ++dl)
      for (Rank dn = 0; dn < nodes; ++dn) {
        const Rank origin = p.at(node + nodes - dn, l + g - dl);
        const std::uint64_t in_nvl = load.bytes(t(origin).nvlink_message, load.forward(r));
        for (std::uint32_t c = 0; c < s.chunks; ++c)
          b.recv(p.at(node, l + g - dl), chunk(in_nvl, s.chunks, c), nvl_channel(s, c));
      }
  }
}

void normal_combine(const MoeSpec& s, const Origins& t, MoeProgramSet& set) {
  const Load load{s};
  for (Rank r = 0; r < s.ranks; ++r) {
    Builder b{set, r};
    const Place p(s, r);
    const Rank g = p.g, nodes = p.nodes, node = p.node, l = p.l;
    // This GPU's summed outputs go to the forwarding GPU of each token's rail: for its own node's
    // tokens that is their owner, for node + dn's the GPU that brought them over. Chunks in
    // order, as in dispatch, so that the forwarders can send the first ones on early.
    // The outputs for node + dn's GPU on the forwarder's rail are that GPU's tokens.
    std::vector<std::pair<Rank, std::uint64_t>> forwarders;
    for (Rank dl = 1; dl < g; ++dl)
      for (Rank dn = 0; dn < nodes; ++dn)
        forwarders.emplace_back(
            p.at(node, l + dl),
            load.bytes(t(p.at(node + dn, l + dl)).nvlink_message, load.forward(r)));
    b.in_order(forwarders, s.chunks, nvl_channel(s, 0));
    // As forwarder: a chunk for node + dn leaves once every other GPU of the node has sent its
    // part (they are summed here, with this GPU's own, before crossing the network once).
    for (Rank dn = 0; dn < nodes; ++dn) {
      const MoeTraffic& owner = t(p.at(node + dn, l));
      const std::uint64_t out_net = load.bytes(owner.network_message, load.node(node));
      for (std::uint32_t c = 0; c < s.chunks; ++c) {
        std::vector<OpIndex> parts;
        for (Rank dl = 1; dl < g; ++dl) {
          const Rank peer = p.at(node, l + g - dl);
          parts.push_back(
              b.recv(peer, chunk(load.bytes(owner.nvlink_message, load.forward(peer)), s.chunks, c),
                     nvl_channel(s, c)));
        }
        if (dn == 0) continue;  // this node's own tokens end here
        b.send(p.at(node + dn, l), chunk(out_net, s.chunks, c), net_channel(c),
               parts.empty() ? kNoDep : b.join(parts));
      }
    }
    for (Rank dn = 1; dn < nodes; ++dn) {
      const Rank from = p.at(node + nodes - dn, l);
      for (std::uint32_t c = 0; c < s.chunks; ++c)
        b.recv(from, chunk(load.bytes(t(r).network_message, load.node(from / g)), s.chunks, c),
               net_channel(c));
    }
  }
}

// Low latency: one message per (token, expert) straight to the expert's GPU; combine sends the
// same number of BF16 messages back, so both phases are this pairwise exchange.
void low_latency(const MoeSpec& s, MoePhase phase, const Origins& t, MoeProgramSet& set) {
  const Load load{s};
  const Rank g = s.ranks_per_node, n = s.ranks;
  // A message's size: the mean for its hop of the tokens' owner's count, scaled by the load of
  // the expert's rank (the receiver in dispatch, the sender in combine).
  const auto message = [&](Rank from, Rank to) {
    const bool dispatch = phase == MoePhase::Dispatch;
    const MoeTraffic& owner = t(dispatch ? from : to);
    const std::uint64_t mean = from / g == to / g ? owner.nvlink_message : owner.network_message;
    return load.bytes(mean, load.rank(dispatch ? to : from));
  };
  for (Rank r = 0; r < n; ++r) {
    Builder b{set, r};
    // By distance, as DeepEP's warps cover the experts (the order times nothing: every op is
    // posted at once).
    for (Rank st = 1; st < n; ++st) b.send((r + st) % n, message(r, (r + st) % n), 0);
    for (Rank st = 1; st < n; ++st) b.recv((r + n - st) % n, message((r + n - st) % n, r), 0);
  }
}

}  // namespace

const char* to_string(MoeKernel kernel) {
  return kernel == MoeKernel::Normal ? "normal" : "low_latency";
}
const char* to_string(MoePhase phase) {
  return phase == MoePhase::Dispatch ? "moe_dispatch" : "moe_combine";
}

MoeKernel parse_moe_kernel(std::string_view name, std::string_view field) {
  if (name == "normal") return MoeKernel::Normal;
  if (name == "low_latency") return MoeKernel::LowLatency;
  throw InputError(std::string(field),
                   fmt::format("unknown kernel '{}' (expected normal or low_latency)", name));
}

MoePhase parse_moe_phase(std::string_view name, std::string_view field) {
  if (name == "moe_dispatch") return MoePhase::Dispatch;
  if (name == "moe_combine") return MoePhase::Combine;
  throw InputError(std::string(field),
                   fmt::format("unknown MoE op '{}' (expected moe_dispatch or moe_combine)", name));
}

void validate(const MoeSpec& s) {
  if (s.tokens == 0 || s.tokens > (std::uint64_t{1} << 32))
    throw InputError("tokens", "must be between 1 and 4,294,967,296");
  if (s.hidden == 0 || s.hidden > (1u << 20))
    throw InputError("hidden", "must be between 1 and 1,048,576");
  if (s.ranks == 0 || s.ranks > 4096) throw InputError("ranks", "must be between 1 and 4096");
  if (s.ranks_per_node == 0 || s.ranks % s.ranks_per_node != 0)
    throw InputError("ranks_per_node", fmt::format("{} does not divide the {} ranks into whole "
                                                   "nodes",
                                                   s.ranks_per_node, s.ranks));
  if (s.experts == 0 || s.experts % s.ranks != 0)
    throw InputError("experts", fmt::format("{} experts do not spread evenly over {} ranks",
                                            s.experts, s.ranks));
  const std::uint64_t reach = std::uint64_t{reachable_nodes(s)} * s.experts / s.nodes();
  if (s.topk == 0 || s.topk > reach)
    throw InputError("topk",
                     fmt::format("must be between 1 and the {} experts a token can reach", reach));
  if (s.chunks == 0 || s.chunks > 64) throw InputError("chunks", "must be between 1 and 64");
  if (!s.rank_tokens.empty() && s.rank_tokens.size() != s.ranks)
    throw InputError("rank_tokens", fmt::format("{} counts for {} ranks (one a rank)",
                                                s.rank_tokens.size(), s.ranks));
  for (std::uint64_t n : s.rank_tokens)
    if (n > s.tokens)
      throw InputError("rank_tokens",
                       fmt::format("{} tokens on a rank, above tokens = {}", n, s.tokens));
  if (!(s.imbalance >= 1 && s.imbalance <= s.ranks))
    throw InputError("imbalance", fmt::format("{} is not between 1 and the {} ranks (the busiest "
                                              "rank's tokens over the mean)",
                                              s.imbalance, s.ranks));
  for (const auto* given : {&s.rank_reach, &s.node_reach}) {
    const char* field = given == &s.rank_reach ? "rank_reach" : "node_reach";
    if (given->empty()) continue;
    if (given->size() != s.ranks)
      throw InputError(field,
                       fmt::format("{} values for {} ranks (one a rank)", given->size(), s.ranks));
    for (Rank r = 0; r < s.ranks; ++r) {
      const double p = (*given)[r];
      if (!(p >= 0 && p <= 1)) throw InputError(field, fmt::format("{} is not a probability", p));
      if (given == &s.node_reach && p != (*given)[r - r % s.ranks_per_node])
        throw InputError(field, fmt::format("rank {} differs from its node's first rank", r));
    }
  }
  if (s.rank_load.empty()) return;
  if (s.rank_load.size() != s.ranks)
    throw InputError("rank_load", fmt::format("{} loads for {} ranks (one a rank)",
                                              s.rank_load.size(), s.ranks));
  if (s.imbalance != 1) throw InputError("rank_load", "given with imbalance (one or the other)");
  double sum = 0;
  for (double x : s.rank_load) {
    if (!(x >= 0)) throw InputError("rank_load", fmt::format("{} is negative", x));
    sum += x;
  }
  if (std::abs(sum / s.ranks - 1) > 1e-9)
    throw InputError("rank_load", fmt::format("the loads' mean is {}, not 1", sum / s.ranks));
}

std::uint64_t moe_token_bytes(const MoeSpec& s, MoePhase phase) {
  const std::uint64_t h = s.hidden;
  if (phase == MoePhase::Dispatch && s.fp8_dispatch) return h + 4 * ((h + 127) / 128);
  return 2 * h;
}

double moe_node_probability(const MoeSpec& s) {
  const std::uint64_t per_node = s.experts / s.nodes(), m = reachable_nodes(s);
  return static_cast<double>(m) / s.nodes() *
         (1 - choose_ratio((m - 1) * per_node, m * per_node, s.topk));
}

double moe_rank_probability(const MoeSpec& s) {
  const std::uint64_t per_node = s.experts / s.nodes(), m = reachable_nodes(s);
  const std::uint64_t per_rank = s.experts / s.ranks;
  return static_cast<double>(m) / s.nodes() *
         (1 - choose_ratio(m * per_node - per_rank, m * per_node, s.topk));
}

MoeTraffic moe_traffic(const MoeSpec& s, MoePhase phase) {
  validate(s);
  MoeTraffic t;
  t.token_bytes = moe_token_bytes(s, phase);
  const double tokens = static_cast<double>(s.tokens);
  const std::uint64_t g = s.ranks_per_node, nodes = s.nodes();
  if (s.kernel == MoeKernel::Normal) {
    t.network_message = expected_bytes(tokens * moe_node_probability(s), t.token_bytes);
    t.nvlink_message = expected_bytes(tokens * moe_rank_probability(s), t.token_bytes);
    t.network_messages = nodes - 1;
    t.nvlink_messages = nodes * (g - 1);
  } else {
    // Each of a token's K experts sits on a given GPU with probability 1 / R.
    const std::uint64_t per_peer =
        expected_bytes(tokens * s.topk / static_cast<double>(s.ranks), t.token_bytes);
    t.network_message = t.nvlink_message = per_peer;
    t.network_messages = (nodes - 1) * g;
    t.nvlink_messages = g - 1;
  }
  return t;
}

MoeTraffic moe_rank_traffic(const MoeSpec& s, MoePhase phase, Rank r) {
  validate(s);
  return own_traffic(s, phase, s.tokens_of(r));
}

std::unique_ptr<ProgramSet> make_moe_programs(const MoeSpec& s, MoePhase phase) {
  validate(s);
  const Origins t(s, phase);
  // A hot rank, or ranks of different token counts, break the translation symmetry.
  const bool even = std::all_of(s.rank_tokens.begin(), s.rank_tokens.end(),
                                [&](std::uint64_t n) { return n == s.rank_tokens.front(); });
  const bool skewed = !s.rank_load.empty() || !s.rank_reach.empty() || !s.node_reach.empty();
  const Rank period = s.imbalance != 1 || skewed || !even ? 0
                      : s.nodes() > 1                     ? s.ranks_per_node
                                                          : 1;
  auto set = std::make_unique<MoeProgramSet>(s.ranks, period);
  if (s.kernel == MoeKernel::LowLatency) {
    low_latency(s, phase, t, *set);
  } else if (phase == MoePhase::Dispatch) {
    normal_dispatch(s, t, *set);
  } else {
    normal_combine(s, t, *set);
  }
  for (Rank r = 0; r < s.ranks; ++r) {
    std::uint64_t in = 0, out = 0;
    for (const Op& op : set->program(r)) {
      if (op.kind == OpKind::Send) in = std::max(in, op.src.bytes);
      if (op.kind == OpKind::Recv) out = std::max(out, op.dst.bytes);
    }
    set->set_buffers(r, BufferSizes{in, out, 0, false});
  }
  set->set_label(fmt::format("{}/{}", to_string(phase), to_string(s.kernel)));
  return set;
}

}  // namespace lockstep
