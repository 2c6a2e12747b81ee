// Shortest-path routing with per-flow ECMP hashing and the other policies of policy.hpp. Equal
// cost means equal hop count. At each device the router lists the equal-cost next hops (ports
// leading one hop closer to the destination, in port order) and picks one:
//   ecmp / rail_aligned: hash of (src, dst, label, seed) mixed with the device id, as switches
//     hash a flow's header with a per-switch seed; the same flow always takes the same path and
//     two flows can collide on one uplink; a GPU forwarding to GPUs (torus) takes dimension order;
//   adaptive: the least-loaded next hop according to the LinkLoadView (ties and no view: hash);
//   dimension_order: the first next hop in port order (builders add torus links dimension by
//     dimension, so this corrects dimension x before y before z);
//   spray: every next hop, the flow split evenly at each device (capped at max_spray_paths);
//   d_mod_k: at a switch, the destination's index digit by digit (InfiniBand's fat-tree routing,
//     below); elsewhere as ecmp.
// A NIC with several fabric ports (dual-ToR) sends queue pair i out of port i mod ports
// (queue affinity, pick()).
// rail_aligned sends traffic that leaves a node through the NIC of the source GPU's rail.
// A GPU cut off from the network by a failed link goes through a GPU of its node and that GPU's
// NIC (nic_failover.hpp): the route is then three legs, each chosen as above. With PXN
// (make_pxn_router) a GPU sending to another node's GPU of another local index goes through
// the GPU of its node with that index and its NIC (pxn_relays.hpp), legs chosen the same way.
#include "lockstep/routing/router.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <memory>
#include <unordered_map>

#include "distance_field.hpp"
#include "lockstep/core/error.hpp"
#include "lockstep/core/rng.hpp"
#include "lockstep/routing/gpu_transit.hpp"
#include "lockstep/routing/pxn.hpp"
#include "nic_failover.hpp"
#include "pxn_relays.hpp"
#include "reference_router.hpp"

namespace lockstep {
namespace {

using routing_detail::DistanceField;
using routing_detail::nic_in_service;
using routing_detail::NicFailover;
using routing_detail::PxnRelays;

// What a ShortestPathRouter may route through; each make_* function below is one choice.
struct Through {
  bool gateways = true;     // gateway shortcuts (make_router_without_gateways: no)
  bool pxn = false;         // NCCL's PXN relays between nodes (make_pxn_router)
  bool gpu_transit = true;  // a GPU forwards between GPUs (NCCL_NVB_DISABLE=1: no)
};

class ShortestPathRouter final : public Router {
 public:
  ShortestPathRouter(const Topology& topo, const RouterOptions& options, const Through& through)
      : topo_(topo),
        options_(options),
        max_fields_(std::clamp<std::size_t>(
            kFieldBytes / (17 * std::max<std::size_t>(1, topo.num_devices())), 1, 64)),
        failover_(topo),
        pxn_(through.pxn ? std::make_unique<PxnRelays>(topo) : nullptr),
        through_(through) {
    if (options.policy == RoutingPolicy::RailAligned) index_rail_nics();
    if (options.policy == RoutingPolicy::DestinationModK) index_destinations();
  }

  RoutingPolicy policy() const override { return options_.policy; }

  void route(const FlowKey& key, const LinkLoadView* load,
             std::vector<PathShare>& out) const override {
    out.clear();
    check_endpoint(key.src, "source");
    check_endpoint(key.dst, "destination");
    if (key.src == key.dst) {
      out.push_back(PathShare{{}, 1.0});
      return;
    }
    if (options_.policy == RoutingPolicy::Spray) {
      spray(key, out);
      return;
    }
    const std::uint32_t qps = options_.queue_pairs;
    for (std::uint32_t q = 0; q < qps; ++q) {
      PathShare share;
      share.fraction = 1.0 / qps;
      const FlowKey sub{key.src, key.dst, key.label * qps + q};
      single_path(sub, load, share.hops);
      out.push_back(std::move(share));
    }
  }

 private:
  void check_endpoint(DeviceId d, const char* what) const {
    if (d >= topo_.num_devices()) {
      throw InputError("route", fmt::format("{} device {} does not exist (topology has {})", what,
                                            d, topo_.num_devices()));
    }
  }

  [[noreturn]] void no_path(DeviceId src, DeviceId dst) const {
    throw InputError("route", fmt::format("no path from device {} to device {}", src, dst));
  }

  std::uint64_t flow_hash(const FlowKey& key) const {
    const std::uint64_t ends = (static_cast<std::uint64_t>(key.src) << 32) | key.dst;
    return mix64(mix64(ends ^ options_.hash_seed) ^ (key.label * 0x9E3779B97F4A7C15ULL));
  }

  /// Equal-cost next hops of u towards the field's destination, in port order. Among next hops
  /// of equal hop count only the widest links count (NVLink is preferred to an equally short
  /// PCIe detour; uplinks of one switch are usually equal anyway), and of those the ones whose
  /// shortest paths onwards have the least latency (a dragonfly's minimal routes cross one global
  /// link, not two equally few but longer ones: docs/routing.md).
  void next_hops(DeviceId u, bool u_is_start, std::vector<Port>& out) const {
    out.clear();
    double widest = 0;
    std::int64_t least = 0;
    for (const Port& p : topo_.ports(u)) {
      if (!field_->may_step(u, p.peer, u_is_start)) continue;
      const Link& link = topo_.link(Topology::link_of(p.out));
      const double bw = link.bandwidth.bytes_per_second();
      const std::int64_t latency = link.latency.picoseconds() + field_->latency(p.peer);
      if (bw < widest || (bw == widest && latency > least)) continue;
      if (bw > widest || latency < least) out.clear(), widest = bw;
      least = latency;
      out.push_back(p);
    }
  }

  /// Appends the hops from `from` to `dst` chosen by the per-flow policy. `start`: `from` sends
  /// the data itself (a GPU then may hand it to a NIC), rather than relaying it.
  void walk(DeviceId from, DeviceId dst, bool start, const FlowKey& key, const LinkLoadView* load,
            std::vector<DirLinkId>& hops) const {
    if (from == dst) return;
    const std::uint64_t h = flow_hash(key);
    if (!dest_index_.empty()) mod_k_ = ModK{dest_index_[dst], 1, {}};
    // Beyond its gateway (DistanceField::find_gateway: a GPU's leaf switch) a destination is
    // reached exactly as the gateway is, so the search towards the gateway, shared by every
    // destination behind it, routes the way there, and a search of a few hops around the
    // destination the rest: the same hops, choices and hashes as one search towards dst, which
    // in a 288,000-device fabric visits most of it for every far destination.
    // The source's own gateway s, when it has one (it sends, or is no GPU) and dst lies beyond
    // it, cuts the search towards dst's gateway short too: it stops at s's layer instead of
    // descending to every NIC and GPU of the fabric, and a search of a few hops from s finds the
    // way up from the source.
    if (through_.gateways) {
      const DistanceField::Gateway g = gateway(dst);
      const DistanceField::Gateway s = start || topo_.device(from).kind != DeviceKind::Gpu
                                           ? gateway(from)
                                           : DistanceField::Gateway{};
      if (g.device != kNone && !near_->within(dst, from, g.depth)) {
        DeviceId leg = from;
        if (s.device != kNone && s.device != g.device && !near_->within(dst, s.device, g.depth) &&
            !near_from_->within(from, dst, s.depth)) {
          if (!up_->reach(s.device, from)) no_path(key.src, key.dst);
          steps(*up_, from, s.device, start, h, key, load, hops);
          leg = s.device;
        }
        DistanceField& towards = use_field(gate_fields_, g.device);
        if (!towards.reach(g.device, leg)) no_path(key.src, key.dst);
        steps(towards, leg, g.device, start && leg == from, h, key, load, hops);
        steps(*near_, g.device, dst, false, h, key, load, hops);
        return;
      }
    }
    DistanceField& towards = use_field(fields_, dst);
    if (!towards.reach(dst, from)) no_path(key.src, key.dst);
    steps(towards, from, dst, start, h, key, load, hops);
  }

  // The hops from `from` to `to` over `field` (towards `to`, exact that far).
  void steps(DistanceField& field, DeviceId from, DeviceId to, bool start, std::uint64_t h,
             const FlowKey& key, const LinkLoadView* load, std::vector<DirLinkId>& hops) const {
    field_ = &field;
    DeviceId u = from;
    while (u != to) {
      next_hops(u, start, candidates_);
      if (candidates_.empty()) no_path(key.src, key.dst);  // unreachable by construction
      const Port& p = pick(u, h, key.label, load);
      hops.push_back(p.out);
      u = p.peer;
      start = false;
    }
  }

  // dst's gateway, found once (a search of at most 4 hops and 4,096 devices around it).
  DistanceField::Gateway gateway(DeviceId dst) const {
    if (gates_.empty()) {
      gates_.assign(topo_.num_devices(), DistanceField::Gateway{kUnknown, 0});
      near_ = std::make_unique<DistanceField>(topo_, layout());
      near_from_ = std::make_unique<DistanceField>(topo_, layout());
      up_ = std::make_unique<DistanceField>(topo_, layout());
    }
    if (gates_[dst].device == kUnknown) gates_[dst] = near_->find_gateway(dst, 4, 4096);
    return gates_[dst];
  }

  // Hashing a flow over equal next hops is what switches do. A GPU choosing among GPUs is a chip
  // forwarding in a direct network (torus, mesh), whose router corrects one dimension after the
  // other (dimension-order routing: Dally and Towles, Principles and Practices of
  // Interconnection Networks, 2004, 14.2; Cray T3E, Blue Gene/L's deterministic mode): ecmp
  // takes the first next hop there, as dimension_order does. (With hashing, a ring in rank order
  // on a 4x4x4 torus ran at half its links' rate: two flows on one cable.)
  bool chip_forwarding(DeviceId u) const {
    if (topo_.device(u).kind != DeviceKind::Gpu) return false;
    for (const Port& p : candidates_)
      if (topo_.device(p.peer).kind != DeviceKind::Gpu) return false;
    return true;
  }

  // u is a NIC whose equal next hops are all switches (its fabric ports).
  bool nic_ports_to_fabric(DeviceId u) const {
    if (topo_.device(u).kind != DeviceKind::Nic) return false;
    for (const Port& p : candidates_)
      if (topo_.device(p.peer).kind != DeviceKind::Switch) return false;
    return true;
  }

  const Port& pick(DeviceId u, std::uint64_t h, std::uint64_t qp, const LinkLoadView* load) const {
    const auto n = candidates_.size();
    if (n == 1 || options_.policy == RoutingPolicy::DimensionOrder) return candidates_[0];
    // A NIC with several ports into the fabric (dual-ToR, Alibaba HPN) sends each queue pair out
    // of one port, round robin in the order NCCL opens them (channel by channel, then the
    // connection's QPs: the flow label): the mlx5 driver's RoCE LAG default, queue affinity
    // (Linux mlx5 devlink docs, lag_port_select_mode), not a hash. Adaptive routing is the
    // switches' (the NIC does not move a QP by load); a failed port leaves one candidate.
    if (nic_ports_to_fabric(u)) return candidates_[qp % n];
    if (!dest_index_.empty() && topo_.device(u).kind == DeviceKind::Switch) return mod_k_pick(u);
    if (options_.policy != RoutingPolicy::Adaptive && chip_forwarding(u)) return candidates_[0];
    const std::size_t hashed = mix64(h ^ u) % n;
    if (options_.policy != RoutingPolicy::Adaptive || load == nullptr) return candidates_[hashed];
    // Least loaded; ties broken by scanning from the hashed position so equal links still spread.
    std::size_t best = hashed;
    double best_load = load->load(candidates_[hashed].out);
    for (std::size_t i = 1; i < n; ++i) {
      const std::size_t j = (hashed + i) % n;
      const double l = load->load(candidates_[j].out);
      if (l < best_load) best = j, best_load = l;
    }
    return candidates_[best];
  }

  // D-mod-K (Zahavi et al., "Optimized InfiniBand fat-tree routing for shift all-to-all
  // communication patterns", 2010; OpenSM's ftree engine): a switch sends a destination up the
  // port given by the next digit of its index D (leaves in order, then the leaf's host ports),
  // D mod w1 at the leaf, (D / w1) mod w2 a tier up, and so on. Destinations under one leaf then
  // leave every leaf by distinct uplinks, so a shift permutation has no two flows on one link.
  // A switch's equal next hops are grouped by peer switch: the peer takes one digit, the
  // parallel cables to it another, and coming down, the cables from tier t + 1 to tier t take
  // the digit the cables from tier t up took (those cables are, in a fat tree with bundled
  // links, copies of one logical link: the flows to the destinations a leaf uplink serves
  // descend on the matching downlink, one each).
  struct ModK {
    std::uint64_t dest = 0;
    std::uint64_t stride = 1;
    std::array<std::uint64_t, 8> cable_stride{};  // per tier, that of the cables going up; 0: none
  };
  const Port& mod_k_pick(DeviceId u) const {
    const std::uint8_t tier = topo_.device(u).tier;
    const DeviceId first_peer = candidates_[0].peer;
    const Device& peer = topo_.device(first_peer);
    const bool up = peer.kind == DeviceKind::Switch && peer.tier > tier;
    // Peers in the order of their first port; the chosen peer's cables in port order.
    peers_.clear();
    for (const Port& p : candidates_)
      if (std::find(peers_.begin(), peers_.end(), p.peer) == peers_.end()) peers_.push_back(p.peer);
    const std::uint64_t np = peers_.size();
    const DeviceId chosen = peers_[(mod_k_.dest / mod_k_.stride) % np];
    mod_k_.stride *= np;
    cables_.clear();
    for (std::size_t i = 0; i < candidates_.size(); ++i)
      if (candidates_[i].peer == chosen) cables_.push_back(i);
    const std::uint64_t nc = cables_.size();
    if (nc == 1) return candidates_[cables_[0]];
    std::uint64_t stride = mod_k_.stride;
    const std::uint8_t below = tier > 0 ? tier - 1 : 0;
    if (!up && tier > 0 && below < mod_k_.cable_stride.size() && mod_k_.cable_stride[below] != 0) {
      stride = mod_k_.cable_stride[below];
    } else {
      if (up && tier < mod_k_.cable_stride.size()) mod_k_.cable_stride[tier] = stride;
      mod_k_.stride *= nc;
    }
    return candidates_[cables_[(mod_k_.dest / stride) % nc]];
  }

  // D per device: leaves (tier-0 switches) in device order, each as wide as the widest; a
  // device on a leaf its port's position among the leaf's ports to non-switches; a GPU its NIC's;
  // anything else its device id.
  void index_destinations() {
    const std::size_t n = topo_.num_devices();
    auto is_host = [&](DeviceId d) {
      const DeviceKind k = topo_.device(d).kind;
      return k != DeviceKind::Switch && k != DeviceKind::Gateway;
    };
    auto is_leaf = [&](DeviceId d) {
      return topo_.device(d).kind == DeviceKind::Switch && topo_.device(d).tier == 0;
    };
    std::uint64_t width = 1;
    for (DeviceId d = 0; d < n; ++d) {
      if (!is_leaf(d)) continue;
      std::uint64_t hosts = 0;
      for (const Port& p : topo_.ports(d)) hosts += is_host(p.peer) ? 1 : 0;
      width = std::max(width, hosts);
    }
    constexpr std::uint64_t kUnset = ~std::uint64_t{0};
    dest_index_.assign(n, kUnset);
    std::uint64_t leaf = 0;
    for (DeviceId d = 0; d < n; ++d) {
      if (!is_leaf(d)) continue;
      std::uint64_t k = 0;
      for (const Port& p : topo_.ports(d))
        if (is_host(p.peer) && dest_index_[p.peer] == kUnset)
          dest_index_[p.peer] = leaf * width + k++;
      ++leaf;
    }
    for (const DeviceId g : topo_.gpus())
      for (const Port& p : topo_.ports(g))
        if (dest_index_[g] == kUnset && topo_.device(p.peer).kind == DeviceKind::Nic &&
            dest_index_[p.peer] != kUnset)
          dest_index_[g] = dest_index_[p.peer];
    for (DeviceId d = 0; d < n; ++d)
      if (dest_index_[d] == kUnset) dest_index_[d] = d;
  }

  void single_path(const FlowKey& key, const LinkLoadView* load,
                   std::vector<DirLinkId>& hops) const {
    const Relays r = relays(key);
    walk(key.src, r.from, true, key, load, hops);  // NVLink to the sending relay, if any
    DeviceId from = r.from;
    if (options_.policy == RoutingPolicy::RailAligned) {
      const DeviceId nic = rail_nic(r.from, r.to);
      if (nic != kNone) {
        walk(r.from, nic, true, key, load, hops);
        from = nic;
      }
    }
    walk(from, r.to, from == r.from, key, load, hops);
    walk(r.to, key.dst, true, key, load, hops);  // NVLink from the receiving relay, if any
  }

  // The GPUs whose NICs a transfer between nodes leaves and enters by: the endpoints themselves
  // unless, with PXN, the sender relays, or their own NICs are cut off (NIC failover).
  struct Relays {
    DeviceId from, to;
  };
  Relays relays(const FlowKey& key) const {
    Relays r{key.src, key.dst};
    const Device& s = topo_.device(key.src);
    const Device& d = topo_.device(key.dst);
    if (s.node == d.node && s.node != kNone) return r;  // inside a node: NVLink only
    // PXN picks the NIC on the receiver's rail whatever the sender's own NIC does; a sender cut
    // off from its own NIC fails over when PXN has no relay for it (same rail, PXN off).
    const DeviceId pxn = pxn_ ? pxn_->relay(key.src, key.dst) : kNone;
    if (pxn != kNone) {
      r.from = pxn;
    } else if (const DeviceId p = failover_.relay(key.src); p != kNone) {
      r.from = p;
    }
    if (const DeviceId q = failover_.relay(key.dst); q != kNone) r.to = q;
    return r;
  }

  // Spray: depth-first over the equal-cost DAG; at each device the remaining path budget and the
  // flow are split evenly over the next hops (over a hashed subset when the budget is smaller).
  // With relays (NIC failover) the legs are sprayed one by one and their paths combined, the
  // network leg within what the NVLink legs leave of the path budget.
  void spray(const FlowKey& key, std::vector<PathShare>& out) const {
    const Relays r = relays(key);
    if (r.from == key.src && r.to == key.dst) {
      spray_leg(key.src, key.dst, options_.max_spray_paths, key, out);
      return;
    }
    std::vector<PathShare> first, last, middle;
    spray_leg(key.src, r.from, options_.max_spray_paths, key, first);
    spray_leg(r.to, key.dst, options_.max_spray_paths, key, last);
    const auto outer = static_cast<std::uint32_t>(first.size() * last.size());
    spray_leg(r.from, r.to, std::max(1u, options_.max_spray_paths / std::max(1u, outer)), key,
              middle);
    for (const PathShare& a : first)
      for (const PathShare& m : middle)
        for (const PathShare& b : last) {
          PathShare p{a.hops, a.fraction * m.fraction * b.fraction};
          p.hops.insert(p.hops.end(), m.hops.begin(), m.hops.end());
          p.hops.insert(p.hops.end(), b.hops.begin(), b.hops.end());
          out.push_back(std::move(p));
        }
  }

  // A leg of a sprayed route: the field it follows and the device it ends at.
  struct SprayLeg {
    DistanceField* field;
    DeviceId to;
  };

  // As walk: beyond the destination's gateway (and before the source's own) the search towards
  // that gateway gives the same next hops as one towards `to`, so the sprayed routes follow up to
  // three fields, the gateway's shared by every destination behind it (in a permutation every
  // flow has its own destination, and its search covered most of the fabric).
  void spray_leg(DeviceId from, DeviceId to, std::uint32_t budget, const FlowKey& key,
                 std::vector<PathShare>& out) const {
    if (from == to) {
      out.push_back(PathShare{{}, 1.0});
      return;
    }
    std::vector<DirLinkId> prefix;
    SprayLeg legs[3];
    std::size_t n = 0;
    if (through_.gateways) {
      const DistanceField::Gateway g = gateway(to);
      const DistanceField::Gateway s = gateway(from);
      if (g.device != kNone && !near_->within(to, from, g.depth)) {
        DeviceId leg = from;
        if (s.device != kNone && s.device != g.device && !near_->within(to, s.device, g.depth) &&
            !near_from_->within(from, to, s.depth)) {
          if (!up_->reach(s.device, from)) no_path(key.src, key.dst);
          legs[n++] = SprayLeg{up_.get(), s.device};
          leg = s.device;
        }
        DistanceField& towards = use_field(gate_fields_, g.device);
        if (!towards.reach(g.device, leg)) no_path(key.src, key.dst);
        legs[n++] = SprayLeg{&towards, g.device};
        legs[n++] = SprayLeg{near_.get(), to};
      }
    }
    if (n == 0) {
      DistanceField& towards = use_field(fields_, to);
      if (!towards.reach(to, from)) no_path(key.src, key.dst);
      legs[n++] = SprayLeg{&towards, to};
    }
    spray_from(from, legs, legs + n - 1, true, 1.0, budget, flow_hash(key), key, prefix, out);
  }

  void spray_from(DeviceId u, const SprayLeg* leg, const SprayLeg* last, bool start,
                  double fraction, std::uint32_t budget, std::uint64_t h, const FlowKey& key,
                  std::vector<DirLinkId>& prefix, std::vector<PathShare>& out) const {
    while (u == leg->to && leg != last) ++leg;  // at a gateway: on along the next field
    if (u == last->to) {
      out.push_back(PathShare{prefix, fraction});
      return;
    }
    field_ = leg->field;
    std::vector<Port> hops;
    next_hops(u, start, hops);
    if (hops.empty()) no_path(key.src, key.dst);
    const std::uint32_t n = static_cast<std::uint32_t>(hops.size());
    const std::uint32_t branches = std::min(n, budget);
    const std::size_t first = branches < n ? mix64(h ^ u) % n : 0;
    for (std::uint32_t i = 0; i < branches; ++i) {
      const Port& p = hops[(first + i) % n];
      const std::uint32_t sub_budget = budget / branches + (i < budget % branches ? 1 : 0);
      prefix.push_back(p.out);
      spray_from(p.peer, leg, last, false, fraction / branches, sub_budget, h, key, prefix, out);
      prefix.pop_back();
    }
  }

  // Rail alignment: the NIC with the GPU's node and local index (its rail), else a NIC attached
  // to the GPU; NICs cut off from the network do not count. Only for GPUs sending off their node.
  void index_rail_nics() {
    std::unordered_map<std::uint64_t, DeviceId> by_rail;
    for (DeviceId d = 0; d < topo_.num_devices(); ++d) {
      const Device& dev = topo_.device(d);
      if (dev.kind != DeviceKind::Nic || dev.node == kNone) continue;
      by_rail.emplace((static_cast<std::uint64_t>(dev.node) << 32) | dev.local_index, d);
    }
    rail_nic_.assign(topo_.num_devices(), kNone);
    for (DeviceId g : topo_.gpus()) {
      const Device& gpu = topo_.device(g);
      for (const Port& p : topo_.ports(g))
        if (topo_.device(p.peer).kind == DeviceKind::Nic && nic_in_service(topo_, p.peer)) {
          rail_nic_[g] = p.peer;
          break;
        }
      if (gpu.node == kNone) continue;
      const auto it = by_rail.find((static_cast<std::uint64_t>(gpu.node) << 32) | gpu.local_index);
      if (it != by_rail.end() && nic_in_service(topo_, it->second)) rail_nic_[g] = it->second;
    }
  }

  DeviceId rail_nic(DeviceId src, DeviceId dst) const {
    if (rail_nic_.empty() || rail_nic_[src] == kNone) return kNone;
    const Device& s = topo_.device(src);
    const Device& d = topo_.device(dst);
    if (s.node != kNone && s.node == d.node) return kNone;  // stays inside the node
    if (rail_nic_[src] == dst) return kNone;
    return rail_nic_[src];
  }

  // The distance field towards dst, made the current one (field_). Routes come in runs that
  // cycle through a few destinations (a class of GPUs, each to its own peer, channel after
  // channel), so the last max_fields_ fields are kept: up to 64, within 4 MB at 17 bytes per
  // device each, so that they stay in cache (a 131,072-GPU fabric keeps one: its classes cycle
  // through a thousand destinations, and 25 cold fields made the run 10% slower). With one field,
  // 99% of a 512-GPU NVLS tree's route queries restarted a search (a fifth of its instructions);
  // with 16, a third did; with 64 the searches cost a fifth of that.
  // Gateways' fields are cached apart (at least two: destinations behind a few gateways
  // alternate), so that the small searches around destinations do not evict them.
  struct Cached;
  DistanceField& use_field(std::vector<Cached>& fields, DeviceId dst) const {
    const std::size_t most =
        &fields == &gate_fields_ ? std::max<std::size_t>(2, max_fields_) : max_fields_;
    Cached* pick = nullptr;
    for (Cached& c : fields)
      if (c.dst == dst) pick = &c;
    if (pick == nullptr && fields.size() < most) {
      fields.push_back(Cached{std::make_unique<DistanceField>(topo_, layout()), dst, 0});
      pick = &fields.back();
    } else if (pick == nullptr) {  // the least recently used one
      pick = &*std::min_element(fields.begin(), fields.end(),
                                [](const Cached& a, const Cached& b) { return a.used < b.used; });
      pick->dst = dst;
    }
    pick->used = ++uses_;
    field_ = pick->field.get();
    return *field_;
  }

  // The fields' view of the topology, made once for all of them.
  std::shared_ptr<const DistanceField::Layout> layout() const {
    if (!layout_)
      layout_ = std::make_shared<const DistanceField::Layout>(topo_, through_.gpu_transit);
    return layout_;
  }

  const Topology& topo_;
  RouterOptions options_;
  std::vector<DeviceId> rail_nic_;
  mutable std::shared_ptr<const DistanceField::Layout> layout_;
  static constexpr std::size_t kFieldBytes = std::size_t{4} << 20;
  std::size_t max_fields_;
  NicFailover failover_;
  std::unique_ptr<PxnRelays> pxn_;  // make_pxn_router's
  struct Cached {
    std::unique_ptr<DistanceField> field;
    DeviceId dst;
    std::uint64_t used;
  };
  mutable std::vector<Cached> fields_;
  mutable std::vector<Cached> gate_fields_;
  Through through_;
  static constexpr DeviceId kUnknown = kNone - 1;
  mutable std::vector<DistanceField::Gateway> gates_;  // per device, kUnknown until found
  mutable std::unique_ptr<DistanceField> near_;        // around the last destination
  mutable std::unique_ptr<DistanceField> near_from_;   // around the last source
  mutable std::unique_ptr<DistanceField> up_;          // towards the last source's gateway
  mutable std::uint64_t uses_ = 0;
  mutable DistanceField* field_ = nullptr;
  mutable std::vector<Port> candidates_;
  std::vector<std::uint64_t> dest_index_;  // d_mod_k only
  mutable ModK mod_k_;
  mutable std::vector<DeviceId> peers_;
  mutable std::vector<std::size_t> cables_;
};

}  // namespace

RouterOptions fabric_routing(const Topology& topo) {
  const ClusterTraits& t = topo.traits();
  RouterOptions options;
  options.queue_pairs = std::max<std::uint32_t>(1, t.qps_per_connection);
  if (!t.routing.empty()) {
    options.policy = parse_routing_policy(t.routing, "routing");
  } else if (t.fabric == "infiniband") {
    options.policy = RoutingPolicy::DestinationModK;
  }
  // EFA (SRD), Ultra Ethernet and Slingshot spray packets over many paths, but spray is not their
  // default here: splitting every flow over all paths multiplies the flow engine's work (a 256-GPU
  // p5 alltoall: 71 s and 3.9 GB instead of 3.5 s). They keep ECMP over queue pairs; `--routing
  // spray` models the spraying where it matters (docs/routing.md "By technology").
  return options;
}

namespace {
void check_options(const RouterOptions& options) {
  if (options.queue_pairs == 0) throw InputError("routing.queue_pairs", "must be at least 1");
  if (options.max_spray_paths == 0)
    throw InputError("routing.max_spray_paths", "must be at least 1");
}
}  // namespace

std::unique_ptr<Router> make_router(const Topology& topo, const RouterOptions& options) {
  check_options(options);
  return std::make_unique<ShortestPathRouter>(topo, options, Through{});
}

std::unique_ptr<Router> make_pxn_router(const Topology& topo, const RouterOptions& options,
                                        bool gpu_transit) {
  check_options(options);
  return std::make_unique<ShortestPathRouter>(topo, options,
                                              Through{.pxn = true, .gpu_transit = gpu_transit});
}

std::unique_ptr<Router> make_router_without_gpu_transit(const Topology& topo,
                                                        const RouterOptions& options) {
  check_options(options);
  return std::make_unique<ShortestPathRouter>(topo, options, Through{.gpu_transit = false});
}

namespace routing_detail {
std::unique_ptr<Router> make_router_without_gateways(const Topology& topo,
                                                     const RouterOptions& options) {
  return std::make_unique<ShortestPathRouter>(topo, options, Through{.gateways = false});
}
}  // namespace routing_detail

}  // namespace lockstep
