#pragma once
// Channel ports: a speed limit per NCCL channel for flow runs (docs/nccl-model.md "Flow runs").
//
// NCCL runs each channel as one thread block that moves data at the channel's speed, the bus
// bandwidth divided by the channels; a channel waiting out its step latency leaves its share of
// the link unused rather than handing it to the other channels. Max-min sharing alone would
// give the waiting channel's share to the others. This adds a limit as topology (the sweep now
// uses the flow engine's EngineOptions::channel_send_bandwidth instead, which gives the same
// times without copying the graph; this stays as the reference the ring agreement tests check
// the idea against): every GPU gets one private virtual link per channel
// (to a virtual endpoint, so no path runs through it), and a router that starts every path the
// GPU sends on channel c with its port c. A port carries one channel of one GPU, so it limits
// exactly that channel's sends and shares nothing with anyone.
//
//   ChannelPorts ports(topo, channels, Bandwidth::gBps(24) / transfer_efficiency);
//   input.topology = &ports.topology();  input.router = &ports.router();
#include <cstdint>
#include <memory>

#include "lockstep/core/units.hpp"
#include "lockstep/routing/router.hpp"
#include "lockstep/topology/graph.hpp"

namespace lockstep {

class ChannelPorts {
 public:
  /// `port` is the wire rate of one port (what the engine's links carry: payload speed divided
  /// by the run's transfer efficiency). `channels` >= 1.
  ChannelPorts(const Topology& cluster, std::uint32_t channels, Bandwidth port);
  ChannelPorts(const ChannelPorts&) = delete;  // the router refers to topology_
  ChannelPorts& operator=(const ChannelPorts&) = delete;

  /// The cluster with the ports added: same devices and links first (same ids, same GPU order),
  /// then one virtual endpoint per GPU and `channels` ports from the GPU to it.
  const Topology& topology() const { return topology_; }
  /// Shortest paths (ECMP) over the cluster, each prefixed by the sender's channel port.
  const Router& router() const { return *router_; }

 private:
  Topology topology_;
  std::unique_ptr<Router> router_;
};

}  // namespace lockstep
