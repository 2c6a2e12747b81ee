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
# Link faults (docs/scenario-collectives.md "Faults"). NIC 3's link to its leaf failed: GPU 3
# fails over to GPU 4's NIC, which then carries four channels instead of two: 2 x the healthy
# 5,447 us bandwidth term, about 10.68 ms (tests/unit/nccl/faults_test.cpp derives it).
lockstep_good(collective.failed_nic_link "^1073741824,268435456,float,ring,Simple,106[0-9][0-9]\\."
              collective --system hgx-h100 --fabric ib-ndr --nodes 2 --algo ring --min-bytes 1GiB
              --max-bytes 1GiB --engine flow --format csv --fault failed-link:link=nic3-leaf3)
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
  "--fault: 'cut-link:link=3': expected slow-gpu:rank=R,x=X, degraded-link:link=L,x=F or failed-link:link=L$"
  collective --system hgx-h100 --engine flow --fault cut-link:link=3)
lockstep_bad_flags(collective.fault_bad_fraction "--fault: 'degraded-link:link=3,x=2': x must lie in \\(0, 1\\]$"
  collective --system hgx-h100 --engine flow --fault degraded-link:link=3,x=2)
lockstep_bad_flags(collective.fault_slow_gpu
  "--fault: 'slow-gpu:rank=3,x=2': a slow GPU slows compute, and a collective has none to slow"
  collective --system hgx-h100 --engine flow --fault slow-gpu:rank=3,x=2)
lockstep_bad_flags(collective.fault_analytical
  "--fault: 'failed-link:link=3': the analytical engine .* cannot see link faults; run engine flow or packet$"
  collective --system hgx-h100 --fault failed-link:link=3)
lockstep_bad_flags(collective.fault_disconnects
  "--fault: the failed links disconnect gpu0 from the other GPUs"
  collective --system hgx-h100 --engine flow --fault failed-link:link=gpu0-scale_up_switch0
  --fault failed-link:link=gpu0-nic0)
lockstep_bad_flags(collective.scenario_fault
  "collective_bad_fault.yaml:7:41: collectives.faults\\[1\\]: 'failed-link:link=nic3-leaf0': nic3 and leaf0 are not linked"
  collective --scenario ${LOCKSTEP_CLI_DIR}/collective_bad_fault.yaml)
