#pragma once
// Collective operations compiled to per-rank programs (see program.hpp).
//
//   CollectiveSpec spec;
//   spec.op = CollectiveOp::AllReduce;
//   spec.algorithm = Algorithm::Ring;
//   spec.ranks = 8;
//   spec.bytes = Bytes::mib(1);
//   std::unique_ptr<ProgramSet> programs = make_collective(spec);
//
// Sizes follow nccl-tests: `bytes` is the buffer size S that nccl-tests prints in its "size"
// column (all_reduce/broadcast/reduce: the buffer; all_gather/reduce_scatter: the full n-block
// buffer; alltoall: the per-rank send buffer). S is split into n blocks of
// floor(E/n) or ceil(E/n) elements (E = S / element size; the first E mod n blocks get the extra
// element), so any size is legal, including sizes not divisible by the rank count.
// Buffer layout per collective (what the functional executor checks), with b_i = block i:
//   all_reduce     in-place buffer of S: every rank ends with the element-wise sum
//   all_gather     input b_r, output S: output = concatenation of every rank's input
//   reduce_scatter input S, output b_r: output = block r of the sum of the inputs
//   broadcast      in-place buffer of S: every rank ends with root's data
//   reduce         in-place buffer of S: root ends with the sum (others' buffers are scratch)
//   alltoall       input S (n blocks, block j goes to rank j), output n x b_r (from rank i at i)
//   alltoallv      input sum_j sizes[r][j], output sum_i sizes[i][r] (concatenated in rank order)
//   sendrecv       input S, output S: rank r sends to r+1 mod n, receives from r-1 mod n
//   barrier        no data; every rank's last op causally follows every rank's first op
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "lockstep/collective/program.hpp"
#include "lockstep/core/units.hpp"

namespace lockstep {

enum class CollectiveOp : std::uint8_t {
  AllReduce,
  AllGather,
  ReduceScatter,
  Broadcast,
  Reduce,
  AllToAll,
  AllToAllV,
  SendRecv,
  Barrier,
};

enum class Algorithm : std::uint8_t {
  Ring,               // NCCL ring (channels = parallel rings, chunked pipelining)
  Tree,               // NCCL double binary tree (all_reduce); pipelined binary tree (bcast/reduce)
  Chain,              // pipelined chain along the ring order (broadcast, reduce)
  HalvingDoubling,    // Rabenseifner: recursive halving reduce-scatter + doubling all-gather
  RecursiveDoubling,  // log2(n) full-buffer exchanges; dissemination barrier
  Direct,             // pairwise / one-shot: every rank talks to every other rank directly
  Hierarchical,       // reduce-scatter in each domain, all-reduce per rail, all-gather in domain
  NetReduce,          // in-network reduction (InfiniBand SHARP, NVLink SHARP / NVLS)
  Pat,                // logarithmic (Bruck-style) all_gather / reduce_scatter, NCCL PAT's role
  NvlsTree,           // NCCL NVLS_TREE: NVLink SHARP in each node, double binary tree across nodes
  CollNet,            // NCCL CollNet Direct: NVLink reduce-scatter, SHARP per rail, all-gather
  TorusRing,          // dimension-ordered rings on a torus, both directions (torus_dims)
};

inline constexpr int kNumCollectiveOps = 9;
inline constexpr int kNumAlgorithms = 12;

struct CollectiveSpec {
  CollectiveOp op = CollectiveOp::AllReduce;
  Algorithm algorithm = Algorithm::Ring;
  Rank ranks = 1;
  Bytes bytes;                       // nccl-tests size S (see above); a multiple of size_of(type)
  DataType type = DataType::Uint8;   // element type (only the functional executor cares)
  std::uint16_t channels = 1;        // parallel rings / trees (NCCL channels), each with S/channels
  Bytes chunk;                       // pipelining chunk per step; 0 = algorithm default
  Rank root = 0;                     // broadcast / reduce
  std::uint32_t ranks_per_node = 0;  // scale-up domain size: ring order and hierarchical; 0 = flat
  // direct only: ranks per server inside a node (an NVL72 rack's 4-GPU trays), dividing
  // ranks_per_node; the peer order walks trays, then GPUs (collective/direct.cpp). 0: one level.
  // Ignored without ranks_per_node.
  std::uint32_t ranks_per_server = 0;
  // tree only: the NICs of a node, fewer than its ranks when GPUs share NICs (AWS p4d: 4 EFA
  // NICs for 8 GPUs; local rank l on NIC l x nics / ranks_per_node, as the builders wire them).
  // The channels' chains then head at GPUs taken from every NIC in turn, as NCCL's search gives
  // its channels NICs round-robin. 0: one NIC per rank. Ignored without ranks_per_node.
  std::uint32_t nics_per_node = 0;
  // direct only, ops that visit peers by distance (all_reduce, all_gather, reduce_scatter,
  // alltoall): the channels each peer's transfer uses (NCCL's p2pnChannelsPerPeer); the peer of
  // step s gets channels s x per_peer, s x per_peer + 1, ... mod `channels`, so a rank's peers
  // still cover every channel. 0 or at least `channels`: every channel.
  std::uint16_t channels_per_peer = 0;
  // Ring only: the ranks of a node are fully connected (e.g. AMD xGMI mesh), so each channel
  // walks the node along a different Hamiltonian cycle and the channels together use every
  // GPU pair, as RCCL does; false keeps the same rotated order on every channel.
  bool mesh_rings = false;
  // With mesh_rings: the node's Hamiltonian cycles to walk (local indices), channel c taking
  // cycle c mod size(), when the node is not fully connected but wired pair by pair (DGX-1's
  // hybrid cube mesh: the rings NCCL's search finds over its links, nccl_mesh_rings). Empty:
  // the complete graph's edge-disjoint cycles (mesh_cycles).
  std::vector<std::vector<std::uint32_t>> node_cycles;
  // nvls_tree only, for timing engines: one rank per (channel, GPU). Rank c x ranks + r runs
  // channel c of GPU r's program (its peers and NetReduce groups are channel c's too), so the
  // channels, which share nothing but links, can be simulated as one class (flow engine). The
  // engine places rank c x ranks + r on GPU r. Data are not what one GPU's program computes:
  // each rank has the whole buffer and fills only its channel's slice.
  bool split_channels = false;
  // alltoallv only: alltoallv[i][j] = bytes rank i sends to rank j (ranks x ranks, multiples of
  // the element size). `bytes` is ignored for alltoallv.
  std::vector<std::vector<std::uint64_t>> alltoallv;
  // torus_ring only: the torus's sizes, dims[0] varying fastest in rank order (rank = x + X (y +
  // Y z), the torus builder's GPU order); their product is `ranks`. Empty: one ring of all ranks.
  std::vector<std::uint32_t> torus_dims;

  /// Number of elements E in the nccl-tests buffer.
  std::uint64_t elements() const { return bytes.count() / size_of(type); }
};

/// Names as the CLI and scenarios spell them: all_reduce, all_gather, reduce_scatter, broadcast,
/// reduce, alltoall, alltoallv, sendrecv, barrier; ring, tree, chain, halving_doubling,
/// recursive_doubling, direct, hierarchical, netreduce, pat, nvls_tree,
/// collnet, torus_ring. Parsing throws InputError
/// naming `field` and listing the accepted names.
const char* to_string(CollectiveOp op);
const char* to_string(Algorithm algorithm);
CollectiveOp parse_collective_op(std::string_view name, std::string_view field = "op");
Algorithm parse_algorithm(std::string_view name, std::string_view field = "algorithm");

/// True when make_collective can build `algorithm` for `op` (for some rank counts).
bool is_supported(CollectiveOp op, Algorithm algorithm);
/// Every supported (op, algorithm) pair, ops in enum order, then algorithms in enum order.
std::vector<std::pair<CollectiveOp, Algorithm>> supported_collectives();
/// Algorithms supported for one op, e.g. for error messages and `lockstep plan --help`.
std::vector<Algorithm> algorithms_for(CollectiveOp op);

/// nccl-tests bus bandwidth factor (PERFORMANCE.md): busbw = algbw x factor, algbw = S / time.
/// all_reduce 2(n-1)/n; all_gather, reduce_scatter, alltoall(v) (n-1)/n; others 1.
double busbw_factor(CollectiveOp op, Rank ranks);

/// Checks the spec (rank count, sizes, root, channels, domain size, alltoallv matrix) and throws
/// InputError naming the offending field ("ranks", "bytes", "root", "algorithm", ...).
void validate(const CollectiveSpec& spec);

/// Builds the per-rank programs. Regular algorithms (ring) are lazy: op(rank, i) is computed
/// arithmetically, so a 131,072-rank ring holds O(1) memory. Others generate one rank's program
/// on demand and cache a bounded number of ranks. Throws InputError on an invalid spec or an
/// unsupported (op, algorithm) pair, naming the algorithms the op supports.
std::unique_ptr<ProgramSet> make_collective(const CollectiveSpec& spec);

// --- Helpers shared by the algorithms, the executor's reference and the engines -------------

/// Start (in elements) of block `i` when `total` elements are split into `parts` near-equal
/// contiguous blocks (the first total % parts blocks hold one extra element).
inline std::uint64_t block_start(std::uint64_t total, std::uint64_t parts, std::uint64_t i) {
  const std::uint64_t q = total / parts, r = total % parts;
  return q * i + (i < r ? i : r);
}
inline std::uint64_t block_size(std::uint64_t total, std::uint64_t parts, std::uint64_t i) {
  return total / parts + (i < total % parts ? 1 : 0);
}

/// NCCL-like ring order with the NVLink domain first (ranks_per_node g > 0, g divides n): rank r
/// lives on node r / g as local GPU r % g. Channel c visits node 0 starting at local GPU c mod g
/// and going up, node 1 in the reverse direction, node 2 upwards again, ... (a snake), so the
/// ring leaves node k on the same local GPU (rail) on which it enters node k + 1. Different
/// channels start at different GPUs and so cross between nodes on different rails / NICs.
/// g = 0 (flat) is one node of n ranks.
Rank ring_rank_at(Rank ranks, std::uint32_t ranks_per_node, std::uint32_t channel, Rank position);
Rank ring_position_of(Rank ranks, std::uint32_t ranks_per_node, std::uint32_t channel, Rank rank);

/// Skewed all-to-all (docs/collectives.md "alltoallv with a skew"): every rank sends `bytes` in
/// total and rank j receives the share w_j = (j + 1)^-skew / H(n, skew) of each sender's bytes
/// (Zipf popularity of the receivers, H the generalised harmonic number sum_k k^-skew), rounded
/// to whole elements by largest remainder (ties to the lower rank) so that a row sums to
/// `bytes`. Skew 0 gives alltoall's blocks. All rows are equal; this is one row, in bytes.
std::vector<std::uint64_t> skewed_alltoallv_row(Rank ranks, Bytes bytes, DataType type,
                                                double skew);
/// The ranks x ranks matrix of that row (CollectiveSpec::alltoallv).
std::vector<std::vector<std::uint64_t>> skewed_alltoallv(Rank ranks, Bytes bytes, DataType type,
                                                         double skew);

}  // namespace lockstep
