#pragma once
// The constants of NCCL's cost model (NVIDIA/nccl src/graph/tuning.cc, topo.h, search.cc), each
// with its source in src/nccl/constants.cpp. The tuner (nccl/tuner.hpp) combines them into
// predicted collective times; docs/nccl-model.md explains how.
//
//   double lat = nccl::hw_latency_us(nccl::Path::NvLink, Algorithm::Ring, nccl::Proto::LL);
//   // 0.6 us per ring step over NVLink with the LL protocol
#include <cstdint>
#include <string_view>
#include <vector>

#include "lockstep/collective/collective.hpp"
#include "lockstep/core/units.hpp"

namespace lockstep::nccl {

/// NCCL's protocols: LL (8-byte stores with a flag, ~50% payload), LL128 (128-byte lines with an
/// 8-byte flag, ~94%), Simple (bulk copies with fences, full bandwidth, higher latency).
enum class Proto : std::uint8_t { LL, LL128, Simple };
inline constexpr int kNumProtos = 3;

/// The kind of hop a step crosses (NCCL_HW_NVLINK, NCCL_HW_PCI, NCCL_HW_NET).
enum class Path : std::uint8_t { NvLink, Pcie, Network };

/// GPU generations NCCL's tables distinguish (compute capability 7.x, 8.x, 9.x, 10.x).
enum class Generation : std::uint8_t { Volta, Ampere, Hopper, Blackwell };

const char* to_string(Proto p);
const char* to_string(Generation g);

// NCCL's per-algorithm tables, indexed by lockstep's Algorithm (collective.hpp): ring, tree,
// nvls (Algorithm::NetReduce), nvls_tree, collnet (NCCL's CollNetDirect) and pat have NCCL's
// rows; halving_doubling and direct, which NCCL lacks, are priced with the ring's. Algorithms
// without a row (chain, recursive_doubling, hierarchical) are a std::logic_error.

/// Base latency of one collective launch (us), baseLat[algo][proto].
double base_latency_us(Algorithm a, Proto p);
/// Hardware latency per step (us), hwLat[path][algo][proto].
double hw_latency_us(Path path, Algorithm a, Proto p);
/// NCCL's CollNetChain row of hwLat (Simple): CollNet with one GPU per node.
double collnet_chain_hw_latency_us(Path path);

/// Host network post overhead per step (us): 1 on Intel hosts, 2 on AMD hosts; x3 for Simple.
double net_overhead_us(bool amd_host, Proto p);
/// Multi-node ring Simple all-reduce latency multiplier (the ring "plateau" effect).
inline constexpr double kRingSimpleMultiNodeLatencyFactor = 1.4;

/// Node-count index of NCCL's per-generation tables: 1 node, 2 nodes, >= 4 nodes (3 uses >= 4).
int node_index(std::uint32_t nodes);

// Bandwidth tables (GB/s; 1 GB = 1e9 bytes).
double ll_max_bw(Generation g, std::uint32_t nodes);  // whole-op LL cap
double ring_ll128_per_channel_bw(Generation g);
double tree_ll128_per_channel_bw(Generation g, std::uint32_t nodes);
double tree_simple_per_channel_bw(Generation g, std::uint32_t nodes);
double nvls_tree_per_channel_bw(Generation g, std::uint32_t nodes);

// Protocol and algorithm efficiencies (dimensionless).
inline constexpr double kLLRingFraction = 0.5;         // ring LL: min(ll_max, 0.5 x bw)
inline constexpr double kLL128Efficiency = 0.92;       // ring LL128: 0.92 x bw (~120/128)
inline constexpr double kLL128SingleGpuPerNode = 0.7;  // ring LL128 with one GPU per node
inline constexpr double kTreeSimpleEfficiency = 0.92;  // tree all-reduce: 0.92 x bw
inline constexpr double kTreeLLDivisor = 3.8;          // tree LL: bw / 3.8
inline constexpr double kTreeLL128MultiNode = 120.0 / 128.0;
inline constexpr double kTreeLL128SingleNode = 7.0 / 9.0;
inline constexpr double kPatEfficiency = 0.75;            // PAT: 0.75 x ring bandwidth
inline constexpr double kCollNetHopperEfficiency = 0.85;  // CollNet Direct on sm90+
inline constexpr double kCollNetArityLatencyUs = 0.4;     // per-GPU arity serialisation
double nvls_efficiency(Generation g);                     // 0.85 Hopper, 0.74 Blackwell

/// Per-link scale-up bandwidth NCCL assumes (GB/s, one direction); the link count is the GPU's
/// (catalog).
double nvlink_bw_per_link(Generation g);
/// AMD Infinity Fabric (xGMI) as RCCL's model sees it: the bandwidth of `links` links at a
/// datasheet peak of `raw_GBps` each per direction, at the payload fraction NCCL's topology code
/// gives a lane of the same SerDes (constants.cpp).
double xgmi_bw(std::uint32_t links, double raw_GBps);
inline constexpr double kSerdesPayloadFraction = 0.75;
inline constexpr double kPcieBw = 12.0;        // PCI_BW
inline constexpr double kNetDefaultBw = 12.0;  // network default before NICs are read

/// The bandwidth NCCL's topology search settles on for one channel over a NIC of `line_rate`
/// (GB/s): the largest entry of the generation's inter-node speed array not above the line rate.
double net_search_speed(Generation g, double nic_line_rate_GBps);
/// The ring speeds NCCL's intra-node search tries, highest first (GB/s per ring; search.cc
/// speedArrayIntra, sm90SpeedArrayIntra).
std::vector<double> intra_search_speeds(Generation g);

/// NCCL kernel sizing (src/include/device.h, tuning.cc): threads per channel and the per-thread
/// byte thresholds under which NCCL drops channels for small messages.
std::uint32_t max_threads(Proto p);
std::uint32_t thread_threshold(Algorithm a, Proto p, std::uint32_t ranks);
inline constexpr std::uint32_t kMaxChannels = 32;  // MAXCHANNELS
/// Ring/tree channels NCCL builds inside one NVSwitch node (after channel duplication).
std::uint32_t intra_node_channels(Generation g);
inline constexpr std::uint32_t kChannelDuplication = 2;  // connect.cc: rings found, then x2

/// p2p channels each pair of ranks uses when the communicator spans nodes (NCCL >= 2.19,
/// graph/paths.cc ncclTopoGetNchannels and init.cc ncclTopoComputeP2pChannels, with
/// NCCL_NCHANNELS_PER_NET_PEER unset): start from 2 per network peer and halve while
/// channels x ranks > 4 x p2p_channels (more than 8 operations per channel), but keep as many as
/// the GPU's NICs need (nics_per_gpu); rounded up to a power of two, at most p2p_channels. In
/// one node NVLink peers get 2 x (NVLink bandwidth / one link's), more than MAXCHANNELS allows:
/// every channel (return p2p_channels).
std::uint32_t p2p_channels_per_peer(std::uint32_t ranks, std::uint32_t p2p_channels,
                                    std::uint32_t nodes, std::uint32_t nics_per_gpu);

/// NCCL's connection buffers (src/include/device.h, NCCL_STEPS slots of one step each): Simple
/// 4 MiB (NCCL_BUFFSIZE's default) in 8 steps of 512 KiB; LL128 120 x 640 x 8 B = 614,400 B per
/// step, 15/16 of it payload; LL 8 x 512 x 16 B = 64 KiB per step, half of it payload.
inline constexpr std::uint32_t kNcclSteps = 8;
inline constexpr double kSimpleStepBytes = 4.0 * 1024 * 1024 / kNcclSteps;
inline constexpr double kLL128StepBytes = 120.0 * 640 * 8;
inline constexpr double kLLStepBytes = 8.0 * 512 * 16;
/// Payload bytes of one chunk of NCCL's tree all-reduce per channel (enqueue.cc: the step
/// halved while a channel would get too few chunks for the tree's depth), at most the channel's
/// share of `bytes`.
double tree_chunk_bytes(Proto p, double bytes, std::uint32_t channels, std::uint32_t gpus_per_node,
                        std::uint32_t nodes);
/// NCCL's tuner's factor on the tree's bus bandwidth by message size (tuning.cc
/// treeCorrectionFactor[proto][log2(bytes / 64)], 1 from 256 MiB on): the tree's mid-size
/// efficiency as NCCL ranks it. lockstep ranks with it as NCCL does; its times carry the tree's
/// pipeline fill instead (docs/nccl-model.md "Choice, channels, overhead").
double tree_correction_factor(Proto p, double bytes);
/// NVLS heads per node (connect.cc connectNvls: one per channel of the NVLS graph, which
/// search.cc sizes to the node's GPUs; at most NCCL_MAX_NVLS_ARITY).
std::uint32_t nvls_heads(std::uint32_t gpus_per_node);
/// Bytes of one chunk of NCCL's NVLS tree all-reduce per (channel, head) (enqueue.cc: NVLS's
/// 128 KiB chunk, 64 KiB from 4 nodes, cut to 64 / 32 KiB by the message's size against
/// channels x heads), at most that pair's share of `bytes`.
double nvls_tree_chunk_bytes(double bytes, std::uint32_t channels, std::uint32_t heads,
                             std::uint32_t nodes);
/// Bytes of one chunk of NCCL's NVLS all-reduce per (channel, head) (enqueue.cc: 128 KiB, 32 KiB
/// across nodes when NVLS's bus bandwidth is under 150 GB/s, cut to 64 / 32 / 16 KiB by the
/// message's size against channels x heads), at most that pair's share of `bytes`.
double nvls_chunk_bytes(double bytes, std::uint32_t channels, std::uint32_t heads,
                        std::uint32_t nodes, double nvls_bus_GBps);

/// Size below which NCCL's point-to-point operations use LL (NCCL_P2P_LL_THRESHOLD).
inline constexpr std::uint64_t kP2pLLThreshold = 16384;

/// Fixed cost per collective call seen by nccl-tests on top of the kernel's own time (launch,
/// host enqueue, completion polling). Calibrated, see constants.cpp.
inline constexpr double kLaunchOverheadUs = 20.0;
// The largest alltoallv skew (Zipf exponent) accepted: at 100 the first receiver gets all but
// 2^-100 of the bytes, so larger values change nothing.
inline constexpr double kMaxSkew = 100;

}  // namespace lockstep::nccl
