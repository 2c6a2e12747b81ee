// Named faults: parsing (the texts of include/lockstep/topology/faults.hpp), the link a fault
// names, and the faulted copy of a topology.
#include "lockstep/topology/faults.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <cmath>

#include "lockstep/config/spec_text.hpp"
#include "lockstep/topology/device_names.hpp"

namespace lockstep {
namespace {

constexpr std::string_view kLinkForms =
    "a link index (0, 1, ... as `lockstep topo --emit` lists links) or two device names joined "
    "by '-', e.g. link=nic3-leaf3";

// link=L, link=A-B or a=A,b=B into f.
void read_link(const std::map<std::string, std::string>& p, FaultSpec& f, std::string_view field,
               std::string_view text) {
  const bool named = p.count("a") || p.count("b");
  if (named && p.count("link")) bad_spec(field, text, "give link= or a=,b=, not both");
  if (named) {
    if (!p.count("a") || !p.count("b")) bad_spec(field, text, "a= and b= go together: a=A,b=B");
    f.a = p.at("a");
    f.b = p.at("b");
    if (f.a.empty() || f.b.empty()) bad_spec(field, text, "a= and b= need device names");
    return;
  }
  if (!p.count("link")) bad_spec(field, text, fmt::format("missing 'link=' ({})", kLinkForms));
  const std::string& v = p.at("link");
  if (!v.empty() && std::all_of(v.begin(), v.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    std::uint32_t id = 0;
    const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), id);
    if (ec != std::errc() || end != v.data() + v.size() || id == kNone)
      bad_spec(field, text, fmt::format("link {} is out of range", v));
    f.link = id;
    return;
  }
  const auto dash = v.find('-');
  if (dash == std::string::npos || dash == 0 || dash + 1 == v.size() ||
      v.find('-', dash + 1) != std::string::npos) {
    bad_spec(field, text, fmt::format("link must be {}", kLinkForms));
  }
  f.a = v.substr(0, dash);
  f.b = v.substr(dash + 1);
}

// "nic3-gpu3 (link 11), nic3-leaf3 (link 27)": at most `limit` of them.
std::string links_of(DeviceId d, const Topology& topo, const DeviceNames& names) {
  constexpr std::size_t kLimit = 12;
  const auto ports = topo.ports(d);
  std::string out;
  for (std::size_t i = 0; i < ports.size() && i < kLimit; ++i) {
    out += fmt::format("{}{}-{} (link {})", i ? ", " : "", names.name(d), names.name(ports[i].peer),
                       Topology::link_of(ports[i].out));
  }
  if (ports.size() > kLimit) out += fmt::format(" and {} more", ports.size() - kLimit);
  return ports.empty() ? "none" : out;
}

// A GPU the links no longer join to the others (the first of the smaller side: the first GPU's
// or the rest), kNone if every GPU is joined to every other.
DeviceId separated_gpu(const Topology& topo) {
  const auto gpus = topo.gpus();
  if (gpus.empty()) return kNone;
  std::vector<std::uint8_t> seen(topo.num_devices(), 0);
  std::vector<DeviceId> queue = {gpus[0]};
  seen[queue[0]] = 1;
  for (std::size_t head = 0; head < queue.size(); ++head)
    for (const Port& p : topo.ports(queue[head]))
      if (!seen[p.peer]) seen[p.peer] = 1, queue.push_back(p.peer);
  const auto joined = std::count_if(gpus.begin(), gpus.end(), [&](DeviceId g) { return seen[g]; });
  if (joined == static_cast<std::ptrdiff_t>(gpus.size())) return kNone;
  if (2 * joined < static_cast<std::ptrdiff_t>(gpus.size())) return gpus[0];
  return *std::find_if(gpus.begin(), gpus.end(), [&](DeviceId g) { return !seen[g]; });
}

}  // namespace

FaultSpec parse_fault(std::string_view text, std::string_view field) {
  auto [kind, body] = split_spec_kind(text);
  FaultSpec f;
  f.text = std::string(text);
  f.field = std::string(field);
  if (kind == "slow-gpu") {
    const auto p =
        parse_spec_params(body, field, text, {"rank", "node", "gpu", "stage", "x", "delay"});
    f.kind = FaultSpec::Kind::SlowGpu;
    auto index = [&](const char* key) {
      const double v = parse_spec_number(p.at(key), field, text);
      if (v < 0 || v > 4e9 || v != std::floor(v))
        bad_spec(field, text, fmt::format("{} must be a non-negative integer", key));
      return static_cast<std::uint32_t>(v);
    };
    const int places =
        int(p.count("rank")) + int(p.count("node") || p.count("gpu")) + int(p.count("stage"));
    if (places != 1) {
      bad_spec(field, text,
               places ? "give one of rank=R, node=N,gpu=G or stage=S"
                      : "missing 'rank=' (or node=N,gpu=G, or stage=S)");
    }
    if (p.count("node") != p.count("gpu")) bad_spec(field, text, "node= and gpu= go together");
    if (p.count("rank")) f.rank = index("rank");
    if (p.count("node")) f.node = index("node"), f.gpu = index("gpu");
    if (p.count("stage")) f.stage = index("stage");
    if (f.placed() && p.count("delay"))
      bad_spec(field, text, "a collective's late rank is given by rank=R,delay=D");
    if (p.count("x") && p.count("delay"))
      bad_spec(field, text, "give x= (training: slower compute) or delay= (collective: late)");
    if (p.count("delay")) {
      const std::string& v = p.at("delay");
      try {
        f.delay = parse_time(v, field);
      } catch (const InputError&) {
        bad_spec(field, text, "delay must be a time of at most 1e6 s, e.g. delay=50us");
      }
      if (f.delay > Time::s(1e6)) bad_spec(field, text, "delay must be at most 1e6 s");
      f.late = true;
    } else {
      f.factor = p.count("x") ? parse_spec_number(p.at("x"), field, text) : 1.5;
      if (f.factor < 1 || f.factor > 1000) bad_spec(field, text, "x must lie in [1, 1000]");
    }
  } else if (kind == "degraded-link" || kind == "failed-link") {
    const bool failed = kind == "failed-link";
    const auto p = failed ? parse_spec_params(body, field, text, {"link", "a", "b"})
                          : parse_spec_params(body, field, text, {"link", "a", "b", "x"});
    f.kind = failed ? FaultSpec::Kind::FailedLink : FaultSpec::Kind::DegradedLink;
    read_link(p, f, field, text);
    f.factor = failed ? 0 : (p.count("x") ? parse_spec_number(p.at("x"), field, text) : 0.5);
    if (!failed && (f.factor <= 0 || f.factor > 1)) bad_spec(field, text, "x must lie in (0, 1]");
  } else {
    bad_spec(field, text,
             "expected slow-gpu:rank=R,x=X, slow-gpu:rank=R,delay=D, degraded-link:link=L,x=F or "
             "failed-link:link=L");
  }
  return f;
}

std::vector<FaultSpec> parse_faults(const ArgNode* node) {
  return parse_spec_list(
      node,
      [](const ArgNode& n) {
        FaultSpec f = parse_fault(n.text(), n.path());
        f.where = n.where();
        return f;
      },
      "failed-link:link=12");
}

LinkId fault_link(const FaultSpec& f, const Topology& topo) {
  auto fail = [&](const std::string& why) {
    throw InputError(f.field, fmt::format("'{}': {}", f.text, why), f.where);
  };
  if (f.link != kNone) {
    if (f.link >= topo.num_links()) {
      fail(
          fmt::format("link {} does not exist: the topology has {} links, 0 .. {} in the order "
                      "`lockstep topo --emit` lists them (or name its ends, e.g. "
                      "link=nic3-leaf3)",
                      f.link, topo.num_links(), topo.num_links() - 1));
    }
    return f.link;
  }
  const DeviceNames names(topo);
  const DeviceId a = names.find(f.a);
  const DeviceId b = names.find(f.b);
  for (const auto& [id, name] : {std::pair{a, &f.a}, std::pair{b, &f.b}})
    if (id == kNone) fail(fmt::format("no device '{}'; devices are {}", *name, names.summary()));
  std::vector<LinkId> between;
  for (const Port& p : topo.ports(a))
    if (p.peer == b) between.push_back(Topology::link_of(p.out));
  if (between.empty()) {
    fail(fmt::format("{} and {} are not linked; {}'s links: {}", names.name(a), names.name(b),
                     names.name(a), links_of(a, topo, names)));
  }
  if (between.size() > 1) {
    fail(fmt::format("{} parallel links join {} and {} ({}): give one by its index, link={}",
                     between.size(), names.name(a), names.name(b), fmt::join(between, ", "),
                     between[0]));
  }
  return between[0];
}

Topology apply_link_faults(const Topology& topo, std::span<const FaultSpec> faults,
                           const std::function<void(Link&)>& adjust) {
  std::vector<double> scale(topo.num_links(), 1.0);
  std::vector<std::uint8_t> failed(topo.num_links(), 0);
  const FaultSpec* first_failure = nullptr;
  for (const FaultSpec& f : faults) {
    if (!f.on_link()) continue;
    const LinkId l = fault_link(f, topo);
    if (f.kind == FaultSpec::Kind::FailedLink) {
      failed[l] = 1;
      if (first_failure == nullptr) first_failure = &f;
    } else {
      scale[l] *= f.factor;
    }
  }
  TopologyBuilder b(topo.name());
  b.set_traits(topo.traits());
  b.reserve(topo.num_devices(), topo.num_links());
  for (const Device& d : topo.devices()) b.add_device(d);
  for (LinkId l = 0; l < topo.num_links(); ++l) {
    Link link = topo.link(l);
    if (adjust) adjust(link);
    if (scale[l] != 1.0) link.bandwidth = link.bandwidth * scale[l];
    if (!failed[l]) b.add_link(link);
  }
  Topology out = std::move(b).build();
  if (first_failure != nullptr) {
    if (const DeviceId g = separated_gpu(out); g != kNone) {
      throw InputError(first_failure->field,
                       fmt::format("the failed links disconnect {} from the other GPUs: no "
                                   "route goes around them",
                                   DeviceNames(topo).name(g)),
                       first_failure->where);
    }
  }
  return out;
}

}  // namespace lockstep
