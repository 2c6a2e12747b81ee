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

# Exactly COUNT lines of the output match REGEX (one line each: grep reads a "\n" in a pattern
# as two patterns).
function(lockstep_lines name regex count)
  add_test(NAME cli.nccl_tests.${name}
           COMMAND sh ${LOCKSTEP_CLI_DIR}/expect_lines.sh $<TARGET_FILE:lockstep> "${regex}"
                   ${count} ${ARGN})
  set_tests_properties(cli.nccl_tests.${name} PROPERTIES LABELS cli)
endfunction()
# -i 1M from 8 B: 8, 1048584, 2097160, 3145736 (786,434 floats).
lockstep_lines(step_bytes "^     3145736        786434     float     sum      -1 .* N/A$" 1
               collective --format nccl-tests -b 8 -e 3145736 -i 1M)
lockstep_lines(step_bytes_rows "^ +[0-9]+ +[0-9]+ +float +sum +-1 " 4
               collective --format nccl-tests -b 8 -e 3145736 -i 1M)
lockstep_lines(footer "^# Avg bus bandwidth    : [0-9.]+ $" 1
               collective --format nccl-tests -b 8 -e 1M -f 4)
# -o all: a block per op in nccl-tests' order, the same time in each.
lockstep_lines(redop_all "^        1024           256     float +(sum|prod|max|min|avg) +-1 " 5
               collective --format nccl-tests -b 1K -e 1K -o all)
lockstep_lines(root "^        1024           256     float    none       3 " 1
               collective broadcast_perf --format nccl-tests -b 1K -e 1K -r 3)
# -d all: one log (one footer) with a row per type lockstep has.
lockstep_lines(datatype_all "^        1024 +[0-9]+ +(int8|uint8|int32|uint32|int64|float|double|bfloat16) " 8
               collective --format nccl-tests -b 1K -e 1K -d all -q)
lockstep_lines(datatype_all_one_footer "^# Avg bus bandwidth" 1
               collective --format nccl-tests -b 1K -e 1K -d all -q)
lockstep_bad_flags(nccl_tests_iters "^lockstep: error: -n: 'many' is not an integer$"
  collective -n many)
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
lockstep_bad_flags(nccl_tests_gpus_too_many
  "^lockstep: error: -g: gb200-nvl72 ships 4 GPUs per node, cannot use 8 \\(-t x -g is the GPUs"
  collective -g 8 -b 8 -e 8 --system gb200-nvl72)
lockstep_bad_flags(calibrate_gpus_too_many "^lockstep: error: -g: hgx-h100 ships 8 GPUs per node"
  calibrate --from ${LOCKSTEP_NT_DIR}/eight_ranks.txt -g 16)
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
