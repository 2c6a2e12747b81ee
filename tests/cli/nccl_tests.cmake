# nccl-tests compatibility (docs/nccl-tests.md): its flags and op names on `lockstep collective`,
# --format nccl-tests, and `lockstep calibrate --from` reading such a log back.
set(LOCKSTEP_NT_DIR ${LOCKSTEP_CLI_DIR}/nccl_tests)

# Printed then read back on the same cluster: zero error at every size.
foreach(case "all_reduce_perf;--nodes;2" "allgather;-g;4" "reduce_scatter_perf;--nodes;2;-g;8"
        "broadcast_perf;--system;gb200-nvl72;--nodes;4")
  list(GET case 0 op)
  list(SUBLIST case 1 -1 flags)
  add_test(NAME cli.nccl_tests.roundtrip_${op}
           COMMAND sh ${LOCKSTEP_CLI_DIR}/nccl_tests_roundtrip.sh $<TARGET_FILE:lockstep> ${op}
                   ${flags})
  set_tests_properties(cli.nccl_tests.roundtrip_${op} PROPERTIES LABELS cli)
endforeach()

# The same on the flow engine, printed and read back by it.
add_test(NAME cli.nccl_tests.roundtrip_flow
         COMMAND sh ${LOCKSTEP_CLI_DIR}/nccl_tests_roundtrip.sh $<TARGET_FILE:lockstep> allreduce
                 --nodes 2 --engine flow)
set_tests_properties(cli.nccl_tests.roundtrip_flow PROPERTIES LABELS cli)

# nccl-tests' spellings give lockstep's own sweep: -b 8 -e 128M -f 2 is 8 B .. 128 MiB by 2,
# -g 8 is 8 GPUs per node, allreduce is all_reduce, -i steps by bytes.
function(lockstep_same name a b)
  add_test(NAME cli.nccl_tests.same_${name}
           COMMAND sh ${LOCKSTEP_CLI_DIR}/same_stdout.sh $<TARGET_FILE:lockstep> "${a}" "${b}")
  set_tests_properties(cli.nccl_tests.same_${name} PROPERTIES LABELS cli)
endfunction()
lockstep_same(sizes "collective --format csv -b 8 -e 128M -f 2"
              "collective --format csv --min-bytes 8 --max-bytes 128MiB --step-factor 2")
lockstep_same(gpus "collective --format csv -g 4 -t 2 --nodes 2 -b 8 -e 1M -f 2"
              "collective --format csv --gpus-per-node 8 --nodes 2 --max-bytes 1MiB")
lockstep_same(op_names "collective allreduce --format csv -b 8 -e 1M -f 2"
              "collective --op all_reduce --format csv --max-bytes 1MiB")
lockstep_same(datatype "collective --format csv -d bfloat16 -b 8 -e 64K -f 2"
              "collective --format csv --type bfloat16 --max-bytes 64KiB")

lockstep_good(nccl_tests_step_bytes "\n     3145736        786434     float     sum      -1 .*N/A\n"
              collective --format nccl-tests -b 8 -e 3145736 -i 1M)
lockstep_good(nccl_tests_footer "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : [0-9.]+ \n"
              collective --format nccl-tests -b 8 -e 1M -f 4)
lockstep_good(nccl_tests_redop_all "\n        1024           256     float     avg      -1 "
              collective --format nccl-tests -b 1K -e 1K -o all)
lockstep_good(nccl_tests_root "\n        1024           256     float    none      3 "
              collective broadcast_perf --format nccl-tests -b 1K -e 1K -r 3)

lockstep_bad_flags(nccl_tests_size "^lockstep: error: -b: '8x' is not an nccl-tests size"
  collective -b 8x)
lockstep_bad_flags(nccl_tests_max_below_min "^lockstep: error: -e: maxbytes 1024 is below minbytes"
  collective -e 1K)
lockstep_bad_flags(nccl_tests_both_spellings "^lockstep: error: --min-bytes: give nccl-tests'"
  collective -b 8 --min-bytes 8)
lockstep_bad_flags(nccl_tests_redop "^lockstep: error: -o: unknown reduction 'xor'"
  collective -o xor)
lockstep_bad_flags(nccl_tests_root "^lockstep: error: -r: '8' is not a rank \\(0 .. 7\\)$"
  collective broadcast -b 8 -e 8 -r 8)
lockstep_bad_flags(nccl_tests_gpus "^lockstep: error: -g: -t x -g is 4 GPUs per node"
  collective -g 4 --gpus-per-node 8)
lockstep_bad_flags(unexpected_flag
  "^lockstep: error: lockstep collective: unexpected '-x' \\(see 'lockstep collective --help'\\)$"
  collective -b 8 -x 3)
lockstep_bad_flags(calibrate_missing_log "^lockstep: error: --from: cannot read '/nonexistent.txt'$"
  calibrate --from /nonexistent.txt)
lockstep_bad_flags(calibrate_bad_row
  "^lockstep: error: .*bad_row.txt:4:11: expected an nccl-tests row: .*found 7 columns$"
  calibrate --from ${LOCKSTEP_NT_DIR}/bad_row.txt)
lockstep_bad_flags(calibrate_no_op
  "^lockstep: error: .*no_op.txt:2:12: the log does not name its collective .*give --op$"
  calibrate --from ${LOCKSTEP_NT_DIR}/no_op.txt)
lockstep_bad_flags(calibrate_rank_count
  "^lockstep: error: .*: the log ran 8 ranks \\('#  Rank' lines\\), the cluster has 16"
  calibrate --from ${LOCKSTEP_NT_DIR}/eight_ranks.txt --nodes 2)
