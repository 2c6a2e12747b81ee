#pragma once
// NCCL-style cost model and tuner: predicts how long a collective takes on a cluster, per
// (algorithm, protocol, channels), as time = latency x steps + bytes / bandwidth with NCCL's
// constants (topology/catalog_nccl.hpp), and picks the fastest algorithm and protocol as NCCL's
// tuner does. docs/nccl-model.md derives every formula.
//
//   NcclCluster c = nccl_cluster(resolve_preset({.system = "hgx-h100", .nodes = 1}));
//   Prediction p = predict(c, {.op = CollectiveOp::AllReduce, .bytes = Bytes::gib(1)});
//   // p.algo == TunerAlgo::Ring, p.proto == nccl::Proto::Simple, p.busbw_GBps ~ 370
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "lockstep/collective/collective.hpp"
#include "lockstep/core/units.hpp"
#include "lockstep/topology/catalog_nccl.hpp"
#include "lockstep/topology/graph.hpp"

namespace lockstep {

struct PresetCluster;  // topology/presets.hpp

/// What NCCL's model needs to know about a cluster.
struct NcclCluster {
  nccl::Generation generation = nccl::Generation::Hopper;
  std::string gpu = "h100";
  std::uint32_t nodes = 1;
  std::uint32_t gpus_per_node = 8;
  nccl::Path intra_path = nccl::Path::NvLink;  // NvLink (or xGMI) / Pcie between local GPUs
  double intra_GBps = 0;            // per GPU, one direction, as NCCL assumes (links x per link)
  std::uint32_t nics_per_node = 0;  // NICs serving the GPUs in use
  double nic_GBps = 0;              // line rate of one NIC (GB/s, one direction)
  double gpu_nic_GBps = 0;          // PCIe between a GPU and its NIC (one direction; 0: no limit)
  bool sharp = false;               // CollNet (InfiniBand SHARP) available
  bool nvls = false;                // NVLink SHARP available
  bool amd_host = false;            // host network post overhead 2 us instead of 1 us
  bool ll128_network = true;        // LL128 over the network (false for TCP sockets)
  double extra_net_step_us = 0;     // fabric latency per network step beyond NCCL's IB table

  std::uint32_t ranks() const { return nodes * gpus_per_node; }
  /// What one GPU can push through its NIC (GB/s): the NIC's line rate or, if lower, the PCIe
  /// link to it (NCCL's search takes the narrowest link of the GPU-to-NIC path).
  double nic_path_GBps() const;
  /// Per-node network bandwidth NCCL's search settles on (GB/s): NICs x search speed.
  double node_net_GBps() const;
  /// Ring/tree channels NCCL builds for this cluster (before small-message reduction).
  std::uint32_t max_channels() const;
};

/// The cluster description NCCL would derive from a preset.
NcclCluster nccl_cluster(const PresetCluster& preset);
/// The same from a built topology's traits and links (for --scenario clusters). An NVLink domain
/// spanning several servers (NVL72) is one NCCL node; `sharp` means the switches could (a sweep
/// turns it on).
NcclCluster nccl_cluster(const Topology& topo);

enum class TunerAlgo : std::uint8_t {
  Auto,
  Ring,
  Tree,
  Nvls,
  NvlsTree,
  CollNet,
  Pat,
  HalvingDoubling,
  Direct,
};
enum class TunerProto : std::uint8_t { Auto, LL, LL128, Simple };

/// CLI names: auto, ring, tree, nvls, nvls_tree, collnet, pat, halving_doubling, direct;
/// auto, ll, ll128, simple. Parsing throws InputError naming `field` and the accepted names.
const char* to_string(TunerAlgo a);
TunerAlgo parse_tuner_algo(std::string_view name, std::string_view field = "algo");
TunerProto parse_tuner_proto(std::string_view name, std::string_view field = "proto");
/// The collective algorithm (collective.hpp) whose programs realise a tuner algorithm.
Algorithm program_algorithm(TunerAlgo a);

struct TunerRequest {
  CollectiveOp op = CollectiveOp::AllReduce;
  Bytes bytes;  // nccl-tests size S
  TunerAlgo algo = TunerAlgo::Auto;
  TunerProto proto = TunerProto::Auto;
  std::uint32_t channels = 0;           // 0: as NCCL would pick
  bool include_launch_overhead = true;  // add nccl::kLaunchOverheadUs (nccl-tests semantics)
};

struct Prediction {
  TunerAlgo algo = TunerAlgo::Ring;
  nccl::Proto proto = nccl::Proto::Simple;
  std::uint32_t channels = 1;
  Time time;              // launch overhead + latency + transfer
  Time latency;           // NCCL's latency term (base + steps x per-step latency)
  Time transfer;          // bytes / bandwidth
  double bus_GBps = 0;    // effective bandwidth of the bytes term (after protocol efficiency)
  double step_us = 0;     // per-step latency of the protocol on the local path
  double efficiency = 1;  // protocol payload efficiency (LL 0.5, LL128 0.92, Simple 1)
  double algbw_GBps = 0;  // S / time
  double busbw_GBps = 0;  // algbw x nccl-tests busbw factor
};

/// Predicts one collective. With algo/proto Auto, the fastest enabled combination wins (as NCCL's
/// tuner picks); a fixed algorithm that cannot run the op on this cluster (nvls without NVLink
/// SHARP, collnet without SHARP, tree for all_gather, ...) is an InputError naming "algo".
Prediction predict(const NcclCluster& cluster, const TunerRequest& request);

/// Every enabled (algorithm, protocol) prediction for the request's op and size, fastest first.
std::vector<Prediction> candidates(const NcclCluster& cluster, const TunerRequest& request);

}  // namespace lockstep
