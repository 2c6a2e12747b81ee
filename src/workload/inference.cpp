// The request-level simulation of a serving job (docs/inference.md): arrivals (Poisson at the
// rate, or a closed loop of `concurrency` clients), each replica's scheduler as vLLM's (V0,
// without chunked prefill: waiting requests are admitted at a step boundary into a prefill step
// of their prompts, else the running batch decodes one token each), or static batches; with
// disaggregation, prefill replicas hand each request's KV cache to a decode replica.
#include "lockstep/workload/inference.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <queue>
#include <utility>

#include "inference_detail.hpp"
#include "lockstep/core/error.hpp"
#include "lockstep/core/rng.hpp"
#include "lockstep/topology/catalog.hpp"
#include "training_detail.hpp"

namespace lockstep {
namespace {

enum class Role : std::uint8_t { Both, Prefill, Decode };

struct Request {
  std::uint64_t prompt = 0, output = 0, generated = 0;
  std::uint64_t cached = 0;  // tokens whose K and V sit in the replica's cache
  std::uint32_t group = 0;   // the attention group holding its KV cache in its replica
  double arrival = 0, first = 0, finish = 0;
};

// One attention group's load over the run: its queue (requests waiting for it, integrated over
// time) and its KV cache (blocks its sequences hold during each step, weighted by the step).
struct GroupLoad {
  std::size_t queued = 0, queue_max = 0;
  double queue_seconds = 0, block_seconds = 0;
  std::uint64_t peak_blocks = 0, admitted = 0;
};

struct Replica {
  Role role = Role::Both;
  // Every group's queue in one deque, in order of entry: a group admits from its own requests
  // (its scheduler's queue), first come first served; a full group holds back only its own.
  std::deque<std::size_t> waiting;
  std::vector<GroupLoad> groups;  // one per attention group
  double settled = 0;             // the queues' depths are integrated up to this time
  std::vector<std::size_t> running;
  std::vector<std::size_t> step_members;  // the step under way
  std::vector<StepPiece> step_pieces;     // each member's tokens in it
  bool busy = false, step_prefill = false;
  double busy_time = 0;
  std::size_t inbound = 0;       // KV caches on their way here
  std::uint32_t next_group = 0;  // the attention group the next request to arrive here joins
  std::size_t load() const {
    return waiting.size() + running.size() + step_members.size() + inbound;
  }
};

struct Event {
  double time = 0;
  std::uint64_t order = 0;  // ties: in the order scheduled (determinism)
  // Preempted: a decode replica evicted the request, which goes back to the prefill pool.
  enum Kind : std::uint8_t { Arrival, StepEnd, KvArrival, Preempted } kind = Arrival;
  std::size_t index = 0;     // request (Arrival, KvArrival, Preempted) or replica (StepEnd)
  std::uint32_t target = 0;  // KvArrival: the decode replica
  bool operator>(const Event& o) const { return time != o.time ? time > o.time : order > o.order; }
};

std::uint64_t draw(const LengthSpec& l, Rng& rng) {
  return l.lo == l.hi ? l.lo : l.lo + rng.below(l.hi - l.lo + 1);
}

}  // namespace

InferenceResult simulate_inference(const Topology& topo, const InferenceConfig& c,
                                   const InferenceOptions& options) {
  const std::uint64_t world = topo.gpus().size();
  if (c.gpus() != world) {
    throw InputError(
        c.world_field,
        c.disaggregated()
            ? fmt::format("prefill_gpus + decode_gpus = {} + {} = {} but the cluster has {} GPUs",
                          c.prefill_gpus, c.decode_gpus, c.gpus(), world)
        : c.attention_dp > 1
            ? fmt::format("replicas x tp x attention_dp = {} x {} x {} = {} GPUs but the "
                          "cluster has {}",
                          c.replicas, c.tp, c.attention_dp, c.gpus(), world)
            : fmt::format("replicas x tp x pp = {} x {} x {} = {} GPUs but the cluster has {}",
                          c.replicas, c.tp, c.pp, c.gpus(), world),
        c.world_where);
  }
  for (const FaultSpec& f : c.faults) {
    if (f.rank >= world) {
      throw InputError(f.field,
                       fmt::format("'{}': rank {} does not exist ({} GPUs)", f.text, f.rank, world),
                       f.where);
    }
  }
  InferenceStepModel model(topo, c, options.comm);
  check_inference_fit(c, model);

  InferenceResult r;
  r.model = c.model.name;
  r.gpu = model.gpu().display;
  r.engine = c.engine;
  r.policy = c.disaggregated() ? "disaggregated" : to_string(c.policy);
  r.gpus = c.gpus();
  r.weight_gib_per_gpu = model.weight_bytes_per_gpu() / kGiB;
  r.kv_gib_free_per_gpu = model.kv_budget_bytes_per_gpu() / kGiB;
  const std::uint64_t capacity = group_kv_blocks(c, model);  // blocks, each attention group
  r.kv_token_capacity = capacity * c.attention_dp * kKvBlockTokens;
  const auto mean_prompt = static_cast<std::uint64_t>(std::llround(c.prompt.mean()));
  r.decode_batch1 = model.decode({mean_prompt});
  r.prefill_one = model.prefill({mean_prompt});
  r.decode_all_reduce = model.price_all_reduce(c.model.hidden * 2);

  // Requests and their arrivals, from the seed.
  Rng rng = Rng(c.seed).split(0x1f3e);
  std::vector<Request> reqs(c.count);
  for (Request& q : reqs) {
    q.prompt = draw(c.prompt, rng);
    q.output = draw(c.output, rng);
  }
  std::priority_queue<Event, std::vector<Event>, std::greater<>> events;
  std::uint64_t order = 0;
  auto push = [&](double t, Event::Kind kind, std::size_t index, std::uint32_t target = 0) {
    events.push({t, order++, kind, index, target});
  };
  std::size_t issued = 0;
  if (c.rate > 0) {
    double t = 0;
    for (std::size_t i = 0; i < reqs.size(); ++i) {
      push(t, Event::Arrival, i);
      t += -std::log(1 - rng.uniform()) / c.rate;
    }
    issued = reqs.size();
  } else {
    for (; issued < std::min<std::uint64_t>(c.concurrency, reqs.size()); ++issued)
      push(0, Event::Arrival, issued);
  }

  std::vector<Replica> reps;
  if (c.disaggregated()) {
    reps.resize(c.prefill_replicas() + c.decode_replicas());
    for (std::uint32_t i = 0; i < reps.size(); ++i)
      reps[i].role = i < c.prefill_replicas() ? Role::Prefill : Role::Decode;
  } else {
    reps.resize(c.replicas);
  }
  const std::uint32_t dp = c.attention_dp;
  for (Replica& rep : reps) rep.groups.resize(dp);
  const ComputeNoise noise(c.jitter, c.faults);
  Rng noise_rng = Rng(c.seed).split(0x401e);
  double compute = 0, network = 0, flops = 0, bytes = 0;  // GPU-seconds, per-GPU sums
  std::uint64_t decode_steps = 0, decode_seqs = 0;
  const std::uint32_t rg = c.replica_gpus();

  // A step's compute under the noise: every rank of the replica waits for the slowest at each
  // all-reduce, so the replica's step runs at its slowest rank's pace.
  auto slowdown = [&](std::uint32_t replica) {
    if (noise.empty()) return 1.0;
    const std::vector<double> f =
        noise.draw_rank_factors(static_cast<std::uint32_t>(world), noise_rng);
    double worst = 1;
    for (std::uint32_t g = replica * rg; g < (replica + 1) * rg; ++g) {
      double k = f.empty() ? 1.0 : f[g];
      if (noise.has_kernel_jitter()) k *= noise.draw_kernel_factor(noise_rng);
      worst = std::max(worst, k);
    }
    return worst;
  };
  auto least_loaded = [&](Role role) {
    std::uint32_t best = 0;
    bool found = false;
    for (std::uint32_t i = 0; i < reps.size(); ++i) {
      if (reps[i].role != role) continue;
      if (!found || reps[i].load() < reps[best].load()) best = i;
      found = true;
    }
    return best;
  };
  // Tokens a sequence holds in the cache once its next token is computed (its context), and the
  // blocks they take: every count against the cache below is in blocks (PagedAttention).
  auto context = [&](std::size_t q) { return reqs[q].prompt + reqs[q].generated; };
  // vLLM's recompute preemption: when the running batch's next tokens do not fit, the newest
  // sequence leaves the cache and goes back to the front of the queue, to be prefilled again
  // with the tokens it has generated (Kwon et al., SOSP 2023, section 4.5). A decode replica
  // cannot prefill: the sequence goes back to the front of the prefill pool's queue, whose
  // prefill recomputes its K and V and sends them to a decode replica again.
  auto enqueue = [&](Replica& rep, std::size_t q, bool front) {
    if (front)
      rep.waiting.push_front(q);
    else
      rep.waiting.push_back(q);
    GroupLoad& g = rep.groups[reqs[q].group];
    g.queue_max = std::max(g.queue_max, ++g.queued);
  };
  // Each attention group preempts within its own cache: the group's newest sequence leaves
  // while the group's sequences do not fit, so long as the group keeps one.
  auto make_room = [&](Replica& rep, std::vector<std::uint64_t> need, double t) {
    std::vector<std::size_t> members(dp, 0);
    for (std::size_t q : rep.running) {
      need[reqs[q].group] += kv_blocks(context(q));
      ++members[reqs[q].group];
    }
    for (std::size_t k = rep.running.size(); k-- > 0;) {
      const std::size_t q = rep.running[k];
      const std::uint32_t g = reqs[q].group;
      if (need[g] <= capacity || members[g] == 1) continue;
      rep.running.erase(rep.running.begin() + static_cast<std::ptrdiff_t>(k));
      need[g] -= kv_blocks(context(q));
      --members[g];
      reqs[q].cached = 0;
      if (rep.role == Role::Decode)
        push(t, Event::Preempted, q);
      else
        enqueue(rep, q, true);
      ++r.preemptions;
    }
  };
  // The queues' depths integrated over time up to t (called before any queue changes at t).
  auto settle = [&](Replica& rep, double t) {
    for (GroupLoad& g : rep.groups)
      g.queue_seconds += static_cast<double>(g.queued) * (t - rep.settled);
    rep.settled = t;
  };
  // Request q leaves its group's queue for a step (or, in a decode pool, the running batch);
  // `admitted` counts each entry into the group's cache (a prompt's first chunk, a recompute, a
  // KV cache joining a decode batch), not a prompt's later chunks.
  auto dequeue = [&](Replica& rep, std::size_t q, bool entry) {
    GroupLoad& g = rep.groups[reqs[q].group];
    --g.queued;
    if (entry) ++g.admitted;
  };
  // The attention group a request entering `rep` joins. SGLang's DP controller hands each
  // request to one DP rank's scheduler: round_robin (its default) in turn; shortest_queue to the
  // rank holding the fewest requests, waiting and running (the step under way's too), the lowest
  // rank on a tie (docs/inference.md, "Each group's cache and queue").
  auto pick_group = [&](Replica& rep) {
    if (c.dp_balance == DpBalance::RoundRobin) {
      const std::uint32_t g = rep.next_group;
      rep.next_group = (rep.next_group + 1) % dp;
      return g;
    }
    std::vector<std::size_t> held_requests(dp, 0);
    for (std::uint32_t g = 0; g < dp; ++g) held_requests[g] = rep.groups[g].queued;
    for (std::size_t q : rep.running) ++held_requests[reqs[q].group];
    for (std::size_t q : rep.step_members) ++held_requests[reqs[q].group];
    return static_cast<std::uint32_t>(std::min_element(held_requests.begin(), held_requests.end()) -
                                      held_requests.begin());
  };
  // A request entering replica i (arrival, preemption from a decode replica, a KV cache
  // arriving) joins an attention group and keeps it: the DP rank's scheduler holds its KV cache
  // until it finishes (preempted, it is recomputed there).
  auto enter = [&](std::uint32_t i, std::size_t q, bool front, double t) {
    Replica& rep = reps[i];
    settle(rep, t);
    reqs[q].group = pick_group(rep);
    enqueue(rep, q, front);
  };
  // Request q's piece of a step, on its group.
  auto piece = [&](std::size_t q, std::uint64_t past, std::uint64_t tokens, bool samples) {
    return StepPiece{past, tokens, samples, reqs[q].group};
  };
  // Blocks each group's running sequences hold (their tokens so far, or their contexts after
  // the step to come).
  auto held = [&](const Replica& rep, bool after_step) {
    std::vector<std::uint64_t> n(dp, 0);
    for (std::size_t q : rep.running)
      n[reqs[q].group] += kv_blocks(after_step ? context(q) : reqs[q].cached);
    return n;
  };
  // Sequences each group runs: every group's scheduler keeps its own batch under its own
  // max_batch / attention_dp (SGLang's DP attention: each rank its --max-running-requests / dp).
  const std::uint32_t group_batch = c.group_max_batch();
  const std::uint64_t group_budget = c.group_prefill_tokens();
  auto running_in = [&](const Replica& rep) {
    std::vector<std::uint32_t> n(dp, 0);
    for (std::size_t q : rep.running) ++n[reqs[q].group];
    return n;
  };
  auto start = [&](std::uint32_t i, double t) {
    Replica& rep = reps[i];
    if (rep.busy) return;
    settle(rep, t);
    rep.step_members.clear();
    rep.step_pieces.clear();
    const bool admit = rep.role == Role::Prefill ||
                       (c.policy != BatchPolicy::Static && rep.role == Role::Both) ||
                       rep.running.empty();
    if (rep.role == Role::Decode) {
      // KV caches that arrived join the running batch at the step boundary, when their group's
      // cache holds every running sequence's blocks after the step beside theirs.
      std::vector<std::uint64_t> used = held(rep, true);
      std::vector<std::uint32_t> seqs = running_in(rep);
      std::vector<bool> full(dp, false);
      for (auto it = rep.waiting.begin();
           it != rep.waiting.end() && (c.policy != BatchPolicy::Static || admit);) {
        const std::size_t q = *it;
        const std::uint32_t g = reqs[q].group;
        full[g] = full[g] || seqs[g] >= group_batch || used[g] + kv_blocks(context(q)) > capacity;
        if (full[g]) {
          ++it;  // the group's queue waits; the other groups' go on
          continue;
        }
        used[g] += kv_blocks(context(q));
        ++seqs[g];
        rep.running.push_back(q);
        dequeue(rep, q, true);
        it = rep.waiting.erase(it);
      }
    } else if (c.policy == BatchPolicy::Chunked && rep.role == Role::Both) {
      // Sarathi-Serve's stall-free batching (Agrawal et al., OSDI 2024), as vLLM's chunked
      // prefill: the running sequences decode first, then prompt chunks fill the step's budget
      // of max_prefill_tokens tokens, the partly prefilled prompt first.
      std::vector<std::uint64_t> partial(dp, 0);  // a prompt being prefilled holds its chunks
      for (std::size_t q : rep.waiting) partial[reqs[q].group] += kv_blocks(reqs[q].cached);
      make_room(rep, partial, t);
      // Each group's own budget and batch (its scheduler's share of the replica's).
      std::vector<std::uint64_t> budget(dp, group_budget);
      std::vector<std::uint32_t> seqs = running_in(rep);
      std::vector<std::uint64_t> used = held(rep, true);
      std::vector<bool> full(dp, false);
      for (std::size_t q : rep.running) {
        std::uint64_t& left = budget[reqs[q].group];
        rep.step_members.push_back(q);
        rep.step_pieces.push_back(piece(q, context(q) - 1, 1, true));
        left -= std::min<std::uint64_t>(left, 1);
      }
      rep.running.clear();
      // Several partial prefills (vLLM's max_num_partial_prefills, N): S of the waiting prompts,
      // at most N and at most one "long" (more than 4% of the context left to prefill:
      // max_long_partial_prefills 1, long_prefill_token_threshold's default), share the step,
      // each chunk at most the group's budget / S; a long prompt past the first waits its turn
      // while shorter ones go. N = 1: one prompt may take the whole budget left. Each group
      // counts its own S from its own queue.
      const std::uint32_t n_partial = c.max_partial_prefills;
      const std::uint64_t long_tokens = c.model.seq * 4 / 100;
      auto is_long = [&](std::size_t q) {
        return n_partial > 1 && context(q) - reqs[q].cached > long_tokens;
      };
      std::vector<std::uint64_t> slots(dp, 0);
      std::vector<bool> long_seen(dp, false), long_taken(dp, false);
      for (std::size_t q : rep.waiting) {
        const std::uint32_t g = reqs[q].group;
        if (slots[g] == n_partial) continue;
        if (is_long(q) && long_seen[g]) continue;
        long_seen[g] = long_seen[g] || is_long(q);
        ++slots[g];
      }
      // Prompts left in the queue this step, in order: long ones waiting behind the one
      // prefilling, and those of a group whose budget, batch or cache is full (that group's
      // queue waits).
      std::deque<std::size_t> passed;
      while (!rep.waiting.empty()) {
        const std::size_t q = rep.waiting.front();
        const std::uint32_t g = reqs[q].group;
        const std::uint64_t left = context(q) - reqs[q].cached;
        const std::uint64_t cap =
            std::max<std::uint64_t>(1, group_budget / std::max<std::uint64_t>(slots[g], 1));
        const std::uint64_t chunk = std::min({budget[g], left, cap});
        const bool behind_long = is_long(q) && long_taken[g];
        const bool closed = budget[g] == 0 || seqs[g] >= group_batch;
        if (!behind_long && !closed)
          full[g] = full[g] || used[g] + kv_blocks(reqs[q].cached + chunk) > capacity;
        if (behind_long || closed || full[g]) {
          passed.push_back(q);
          rep.waiting.pop_front();
          continue;
        }
        long_taken[g] = long_taken[g] || is_long(q);
        dequeue(rep, q, reqs[q].cached == 0);
        rep.waiting.pop_front();
        rep.step_members.push_back(q);
        rep.step_pieces.push_back(piece(q, reqs[q].cached, chunk, chunk == left));
        used[g] += kv_blocks(reqs[q].cached + chunk);
        budget[g] -= chunk;
        ++seqs[g];
      }
      for (auto it = passed.rbegin(); it != passed.rend(); ++it) rep.waiting.push_front(*it);
      bool decode_only = true;
      for (const StepPiece& p : rep.step_pieces) decode_only = decode_only && p.tokens == 1;
      rep.step_prefill = !decode_only;
    } else if (admit && !rep.waiting.empty()) {
      // vLLM's budget of tokens per step, each group its own share; a group's first prompt
      // always goes. A prompt is admitted when its group has room in its batch and its cache
      // holds it (a preempted one with the tokens it had generated); a group whose batch, budget
      // or cache is full keeps its queue, the other groups admit theirs.
      std::vector<std::uint64_t> tokens(dp, 0);
      std::vector<std::uint32_t> seqs = running_in(rep), taken(dp, 0);
      std::vector<std::uint64_t> used = held(rep, false);
      std::vector<bool> full(dp, false);
      for (auto it = rep.waiting.begin(); it != rep.waiting.end();) {
        const std::size_t q = *it;
        const std::uint32_t g = reqs[q].group;
        full[g] = full[g] || seqs[g] >= group_batch ||
                  (taken[g] > 0 && tokens[g] + context(q) > group_budget) ||
                  (rep.role == Role::Both && used[g] + kv_blocks(context(q)) > capacity);
        if (full[g]) {
          ++it;
          continue;
        }
        tokens[g] += context(q);
        ++taken[g];
        ++seqs[g];
        used[g] += kv_blocks(context(q));
        rep.step_members.push_back(q);
        rep.step_pieces.push_back(piece(q, 0, context(q), true));
        dequeue(rep, q, true);
        it = rep.waiting.erase(it);
      }
      rep.step_prefill = !rep.step_members.empty();
    }
    if (rep.step_members.empty()) {
      if (rep.role != Role::Prefill) make_room(rep, std::vector<std::uint64_t>(dp, 0), t);
      if (rep.running.empty()) return;
      rep.step_members = rep.running;
      rep.running.clear();
      for (std::size_t q : rep.step_members)
        rep.step_pieces.push_back(piece(q, context(q) - 1, 1, true));
      rep.step_prefill = false;
    }
    if (!rep.step_prefill) {
      ++decode_steps;
      decode_seqs += rep.step_members.size();
    }
    // What each group's cache holds during the step: its members' blocks after it, the running
    // sequences not in it (a prefill step's), and the prompts partly prefilled (chunked).
    std::vector<std::uint64_t> blocks = held(rep, false);
    for (std::size_t k = 0; k < rep.step_members.size(); ++k) {
      const StepPiece& p = rep.step_pieces[k];
      blocks[p.group] += kv_blocks(p.past + p.tokens);
    }
    if (rep.role != Role::Decode)  // a decode pool's queue holds its caches outside (above)
      for (std::size_t q : rep.waiting) blocks[reqs[q].group] += kv_blocks(reqs[q].cached);
    const StepCost cost = model.step(rep.step_pieces);
    const double comm = cost.tp + cost.ep + cost.pp;
    const double comp = cost.seconds - comm;
    const double seconds = comp * slowdown(i) + comm;
    compute += comp * rg;
    network += comm * rg;
    flops += cost.flops * rg;
    bytes += cost.hbm_bytes * rg;
    rep.busy = true;
    rep.busy_time += seconds;
    for (std::uint32_t g = 0; g < dp; ++g) {
      rep.groups[g].block_seconds += static_cast<double>(blocks[g]) * seconds;
      rep.groups[g].peak_blocks = std::max(rep.groups[g].peak_blocks, blocks[g]);
    }
    if (options.record_steps) {
      std::uint64_t tokens = 0;
      for (const StepPiece& p : rep.step_pieces) tokens += p.tokens;
      r.steps.push_back({i, rep.step_prefill, static_cast<std::uint32_t>(rep.step_members.size()),
                         tokens, t, t + seconds});
    }
    push(t + seconds, Event::StepEnd, i);
  };
  auto finish = [&](std::size_t q, double t) {
    reqs[q].finish = t;
    if (c.rate == 0 && issued < reqs.size()) push(t, Event::Arrival, issued++);
  };

  while (!events.empty()) {
    const Event e = events.top();
    events.pop();
    if (e.kind == Event::Arrival) {
      reqs[e.index].arrival = e.time;
      const std::uint32_t i = least_loaded(c.disaggregated() ? Role::Prefill : Role::Both);
      enter(i, e.index, false, e.time);
      start(i, e.time);
    } else if (e.kind == Event::Preempted) {
      const std::uint32_t i = least_loaded(Role::Prefill);
      enter(i, e.index, true, e.time);
      start(i, e.time);
    } else if (e.kind == Event::KvArrival) {
      --reps[e.target].inbound;
      enter(e.target, e.index, false, e.time);
      start(e.target, e.time);
    } else {
      Replica& rep = reps[e.index];
      rep.busy = false;
      settle(rep, e.time);
      std::vector<std::size_t> partial;
      for (std::size_t k = 0; k < rep.step_members.size(); ++k) {
        const std::size_t q = rep.step_members[k];
        Request& rq = reqs[q];
        rq.cached += rep.step_pieces[k].tokens;
        if (!rep.step_pieces[k].samples) {
          partial.push_back(q);  // a prompt chunk: the rest comes in the next steps
          continue;
        }
        ++rq.generated;
        if (rq.generated == 1) rq.first = e.time;
        if (rq.generated >= rq.output) {
          finish(q, e.time);
        } else if (rep.role == Role::Prefill) {
          const std::uint32_t d = least_loaded(Role::Decode);
          // The K and V of every token prefilled (a recomputed sequence: its generated ones too).
          const double kv = model.kv_transfer(rq.cached, static_cast<std::uint32_t>(e.index),
                                              d - c.prefill_replicas());
          network += kv * rg;
          ++reps[d].inbound;
          push(e.time + kv, Event::KvArrival, q, d);
        } else {
          rep.running.push_back(q);
        }
      }
      for (auto it = partial.rbegin(); it != partial.rend(); ++it) enqueue(rep, *it, true);
      rep.step_members.clear();
      rep.step_pieces.clear();
      start(static_cast<std::uint32_t>(e.index), e.time);
    }
  }

  // Results.
  std::vector<double> ttft, tpot, e2e;
  double end = 0;
  for (const Request& q : reqs) {
    r.prompt_tokens += q.prompt;
    r.output_tokens += q.output;
    ttft.push_back(q.first - q.arrival);
    e2e.push_back(q.finish - q.arrival);
    if (q.output > 1) tpot.push_back((q.finish - q.first) / static_cast<double>(q.output - 1));
    end = std::max(end, q.finish);
    r.timings.push_back({q.arrival, q.first, q.finish, q.prompt, q.output});
  }
  r.requests = reqs.size();
  r.ttft = percentiles(ttft);
  r.tpot = percentiles(tpot);
  r.e2e = percentiles(e2e);
  r.makespan = end;
  if (end > 0) {
    const double gpu_time = static_cast<double>(r.gpus) * end;
    r.output_tokens_per_s = static_cast<double>(r.output_tokens) / end;
    r.output_tokens_per_s_per_gpu = r.output_tokens_per_s / r.gpus;
    r.total_tokens_per_s = static_cast<double>(r.output_tokens + r.prompt_tokens) / end;
    r.requests_per_s = static_cast<double>(r.requests) / end;
    double busy = 0;
    for (const Replica& rep : reps) busy += rep.busy_time * rg;
    r.gpu_busy = busy / gpu_time;
    r.compute_share = compute / gpu_time;
    r.network_share = network / gpu_time;
    // BF16-equivalent, as training's MFU: model FLOPs over the BF16 dense peak.
    r.mfu = flops / (model.gpu().bf16_dense_flops * gpu_time);
    r.hbm_utilisation = bytes / (model.gpu().kernels.hbm_bandwidth.bytes_per_second() * gpu_time);
    const double millions = static_cast<double>(r.output_tokens) / 1e6;
    r.cost_per_million_tokens_usd = gpu_time / 3600 * c.gpu_hour_usd / millions;
    r.energy_kwh_per_million_tokens = gpu_time * model.gpu().power_w / 3.6e6 / millions;
  }
  for (std::uint32_t i = 0; i < reps.size(); ++i) {
    settle(reps[i], end);
    for (std::uint32_t g = 0; g < dp; ++g) {
      const GroupLoad& load = reps[i].groups[g];
      GroupUsage u;
      u.replica = i;
      u.group = g;
      u.kv_token_capacity = capacity * kKvBlockTokens;
      if (end > 0 && capacity > 0) {
        u.kv_utilisation_mean = load.block_seconds / (end * static_cast<double>(capacity));
        u.kv_utilisation_peak =
            static_cast<double>(load.peak_blocks) / static_cast<double>(capacity);
      }
      u.queue_depth_mean = end > 0 ? load.queue_seconds / end : 0;
      u.queue_depth_max = load.queue_max;
      u.admitted = load.admitted;
      r.groups.push_back(u);
    }
  }
  r.mean_decode_batch =
      decode_steps ? static_cast<std::uint32_t>(std::llround(static_cast<double>(decode_seqs) /
                                                             static_cast<double>(decode_steps)))
                   : 0;
  return r;
}

}  // namespace lockstep
