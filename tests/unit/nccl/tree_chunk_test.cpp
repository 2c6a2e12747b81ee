// The chunks a flow run's tree cuts (engine_run.cpp nccl_engine_run): NCCL's per-protocol rule
// (enqueue.cc; nccl::tree_chunk_bytes), which the model's pipeline fill uses too. LL128 starts
// from its step, 614,400 B (NCCL_STEPS slots of 120 x 640 x 8 B), halves it while a channel
// would get fewer than (1 + log2 N + 0.1 g) x 64 / g chunks (not below 131,072 B), then while
// fewer than x 16 / g (not below 32,768 B), and carries 15/16 of it as payload. Derived by hand
// for the public file's 2 x 1 H100 over RoCE (2 channels, one per tree); LL's step is 64 KiB.
#include <gtest/gtest.h>

#include "lockstep/collective/collective.hpp"
#include "lockstep/nccl/engine_run.hpp"
#include "lockstep/nccl/tuner.hpp"
#include "lockstep/topology/builder.hpp"
#include "lockstep/topology/presets.hpp"
#include "preset_request.hpp"

namespace lockstep {
namespace {

NcclEngineRun tree_run(Bytes bytes, nccl::Proto proto) {
  const PresetCluster preset = test::preset_of("hgx-h100", "roce-400g", 2, 1, 1);
  const BuildResult built = build_topology(rail_optimized_args(preset));
  TunerRequest r;
  r.algo = Algorithm::Tree;
  r.proto = proto;
  r.bytes = bytes;
  const NcclCluster c = nccl_cluster(preset);
  const Prediction p = predict(c, r);
  EXPECT_EQ(p.channels, 2u);
  return nccl_engine_run(c, p, CollectiveOp::AllReduce, bytes, DataType::Float32, *built.graph);
}

// 2 nodes of 1 GPU: (1 + 1 + 0.1) x 64 = 134.4 and x 16 = 33.6 chunks per channel.
// 2 MiB: 1,048,576 B per channel; 614,400 -> 307,200 -> 153,600 -> 76,800 (the first floor
// stops it), then 38,400 -> 19,200 (13.7, then 27.3 chunks, under 33.6): 19,200 x 15/16 = 18,000 B.
// 32 MiB: 16,777,216 B per channel; 614,400 -> 76,800 as above, 218 chunks: 72,000 B.
// 256 MiB: 134,217,728 B per channel, 218 chunks of a whole step: 576,000 B.
// LL: its 64 KiB step carries 32 KiB of data (8-byte lines of 4 data bytes and a flag) at any
// size: 32,768 B at 2 MiB, where the program's Simple rule would give 131,072 B.
// Simple keeps the tree program's own rule (the same halving from 512 KiB): no chunk is set.
TEST(TreeChunk, FlowRunsCutLl128AndLlChunksAsNccl) {
  EXPECT_EQ(tree_run(Bytes::mib(2), nccl::Proto::LL128).spec.chunk, Bytes(18'000));
  EXPECT_EQ(tree_run(Bytes::mib(32), nccl::Proto::LL128).spec.chunk, Bytes(72'000));
  EXPECT_EQ(tree_run(Bytes::mib(256), nccl::Proto::LL128).spec.chunk, Bytes(576'000));
  EXPECT_EQ(tree_run(Bytes::mib(2), nccl::Proto::LL).spec.chunk, Bytes(32'768));
  EXPECT_EQ(tree_run(Bytes::mib(2), nccl::Proto::Simple).spec.chunk, Bytes(0));
}

// The program runs those chunks: at 2 MiB each lane (one per channel) carries 262,144 floats in
// 18,000 B = 4,500-float chunks, 59 of them (58 x 4,500 + 1,144); with Simple's 131,072 B it
// would be 8. A leaf sends each chunk up once and receives it down once, so the child rank
// (rank 1 in tree 0, rank 0 in tree 1) has 59 sends on its leaf lane.
TEST(TreeChunk, Ll128ProgramCarriesFiftyNineChunksPerLane) {
  const NcclEngineRun how = tree_run(Bytes::mib(2), nccl::Proto::LL128);
  const auto programs = make_collective(how.spec);
  std::uint64_t sends = 0;
  for (OpIndex i = 0; i < programs->num_ops(0); ++i)
    sends += programs->op(0, i).kind == OpKind::Send ? 1 : 0;
  // Rank 0 is a leaf in one tree (59 sends up) and the root in the other (59 sends down).
  EXPECT_EQ(sends, 2u * 59);
}

}  // namespace
}  // namespace lockstep
