# End-to-end tests of `lockstep collective` (label "cli"), included from tests.cmake.
lockstep_good(collective.csv_header "^bytes,count,type,algorithm,protocol,time_us,algbw_GBps,busbw_GBps$"
              collective --system hgx-h100 --fabric ib-ndr --nodes 16 --op all_reduce
              --max-bytes 1MiB --format csv)
# 8 B on one H100 node: ring / LL, 20 us launch + 6.6 + 14 x 0.6 = 35.00 us.
lockstep_good(collective.tiny_ring_ll "^8,2,float,ring,LL,35.00,"
              collective --system hgx-h100 --algo ring --max-bytes 8 --format csv)
lockstep_good(collective.json "\"busbw_GBps\""
              collective --system gb200-nvl72 --nodes 18 --op all_gather --min-bytes 1GiB
              --max-bytes 1GiB --format json)
lockstep_good(collective.flow "ring +Simple"
              collective --system hgx-h100 --algo ring --min-bytes 256MiB --max-bytes 256MiB
              --engine flow)
lockstep_good(collective.scenario "^1073741824,268435456,float,ring,Simple,"
              collective --scenario ${LOCKSTEP_CLI_DIR}/collective_sweep.yaml --format csv)
lockstep_bad_flags(collective.unknown_system "--system: unknown system 'dgx-h900' \\(known: dgx-a100, "
                   collective --system dgx-h900)
lockstep_bad_flags(collective.too_many_gpus "--gpus-per-node: hgx-h100 ships 8"
                   collective --system hgx-h100 --gpus-per-node 16)
lockstep_bad_flags(collective.sharp_on_roce "--sharp: .*no in-network reduction"
                   collective --system hgx-h100 --fabric roce-400g --nodes 2 --sharp)
lockstep_bad_flags(collective.nvls_on_a100 "--algo: nvls cannot run all_reduce"
                   collective --system dgx-a100 --algo nvls)
lockstep_bad_flags(collective.unknown_engine "--engine: unknown value 'warp'"
                   collective --engine warp)
lockstep_bad_flags(collective.scenario_algo "collective_bad_algo.yaml:5:[0-9]+.*unknown algorithm 'spiral'"
                   collective --scenario ${LOCKSTEP_CLI_DIR}/collective_bad_algo.yaml)
# A 4x4x4 torus of 400G links, 1 GiB dimension-ordered all-reduce: 28.4 us + 18 steps x 14 us +
# 21/64 S per directed link at 48 GB/s = 7,620.43 us (tests/unit/nccl/direct_wired_algos_test.cpp).
lockstep_good(collective.torus_ring "^1073741824,268435456,float,torus_ring,Simple,7620.43,"
              collective --scenario ${PROJECT_SOURCE_DIR}/scenarios/torus_4x4x4.yaml
              --algo torus_ring --min-bytes 1GiB --max-bytes 1GiB --format csv)
lockstep_good(collective.hierarchical "^1073741824,268435456,float,hierarchical,Simple,7967.75,"
              collective --system hgx-h100 --nodes 2 --algo hierarchical --min-bytes 1GiB
              --max-bytes 1GiB --format csv)
# Skew 1 over 16 ranks: rank 0's NIC receives 8 x S / H(16) at 48 GB/s, + 42.4 us, + the
# cross-rail send's NVLink hop to the receiver's rail (PXN), GPU -> NVSwitch -> GPU, 500 ns.
lockstep_good(collective.alltoallv_skew "^1073741824,16777216,float,direct,Simple,52977.33,"
              collective --system hgx-h100 --nodes 2 --op alltoallv --skew 1 --min-bytes 1GiB
              --max-bytes 1GiB --format csv)
lockstep_bad_flags(collective.skew_not_alltoallv "--skew: only alltoallv takes a skew"
                   collective --system hgx-h100 --skew 1)
lockstep_bad_flags(collective.skew_negative "--skew: -3 is out of range"
                   collective --system hgx-h100 --op alltoallv --skew -3)
lockstep_bad_flags(collective.torus_ring_off_torus "--algo: torus_ring runs on a torus of GPUs"
                   collective --system hgx-h100 --algo torus_ring)
lockstep_bad_flags(collective.torus_ring_on_a_mesh
  "collective_torus_ring_mesh.yaml:6:9: collectives.algo: torus_ring runs on a torus of GPUs"
  collective --scenario ${LOCKSTEP_CLI_DIR}/collective_torus_ring_mesh.yaml)
lockstep_bad_flags(collective.skew_on_alltoall "^lockstep: error: --skew: only alltoallv takes a skew$"
                   collective --system hgx-h100 --op alltoall --skew 0.5 --engine flow)
# Link faults (docs/scenario-collectives.md "Faults"). NIC 3's link to its leaf failed: GPU 3
# fails over to GPU 4's NIC, which then carries four channels instead of two: 2 x the healthy
# 5,447 us bandwidth term, about 10.68 ms (tests/unit/nccl/faults_test.cpp derives it).
lockstep_good(collective.failed_nic_link "^1073741824,268435456,float,ring,Simple,106[0-9][0-9]\\."
              collective --system hgx-h100 --fabric ib-ndr --nodes 2 --algo ring --min-bytes 1GiB
              --max-bytes 1GiB --engine flow --format csv --fault failed-link:link=nic3-leaf3)
# The analytical engine prices the NCCL model on the faulted graph: NIC 3's link at half speed
# is the busiest, at twice the model's bandwidth term (5,447.12 + 5,242.88 = 10,690.00 us).
lockstep_good(collective.degraded_nic_link_analytical
              "^1073741824,268435456,float,ring,Simple,10690\\.00,"
              collective --system hgx-h100 --fabric ib-ndr --nodes 2 --algo ring --min-bytes 1GiB
              --max-bytes 1GiB --format csv --fault degraded-link:link=nic3-leaf3,x=0.5)
lockstep_good(collective.scenario_faults "engine flow, faults failed-link:link=nic3-leaf3$"
              collective --scenario ${LOCKSTEP_CLI_DIR}/collective_faults.yaml)
lockstep_bad_flags(collective.fault_not_linked
  "^lockstep: error: --fault: 'failed-link:link=nic3-leaf0': nic3 and leaf0 are not linked; nic3's links: nic3-gpu3 \\(link [0-9]+\\), nic3-leaf3 \\(link [0-9]+\\)$"
  collective --system hgx-h100 --fabric ib-ndr --nodes 2 --engine flow
  --fault failed-link:link=nic3-leaf0)
lockstep_bad_flags(collective.fault_unknown_device
  "--fault: 'degraded-link:a=nic3,b=leaf9,x=0.5': no device 'leaf9'; devices are gpu0 \\.\\. gpu15, nic0 \\.\\. nic15, scale_up_switch0 \\.\\. scale_up_switch1, leaf0 \\.\\. leaf7, spine0, dev0 \\.\\. dev42$"
  collective --system hgx-h100 --fabric ib-ndr --nodes 2 --engine flow
  --fault degraded-link:a=nic3,b=leaf9,x=0.5)
lockstep_bad_flags(collective.fault_link_out_of_range
  "--fault: 'failed-link:link=64': link 64 does not exist: the topology has 64 links, 0 \\.\\. 63"
  collective --system hgx-h100 --fabric ib-ndr --nodes 2 --engine flow --fault failed-link:link=64)
lockstep_bad_flags(collective.fault_bad_kind
  "--fault: 'cut-link:link=3': expected slow-gpu:rank=R,x=X, slow-gpu:rank=R,delay=D, degraded-link:link=L,x=F or failed-link:link=L$"
  collective --system hgx-h100 --engine flow --fault cut-link:link=3)
lockstep_bad_flags(collective.fault_bad_fraction "--fault: 'degraded-link:link=3,x=2': x must lie in \\(0, 1\\]$"
  collective --system hgx-h100 --engine flow --fault degraded-link:link=3,x=2)
lockstep_bad_flags(collective.fault_slow_gpu
  "--fault: 'slow-gpu:rank=3,x=2': a slow GPU slows compute, and a collective has none to slow"
  collective --system hgx-h100 --engine flow --fault slow-gpu:rank=3,x=2)
# A straggler: rank 3 starts 1 ms late. The analytical engine adds the delay to the healthy
# time (tests/unit/nccl/faults_test.cpp compares flow): 1,514.96 + 1,000.00 us.
lockstep_good(collective.straggler_analytical "^268435456,67108864,float,ring,Simple,2514\\.96,"
              collective --system hgx-h100 --fabric ib-ndr --nodes 2 --algo ring --min-bytes 256MiB
              --max-bytes 256MiB --format csv --fault slow-gpu:rank=3,delay=1ms)
lockstep_bad_flags(collective.straggler_out_of_range
  "^lockstep: error: --fault: 'slow-gpu:rank=16,delay=1ms': rank 16 does not exist \\(16 ranks, 0 \\.\\. 15\\)$"
  collective --system hgx-h100 --fabric ib-ndr --nodes 2 --fault slow-gpu:rank=16,delay=1ms)
lockstep_bad_flags(collective.fault_disconnects
  "--fault: the failed links disconnect gpu0 from the other GPUs"
  collective --system hgx-h100 --engine flow --fault failed-link:link=gpu0-scale_up_switch0
  --fault failed-link:link=gpu0-nic0)
lockstep_bad_flags(collective.scenario_fault
  "collective_bad_fault.yaml:7:41: collectives.faults\\[1\\]: 'failed-link:link=nic3-leaf0': nic3 and leaf0 are not linked"
  collective --scenario ${LOCKSTEP_CLI_DIR}/collective_bad_fault.yaml)
# Sizes and rates that would leave Time's range (docs/units.md "Limits"): one-line errors naming
# the field, never a printed number.
lockstep_bad_flags(collective.too_large_for_memory
  "^lockstep: error: --max-bytes: 256 PiB does not fit in one GPU's memory \\(h100: 80 GiB\\)$"
  collective --system hgx-h100 --nodes 2 --min-bytes 256PiB --max-bytes 256PiB)
lockstep_bad_flags(collective.nic_too_slow
  "^lockstep: error: --nic-speed: '1Kbps' is below 1.9073 Mb/s, the slowest rate lockstep accepts"
  collective --system hgx-h100 --nodes 2 --nic-speed 1Kbps --min-bytes 2GiB --max-bytes 2GiB)
foreach(engine flow analytical)
  lockstep_bad_flags(collective.slow_link_${engine}
    "collective_slow_link.yaml:10:33: cluster.links\\[0\\].bandwidth: '1Kbps' is below 1.9073 Mb/s"
    collective --scenario ${LOCKSTEP_CLI_DIR}/collective_slow_link.yaml --engine ${engine})
endforeach()
lockstep_bad_flags(collective.scenario_too_large
  "collective_too_large.yaml:7:16: collectives\\[0\\].max_bytes: 256 PiB does not fit in one GPU's memory"
  collective --scenario ${LOCKSTEP_CLI_DIR}/collective_too_large.yaml)
lockstep_bad_flags(collective.past_time_range
  "collective_past_time_range.yaml:146:49: collectives\\[0\\].max_bytes: a 178.814 GiB alltoall would take longer than lockstep's time range \\(106.75 days, 2\\^63 ps\\)"
  collective --scenario ${LOCKSTEP_CLI_DIR}/collective_past_time_range.yaml)
lockstep_bad_flags(collective.past_time_range_flags
  "^lockstep: error: --max-bytes: a 178.814 GiB alltoall would take longer than lockstep's time range"
  collective --scenario ${LOCKSTEP_CLI_DIR}/collective_past_time_range.yaml --op alltoall
  --min-bytes 3GB --max-bytes 192GB)
lockstep_bad_flags(collective.past_time_range_min
  "^lockstep: error: --min-bytes: a 177.883 GiB alltoall would take longer than lockstep's time range"
  collective --scenario ${LOCKSTEP_CLI_DIR}/collective_past_time_range.yaml --op alltoall
  --min-bytes 191GB --max-bytes 192GB)
# --trace (issue 23): the largest size's busiest links as Perfetto counter tracks; the analytical
# engine has none to draw.
lockstep_good(collective.trace "^# trace .*cli-collective-trace.json$"
              collective --system hgx-h100 --fabric roce-400g --nodes 2 --min-bytes 1MiB
              --max-bytes 1MiB --engine packet --trace ${CMAKE_BINARY_DIR}/cli-collective-trace.json)
lockstep_bad_flags(collective.trace_analytical "--trace: needs --engine flow or packet"
                   collective --system hgx-h100 --max-bytes 1MiB
                   --trace ${CMAKE_BINARY_DIR}/cli-collective-trace-analytical.json)
# MoE dispatch, 2 nodes x 2 GPUs, 8 experts, top-2, 28 tokens of 132 B (FP8 + scales): per rank
# 22 tokens cross the network once (P(node) = 22/28), 2 x 13 go over NVLink (P(GPU) = 13/28):
# 4 x 22 x 132 = 11616 and 4 x 26 x 132 = 13728 B (docs/moe-dispatch.md).
lockstep_good(collective.moe_dispatch "\"network_bytes\": 11616, \"nvlink_bytes\": 13728,"
              collective --op moe_dispatch --nodes 2 --gpus-per-node 2 --tokens 28 --hidden 128
              --topk 2 --experts 8 --format json)
lockstep_bad_flags(collective.moe_experts "--experts: 6 experts do not spread evenly over 4 ranks"
                   collective --op moe_dispatch --nodes 2 --gpus-per-node 2 --experts 6)
lockstep_bad_flags(collective.moe_flag_elsewhere "--tokens: only with --op moe_dispatch"
                   collective --op all_reduce --tokens 5)
# L40S (no NVLink), 1 GiB ring Simple on one node: 20 us launch + 8.4 + 14 x PCIe's 5.7 us +
# 2 x 7/8 x 2^30 B at NCCL's Gen4 x16 24 GB/s = 78,401.87 us on the flow engine (docs/presets.md).
lockstep_good(collective.l40s_pcie_ring "^1073741824,268435456,float,ring,Simple,78401.87,"
              collective --system l40s --algo ring --proto simple --min-bytes 1GiB
              --max-bytes 1GiB --format csv --engine flow)
# Perlmutter, 2 nodes: 20 + 1.4 x (8.4 + 12 x 6 + 2 x 15) + 2 x 7/8 x 2^30 B / (4 NICs x 24 GB/s)
# = 19,747.98 us (tests/unit/nccl/pcie_hpc_presets_test.cpp).
lockstep_good(collective.perlmutter_ring "^1073741824,268435456,float,ring,Simple,19747.98,"
              collective --system perlmutter --nodes 2 --algo ring --proto simple
              --min-bytes 1GiB --max-bytes 1GiB --format csv)
# DGX-1 V100, one node: 20 + 8.4 + 14 x NVLink's 3.4 us + 2 x 7/8 x 2^30 B at NCCL's 6 rings x
# 20 GB/s (the hybrid cube mesh's links, docs/presets.md) = 15,734.73 us.
lockstep_good(collective.dgx1_v100_ring "^1073741824,268435456,float,ring,Simple,15734.73,"
              collective --system dgx1-v100 --algo ring --proto simple --min-bytes 1GiB
              --max-bytes 1GiB --format csv)
# DGX-1 V100, 5 GPUs: no NVLink ring; NCCL's rings relay GPU 4's hops through GPU 0 (PATH_NVB),
# 2 rings x 20 GB/s: 20 + 8.4 + 8 x PCIe's 5.7 us (tuning.cc prices an NVB ring with its PCI
# row) + 2 x 4/5 x 2^30 B at 40 GB/s = 43,023.67 us, + 1.0 us for the longest chain's 2 relayed
# hops' second NVLink (0.5 us each): 43,024.67 on the flow engine (4 channels) (tests/unit/nccl/
# nvlink_paths_test.cpp); busbw 2 x 4/5 x 2^30 B / 43,024.67 us = 39.93 GB/s.
lockstep_good(collective.dgx1_v100_five_gpus "^1073741824,268435456,float,ring,Simple,43024.67,24.96,39.93"
              collective --system dgx1-v100 --nodes 1 --gpus-per-node 5 --algo ring
              --proto simple --min-bytes 1GiB --max-bytes 1GiB --format csv --engine flow)
# The same with NCCL_NVB_DISABLE=1: no relay; the rings cross the PCIe tree and QPI, at NCCL's
# QPI_BW 6 GB/s: 2 rings, 12 GB/s, 20 + 8.4 + 8 x 5.7 + 2 x 4/5 x 2^30 B / 12 GB/s = 143,239.58 us,
# + 1.2 us on the engines, whose router keeps the host hop on the PCIe tree (1.1 us of links in
# place of an NVLink's 0.5, twice on the longest chain; docs/nccl-model.md "Path types").
lockstep_good(collective.dgx1_v100_five_gpus_nvb_off "^1073741824,268435456,float,ring,Simple,143240.78,"
              collective --system dgx1-v100 --nodes 1 --gpus-per-node 5 --algo ring
              --proto simple --min-bytes 1GiB --max-bytes 1GiB --format csv --nvb false)
lockstep_good(collective.nvb_off_flow "^1073741824,268435456,float,ring,Simple,143240.78,"
              collective --system dgx1-v100 --nodes 1 --gpus-per-node 5 --algo ring
              --proto simple --min-bytes 1GiB --max-bytes 1GiB --format csv --nvb false
              --engine flow)
# NCCL_PXN_DISABLE=1 (docs/routing.md "PXN"): a value that is not a boolean names its flag or its
# file position (tests/unit/nccl/pxn_switch_test.cpp derives the times with and without).
lockstep_bad_flags(collective.pxn_not_a_bool "^lockstep: error: --pxn: expected true or false, got 'maybe'$"
                   collective --system hgx-h100 --nodes 2 --op alltoall --pxn maybe)
lockstep_bad_flags(collective.pxn_scenario_not_a_bool
  "collective_bad_pxn.yaml:5:[0-9]+: collectives.pxn: expected true or false, got 'sometimes'"
  collective --scenario ${LOCKSTEP_CLI_DIR}/collective_bad_pxn.yaml)
# A job beside the sweeps takes their one pxn (docs/training.md "DeepEP and PXN").
lockstep_bad_flags(train.pxn_both_ways
  "train_pxn_both_ways.yaml:8:[0-9]+: collectives.*pxn: the sweeps set pxn both ways \\(true above\\)"
  train ${LOCKSTEP_CLI_DIR}/train_pxn_both_ways.yaml)
lockstep_bad_flags(serve.pxn_both_ways
  "serve_pxn_both_ways.yaml:6:[0-9]+: collectives.*: the sweeps set pxn both ways \\(true above\\)"
  serve ${LOCKSTEP_CLI_DIR}/serve_pxn_both_ways.yaml)
