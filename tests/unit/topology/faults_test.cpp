// Named faults: their texts, the device names a link may be given by, and the faulted topology.
#include "lockstep/topology/faults.hpp"

#include <gtest/gtest.h>

#include "../core/error_of.hpp"
#include "lockstep/topology/device_names.hpp"
#include "topology_test_util.hpp"

namespace lockstep {
namespace {

using test::hgx_h100;

TEST(Faults, LinksAreGivenByIndexOrByTheirEnds) {
  const FaultSpec byid = parse_fault("failed-link:link=12", "--fault");
  EXPECT_EQ(byid.kind, FaultSpec::Kind::FailedLink);
  EXPECT_EQ(byid.link, 12u);
  EXPECT_EQ(byid.field, "--fault");
  const FaultSpec joined = parse_fault("degraded-link:link=nic3-leaf3,x=0.25", "f");
  EXPECT_EQ(joined.link, kNone);
  EXPECT_EQ(joined.a, "nic3");
  EXPECT_EQ(joined.b, "leaf3");
  EXPECT_DOUBLE_EQ(joined.factor, 0.25);
  const FaultSpec ends = parse_fault("degraded-link:a=nic3,b=leaf3", "f");
  EXPECT_EQ(ends.a, "nic3");
  EXPECT_DOUBLE_EQ(ends.factor, 0.5);  // the default
  const FaultSpec slow = parse_fault("slow-gpu:rank=5,x=1.3", "f");
  EXPECT_EQ(slow.rank, 5u);
  EXPECT_FALSE(slow.on_link());
  EXPECT_FALSE(slow.late);
  const FaultSpec late = parse_fault("slow-gpu:rank=3,delay=2ms", "f");
  EXPECT_EQ(late.rank, 3u);
  EXPECT_TRUE(late.late);
  EXPECT_EQ(late.delay, Time::ms(2));
  EXPECT_EQ(parse_fault("slow-gpu:rank=0,delay=0us", "f").delay, Time::zero());
}

TEST(Faults, MalformedTextsSayWhatIsExpected) {
  auto message = [](const char* text) { return error_of([&] { parse_fault(text, "--fault"); }); };
  EXPECT_NE(message("failed-link:link=-1").find("link must be a link index"), std::string::npos);
  EXPECT_NE(message("failed-link:link=nic3").find("two device names joined by '-'"),
            std::string::npos);
  EXPECT_NE(message("failed-link:link=a-b-c").find("link must be"), std::string::npos);
  EXPECT_NE(message("failed-link:link=3,a=x,b=y").find("not both"), std::string::npos);
  EXPECT_NE(message("failed-link:a=nic3").find("go together"), std::string::npos);
  EXPECT_NE(message("failed-link:link=3,x=0.5").find("unknown parameter 'x'"), std::string::npos);
  EXPECT_NE(message("failed-link:").find("missing 'link='"), std::string::npos);
  EXPECT_NE(message("degraded-link:link=3,x=0").find("x must lie in (0, 1]"), std::string::npos);
  EXPECT_NE(message("slow-gpu:rank=1.5").find("rank must be a non-negative integer"),
            std::string::npos);
  EXPECT_EQ(message("broken-link:link=3"),
            "--fault: 'broken-link:link=3': expected slow-gpu:rank=R,x=X, "
            "slow-gpu:rank=R,delay=D, degraded-link:link=L,x=F or failed-link:link=L");
  // A straggler's delay: a time, neither negative nor past 1e6 s, and not with x=.
  EXPECT_EQ(message("slow-gpu:rank=3,delay=-1ms"),
            "--fault: 'slow-gpu:rank=3,delay=-1ms': delay must be a time of at most 1e6 s, e.g. "
            "delay=50us");
  EXPECT_NE(message("slow-gpu:rank=3,delay=").find("delay must be a time"), std::string::npos);
  EXPECT_NE(message("slow-gpu:rank=3,delay=5").find("delay must be a time"), std::string::npos);
  EXPECT_EQ(message("slow-gpu:rank=3,delay=2e6s"),
            "--fault: 'slow-gpu:rank=3,delay=2e6s': delay must be at most 1e6 s");
  EXPECT_NE(message("slow-gpu:rank=3,x=2,delay=1ms").find("give x= "), std::string::npos);
  EXPECT_NE(message("slow-gpu:delay=1ms").find("missing 'rank='"), std::string::npos);
}

TEST(Faults, AListKeepsEachEntrysPlaceForLaterErrors) {
  ArgNode list = ArgNode::list("job.faults", {"s.yaml", 3, 3});
  list.push(ArgNode::scalar("failed-link:link=1", "job.faults.0", {"s.yaml", 3, 4}));
  list.push(ArgNode::scalar("failed-link:link=900", "job.faults.1", {"s.yaml", 3, 24}));
  const std::vector<FaultSpec> faults = parse_faults(&list);
  ASSERT_EQ(faults.size(), 2u);
  EXPECT_EQ(faults[1].where.str(), "s.yaml:3:24");
  // Link 900 exists nowhere: the error, found once there is a topology, points at the entry.
  const Topology t = hgx_h100(2);
  EXPECT_EQ(error_of([&] { fault_link(faults[1], t); }),
            "s.yaml:3:24: job.faults.1: 'failed-link:link=900': link 900 does not exist: the "
            "topology has 64 links, 0 .. 63 in the order `lockstep topo --emit` lists them (or "
            "name its ends, e.g. link=nic3-leaf3)");
  ArgNode bad = ArgNode::scalar("failed-link:link=x-", "job.faults", {"s.yaml", 4, 9});
  EXPECT_EQ(error_of([&] { parse_faults(&bad); }).rfind("s.yaml:4:9: job.faults: ", 0), 0u);
}

TEST(DeviceNames, EveryDeviceHasOneNameThatFindsIt) {
  const Topology t = hgx_h100(2);  // 16 GPUs, 16 NICs, 2 NVSwitch domains, 8 leaves, 1 spine
  const DeviceNames names(t);
  EXPECT_EQ(names.summary(),
            "gpu0 .. gpu15, nic0 .. nic15, scale_up_switch0 .. scale_up_switch1, leaf0 .. leaf7, "
            "spine0, dev0 .. dev42");
  for (DeviceId d = 0; d < t.num_devices(); ++d) {
    EXPECT_EQ(names.find(names.name(d)), d) << names.name(d);
    EXPECT_EQ(names.find("dev" + std::to_string(d)), d);
  }
  for (std::uint32_t r = 0; r < 16; ++r)
    EXPECT_EQ(names.find("gpu" + std::to_string(r)), t.gpus()[r]);
  // nic11 is the 12th NIC: node 1's NIC of rail 3.
  const Device& nic = t.device(names.find("nic11"));
  EXPECT_EQ(nic.kind, DeviceKind::Nic);
  EXPECT_EQ(nic.node, 1u);
  EXPECT_EQ(nic.local_index, 3u);
  EXPECT_EQ(t.device(names.find("spine0")).tier, 1u);
  for (const char* bad : {"gpu16", "leaf", "nic-1", "core0", "dev43", "3", ""})
    EXPECT_EQ(names.find(bad), kNone) << bad;
}

TEST(Faults, ALinkByItsEndsIsTheOneJoiningThem) {
  const Topology t = hgx_h100(2);
  const DeviceNames names(t);
  const LinkId l = fault_link(parse_fault("failed-link:link=nic3-leaf3", "--fault"), t);
  const Link& link = t.link(l);
  EXPECT_EQ(std::min(link.a, link.b), std::min(names.find("nic3"), names.find("leaf3")));
  EXPECT_EQ(std::max(link.a, link.b), std::max(names.find("nic3"), names.find("leaf3")));
  EXPECT_EQ(fault_link(parse_fault("failed-link:a=leaf3,b=nic3", "--fault"), t), l);
  EXPECT_EQ(fault_link(parse_fault("failed-link:link=dev12-dev37", "--fault"), t), l);
}

TEST(Faults, AMisnamedLinkListsWhatIsValid) {
  const Topology t = hgx_h100(2);
  auto message = [&](const char* text) {
    return error_of([&] { fault_link(parse_fault(text, "--fault"), t); });
  };
  const std::string not_linked = message("failed-link:link=nic3-leaf0");
  EXPECT_EQ(not_linked.rfind("--fault: 'failed-link:link=nic3-leaf0': nic3 and leaf0 are not "
                             "linked; nic3's links: nic3-gpu3 (link ",
                             0),
            0u)
      << not_linked;
  EXPECT_NE(not_linked.find(", nic3-leaf3 (link "), std::string::npos);
  EXPECT_NE(message("failed-link:link=nic3-leaf9")
                .find("no device 'leaf9'; devices are gpu0 .. gpu15, nic0 .. nic15, "),
            std::string::npos);
  // Two parallel cables between the same pair: the name is ambiguous, the indices are not.
  TopologyBuilder b("pair");
  b.add_device(Device{DeviceKind::Gpu, 0, 0, 0, 0, 0, 0});
  b.add_device(Device{DeviceKind::Gpu, 0, 1, 0, 0, 0, 0});
  b.add_link(Link{0, 1, Bandwidth::gBps(50), Time::ns(100), LinkMedium::NvLink, 0});
  b.add_link(Link{0, 1, Bandwidth::gBps(50), Time::ns(100), LinkMedium::NvLink, 0});
  const Topology pair = std::move(b).build();
  EXPECT_EQ(error_of([&] { fault_link(parse_fault("failed-link:link=gpu0-gpu1", "f"), pair); }),
            "f: 'failed-link:link=gpu0-gpu1': 2 parallel links join gpu0 and gpu1 (0, 1): give "
            "one by its index, link=0");
}

TEST(Faults, DegradedLinksSlowDownAndFailedLinksDisappear) {
  const Topology t = hgx_h100(2);
  const std::vector<FaultSpec> faults = {parse_fault("degraded-link:link=nic3-leaf3,x=0.5", "f"),
                                         parse_fault("degraded-link:link=nic3-leaf3,x=0.5", "f"),
                                         parse_fault("failed-link:link=nic5-leaf5", "f")};
  const LinkId slow = fault_link(faults[0], t);
  const LinkId gone = fault_link(faults[2], t);
  ASSERT_LT(slow, gone);  // the slow link keeps its index
  std::size_t seen = 0;
  const Topology f = apply_link_faults(t, faults, [&](Link&) { ++seen; });
  EXPECT_EQ(seen, t.num_links());  // failed links included
  ASSERT_EQ(f.num_links(), t.num_links() - 1);
  EXPECT_EQ(f.num_devices(), t.num_devices());
  // Two halvings: a quarter of NDR's 50 GB/s.
  EXPECT_DOUBLE_EQ(f.link(slow).bandwidth.bytes_per_second(), 12.5e9);
  for (LinkId l = 0; l < f.num_links(); ++l) {
    const Link& before = t.link(l < gone ? l : l + 1);
    EXPECT_EQ(f.link(l).a, before.a);
    EXPECT_EQ(f.link(l).b, before.b);
    if (l != slow) {
      EXPECT_EQ(f.link(l).bandwidth, before.bandwidth);
    }
  }
  // Slow GPUs are not the topology's business.
  const std::vector<FaultSpec> slow_gpu = {parse_fault("slow-gpu:rank=3", "f")};
  EXPECT_EQ(apply_link_faults(t, slow_gpu).num_links(), t.num_links());
}

TEST(Faults, FailuresThatCutAGpuOffAreErrors) {
  // All eight NICs of node 1 off the fabric: its GPUs reach nothing outside the node.
  const Topology t = hgx_h100(2);
  std::vector<FaultSpec> faults;
  for (int i = 8; i < 16; ++i)
    faults.push_back(
        parse_fault("failed-link:link=nic" + std::to_string(i) + "-leaf" + std::to_string(i - 8),
                    "job.faults"));
  EXPECT_EQ(error_of([&] { apply_link_faults(t, faults); }),
            "job.faults: the failed links disconnect gpu8 from the other GPUs: no route goes "
            "around them");
  faults.pop_back();  // one NIC left: a route remains (through NVLink to GPU 15, docs/routing.md)
  EXPECT_EQ(apply_link_faults(t, faults).num_links(), t.num_links() - 7);
}

}  // namespace
}  // namespace lockstep
