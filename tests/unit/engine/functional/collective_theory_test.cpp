// Bytes on the wire and step counts (the latency term) against the textbook figures, derived in
// the comments. Step counts come from the functional executor: the longest chain of messages,
// each waiting on the previous one, that ends at any rank.
#include <gtest/gtest.h>

#include "lockstep/collective/collective.hpp"
#include "lockstep/engine/functional/executor.hpp"

namespace lockstep {
namespace {

CollectiveSpec spec(CollectiveOp op, Algorithm a, Rank n, std::uint64_t bytes) {
  CollectiveSpec s;
  s.op = op;
  s.algorithm = a;
  s.ranks = n;
  s.bytes = Bytes(bytes);
  return s;
}

FunctionalResult trace(const CollectiveSpec& s) {
  const auto p = make_collective(s);
  std::vector<RankBuffers> none;
  FunctionalOptions o;
  o.move_data = false;
  return execute(*p, none, o);
}

// Ring all-reduce: 2(n-1) steps, each moving one block of S/n: 2(n-1)/n x S sent and received
// per rank. n = 8, S = 8000 -> 14000 B; with 4 channels the blocks split, totals do not change.
TEST(Theory, RingAllReduceBytesAndSteps) {
  for (std::uint16_t channels : {1, 4}) {
    CollectiveSpec s = spec(CollectiveOp::AllReduce, Algorithm::Ring, 8, 8000);
    s.channels = channels;
    s.ranks_per_node = 4;
    const FunctionalResult r = trace(s);
    for (const RankStats& st : r.ranks) {
      EXPECT_EQ(st.bytes_sent, 14000u);
      EXPECT_EQ(st.bytes_received, 14000u);
    }
    EXPECT_EQ(r.steps, 14u);  // 2(n-1)
  }
  EXPECT_EQ(trace(spec(CollectiveOp::AllReduce, Algorithm::Ring, 5, 500)).steps, 8u);
}

// Ring all-gather and reduce-scatter: n-1 steps of one block: (n-1)/n x S. n = 8, S = 8000 ->
// 7000 B per rank, 7 steps.
TEST(Theory, RingAllGatherReduceScatter) {
  for (CollectiveOp op : {CollectiveOp::AllGather, CollectiveOp::ReduceScatter}) {
    const FunctionalResult r = trace(spec(op, Algorithm::Ring, 8, 8000));
    for (const RankStats& st : r.ranks) {
      EXPECT_EQ(st.bytes_sent, 7000u);
      EXPECT_EQ(st.bytes_received, 7000u);
    }
    EXPECT_EQ(r.steps, 7u);
  }
}

// Halving-doubling all-reduce, n = 8: halving sends S/2 + S/4 + S/8, doubling the same again:
// 2 x 7/8 S = 2(n-1)/n x S = 14000 B for S = 8000, in 2 log2 n = 6 steps.
TEST(Theory, HalvingDoublingAllReduce) {
  const FunctionalResult r =
      trace(spec(CollectiveOp::AllReduce, Algorithm::HalvingDoubling, 8, 8000));
  for (const RankStats& st : r.ranks) {
    EXPECT_EQ(st.bytes_sent, 14000u);
    EXPECT_EQ(st.bytes_received, 14000u);
  }
  EXPECT_EQ(r.steps, 6u);
}

// Recursive doubling all-reduce: log2 n exchanges of the whole buffer: n = 8 -> 3 steps, 3 S per
// rank. n = 6 (P = 4, rem = 2): ranks 0 and 2 fold into ranks 1 and 3 (virtual 0 and 1), the 4
// virtual ranks exchange twice, and 1 and 3 hand the result back: 4 rounds in lock-step, but the
// longest chain of dependent messages is 3, because the folded pair exchanges first with each
// other and at the second exchange meets virtual ranks 2 and 3, which no fold delayed
// (fold -> exchange -> exchange, or exchange -> exchange -> unfold). Rank 0 sends and receives S
// once; rank 1 receives S from rank 0, exchanges twice, and returns S.
TEST(Theory, RecursiveDoubling) {
  const FunctionalResult r =
      trace(spec(CollectiveOp::AllReduce, Algorithm::RecursiveDoubling, 8, 800));
  EXPECT_EQ(r.steps, 3u);
  for (const RankStats& st : r.ranks) EXPECT_EQ(st.bytes_sent, 2400u);
  const FunctionalResult r6 =
      trace(spec(CollectiveOp::AllReduce, Algorithm::RecursiveDoubling, 6, 800));
  EXPECT_EQ(r6.steps, 3u);
  EXPECT_EQ(r6.ranks[0].bytes_sent, 800u);
  EXPECT_EQ(r6.ranks[0].bytes_received, 800u);
  EXPECT_EQ(r6.ranks[1].bytes_sent, 3 * 800u);  // to rank 0 at the end, plus 2 exchanges
}

// Double binary tree, n = 8, one chunk per tree (S/2 each). Tree 0 puts rank r at node r+1:
// root 8 (rank 7) -> 4 -> {2, 6} -> {1, 3, 5, 7}; tree 1 mirrors (rank r at node 8-r), so rank 0
// is tree 1's root. Rank 0: tree 0 leaf (sends S/2 up, gets S/2 down), tree 1 root with one child
// (gets S/2 up, sends S/2 down): S sent. Rank 3 (node 4 in tree 0: one parent, children 2 and 6;
// leaf node 5 in tree 1): S/2 up + 2 x S/2 down + S/2 up = 2 S sent. Every edge carries S/2 each
// way in each tree: total 2 trees x 7 edges x 2 x S/2 = 14 S. Steps: depth 3 up + 3 down =
// 2 log2 n = 6.
TEST(Theory, DoubleBinaryTree) {
  CollectiveSpec s = spec(CollectiveOp::AllReduce, Algorithm::Tree, 8, 8000);
  s.chunk = Bytes(4000);
  const FunctionalResult r = trace(s);
  EXPECT_EQ(r.ranks[0].bytes_sent, 8000u);
  EXPECT_EQ(r.ranks[3].bytes_sent, 16000u);
  std::uint64_t total = 0;
  for (const RankStats& st : r.ranks) total += st.bytes_sent;
  EXPECT_EQ(total, 14 * 8000u);
  EXPECT_EQ(r.steps, 6u);
}

// Node-aware tree, n = 16, g = 8 (2 nodes), one chunk: inside each node a chain of 8 GPUs
// (7 hops) feeds the node's head, one hop joins the two heads, and the way down mirrors it:
// 2 x (7 + 1) = 16 steps. Rank 0 heads node 0 (channel 0) in both trees. In tree 0 node 1 is
// the root: rank 0 sends S/2 up to rank 8 and S/2 down its chain. In tree 1 (mirrored) node 0
// is the root: it sends S/2 down to rank 8 and S/2 down its chain. Total 2 S. The chain tail
// (rank 7) only sends S/2 up in each tree: S.
TEST(Theory, NodeAwareTree) {
  CollectiveSpec s = spec(CollectiveOp::AllReduce, Algorithm::Tree, 16, 8000);
  s.ranks_per_node = 8;
  s.chunk = Bytes(4000);
  const FunctionalResult r = trace(s);
  EXPECT_EQ(r.steps, 16u);
  EXPECT_EQ(r.ranks[0].bytes_sent, 16000u);
  EXPECT_EQ(r.ranks[7].bytes_sent, 8000u);  // chain tail: S/2 up in each tree
}

// Pipelined chain broadcast: every chunk travels n-1 hops, and chunks do not wait on each other
// (only on link bandwidth, which timing engines model), so the latency term is n-1 = 7 steps for
// n = 8 with K = 4 chunks; every rank but the last forwards S.
TEST(Theory, ChainBroadcastPipeline) {
  CollectiveSpec s = spec(CollectiveOp::Broadcast, Algorithm::Chain, 8, 4000);
  s.chunk = Bytes(1000);
  const FunctionalResult r = trace(s);
  EXPECT_EQ(r.steps, 7u);
  std::uint64_t forwarders = 0;
  for (const RankStats& st : r.ranks) forwarders += st.bytes_sent == 4000u;
  EXPECT_EQ(forwarders, 7u);
}

// Direct: two-shot all-reduce sends block j to rank j, then its reduced block to every peer
// (2 (n-1)/n S = 2 x 7 x 100 B, 2 steps); alltoall sends n-1 of the n blocks ((n-1)/n S, 1 step).
TEST(Theory, Direct) {
  const FunctionalResult ar = trace(spec(CollectiveOp::AllReduce, Algorithm::Direct, 8, 800));
  EXPECT_EQ(ar.ranks[5].bytes_sent, 2 * 7 * 100u);
  EXPECT_EQ(ar.steps, 2u);
  const FunctionalResult a2a = trace(spec(CollectiveOp::AllToAll, Algorithm::Direct, 8, 800));
  EXPECT_EQ(a2a.ranks[5].bytes_sent, 700u);
  EXPECT_EQ(a2a.steps, 1u);
}

// Hierarchical, n = 8, g = 4 (2 nodes): intra reduce-scatter 3 steps of S/4 = 3/4 S, inter ring
// all-reduce of S/4 over 2 nodes 2 steps of S/8, intra all-gather 3 steps of S/4:
// 3/4 S + 1/4 S + 3/4 S = 7/4 S sent; 3 + 2 + 3 = 8 steps.
TEST(Theory, Hierarchical) {
  CollectiveSpec s = spec(CollectiveOp::AllReduce, Algorithm::Hierarchical, 8, 8000);
  s.ranks_per_node = 4;
  const FunctionalResult r = trace(s);
  for (const RankStats& st : r.ranks) EXPECT_EQ(st.bytes_sent, 14000u);
  EXPECT_EQ(r.steps, 8u);
}

// PAT stand-in (Bruck): n = 5 needs ceil(log2 5) = 3 steps with d = 1, 2, 4 moving
// min(d, n - d) = 1, 2, 1 blocks: 4 blocks of S/5 = (n-1)/n x S = 4000 B for S = 5000.
TEST(Theory, PatIsLogarithmic) {
  for (CollectiveOp op : {CollectiveOp::AllGather, CollectiveOp::ReduceScatter}) {
    const FunctionalResult r = trace(spec(op, Algorithm::Pat, 5, 5000));
    EXPECT_EQ(r.steps, 3u);
    for (const RankStats& st : r.ranks) EXPECT_EQ(st.bytes_sent, 4000u);
  }
}

// Dissemination barrier: ceil(log2 n) rounds; n = 5 -> 3.
TEST(Theory, DisseminationBarrier) {
  EXPECT_EQ(trace(spec(CollectiveOp::Barrier, Algorithm::RecursiveDoubling, 5, 0)).steps, 3u);
}

// In-network all-reduce: each rank contributes S once and gets the sum back, in one step.
TEST(Theory, NetReduce) {
  const FunctionalResult r = trace(spec(CollectiveOp::AllReduce, Algorithm::NetReduce, 16, 4096));
  EXPECT_EQ(r.ranks[3].net_reduce_bytes, 4096u);
  EXPECT_EQ(r.ranks[3].bytes_sent, 0u);
  EXPECT_EQ(r.steps, 1u);
}

}  // namespace
}  // namespace lockstep

namespace lockstep {
namespace {

// Properties of every supported pair (n = 7, S = 1000, 2 channels): building the programs twice
// gives identical ops (determinism), and bytes are conserved (all bytes sent are received).
TEST(Properties, DeterministicAndConserving) {
  for (const auto& [op, algo] : supported_collectives()) {
    CollectiveSpec s = spec(op, algo, 7, 1000);
    s.channels = 2;
    if (op == CollectiveOp::AllToAllV)
      s.alltoallv.assign(7, std::vector<std::uint64_t>{0, 1, 2, 30, 400, 5, 60});
    const auto a = make_collective(s), b = make_collective(s);
    std::uint64_t sent = 0, received = 0;
    for (Rank r = 0; r < 7; ++r) {
      ASSERT_EQ(a->num_ops(r), b->num_ops(r));
      for (OpIndex i = 0; i < a->num_ops(r); ++i) {
        const Op x = a->op(r, i), y = b->op(r, i);
        EXPECT_TRUE(x.kind == y.kind && x.peer == y.peer && x.channel == y.channel &&
                    x.src.offset == y.src.offset && x.src.bytes == y.src.bytes &&
                    x.dst.offset == y.dst.offset && x.dst.bytes == y.dst.bytes &&
                    x.num_deps == y.num_deps)
            << a->label() << " rank " << r << " op " << i;
      }
      const RankStats st = summarize_rank(*a, r);
      sent += st.bytes_sent;
      received += st.bytes_received;
    }
    EXPECT_EQ(sent, received) << a->label();
  }
}

}  // namespace
}  // namespace lockstep
