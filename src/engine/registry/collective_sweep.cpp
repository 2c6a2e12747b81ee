// Collective sweeps: parsing (CLI flags and scenario sections alike), running on the NCCL model
// or a timing engine, and printing rows the way nccl-tests does.
#include "lockstep/engine/registry/collective_sweep.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>

#include "lockstep/core/error.hpp"
#include "lockstep/engine/flow/flow_engine.hpp"
#include "lockstep/engine/packet/packet_engine.hpp"
#include "lockstep/engine/registry/registry.hpp"
#include "lockstep/routing/router.hpp"

namespace lockstep {
namespace {

struct TypeName {
  const char* name;
  DataType type;
};
// nccl-tests' type names, plus lockstep's own spellings.
constexpr std::array<TypeName, 10> kTypes = {{{"float", DataType::Float32},
                                              {"float32", DataType::Float32},
                                              {"double", DataType::Float64},
                                              {"float64", DataType::Float64},
                                              {"bfloat16", DataType::Bf16},
                                              {"int8", DataType::Int8},
                                              {"uint8", DataType::Uint8},
                                              {"int32", DataType::Int32},
                                              {"uint32", DataType::Uint32},
                                              {"int64", DataType::Int64}}};

const char* nccl_tests_type_name(DataType t) {
  for (const auto& n : kTypes)
    if (n.type == t) return n.name;
  return "float";
}

bool per_rank_count(CollectiveOp op) {
  return op == CollectiveOp::AllGather || op == CollectiveOp::ReduceScatter ||
         op == CollectiveOp::AllToAll;
}

bool reduces(CollectiveOp op) {
  return op == CollectiveOp::AllReduce || op == CollectiveOp::ReduceScatter ||
         op == CollectiveOp::Reduce;
}

// The fraction of the bus bandwidth the NCCL model lets the algorithm use: the protocol's
// payload efficiency, times PAT's 0.75, except for the tree, whose per-protocol factors replace
// it (tuning.cc: Simple 0.92, LL128 120/128 across nodes or 7/9 in one, LL 1/3.8).
//
// NVLS: the program's NetReduce carries S up and S down per GPU (what the op means), but NVLink
// SHARP moves S (1 + 1/g) per direction per GPU for an all-reduce (tuner.cpp nvls_cost: the
// switch pulls every slice, each GPU multicasts its reduced S/g slice) at NCCL's NVLS efficiency.
// The glue folds both into the efficiency rather than the program, so the program stays the
// op's semantics (the functional executor checks it) and only the timing carries the extra bytes.
double algorithm_efficiency(const Prediction& p, const NcclCluster& c, CollectiveOp op) {
  if (p.algo == TunerAlgo::Pat) return nccl::kPatEfficiency * p.efficiency;  // 0.75 x ring bw
  if (p.algo == TunerAlgo::Nvls) {
    // Across nodes the program itself moves S (1 + 1/g) (NVLS reduce-scatter + multicast).
    const double extra =
        op == CollectiveOp::AllReduce && c.nodes == 1 ? 1 + 1.0 / c.gpus_per_node : 1.0;
    return nccl::nvls_efficiency(c.generation) / extra;
  }
  if (p.algo == TunerAlgo::NvlsTree) {
    // The program moves NVLS's S (1 + 1/g) on NVLink. One efficiency covers NVLink and the
    // GPU-NIC PCIe hop, and 0.85 there would throttle the NICs (63 x 0.824 x 0.85 = 44 < 48
    // GB/s): apply NVLS's efficiency only where the model's NVLS term is the bottleneck.
    const double nvls =
        c.intra_GBps * nccl::nvls_efficiency(c.generation) / (1 + 1.0 / c.gpus_per_node);
    return nvls <= p.bus_GBps * (1 + 1e-9) ? nccl::nvls_efficiency(c.generation) : p.efficiency;
  }
  if (p.algo != TunerAlgo::Tree) return p.efficiency;
  switch (p.proto) {
    case nccl::Proto::Simple:
      return nccl::kTreeSimpleEfficiency;
    case nccl::Proto::LL128:
      return c.nodes == 1 ? nccl::kTreeLL128SingleNode : nccl::kTreeLL128MultiNode;
    case nccl::Proto::LL:
      return 1.0 / nccl::kTreeLLDivisor;
  }
  return p.efficiency;
}

// Per medium, the raw link's speed relative to what NCCL assumes of it, times the algorithm's
// efficiency: the flow engine then moves data at the rate the model uses on NVLink (NCCL's
// intra-node bandwidth) and on the NICs (NCCL's network search speed) alike.
struct MeshLinks {
  std::uint32_t peers = 0;  // GPUs the first GPU reaches over a direct GPU-GPU link
  double total_GBps = 0;    // those links' bandwidth summed (one direction)
};
MeshLinks gpu_mesh_links(const Topology& topo) {
  MeshLinks m;
  const auto gpus = topo.gpus();
  if (gpus.empty()) return m;
  for (const Port& port : topo.ports(gpus[0]))
    if (topo.device(port.peer).kind == DeviceKind::Gpu) {
      ++m.peers;
      m.total_GBps += topo.link(Topology::link_of(port.out)).bandwidth.gigabytes_per_second();
    }
  return m;
}

struct FlowEfficiency {
  double intra = 1;
  double network = 0;  // 0: the topology has no NIC-to-switch links
};
FlowEfficiency flow_efficiency(const Prediction& p, const NcclCluster& c, CollectiveOp op,
                               const Topology& topo) {
  double raw_intra = 0, raw_nic = 0, raw_gpu_nic = 0;
  for (const Link& l : topo.links()) {
    const DeviceKind a = topo.device(l.a).kind, b = topo.device(l.b).kind;
    const double bw = l.bandwidth.gigabytes_per_second();
    if (a == DeviceKind::Gpu && (b == DeviceKind::ScaleUpSwitch || b == DeviceKind::Gpu))
      raw_intra = std::max(raw_intra, bw);
    const NicSide side = nic_side(topo, l);
    if (side == NicSide::NicToFabric) raw_nic = std::max(raw_nic, bw);
    if (side == NicSide::GpuToNic) raw_gpu_nic = std::max(raw_gpu_nic, bw);
  }
  // The network path starts with the GPU's PCIe link to its NIC (a network link to the flow
  // engine): scale by its narrowest link, which is what NCCL's search speed is taken from.
  if (raw_gpu_nic > 0 && raw_nic > 0) raw_nic = std::min(raw_nic, raw_gpu_nic);
  // On a mesh (GPUs linked pairwise, no switch) mesh rings spread the channels over all of a
  // GPU's links, so NCCL's per-GPU rate is their sum, not one link's.
  if (const MeshLinks mesh = gpu_mesh_links(topo); mesh.peers > 1) raw_intra = mesh.total_GBps;
  const double algo = algorithm_efficiency(p, c, op);
  FlowEfficiency e;
  e.intra = algo;
  if (raw_intra > 0 && c.intra_GBps > 0) e.intra *= std::min(1.0, c.intra_GBps / raw_intra);
  if (raw_nic > 0)
    e.network =
        std::min(1.0, nccl::net_search_speed(c.generation, c.nic_path_GBps()) / raw_nic) * algo;
  return e;
}

// Sum of link latencies on the routed path between the GPUs of ranks `from` and `to` (zero if
// `to` does not exist): what the flow engine adds to every message between them.
Time gpu_path_latency(const Topology& topo, std::size_t from, std::size_t to) {
  const auto gpus = topo.gpus();
  if (to >= gpus.size() || from == to) return Time::zero();
  const auto router = make_router(topo, RouterOptions{});
  std::vector<PathShare> paths;
  router->route(FlowKey{gpus[from], gpus[to], 0}, nullptr, paths);
  Time t = Time::zero();
  if (!paths.empty())
    for (const DirLinkId l : paths.front().hops) t += topo.link(Topology::link_of(l)).latency;
  return t;
}

// NCCL's latency per network step of the prediction's algorithm (tuner.cpp inter_lat: with one
// GPU per node the ring and tree pay the tree's network latency, which is fully exposed).
double network_step_us(const NcclCluster& c, const Prediction& p) {
  nccl::Algo table = nccl::Algo::Ring;
  nccl::Proto proto = p.proto;
  switch (p.algo) {
    case TunerAlgo::Tree:
      table = nccl::Algo::Tree;
      break;
    case TunerAlgo::Pat:
      table = nccl::Algo::Pat;
      break;
    case TunerAlgo::Nvls:
      table = nccl::Algo::Nvls, proto = nccl::Proto::Simple;
      break;
    case TunerAlgo::NvlsTree:
      table = nccl::Algo::NvlsTree, proto = nccl::Proto::Simple;
      break;
    case TunerAlgo::CollNet:
      table = c.gpus_per_node > 1 ? nccl::Algo::CollNetDirect : nccl::Algo::CollNetChain;
      proto = nccl::Proto::Simple;
      break;
    default:
      break;
  }
  if (c.gpus_per_node == 1 && (table == nccl::Algo::Ring || table == nccl::Algo::Tree))
    table = nccl::Algo::Tree;
  return nccl::hw_latency_us(nccl::Path::Network, table, proto) + c.extra_net_step_us;
}

nccl::Algo base_latency_algo(TunerAlgo a) {
  switch (a) {
    case TunerAlgo::Tree:
      return nccl::Algo::Tree;
    case TunerAlgo::Pat:
      return nccl::Algo::Pat;
    case TunerAlgo::Nvls:
    case TunerAlgo::NvlsTree:
    case TunerAlgo::CollNet:
      return nccl::Algo::Nvls;  // base latency 0
    default:
      return nccl::Algo::Ring;
  }
}

// A ring across nodes with several GPUs per node (docs/nccl-model.md "The ring across nodes"):
// - every message pays the same share of NCCL's latency sum (base excluded): NCCL counts
//   2(N-1) network steps of an all-reduce, but the longest chain of dependent hops in the
//   program, 2(n-1) consecutive hops, crosses a node boundary every g hops (2N times for g > 2),
//   so paying each hop its own step latency would overcount; the overhead is that share less
//   the mean path latency along such a chain (the engine adds each path's latency itself);
// - each channel's sends are capped at NCCL's channel speed (EngineOptions::
//   channel_send_bandwidth), so that a channel waiting out its latency does not lend its share
//   of a link to the others and NCCL's sum of latency and transfer holds.
void price_ring_across_nodes(const NcclCluster& c, const Prediction& p, CollectiveOp op,
                             double base_us, const Topology& topo, NcclEngineRun& how) {
  const double n = c.ranks(), g = c.gpus_per_node;
  const double steps = op == CollectiveOp::AllReduce ? 2 * (n - 1) : n - 1;
  const double per_step_us = (p.latency.microseconds() - base_us) / steps;
  const double crossings = std::min(steps, std::ceil(steps / g));
  const double nvlink_us = gpu_path_latency(topo, 0, 1).microseconds();
  const double net_us = gpu_path_latency(topo, 0, c.gpus_per_node).microseconds();
  const double path_us = ((steps - crossings) * nvlink_us + crossings * net_us) / steps;
  how.per_message_overhead = Time::us(std::max(0.0, per_step_us - path_us));
  how.network_message_latency = Time::zero();
}

}  // namespace

NcclEngineRun nccl_engine_run(const NcclCluster& c, const Prediction& p, CollectiveOp op,
                              Bytes bytes, DataType type, const Topology& topo) {
  NcclEngineRun how;
  how.spec.op = op;
  how.spec.algorithm = program_algorithm(p.algo);
  how.spec.ranks = c.ranks();
  how.spec.bytes = bytes;
  how.spec.type = type;
  how.spec.channels = static_cast<std::uint16_t>(p.channels);
  // One node is one scale-up domain too: NCCL's tree is then a chain through the node's GPUs.
  how.spec.ranks_per_node = c.gpus_per_node > 1 ? c.gpus_per_node : 0;
  // A fully connected node (AMD xGMI): each ring channel takes its own cycle, as RCCL's do
  // (docs/nccl-model.md "Mesh rings").
  how.spec.mesh_rings = c.gpus_per_node > 2 && gpu_mesh_links(topo).peers + 1 >= c.gpus_per_node;
  // Its g - 1 cycles then carry equal channel counts only if g - 1 divides the channels, else
  // the link with one channel more limits them all: round up (channel speed is bus / channels
  // below, so the aggregate rate the model priced is unchanged). Across nodes, to a multiple of
  // g (g - 1) as well: channel c walks cycle c mod (g - 1) from GPU c mod g (ring.cpp), and as
  // g and g - 1 are coprime, g (g - 1) channels take every (cycle, start) pair once, so every
  // GPU enters and leaves its node on g - 1 channels and every NIC direction carries as many
  // (16 -> 56 on MI300X; with 21, one NIC carried 6 channels out and flow ran at half the model).
  if (how.spec.mesh_rings && p.algo == TunerAlgo::Ring) {
    const std::uint32_t cycles = c.gpus_per_node - 1;
    const std::uint32_t unit = c.nodes > 1 ? std::lcm(cycles, c.gpus_per_node) : cycles;
    how.spec.channels = static_cast<std::uint16_t>((p.channels + unit - 1) / unit * unit);
  }
  // NCCL's per-step latency covers the hop; the flow engine adds the path's link latencies, so
  // the overhead is what is left (docs/nccl-model.md "Flow runs"). A multi-node ring's local
  // steps pay at least the network post overhead, and its Simple all-reduce's whole latency,
  // base included, is scaled (tuner.cpp ring_cost).
  double intra_us = p.step_us, net_us = network_step_us(c, p);
  const bool ring = p.algo == TunerAlgo::Ring;
  if (ring && c.nodes > 1)
    intra_us = std::max(intra_us, nccl::net_overhead_us(c.amd_host, p.proto));
  const double scale =
      ring && op == CollectiveOp::AllReduce && p.proto == nccl::Proto::Simple && c.nodes > 1 &&
              bytes.as_double() / (static_cast<double>(p.channels) * c.ranks()) >= 64
          ? nccl::kRingSimpleMultiNodeLatencyFactor
          : 1.0;
  intra_us *= scale;
  net_us *= scale;
  const Time intra_path = c.gpus_per_node > 1 ? gpu_path_latency(topo, 0, 1) : Time::zero();
  how.per_message_overhead = std::max(Time::zero(), Time::us(intra_us) - intra_path);
  how.overhead_as_latency =
      !(ring && (op == CollectiveOp::AllReduce || op == CollectiveOp::AllGather ||
                 op == CollectiveOp::ReduceScatter));
  if (c.nodes > 1 && c.gpus_per_node == 1) {
    // Every message crosses the network: its step latency is the overhead itself (so engine
    // users that copy only the overhead and one efficiency, like training steps, get it too).
    how.per_message_overhead =
        std::max(Time::zero(), Time::us(net_us) - gpu_path_latency(topo, 0, 1));
  } else if (c.nodes > 1) {
    // A message that crosses the network pays the overhead, its path and this extra latency.
    const Time net_path = gpu_path_latency(topo, 0, c.gpus_per_node);
    how.network_message_latency =
        std::max(Time::zero(), Time::us(net_us) - how.per_message_overhead - net_path);
  }
  const FlowEfficiency eff = flow_efficiency(p, c, op, topo);
  // With one GPU per node no NVLink carries data: the network's efficiency is the one to use on
  // every link (PCIe GPU-NIC hops included), as a single number.
  how.transfer_efficiency = c.gpus_per_node == 1 && eff.network > 0 ? eff.network : eff.intra;
  how.network_transfer_efficiency = eff.network;
  const double base_us = nccl::base_latency_us(base_latency_algo(p.algo), p.proto) * scale;
  how.fixed = Time::us(nccl::kLaunchOverheadUs + base_us);
  // NVLS in one node is one in-network reduction: NCCL charges its step latency once, and the
  // flow engine's NetReduce pays no per-message overhead, only the path.
  if (p.algo == TunerAlgo::Nvls && c.nodes == 1) how.fixed += how.per_message_overhead;
  if (ring && !how.overhead_as_latency && c.nodes > 1 && c.gpus_per_node > 1)
    price_ring_across_nodes(c, p, op, base_us, topo, how);
  // Every ring channel runs at NCCL's channel speed (channel_send_bandwidth): the bus bandwidth the
  // model priced, LL's and LL128's caps included, shared evenly by the channels.
  if (ring && !how.overhead_as_latency)
    how.channel_bandwidth = Bandwidth::gBps(p.bus_GBps / how.spec.channels);
  return how;
}

Time run_nccl_engine(const NcclEngineRun& how, const Topology& topo, const std::string& engine,
                     const ArgNode* packet) {
  // The flow engine times NVLS tree with one rank per (channel, GPU): its channels share only
  // links, and split they form one class (CollectiveSpec::split_channels).
  CollectiveSpec spec = how.spec;
  spec.split_channels = engine == "flow" && spec.algorithm == Algorithm::NvlsTree;
  const auto programs = make_collective(spec);
  const auto router = make_router(topo, RouterOptions{});
  EngineInput input;
  input.topology = &topo;
  input.programs = programs.get();
  const auto gpus = topo.gpus();
  std::vector<DeviceId> placement;
  for (Rank v = 0; v < programs->num_ranks(); ++v) placement.push_back(gpus[v % spec.ranks]);
  input.placement = placement;
  input.router = router.get();
  how.apply(input.options);
  // The ring interleaves its channels step by step (src/collective/ring.cpp), so the flow
  // engine's default window lets them progress together; it also stays inside the ring's
  // periodic regions, so the steady state can be fast-forwarded. Other programs lay their
  // channels out one after another and need the whole program in the window.
  const bool interleaved_ring = engine == "flow" && how.spec.algorithm == Algorithm::Ring;
  const auto run_on = engine == "packet" && packet != nullptr ? make_packet_engine(*packet)
                      : interleaved_ring                      ? make_flow_engine(FlowEngineConfig{})
                                         : make_sweep_engine(engine, programs->num_ops(0));
  return how.fixed + run_on->run(input).makespan;
}

std::unique_ptr<Engine> make_sweep_engine(const std::string& name, std::uint32_t ops_per_rank) {
  // NCCL runs every channel at once (one thread block each): let the flow engine issue a whole
  // rank's program rather than its default window, which would serialise the channels.
  if (name == "flow") {
    FlowEngineConfig config;
    config.issue_window = std::clamp<std::uint32_t>(ops_per_rank, 32, 1u << 14);
    return make_flow_engine(config);
  }
  return make_engine(name);
}

std::vector<Bytes> CollectiveSweep::sizes(std::uint32_t ranks) const {
  std::vector<Bytes> out;
  const std::uint64_t unit = size_of(type) * (per_rank_count(op) ? ranks : 1);
  double s = min_bytes.as_double();
  while (s <= max_bytes.as_double() * (1 + 1e-12)) {
    const auto rounded = static_cast<std::uint64_t>(s) / unit * unit;
    if (rounded > 0 && (out.empty() || out.back().count() != rounded)) out.emplace_back(rounded);
    s *= step_factor;
  }
  return out;
}

CollectiveSweep parse_collective_sweep(const ArgNode& args) {
  if (args.kind() != ArgNode::Kind::Map) args.fail("expected a map (op, min_bytes, ...)");
  CollectiveSweep s;
  if (const ArgNode* op = args.find("op")) {
    try {
      s.op = parse_collective_op(op->text(), op->path());
    } catch (const InputError& e) {
      op->fail(e.bare_message());
    }
    if (s.op == CollectiveOp::AllToAllV || s.op == CollectiveOp::Barrier)
      op->fail(
          "the NCCL model covers all_reduce, all_gather, reduce_scatter, broadcast, reduce, "
          "alltoall and sendrecv");
  }
  auto read_choice = [&](const char* key, auto parse, auto& out) {
    const ArgNode* node = args.find(key);
    if (node == nullptr) return;
    try {
      out = parse(node->text(), node->path());
    } catch (const InputError& e) {
      node->fail(e.bare_message());
    }
  };
  read_choice("algo", parse_tuner_algo, s.algo);
  if (const ArgNode* n = args.find("algo")) {
    s.algo_field = n->path();
    s.algo_where = n->where();
  }
  read_choice("proto", parse_tuner_proto, s.proto);
  if (const ArgNode* n = args.find("min_bytes")) s.min_bytes = n->as_bytes();
  if (const ArgNode* n = args.find("max_bytes")) s.max_bytes = n->as_bytes();
  if (s.min_bytes.count() == 0) args.at("min_bytes").fail("must be at least 1 byte");
  if (s.max_bytes < s.min_bytes) {
    const ArgNode* n = args.find("max_bytes");
    const std::string message = "max_bytes is smaller than min_bytes";
    if (n != nullptr) n->fail(message);
    args.fail(message);
  }
  s.step_factor = args.get_double("step_factor", s.step_factor, 1.0001, 1e6);
  if (const ArgNode* n = args.find("type")) {
    std::vector<std::string> names;
    for (const auto& t : kTypes) names.emplace_back(t.name);
    const std::string& name = n->as_choice(names);
    for (const auto& t : kTypes)
      if (name == t.name) s.type = t.type;
  }
  s.channels = static_cast<std::uint32_t>(args.get_int("channels", 0, 1, nccl::kMaxChannels));
  s.sharp = args.get_bool("sharp", false);
  if (const ArgNode* n = args.find("engine")) s.engine = n->as_choice(engine_names());
  // Rows past 2^40 sizes would take forever and say nothing new.
  if (std::log(s.max_bytes.as_double() / s.min_bytes.as_double()) / std::log(s.step_factor) > 4096)
    args.fail("the sweep has more than 4096 sizes; raise step_factor");
  args.check_all_used();
  return s;
}

std::vector<CollectiveSweep> parse_collectives_section(const ArgNode& section,
                                                       const std::string& engine) {
  std::vector<CollectiveSweep> out;
  auto one = [&](const ArgNode& n) {
    CollectiveSweep s = parse_collective_sweep(n);
    if (!n.has("engine")) s.engine = engine;
    out.push_back(s);
  };
  if (section.kind() == ArgNode::Kind::List) {
    for (const ArgNode& item : section.items()) one(item);
    if (out.empty()) section.fail("lists no collectives");
  } else {
    one(section);
  }
  return out;
}

std::string parse_engine_name(const ArgNode& section) {
  if (section.kind() == ArgNode::Kind::Scalar) return section.as_choice(engine_names());
  if (section.kind() != ArgNode::Kind::Map) section.fail("expected an engine name or a map");
  std::string name = section.at("name").as_choice(engine_names());
  section.check_all_used();
  return name;
}

std::vector<CollectiveRow> run_collective_sweep(const CollectiveSweep& sweep,
                                                const NcclCluster& cluster,
                                                const Topology* topology) {
  make_engine(sweep.engine);  // an unknown engine fails before any work
  if (sweep.engine != "analytical" && topology == nullptr)
    throw InputError("engine", fmt::format("engine '{}' needs a topology to run on", sweep.engine));
  NcclCluster c = cluster;
  c.sharp = c.sharp && sweep.sharp;
  std::vector<CollectiveRow> rows;
  for (Bytes bytes : sweep.sizes(c.ranks())) {
    TunerRequest req;
    req.op = sweep.op;
    req.bytes = bytes;
    req.algo = sweep.algo;
    req.proto = sweep.proto;
    req.channels = sweep.channels;
    Prediction p;
    try {
      p = predict(c, req);
    } catch (const InputError& e) {
      if (e.field() != "algo") throw;
      throw InputError(sweep.algo_field, e.bare_message(), sweep.algo_where);
    }
    CollectiveRow row;
    row.bytes = bytes.count();
    row.count = bytes.count() / size_of(sweep.type) / (per_rank_count(sweep.op) ? c.ranks() : 1);
    row.type = nccl_tests_type_name(sweep.type);
    row.redop = reduces(sweep.op) ? "sum" : "none";
    row.algorithm = to_string(p.algo);
    row.protocol = nccl::to_string(p.proto);
    row.channels = p.channels;
    row.time =
        sweep.engine == "analytical"
            ? p.time
            : run_nccl_engine(nccl_engine_run(c, p, sweep.op, bytes, sweep.type, *topology),
                              *topology, sweep.engine, sweep.packet ? &*sweep.packet : nullptr);
    const double seconds = row.time.seconds();
    row.algbw_GBps = seconds > 0 ? bytes.as_double() / seconds / 1e9 : 0;
    row.busbw_GBps = row.algbw_GBps * busbw_factor(sweep.op, c.ranks());
    rows.push_back(row);
  }
  return rows;
}

std::string format_collective_rows(const std::vector<CollectiveRow>& rows,
                                   const std::string& format) {
  std::string out;
  if (format == "csv") {
    out.append("bytes,count,type,algorithm,protocol,time_us,algbw_GBps,busbw_GBps\n");
    for (const auto& r : rows)
      out +=
          fmt::format("{},{},{},{},{},{:.2f},{:.2f},{:.2f}\n", r.bytes, r.count, r.type,
                      r.algorithm, r.protocol, r.time.microseconds(), r.algbw_GBps, r.busbw_GBps);
  } else if (format == "json") {
    out.push_back('[');
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const auto& r = rows[i];
      out += fmt::format(
          "{}\n  {{\"bytes\": {}, \"count\": {}, \"type\": \"{}\", \"redop\": \"{}\", "
          "\"algorithm\": \"{}\", \"protocol\": \"{}\", \"channels\": {}, \"time_us\": {:.3f}, "
          "\"algbw_GBps\": {:.3f}, \"busbw_GBps\": {:.3f}}}",
          i == 0 ? "" : ",", r.bytes, r.count, r.type, r.redop, r.algorithm, r.protocol, r.channels,
          r.time.microseconds(), r.algbw_GBps, r.busbw_GBps);
    }
    out += rows.empty() ? "]\n" : "\n]\n";
  } else if (format == "table") {
    out += fmt::format("#{:>13} {:>13} {:>8} {:>6} {:>16} {:>8} {:>4} {:>12} {:>11} {:>11}\n",
                       "size(B)", "count", "type", "redop", "algorithm", "protocol", "ch",
                       "time(us)", "algbw(GB/s)", "busbw(GB/s)");
    for (const auto& r : rows)
      out += fmt::format(
          " {:>13} {:>13} {:>8} {:>6} {:>16} {:>8} {:>4} {:>12.2f} {:>11.2f} "
          "{:>11.2f}\n",
          r.bytes, r.count, r.type, r.redop, r.algorithm, r.protocol, r.channels,
          r.time.microseconds(), r.algbw_GBps, r.busbw_GBps);
  } else {
    throw InputError("format",
                     fmt::format("unknown format '{}' (expected table, csv or json)", format));
  }
  return out;
}

}  // namespace lockstep
