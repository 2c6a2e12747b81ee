// torus: a 1-, 2- or 3-dimensional wraparound torus of GPUs wired directly to their neighbours
// (TPU-pod style; no switches). A dimension of size >= 3 wraps around (ring); of size 2 it has a
// single link between the two positions (a wraparound would duplicate it); of size 1 none.
// Links: sum over dimensions of N (size >= 3) or N / 2 (size 2). Diameter: sum of floor(d / 2)
// hops. Bisection: the cheapest cut across one dimension: 2 x N / d links when it wraps (the ring
// is cut twice), N / d when d = 2.
#include <fmt/format.h>

#include <charconv>

#include "common.hpp"
#include "registrars.hpp"

namespace lockstep::builders {
namespace {

std::vector<std::uint32_t> read_dims(const ArgNode& args) {
  const ArgNode& node = args.at("dims");
  std::vector<std::uint32_t> dims;
  if (node.kind() == ArgNode::Kind::List) {
    for (const ArgNode& item : node.items())
      dims.push_back(static_cast<std::uint32_t>(item.as_int(1, 1'000'000)));
  } else if (node.kind() == ArgNode::Kind::Scalar) {
    const std::string& text = node.text();
    std::size_t start = 0;
    while (start <= text.size()) {
      const std::size_t x = std::min(text.find('x', start), text.size());
      std::uint64_t v = 0;
      const auto [ptr, ec] = std::from_chars(text.data() + start, text.data() + x, v);
      if (ec != std::errc() || ptr != text.data() + x || v < 1 || v > 1'000'000) {
        node.fail(fmt::format("expected sizes like 4x4x4, got '{}'", text));
      }
      dims.push_back(static_cast<std::uint32_t>(v));
      start = x + 1;
    }
  } else {
    node.fail("expected sizes like 4x4x4 or a list");
  }
  if (dims.empty() || dims.size() > 3) node.fail("a torus has 1, 2 or 3 dimensions");
  std::uint64_t n = 1;
  for (auto d : dims) n *= d;
  if (n > 16'000'000) node.fail(fmt::format("{} nodes is absurdly large (at most 16,000,000)", n));
  if (n < 2) node.fail("a torus needs at least 2 nodes");
  return dims;
}

BuildResult build(const ArgNode& args, const BuildOptions& options) {
  const std::vector<std::uint32_t> dims = read_dims(args);
  const GpuSpec* gpu = nullptr;
  try {
    gpu = &gpu_spec(args.get_string("gpu", "h100"));
  } catch (const InputError& e) {
    args.at("gpu").fail(e.bare_message());
  }
  const auto gpu_model = static_cast<std::uint16_t>(gpu - gpu_catalog().data());
  const Bandwidth bw = args.get_bandwidth("link_bandwidth", Bandwidth::gbps(400));
  if (!(bw.bytes_per_second() > 0)) args.at("link_bandwidth").fail("must be positive");
  const double length = args.get_double("link_m", 1.0, 0, 1e7);
  const Time hop = args.get_time("switch_latency", Time::zero());
  const Time latency =
      args.get_time("link_latency", Time::ns(length * kPropagationNsPerMetre)) + hop;
  if (hop < Time::zero() || latency < Time::zero()) args.fail("latencies must not be negative");

  std::uint64_t n = 1;
  for (auto d : dims) n *= d;
  std::uint64_t links = 0;
  for (auto d : dims) links += d >= 3 ? n : d == 2 ? n / 2 : 0;
  check_size(args, links, options);

  TopologyBuilder b("torus");
  b.reserve(n, links);
  for (std::uint64_t i = 0; i < n; ++i) {
    b.add_device(Device{DeviceKind::Gpu, 0, static_cast<std::uint32_t>(i), 0, 0, gpu_model, 0});
  }
  const LinkMedium medium = medium_for_length(bw, length);
  std::uint64_t stride = 1;
  for (auto d : dims) {
    for (std::uint64_t i = 0; i < n; ++i) {
      const std::uint64_t c = (i / stride) % d;
      if (d == 1 || (d == 2 && c == 1)) continue;
      const std::uint64_t next = c + 1 == d ? i - c * stride : i + stride;
      b.add_link(
          Link{static_cast<DeviceId>(i), static_cast<DeviceId>(next), bw, latency, medium, length});
    }
    stride *= d;
  }
  ClusterTraits t;
  t.gpu = gpu->name;
  t.scale_up = "none";
  t.fabric = "infiniband";  // direct chip-to-chip links with lossless, credit-based flow control
  t.gpus_per_node = 1;
  t.torus_dims = dims;  // GPU i sits at coordinate (i / stride_k) % dims[k], dims[0] fastest
  b.set_traits(t);

  BuildResult result;
  finish_inventory(result, std::move(b).build(), options);
  Inventory& inv = result.inventory;
  std::string shape;
  std::uint64_t cut = ~std::uint64_t{0};
  for (auto d : dims) {
    if (!shape.empty()) shape += 'x';
    shape += std::to_string(d);
    if (d >= 2) cut = std::min(cut, (d >= 3 ? 2 : 1) * (n / d));
  }
  inv.design = fmt::format("torus: {} {} GPUs, {} per link", shape, gpu->name, to_string(bw));
  inv.ports_per_gpu = 0;
  for (auto d : dims) inv.ports_per_gpu += d >= 3 ? 2 : d == 2 ? 1 : 0;
  inv.injection_per_gpu = bw * static_cast<double>(inv.ports_per_gpu);
  inv.bisection = bw * static_cast<double>(cut);
  return result;
}

}  // namespace

void register_torus_builder() {
  register_builder({"torus",
                    "2D/3D wraparound torus of directly wired GPUs (TPU-pod style)",
                    {"dims", "gpu", "link_bandwidth", "link_m", "link_latency", "switch_latency"},
                    build});
}

}  // namespace lockstep::builders
