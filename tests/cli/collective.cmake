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
