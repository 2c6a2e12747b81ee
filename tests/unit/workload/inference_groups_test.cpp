// Each attention group's own KV cache and queue (docs/inference.md, "Each group's cache and
// queue"): the cache of one group derived by hand from HBM, a group whose cache fills holding back
// only its own requests, the per-group figures of the result, and determinism.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "inference_support.hpp"
#include "lockstep/workload/inference.hpp"
#include "test_cluster.hpp"

namespace lockstep {
namespace {

// Mixtral 8x7B cut to 2 layers at attention TP `tp` x DP 8 / tp, EP 8 (inference_layout_test.cpp
// derives its weights), with these requests and batching.
InferenceConfig mixtral_dp(std::uint32_t tp, const std::string& requests,
                           const std::string& batching) {
  return testing::inference_config(fmt::format(
      "type: inference\nmodel: {{preset: mixtral-8x7b, layers: 2}}\ntp: {}\nattention_dp: {}\n"
      "ep: 8\nrequests: {{{}}}\nbatching: {{{}}}\n",
      tp, 8 / tp, requests, batching));
}

// Two nodes of 4 H100s (80 GiB) on NDR.
const Topology& nodes() {
  static const Topology t = testing::ndr_h100_nodes(2, 4);
  return t;
}

// Serves `c` on nodes(), the exchanges at FixedComm's fixed times.
InferenceResult serve(const InferenceConfig& c, bool record_steps = false) {
  return simulate_inference(
      nodes(), c, testing::options_with(std::make_shared<testing::FixedComm>(), record_steps));
}

// One group's cache, by hand. A GPU of a group holds the group's sequences' K and V only:
// 2 layers x ceil(8 KV heads / tp 2) x (128 + 128) x 2 B = 4,096 B a token, 65,536 B a block of 16.
// vLLM's budget: 0.9 x 85,899,345,920 B = 77,309,411,328 B, less the weights (2 layers x
// (41,975,808 + 352,321,536) B + the embedding and output layer 262,144,000 B = 1,050,738,688 B:
// inference_layout_test.cpp) and the profiling pass's peak of one group's batch: its prefill
// budget, the model's context 32,768 (max_prefill_tokens' default) / 4 groups = 8,192 tokens, x
// (4,096 + 3 x max(14,336, 2 x 14,336) / 2) x 2 B = 771,751,936 B, plus its 8 / 4 = 2 sequences'
// logits, 2 x 32,000 x 4 B = 256,000 B: 75,486,664,704 B, 1,151,835 whole blocks (1,151,835.09),
// 18,429,360 tokens a group; the replica's 4 groups 73,717,440 tokens. (The replica's whole budget
// and batch, 32,768 tokens and 8 sequences, took 3,088,031,744 B: 17,863,920 tokens a group.)
TEST(InferenceGroups, EachGroupsCacheIsItsGpusFreeMemory) {
  const InferenceConfig c =
      mixtral_dp(2, "prompt: 128, output: 4, concurrency: 8, count: 8", "max_batch: 8");
  InferenceStepModel m(nodes(), c, std::make_shared<testing::FixedComm>());
  EXPECT_DOUBLE_EQ(m.kv_bytes_per_token_per_gpu(), 4'096);
  EXPECT_DOUBLE_EQ(m.weight_bytes_per_gpu(), 1'050'738'688.0);
  EXPECT_DOUBLE_EQ(m.activation_bytes_per_gpu(), 771'751'936.0 + 256'000.0);
  EXPECT_DOUBLE_EQ(m.kv_budget_bytes_per_gpu(), 75'486'664'704.0);
  const InferenceResult r = serve(c);
  EXPECT_EQ(r.kv_token_capacity, 73'717'440u);
  ASSERT_EQ(r.groups.size(), 4u);
  std::uint64_t admitted = 0;
  for (std::uint32_t g = 0; g < 4; ++g) {
    EXPECT_EQ(r.groups[g].replica, 0u);
    EXPECT_EQ(r.groups[g].group, g);
    EXPECT_EQ(r.groups[g].kv_token_capacity, 18'429'360u);
    EXPECT_LE(r.groups[g].kv_utilisation_peak, 1.0);
    admitted += r.groups[g].admitted;
  }
  // 8 requests dealt round robin: 2 a group, none preempted.
  EXPECT_EQ(admitted, 8u);
  EXPECT_EQ(r.groups[3].admitted, 2u);
}

// A group's activation peak is its scheduler's shares, rounded down: max_prefill_tokens 10,000 and
// max_batch 10 over 4 groups give each 2,500 tokens and 2 sequences: 2,500 x 47,104 x 2 B +
// 2 x 32,000 x 4 B = 235,520,000 + 256,000 B a GPU. The same as one TP 2 group holding those
// limits alone (replicas of TP 2, no DP attention): the peak follows the group's own batch.
TEST(InferenceGroups, ActivationPeakIsTheGroupsShare) {
  const InferenceConfig dp = mixtral_dp(2, "prompt: 128, output: 4, concurrency: 8, count: 8",
                                        "max_batch: 10, max_prefill_tokens: 10000");
  InferenceStepModel m(nodes(), dp, std::make_shared<testing::FixedComm>());
  EXPECT_DOUBLE_EQ(m.activation_bytes_per_gpu(), 235'520'000.0 + 256'000.0);
  const InferenceConfig alone = testing::inference_config(
      "type: inference\nmodel: {preset: mixtral-8x7b, layers: 2}\ntp: 2\nreplicas: 4\n"
      "requests: {prompt: 128, output: 4, concurrency: 8, count: 8}\n"
      "batching: {max_batch: 2, max_prefill_tokens: 2500}\n");
  InferenceStepModel one(nodes(), alone, std::make_shared<testing::FixedComm>());
  EXPECT_DOUBLE_EQ(one.activation_bytes_per_gpu(), m.activation_bytes_per_gpu());
}

// Attention DP 2 x TP 4, prompts of 120 and outputs of 8 tokens (at most 127 + 1 = 128 tokens, 8
// blocks), `kv_cache_tokens: 384`: 192 tokens, 12 blocks, a group, room for one sequence, not two.
// A closed loop of 3: requests 0, 1, 2 join groups 0, 1, 0 (round robin). By hand:
//   step 1: request 0 prefills alone (it arrives first and the replica starts at once);
//   step 2: request 1 prefills on group 1 (8 blocks of 12); request 2 would put group 0 at
//           8 + 8 = 16 blocks > 12: its group's queue waits;
//   steps 3-9: requests 0 and 1 decode their tokens 2-8 (contexts 121-127, 8 blocks) and finish;
//   step 10: request 2 prefills; steps 11-17: it decodes its tokens 2-8.
// Admissions: group 0 two, group 1 one; TTFT request 0 < 1 < 2. With the cache pooled over the
// groups (24 blocks, as before each group had its own) request 2 joined step 2 and group 0 held
// 16 blocks, more than its GPUs have: TTFT 0 < 1 = 2, 9 steps.
// Every step group 0 holds 8 blocks (request 0, then 2; the replica is never idle): utilisation
// 8 / 12 throughout. Group 1 holds 8 in steps 2-9, none after. Group 0's queue holds request 2
// until step 10 starts, group 1's request 1 until step 2 starts.
TEST(InferenceGroups, AFullGroupHoldsBackOnlyItsOwnQueue) {
  const InferenceResult r = serve(mixtral_dp(4, "prompt: 120, output: 8, concurrency: 3, count: 3",
                                             "max_batch: 8, kv_cache_tokens: 384"),
                                  true);
  EXPECT_EQ(r.kv_token_capacity, 384u);
  ASSERT_EQ(r.steps.size(), 17u);
  const std::vector<std::uint32_t> batches{1, 1, 2, 2, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1};
  for (std::size_t s = 0; s < batches.size(); ++s) EXPECT_EQ(r.steps[s].batch, batches[s]) << s;
  EXPECT_TRUE(r.steps[0].prefill && r.steps[1].prefill && r.steps[9].prefill);
  EXPECT_EQ(r.preemptions, 0u);
  ASSERT_EQ(r.groups.size(), 2u);
  EXPECT_EQ(r.groups[0].admitted, 2u);
  EXPECT_EQ(r.groups[1].admitted, 1u);
  EXPECT_EQ(r.groups[0].kv_token_capacity, 192u);
  ASSERT_EQ(r.timings.size(), 3u);
  EXPECT_DOUBLE_EQ(r.timings[0].ttft(), r.steps[0].end);
  EXPECT_DOUBLE_EQ(r.timings[1].ttft(), r.steps[1].end);
  EXPECT_DOUBLE_EQ(r.timings[2].ttft(), r.steps[9].end);
  EXPECT_LT(r.timings[0].ttft(), r.timings[1].ttft());
  EXPECT_LT(r.timings[1].ttft(), r.timings[2].ttft());
  EXPECT_DOUBLE_EQ(r.makespan, r.steps.back().end);
  const double end = r.makespan;
  EXPECT_NEAR(r.groups[0].kv_utilisation_mean, 8.0 / 12, 1e-12);
  EXPECT_DOUBLE_EQ(r.groups[0].kv_utilisation_peak, 8.0 / 12);
  EXPECT_DOUBLE_EQ(r.groups[1].kv_utilisation_peak, 8.0 / 12);
  EXPECT_NEAR(r.groups[1].kv_utilisation_mean, 8.0 / 12 * (r.steps[8].end - r.steps[1].start) / end,
              1e-12);
  EXPECT_NEAR(r.groups[0].queue_depth_mean, r.steps[9].start / end, 1e-12);
  EXPECT_NEAR(r.groups[1].queue_depth_mean, r.steps[1].start / end, 1e-12);
  EXPECT_EQ(r.groups[0].queue_depth_max, 1u);
  EXPECT_EQ(r.groups[1].queue_depth_max, 1u);
}

// Each group schedules its own batch: `max_batch: 3` over attention DP 2 gives each group's
// scheduler 3 / 2 = 1 sequence (SGLang's --max-running-requests divided by the DP size, rounded
// down). Prompts of 120, outputs of 4, a closed loop of 3: requests 0, 1, 2 join groups 0, 1, 0,
// so group 0 holds two requests for a batch of one (overloaded), group 1 one. By hand:
//   step 1: request 0 prefills alone (it arrives first and the replica starts at once);
//   step 2: request 1 prefills on group 1; request 2 waits, group 0 runs request 0 already;
//   steps 3, 4, 5: requests 0 and 1 decode their tokens 2, 3, 4 and finish;
//   step 6: request 2 prefills; steps 7, 8, 9: it decodes its tokens 2, 3, 4.
// Batches 1, 1, 2, 2, 2, 1, 1, 1, 1; TTFT 0 < 1 < 2. With the replica-wide batch of 3 (before)
// request 2 joined step 2 and group 0 ran two sequences: batches 1, 2, 3, 3, 3, TTFT 0 < 1 = 2.
TEST(InferenceGroups, EachGroupKeepsItsOwnBatchLimit) {
  const InferenceResult r = serve(
      mixtral_dp(4, "prompt: 120, output: 4, concurrency: 3, count: 3", "max_batch: 3"), true);
  ASSERT_EQ(r.steps.size(), 9u);
  const std::vector<std::uint32_t> batches{1, 1, 2, 2, 2, 1, 1, 1, 1};
  for (std::size_t s = 0; s < batches.size(); ++s) EXPECT_EQ(r.steps[s].batch, batches[s]) << s;
  for (std::size_t s : {0, 1, 5}) EXPECT_TRUE(r.steps[s].prefill) << s;
  ASSERT_EQ(r.timings.size(), 3u);
  EXPECT_DOUBLE_EQ(r.timings[0].first_token, r.steps[0].end);
  EXPECT_DOUBLE_EQ(r.timings[1].first_token, r.steps[1].end);
  EXPECT_DOUBLE_EQ(r.timings[2].first_token, r.steps[5].end);
  EXPECT_LT(r.timings[0].ttft(), r.timings[1].ttft());
  EXPECT_LT(r.timings[1].ttft(), r.timings[2].ttft());
  ASSERT_EQ(r.groups.size(), 2u);
  EXPECT_EQ(r.groups[0].admitted, 2u);
  EXPECT_EQ(r.groups[1].admitted, 1u);
  // Group 0's queue held request 2 from the start to step 6; group 1's request 1 to step 2.
  EXPECT_EQ(r.groups[0].queue_depth_max, 1u);
  EXPECT_NEAR(r.groups[0].queue_depth_mean, r.steps[5].start / r.makespan, 1e-12);
}

// Each group's own prefill budget (chunked): `max_prefill_tokens: 64` over DP 2 gives each group
// 32 tokens a step. A closed loop of 2 (prompts 120, outputs 2): requests 0, 1 on groups 0, 1.
//   step 1: request 0's first chunk, 32 tokens, alone (it arrives first);
//   steps 2, 3: a chunk of 32 for each, neither taking from the other group's budget;
//   step 4: request 0's last 120 - 96 = 24 (its first token) and request 1's third 32;
//   step 5: request 0 decodes (1 of group 0's 32) and finishes, request 1's last 24;
//   step 6: request 1 decodes and finishes.
// Tokens a step: 32, 64, 64, 56, 25, 1. (Before, one budget of 64 for the replica: request 0's
// chunks of 64 and 56, request 1's first 8 beside the latter.)
TEST(InferenceGroups, EachGroupHasItsOwnPrefillBudget) {
  const InferenceResult r =
      serve(mixtral_dp(4, "prompt: 120, output: 2, concurrency: 2, count: 2",
                       "max_batch: 8, policy: chunked, max_prefill_tokens: 64"),
            true);
  ASSERT_EQ(r.steps.size(), 6u);
  const std::vector<std::uint64_t> tokens{32, 64, 64, 56, 25, 1};
  for (std::size_t s = 0; s < tokens.size(); ++s) EXPECT_EQ(r.steps[s].tokens, tokens[s]) << s;
  EXPECT_DOUBLE_EQ(r.timings[0].first_token, r.steps[3].end);
  EXPECT_DOUBLE_EQ(r.timings[1].first_token, r.steps[4].end);
  EXPECT_DOUBLE_EQ(r.timings[0].finish, r.steps[4].end);
  EXPECT_DOUBLE_EQ(r.timings[1].finish, r.steps[5].end);
}

// A group's share of max_batch or max_prefill_tokens rounds down: below one a group, refused at
// the field.
TEST(InferenceGroups, LimitsBelowOneAGroupAreRefused) {
  try {
    mixtral_dp(4, "prompt: 120, output: 4, concurrency: 3, count: 3", "max_batch: 1");
    FAIL() << "max_batch 1 over attention_dp 2 was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("max_batch=1 is below attention_dp=2"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("batching.max_batch"), std::string::npos) << e.what();
  }
}

// The same scenario and seed give the same schedule and group figures, bit for bit.
TEST(InferenceGroups, GroupFiguresAreDeterministic) {
  const InferenceConfig c =
      mixtral_dp(2, "prompt: uniform:16-200, output: uniform:2-12, rate: 400, count: 16",
                 "max_batch: 8, kv_cache_tokens: 1024");
  const InferenceResult a = serve(c);
  const InferenceResult b = serve(c);
  ASSERT_EQ(a.groups.size(), 4u);
  ASSERT_EQ(b.groups.size(), 4u);
  std::uint64_t admitted = 0;
  for (std::size_t g = 0; g < 4; ++g) {
    EXPECT_EQ(a.groups[g].kv_utilisation_mean, b.groups[g].kv_utilisation_mean);
    EXPECT_EQ(a.groups[g].queue_depth_mean, b.groups[g].queue_depth_mean);
    EXPECT_EQ(a.groups[g].admitted, b.groups[g].admitted);
    EXPECT_LE(a.groups[g].kv_utilisation_peak, 1.0);  // a group never overfills its cache
    admitted += a.groups[g].admitted;
  }
  // Every request enters a cache once, a preempted one once more.
  EXPECT_EQ(admitted, 16 + a.preemptions);
  for (std::size_t q = 0; q < a.timings.size(); ++q)
    EXPECT_EQ(a.timings[q].finish, b.timings[q].finish);
}

// Round robin against shortest_queue (SGLang's --load-balance-method). Attention DP 2 x TP 4,
// `max_batch: 2` (one sequence a group), prompts of 120, outputs uniform over 2-12, a closed loop
// of 2 clients, 3 requests. Seed 21 draws outputs 8, 2, 2 (checked below: a seed picked for a
// long request 0 beside a short request 1). Requests 0 and 1 join groups 0 and 1 either way
// (shortest_queue: 0 and 0 requests held, the lowest; then 1 and 0). By hand, steps numbered
// from 1:
//   step 1: request 0 prefills alone (it arrives first and the replica starts at once);
//   step 2: request 1 prefills; step 3: both decode: request 1 has its 2 tokens and finishes,
//           request 0 has 2 of its 8, and request 2 arrives (the closed loop) as step 4 starts.
// Round robin sends request 2 to group 0, whose one sequence is request 0, 6 tokens from its end:
//   steps 4-9: request 0 decodes alone, tokens 3-8, and finishes;
//   step 10: request 2 prefills; step 11: it decodes its second token and finishes.
//   TTFT of request 2: the end of step 10 - the end of step 3, 7 steps; 11 steps in all.
// shortest_queue sends it to group 1, idle (group 0 holds 1 request, the step under way's):
//   step 4: request 0 decodes (the step began before request 2 arrived); step 5: request 2
//   prefills; step 6: both decode: request 2 finishes, request 0 has 4 tokens;
//   steps 7-10: request 0 decodes tokens 5-8 and finishes.
//   TTFT of request 2: the end of step 5 - the end of step 3, 2 steps; 10 steps in all.
InferenceResult serve_balanced(const char* balance) {
  InferenceConfig c =
      mixtral_dp(4, "prompt: 120, output: uniform:2-12, concurrency: 2, count: 3", "max_batch: 2");
  c.seed = 21;
  c.dp_balance =
      std::string(balance) == "shortest_queue" ? DpBalance::ShortestQueue : DpBalance::RoundRobin;
  return serve(c, true);
}

TEST(InferenceGroups, ShortestQueueSendsARequestToTheIdleGroup) {
  const InferenceResult rr = serve_balanced("round_robin");
  const InferenceResult sq = serve_balanced("shortest_queue");
  for (const InferenceResult* r : {&rr, &sq}) {
    ASSERT_EQ(r->timings.size(), 3u);
    ASSERT_EQ(r->timings[0].output, 8u);
    ASSERT_EQ(r->timings[1].output, 2u);
    ASSERT_EQ(r->timings[2].output, 2u);
    EXPECT_DOUBLE_EQ(r->timings[2].arrival, r->steps[2].end);  // request 1's finish
  }
  ASSERT_EQ(rr.steps.size(), 11u);
  const std::vector<std::uint32_t> rr_batches{1, 1, 2, 1, 1, 1, 1, 1, 1, 1, 1};
  for (std::size_t s = 0; s < rr_batches.size(); ++s) EXPECT_EQ(rr.steps[s].batch, rr_batches[s]);
  EXPECT_TRUE(rr.steps[9].prefill);
  EXPECT_DOUBLE_EQ(rr.timings[2].ttft(), rr.steps[9].end - rr.steps[2].end);
  EXPECT_DOUBLE_EQ(rr.timings[0].finish, rr.steps[8].end);
  EXPECT_EQ(rr.groups[0].admitted, 2u);
  EXPECT_EQ(rr.groups[1].admitted, 1u);

  ASSERT_EQ(sq.steps.size(), 10u);
  const std::vector<std::uint32_t> sq_batches{1, 1, 2, 1, 1, 2, 1, 1, 1, 1};
  for (std::size_t s = 0; s < sq_batches.size(); ++s) EXPECT_EQ(sq.steps[s].batch, sq_batches[s]);
  EXPECT_TRUE(sq.steps[4].prefill);
  EXPECT_FALSE(sq.steps[3].prefill);
  EXPECT_DOUBLE_EQ(sq.timings[2].ttft(), sq.steps[4].end - sq.steps[2].end);
  EXPECT_DOUBLE_EQ(sq.timings[2].finish, sq.steps[5].end);
  EXPECT_DOUBLE_EQ(sq.timings[0].finish, sq.steps[9].end);
  EXPECT_EQ(sq.groups[0].admitted, 1u);
  EXPECT_EQ(sq.groups[1].admitted, 2u);
  EXPECT_LT(sq.timings[2].ttft(), rr.timings[2].ttft());
  EXPECT_LT(sq.makespan, rr.makespan);
}

// shortest_queue is deterministic (ties to the lowest group), and every request enters a cache.
TEST(InferenceGroups, ShortestQueueIsDeterministic) {
  InferenceConfig c =
      mixtral_dp(2, "prompt: uniform:16-200, output: uniform:2-12, rate: 400, count: 24",
                 "max_batch: 8, kv_cache_tokens: 1024");
  c.dp_balance = DpBalance::ShortestQueue;
  const InferenceResult a = serve(c);
  const InferenceResult b = serve(c);
  ASSERT_EQ(a.groups.size(), 4u);
  std::uint64_t admitted = 0;
  for (std::size_t g = 0; g < 4; ++g) {
    EXPECT_EQ(a.groups[g].admitted, b.groups[g].admitted);
    EXPECT_EQ(a.groups[g].queue_depth_mean, b.groups[g].queue_depth_mean);
    EXPECT_LE(a.groups[g].kv_utilisation_peak, 1.0);
    admitted += a.groups[g].admitted;
  }
  EXPECT_EQ(admitted, 24 + a.preemptions);
  for (std::size_t q = 0; q < a.timings.size(); ++q)
    EXPECT_EQ(a.timings[q].finish, b.timings[q].finish);
}

// The key reads the two methods and refuses any other at its place in the file.
TEST(InferenceGroups, DpBalanceIsReadAndUnknownValuesRefused) {
  const std::string job =
      "type: inference\nmodel: {preset: mixtral-8x7b, layers: 2}\ntp: 2\nattention_dp: 4\n"
      "ep: 8\nrequests: {prompt: 64, output: 4, concurrency: 4, count: 4}\n";
  EXPECT_EQ(testing::inference_config(job).dp_balance, DpBalance::RoundRobin);
  EXPECT_EQ(testing::inference_config(job + "dp_balance: shortest_queue\n").dp_balance,
            DpBalance::ShortestQueue);
  try {
    testing::inference_config(job + "dp_balance: least_tokens\n");
    FAIL() << "dp_balance: least_tokens was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("s.yaml:7:13"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("dp_balance: unknown value 'least_tokens'"),
              std::string::npos)
        << e.what();
  }
}

// Without DP attention a replica is one group: one entry a replica, holding the replica's cache.
TEST(InferenceGroups, OneGroupPerReplicaWithoutDpAttention) {
  const InferenceConfig c = testing::inference_config(
      "type: inference\nmodel: {preset: mixtral-8x7b, layers: 2}\ntp: 4\nreplicas: 2\n"
      "requests: {prompt: 64, output: 4, concurrency: 4, count: 6}\nbatching: {max_batch: 4}\n");
  const InferenceResult r = serve(c);
  ASSERT_EQ(r.groups.size(), 2u);
  EXPECT_EQ(r.groups[1].replica, 1u);
  EXPECT_EQ(r.groups[1].group, 0u);
  EXPECT_EQ(r.groups[0].kv_token_capacity, r.kv_token_capacity);
  EXPECT_EQ(r.groups[0].admitted + r.groups[1].admitted, 6u);
}

}  // namespace
}  // namespace lockstep
