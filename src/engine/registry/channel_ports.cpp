// Channel ports (channel_ports.hpp): the cluster copied with one virtual link per (GPU, channel)
// and a router that puts a sender's port in front of every path.
#include "lockstep/engine/channel_ports.hpp"

#include <vector>

#include "lockstep/core/error.hpp"

namespace lockstep {
namespace {

class ChannelPortRouter final : public Router {
 public:
  ChannelPortRouter(const Topology& topo, LinkId first_port, std::uint32_t channels)
      : inner_(make_router(topo, RouterOptions{})),
        first_port_(first_port),
        channels_(channels),
        gpu_index_(topo.num_devices(), kNone) {
    const auto gpus = topo.gpus();
    for (std::uint32_t i = 0; i < gpus.size(); ++i) gpu_index_[gpus[i]] = i;
  }

  void route(const FlowKey& key, const LinkLoadView* load,
             std::vector<PathShare>& out) const override {
    inner_->route(key, load, out);
    if (key.src >= gpu_index_.size() || gpu_index_[key.src] == kNone) return;
    const std::uint64_t port =
        first_port_ + std::uint64_t{gpu_index_[key.src]} * channels_ + key.label % channels_;
    // Direction 0 runs from a link's `a` end, the GPU.
    const auto out_of_gpu = static_cast<DirLinkId>(2 * port);
    for (PathShare& share : out) share.hops.insert(share.hops.begin(), out_of_gpu);
  }
  RoutingPolicy policy() const override { return inner_->policy(); }

 private:
  std::unique_ptr<Router> inner_;
  LinkId first_port_;
  std::uint32_t channels_;
  std::vector<std::uint32_t> gpu_index_;  // device id -> rank order, kNone for other devices
};

}  // namespace

ChannelPorts::ChannelPorts(const Topology& cluster, std::uint32_t channels, Bandwidth port) {
  if (channels == 0) throw InputError("channels", "must be at least 1");
  if (!(port.bytes_per_second() > 0)) throw InputError("channel_bandwidth", "must be positive");
  const auto gpus = cluster.gpus();
  TopologyBuilder b(cluster.name());
  b.set_traits(cluster.traits());
  b.reserve(cluster.num_devices() + gpus.size(),
            cluster.num_links() + gpus.size() * std::size_t{channels});
  for (const Device& d : cluster.devices()) b.add_device(d);
  for (const Link& l : cluster.links()) b.add_link(l);
  const auto first_port = static_cast<LinkId>(cluster.num_links());
  for (const DeviceId gpu : gpus) {
    // The port's far end: a host-like leaf on the GPU's node that no path can cross.
    Device end;
    end.kind = DeviceKind::Host;
    end.node = cluster.device(gpu).node;
    end.site = cluster.device(gpu).site;
    const DeviceId far = b.add_device(end);
    for (std::uint32_t c = 0; c < channels; ++c) {
      Link l;
      l.a = gpu;
      l.b = far;
      l.bandwidth = port;
      l.latency = Time::zero();
      l.medium = LinkMedium::Pcie;
      b.add_link(l);
    }
  }
  topology_ = std::move(b).build();
  router_ = std::make_unique<ChannelPortRouter>(topology_, first_port, channels);
}

}  // namespace lockstep
