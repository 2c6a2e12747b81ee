// NCCL's cost-model constants. Unless noted, the source is NVIDIA/nccl v2.30 src/graph/tuning.cc
// (as summarised in /work/shared/calibration/HARDWARE.md, "NCCL cost model"); protocol triples
// are {LL, LL128, Simple}.
#include "lockstep/nccl/constants.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "cost.hpp"

namespace lockstep::nccl {
namespace {

using Triple = std::array<double, kNumProtos>;
using Table = std::array<Triple, kNumAlgorithms>;

constexpr double kNoValue = std::numeric_limits<double>::quiet_NaN();
struct Row {
  Algorithm algorithm;
  Triple values;
};
// A table indexed by Algorithm from its rows; algorithms without a row hold NaN.
template <std::size_t N>
constexpr Table by_algorithm(const std::array<Row, N>& rows) {
  Table t{};
  for (Triple& x : t) x = {kNoValue, kNoValue, kNoValue};
  for (const Row& r : rows) t[static_cast<int>(r.algorithm)] = r.values;
  return t;
}

// baseLat[algo][proto] (us). tuning.cc: Tree {6.8, 14.0, 8.4}, Ring {6.6, 14.0, 8.4},
// CollNet / NVLS / NVLSTree 0, PAT {8, 8, 8}. halving_doubling, direct, hierarchical and
// torus_ring are not NCCL's: they are priced with the ring's rows here and below.
constexpr Triple kRingBase = {6.6, 14.0, 8.4};
constexpr Table kBaseLatency = by_algorithm<10>({{
    {Algorithm::Tree, {6.8, 14.0, 8.4}},
    {Algorithm::Ring, kRingBase},
    {Algorithm::CollNet, {0, 0, 0}},    // CollNetDirect (CollNetChain is 0 too)
    {Algorithm::NetReduce, {0, 0, 0}},  // NVLS
    {Algorithm::NvlsTree, {0, 0, 0}},
    {Algorithm::Pat, {8, 8, 8}},
    {Algorithm::HalvingDoubling, kRingBase},
    {Algorithm::Direct, kRingBase},
    {Algorithm::Hierarchical, kRingBase},
    {Algorithm::TorusRing, kRingBase},
}});

// hwLat[path][algo][proto] (us per step). tuning.cc hwLat table.
constexpr Triple kRingNvLink = {0.6, 1.9, 3.4};
constexpr Triple kRingPcie = {1.0, 2.5, 5.7};
constexpr Triple kRingNetwork = {2.7, 4.0, 14.0};
constexpr std::array<Table, 3> kHwLatency = {{
    by_algorithm<10>({{
        // NVLink
        {Algorithm::Tree, {0.6, 1.25, 4.0}},
        {Algorithm::Ring, kRingNvLink},
        {Algorithm::CollNet, {0, 0, 3.7}},  // CollNetDirect
        {Algorithm::NetReduce, {0, 0, 25}},
        {Algorithm::NvlsTree, {0, 0, 25}},
        {Algorithm::Pat, {0, 0, 4.0}},
        {Algorithm::HalvingDoubling, kRingNvLink},
        {Algorithm::Direct, kRingNvLink},
        {Algorithm::Hierarchical, kRingNvLink},
        {Algorithm::TorusRing, kRingNvLink},
    }}),
    by_algorithm<10>({{
        // PCIe
        {Algorithm::Tree, {1.0, 1.9, 4.0}},
        {Algorithm::Ring, kRingPcie},
        {Algorithm::CollNet, {0, 0, 3.7}},
        {Algorithm::NetReduce, {0, 0, 0}},
        {Algorithm::NvlsTree, {0, 0, 0}},
        {Algorithm::Pat, {0, 0, 4.0}},
        {Algorithm::HalvingDoubling, kRingPcie},
        {Algorithm::Direct, kRingPcie},
        {Algorithm::Hierarchical, kRingPcie},
        {Algorithm::TorusRing, kRingPcie},
    }}),
    by_algorithm<10>({{
        // Network
        {Algorithm::Tree, {5.0, 8.5, 14}},
        {Algorithm::Ring, kRingNetwork},
        {Algorithm::CollNet, {0, 0, 31}},
        {Algorithm::NetReduce, {0, 0, 18}},
        {Algorithm::NvlsTree, {0, 0, 20.9}},
        {Algorithm::Pat, {0, 0, 14}},
        {Algorithm::HalvingDoubling, kRingNetwork},
        {Algorithm::Direct, kRingNetwork},
        {Algorithm::Hierarchical, kRingNetwork},
        {Algorithm::TorusRing, kRingNetwork},
    }}),
}};
// hwLat's CollNetChain row, Simple (NVLink, PCIe, Network).
constexpr std::array<double, 3> kCollNetChainHwLatency = {2.8, 2.8, 30};

double lookup(const Table& table, Algorithm a, Proto p) {
  const double v = table[static_cast<int>(a)][static_cast<int>(p)];
  if (std::isnan(v))
    throw std::logic_error(std::string("NCCL's tables have no row for ") + to_string(a));
  return v;
}

using ByNodes = std::array<double, 3>;  // 1 node, 2 nodes, >= 4 nodes
// tuning.cc's rows: Volta (compute capability 7.x), Ampere (8.x), Hopper (9.x), Blackwell
// (10.x and up).
constexpr std::array<ByNodes, 4> kLLMaxBw = {{
    {39.0, 39.0, 20.4},  // Volta    (llMaxBws)
    {87.7, 22.5, 19.0},  // Ampere
    {141, 45, 35},       // Hopper
    {282, 90, 70},       // Blackwell
}};
constexpr std::array<double, 4> kRingLL128PerChannel = {20, 20, 36.7, 40};  // perChMaxRingLL128Bws
constexpr std::array<ByNodes, 4> kTreeLL128PerChannel = {{
    {20, 20, 20},         // Volta (perChMaxTreeLL128Bws)
    {20, 20, 20},         // Ampere
    {36.7, 36.7, 29.0},   // Hopper
    {55.6, 31.67, 20.0},  // Blackwell
}};
constexpr std::array<ByNodes, 4> kTreeSimplePerChannel = {{
    {26.5, 18.5, 10.0},  // Volta (perChMaxTreeBws)
    {24.0, 23.6, 17.8},  // Ampere
    {38.7, 41.4, 36.0},  // Hopper
    {70.0, 42.8, 24.0},  // Blackwell
}};
constexpr std::array<ByNodes, 4> kNvlsTreePerChannel = {{
    {26.5, 18.5, 10.0},  // Volta (perChMaxNVLSTreeBws; no NVLS on Volta)
    {24.0, 23.6, 17.8},  // Ampere
    {0, 57.7, 45.5},     // Hopper
    {0, 96.0, 80.0},     // Blackwell
}};

// Inter-node channel speeds the topology search tries, highest first (src/graph/search.cc:
// speedArrayInter for sm80, sm90SpeedArrayInter, sm100SpeedArrayInter). For a 400G NIC
// (50 GB/s) the search settles on 48 GB/s, which is why NVIDIA quotes 46-49 GB/s of busbw per
// NDR NIC (nccl-tests issues #267, #290) and 24 GB/s per HDR NIC (192 GB/s for 8 x HDR, nccl
// issue #1576).
constexpr std::array<double, 19> kAmpereInterSpeeds = {48.0, 30.0, 28.0, 24.0, 20.0, 18.0, 15.0,
                                                       12.0, 10.0, 9.0,  7.0,  6.0,  5.0,  4.0,
                                                       3.0,  2.4,  1.2,  0.24, 0.12};
constexpr std::array<double, 17> kHopperInterSpeeds = {48.0, 45.0, 42.0, 40.0, 30.0, 24.0,
                                                       22.0, 20.0, 17.5, 15.0, 12.0, 6.0,
                                                       3.0,  2.4,  1.2,  0.24, 0.12};
constexpr std::array<double, 18> kBlackwellInterSpeeds = {96.0, 48.0, 45.1, 42.0, 40.0, 30.0,
                                                          24.0, 22.0, 20.0, 17.5, 15.0, 12.0,
                                                          6.0,  3.0,  2.4,  1.2,  0.24, 0.12};

// Intra-node ring speeds the search tries, highest first (search.cc: speedArrayIntra below
// compute capability 9.0, sm90SpeedArrayIntra from 9.0).
constexpr std::array<double, 13> kIntraSpeeds = {40.0, 30.0, 20.0, 18.0, 15.0, 12.0, 10.0,
                                                 9.0,  7.0,  6.0,  5.0,  4.0,  3.0};
constexpr std::array<double, 11> kHopperIntraSpeeds = {60.0, 50.0, 40.0, 30.0, 24.0, 20.0,
                                                       15.0, 12.0, 11.0, 6.0,  3.0};

template <std::size_t N>
double first_not_above(const std::array<double, N>& speeds, double rate) {
  for (double s : speeds)
    if (s <= rate + 1e-9) return s;
  return rate;
}

int gen_index(Generation g) {
  return static_cast<int>(g);
}

}  // namespace

const char* to_string(Proto p) {
  switch (p) {
    case Proto::LL:
      return "LL";
    case Proto::LL128:
      return "LL128";
    case Proto::Simple:
      return "Simple";
  }
  return "?";
}

const char* to_string(Generation g) {
  switch (g) {
    case Generation::Volta:
      return "volta";
    case Generation::Ampere:
      return "ampere";
    case Generation::Hopper:
      return "hopper";
    case Generation::Blackwell:
      return "blackwell";
  }
  return "?";
}

double base_latency_us(Algorithm a, Proto p) {
  return lookup(kBaseLatency, a, p);
}

double hw_latency_us(Path path, Algorithm a, Proto p) {
  return lookup(kHwLatency[static_cast<int>(path)], a, p);
}

double collnet_chain_hw_latency_us(Path path) {
  return kCollNetChainHwLatency[static_cast<int>(path)];
}

// tuning.cc getNetOverhead(): 1 us on Intel hosts, 2 us on AMD hosts; the ring latency formula
// multiplies it by 3 for Simple.
double net_overhead_us(bool amd_host, Proto p) {
  const double base = amd_host ? 2.0 : 1.0;
  return p == Proto::Simple ? 3 * base : base;
}

int node_index(std::uint32_t nodes) {
  return nodes <= 1 ? 0 : nodes == 2 ? 1 : 2;
}

double ll_max_bw(Generation g, std::uint32_t nodes) {
  return kLLMaxBw[gen_index(g)][node_index(nodes)];
}
double ring_ll128_per_channel_bw(Generation g) {
  return kRingLL128PerChannel[gen_index(g)];
}
double tree_ll128_per_channel_bw(Generation g, std::uint32_t nodes) {
  return kTreeLL128PerChannel[gen_index(g)][node_index(nodes)];
}
double tree_simple_per_channel_bw(Generation g, std::uint32_t nodes) {
  return kTreeSimplePerChannel[gen_index(g)][node_index(nodes)];
}
double nvls_tree_per_channel_bw(Generation g, std::uint32_t nodes) {
  return kNvlsTreePerChannel[gen_index(g)][node_index(nodes)];
}

// tuning.cc: "if (a == NCCL_ALGO_NVLS) busBw *= nvlsEfficiency" with 0.85 on sm90, 0.74 on
// sm100 (HARDWARE.md).
double nvls_efficiency(Generation g) {
  return g == Generation::Blackwell ? 0.74 : 0.85;
}

// topo.h: SM70_NVLINK_BW 20.0, SM80_NVLINK_BW 20.0, SM90_NVLINK_BW 20.6, SM100_NVLINK_BW 40.1
// GB/s per link; NVLink links per GPU are the catalog's (V100 6, A100 12, H100 18, B200 18:
// NVIDIA product briefs).
double nvlink_bw_per_link(Generation g) {
  switch (g) {
    case Generation::Volta:
    case Generation::Ampere:
      return 20.0;
    case Generation::Hopper:
      return 20.6;
    case Generation::Blackwell:
      return 40.1;
  }
  return 20.0;
}

// AMD Instinct xGMI links are x16 Infinity Fabric links on the SerDes that also runs the GPU's
// PCIe Gen5 host link (AMD CDNA 3 white paper: eight x16 links, 7 xGMI at 64 GB/s per direction
// = 32 Gb/s per lane; MI355X 76.8 GB/s = 38.4 Gb/s per lane). NCCL's topology code (RCCL's is
// NCCL's) takes such a lane at 3/4 of its signalling rate: xml.h kvDictPciGen gives a 32 GT/s lane
// 240 x 100 Mb/s, topo.cc a link width x speed / 80 GB/s, so 48 GB/s for Gen5 x16 and PCI_BW =
// 12 GB/s for Gen3 x16 (8 GT/s x 16 / 8 = 16 GB/s signalling): the packet headers, flow control
// and encoding of a load/store link. MI300X: 7 x 64 x 0.75 = 336 GB/s per GPU and direction;
// NVLink's 20.6 / 25 (topo.h) is NVIDIA's figure for its own link, not one for xGMI.
double xgmi_bw(std::uint32_t links, double raw_GBps) {
  return links * raw_GBps * kSerdesPayloadFraction;
}

double net_search_speed(Generation g, double rate) {
  switch (g) {
    case Generation::Volta:  // search.cc: every compute capability below 9.0 takes this array
    case Generation::Ampere:
      return first_not_above(kAmpereInterSpeeds, rate);
    case Generation::Hopper:
      return first_not_above(kHopperInterSpeeds, rate);
    case Generation::Blackwell:
      return first_not_above(kBlackwellInterSpeeds, rate);
  }
  return rate;
}

double net_search_speed_above(Generation g, double speed) {
  const auto above = [&](const auto& speeds) {
    double next = speed;  // the arrays run highest first: the last entry above is the next one
    for (double s : speeds)
      if (s > speed + 1e-9) next = s;
    return next;
  };
  switch (g) {
    case Generation::Volta:
    case Generation::Ampere:
      return above(kAmpereInterSpeeds);
    case Generation::Hopper:
      return above(kHopperInterSpeeds);
    case Generation::Blackwell:
      return above(kBlackwellInterSpeeds);
  }
  return speed;
}

std::vector<double> intra_search_speeds(Generation g) {
  if (g == Generation::Volta || g == Generation::Ampere)
    return {kIntraSpeeds.begin(), kIntraSpeeds.end()};
  // Hopper; no Blackwell node is searched here (none is wired pair by pair or bridged).
  return {kHopperIntraSpeeds.begin(), kHopperIntraSpeeds.end()};
}

std::uint32_t p2p_channels_per_peer(std::uint32_t ranks, std::uint32_t p2p_channels,
                                    std::uint32_t nodes, std::uint32_t nics_per_gpu) {
  if (nodes <= 1 || p2p_channels == 0) return p2p_channels;
  std::uint32_t n = 2;
  while (std::uint64_t{n} * ranks > std::uint64_t{p2p_channels} * 4 && n > 1) n /= 2;
  n = std::max(n, nics_per_gpu);
  std::uint32_t pow2 = 1;
  while (pow2 < n) pow2 *= 2;
  return std::min(pow2, p2p_channels);
}

// src/include/device.h: NCCL_LL_MAX_NTHREADS 512, NCCL_LL128_MAX_NTHREADS 640,
// NCCL_SIMPLE_MAX_NTHREADS 512.
std::uint32_t max_threads(Proto p) {
  return p == Proto::LL128 ? 640 : 512;
}

// tuning.cc: NCCL_LL_THREAD_THRESHOLD 8, NCCL_LL128_THREAD_THRESHOLD 8,
// NCCL_SIMPLE_THREAD_THRESHOLD 64 bytes per thread; ring LL multiplies by the rank count (and so
// do halving_doubling and direct, priced as the ring).
std::uint32_t thread_threshold(Algorithm a, Proto p, std::uint32_t ranks) {
  if (p == Proto::Simple) return 64;
  const bool ring_priced =
      a == Algorithm::Ring || a == Algorithm::HalvingDoubling || a == Algorithm::Direct;
  if (p == Proto::LL && ring_priced) return 8 * ranks;
  return 8;
}

// NCCL logs on NVSwitch systems ("NCCL INFO 24 coll channels" on DGX A100, "32 coll channels"
// on DGX H100 / B200): the ring search finds half of these, then duplicates every channel.
// Volta: DGX-1's hybrid cube mesh has no NVSwitch; its search finds 6 rings at SM70's 20 GB/s
// (every link once per direction, docs/presets.md), duplicated to 12.
std::uint32_t intra_node_channels(Generation g) {
  if (g == Generation::Volta) return 12;
  return g == Generation::Ampere ? 24 : 32;
}

// enqueue.cc (NCCL 2.12-2.2x, tree all-reduce, pattern TreeUpDown) with the tree's depth
// g - 1 + log2(nodes) (connectTrees): Simple halves its 512 KiB step while a channel gets fewer
// than 8 x depth chunks (down to 128 KiB), 4 x depth (64 KiB), depth (32 KiB); LL128 halves its
// step while fewer than (1 + log2(nodes) + 0.1 g) x 64 / g chunks (down to 128 KiB), x 16 / g
// (32 KiB); LL keeps its step. Payload: LL128 15/16 of a step, LL half.
double tree_chunk_bytes(Proto p, double bytes, std::uint32_t channels, std::uint32_t gpus_per_node,
                        std::uint32_t nodes) {
  int log2_nodes = 0;
  for (std::uint32_t v = nodes; v > 1; v >>= 1) ++log2_nodes;
  const double per_channel = bytes / std::max<std::uint32_t>(channels, 1);
  const auto halve_while = [&](double chunk, double min_chunks, double floor) {
    while (per_channel / chunk < min_chunks && chunk > floor) chunk /= 2;
    return chunk;
  };
  double chunk = 0;
  switch (p) {
    case Proto::Simple: {
      const double depth = gpus_per_node - 1.0 + log2_nodes;
      chunk = halve_while(kSimpleStepBytes, depth * 8, 131072);
      chunk = halve_while(chunk, depth * 4, 65536);
      chunk = halve_while(chunk, depth, 32768);
      break;
    }
    case Proto::LL128: {
      const double ppn = gpus_per_node;
      const double steps = 1 + log2_nodes + 0.1 * ppn;
      chunk = halve_while(kLL128StepBytes, steps * 64 / ppn, 131072);
      chunk = halve_while(chunk, steps * 16 / ppn, 32768) * 15 / 16;
      break;
    }
    case Proto::LL:
      chunk = kLLStepBytes / 2;
      break;
  }
  return std::min(chunk, per_channel);
}

// tuning.cc (NCCL 2.4-2.2x), treeCorrectionFactor[NCCL_NUM_PROTOCOLS][23], indexed by
// logSize = log2i(nBytes >> 6) while below 23 (64 B .. 256 MiB); ncclTopoGetAlgoTime multiplies
// the tree's bus bandwidth by it. Rows LL, LL128, Simple.
double tree_correction_factor(Proto p, double bytes) {
  static constexpr double kFactor[3][23] = {
      {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7,  .7,  .7,  .6, .5,
       .4,  .4,  .5,  .6,  .7, .8, .9, 1.0, 1.0, 1.0, 1.0},
      {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7,  .6, .6,
       .6,  .6,  .6,  .6,  .8,  .9, .9, .9, .9, 1.0, 1.0},
      {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9},
  };
  auto units = static_cast<std::uint64_t>(std::max(bytes, 0.0)) >> 6;
  int log_size = -1;  // log2i(0) in NCCL is -1: no factor
  while (units > 0) {
    units >>= 1;
    ++log_size;
  }
  if (log_size < 0 || log_size >= 23) return 1.0;
  const int row = p == Proto::LL ? 0 : p == Proto::LL128 ? 1 : 2;
  return kFactor[row][log_size];
}

// connect.cc connectNvls gives every channel nvlsGraph->nChannels heads; search.cc's NVLS pattern
// asks for as many channels as the node has GPUs (each GPU heads one, with its NIC across
// nodes); NCCL_MAX_NVLS_ARITY (device.h) is 32.
std::uint32_t nvls_heads(std::uint32_t gpus_per_node) {
  return std::clamp<std::uint32_t>(gpus_per_node, 1, 32);
}

// enqueue.cc (NCCL 2.2x), NVLS_TREE: the chunk starts at NCCL_NVLS_CHUNKSIZE (128 KiB), at most
// NCCL_NVLSTREE_MAX_CHUNKSIZE (default: 64 KiB from 4 nodes on); with concurrentOps = nChannels
// x nHeads it becomes 64 KiB while bytes < 4 x concurrentOps x chunk, then 32 KiB while bytes <
// concurrentOps x chunk (its 256 / 128 KiB cuts never apply from 128 KiB). The NVLS_TREE program
// (collective/nvls_tree.cpp) cuts its per-GPU block the same way, without the 4-node cap.
double nvls_tree_chunk_bytes(double bytes, std::uint32_t channels, std::uint32_t heads,
                             std::uint32_t nodes) {
  const double ops =
      double(std::max<std::uint32_t>(channels, 1)) * std::max<std::uint32_t>(heads, 1);
  double chunk = nodes >= 4 ? 65536 : 131072;
  if (bytes < 4 * ops * chunk && chunk > 65536) chunk = 65536;
  if (bytes < ops * chunk && chunk > 32768) chunk = 32768;
  return std::min(chunk, bytes / ops);
}

// enqueue.cc (NCCL 2.2x), NVLS: the chunk is NCCL_NVLS_CHUNKSIZE (128 KiB), 32 KiB across nodes
// when the tuner's NVLS all-reduce bandwidth is under 150 GB/s; with concurrentOps = nChannels x
// nHeads, 64 KiB while bytes < 64 x concurrentOps x chunk, 32 KiB while < 8 x, 16 KiB while < 2 x.
double nvls_chunk_bytes(double bytes, std::uint32_t channels, std::uint32_t heads,
                        std::uint32_t nodes, double nvls_bus_GBps) {
  const double ops =
      double(std::max<std::uint32_t>(channels, 1)) * std::max<std::uint32_t>(heads, 1);
  double chunk = nodes > 1 && nvls_bus_GBps < 150 ? 32768 : 131072;
  if (bytes < 64 * ops * chunk && chunk > 65536) chunk = 65536;
  if (bytes < 8 * ops * chunk && chunk > 32768) chunk = 32768;
  if (bytes < 2 * ops * chunk && chunk > 16384) chunk = 16384;
  return std::min(chunk, bytes / ops);
}

// kLaunchOverheadUs (constants.hpp, 20 us): nccl-tests times back-to-back calls, so each call
// pays the CUDA launch and NCCL's host enqueue on top of the kernel. NCCL's model puts an 8 B ring
// LL all-reduce over 8 H100 at 6.6 + 14 x 0.6 = 15 us; nccl-tests measures 35 us on such a system
// (together-nccl-tests, H100 all_reduce_ring.out), so about 20 us is per-call overhead the tuning
// tables leave out. This is the one constant fitted to measurements (docs/nccl-model.md).

}  // namespace lockstep::nccl
