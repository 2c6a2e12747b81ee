# Output safety and the memory budget (issue 22), included from tests.cmake: a scenario file
# never writes outside its folder, a file lockstep did not write is never replaced without
# --force, an unwritable output is reported before the simulation.
lockstep_bad_flags(output.scenario_trace_up
  "trace_up.yaml:4:64: job.trace: path '../victim/keep.txt' goes up with '..' \\(a scenario file writes only inside its own folder"
  train ${LOCKSTEP_CLI_DIR}/output/trace_up.yaml)
lockstep_bad_flags(output.scenario_trace_absolute
  "trace_absolute.yaml:4:64: job.trace: absolute path '/tmp/lockstep-victim.json' refused"
  train ${LOCKSTEP_CLI_DIR}/output/trace_absolute.yaml)
# A regular file where the trace's directory should be.
lockstep_bad_flags(output.trace_unwritable
  "^lockstep: error: --trace: cannot create output directory '.*expect_error.sh': Not a directory$"
  train --system hgx-h100 --fabric ib-ndr --nodes 2 --model llama3-8b --tp 8 --dp 2
  --global-batch 16 --trace ${LOCKSTEP_CLI_DIR}/expect_error.sh/t.json)
lockstep_bad_flags(output.run_out_unwritable
  "^lockstep: error: --out: cannot create output directory '.*expect_error.sh/out': Not a directory$"
  run ${PROJECT_SOURCE_DIR}/scenarios/default.yaml --out ${LOCKSTEP_CLI_DIR}/expect_error.sh/out)
add_test(NAME cli.output.no_clobber
  COMMAND bash ${LOCKSTEP_CLI_DIR}/no_clobber.sh $<TARGET_FILE:lockstep>
          ${LOCKSTEP_CLI_DIR}/output/small_run.yaml ${CMAKE_BINARY_DIR}/cli-no-clobber)
set_tests_properties(cli.output.no_clobber PROPERTIES LABELS cli TIMEOUT 60)

# The memory budget: issue 22's runs that grew until std::bad_alloc (or for minutes) are refused
# before allocating, inside 200 MiB of address space (`ulimit -v`: without the estimate each of
# them dies of std::bad_alloc, exit 1) and 10 s. --max-memory is given so that the figures do not
# depend on the machine (the default is half of its memory).
function(lockstep_bounded name regex)
  add_test(NAME cli.memory.${name}
           COMMAND sh -c "ulimit -v 204800 && exec sh \"$@\"" sh
                   ${LOCKSTEP_CLI_DIR}/expect_error.sh $<TARGET_FILE:lockstep> "${regex}" ${ARGN})
  set_tests_properties(cli.memory.${name} PROPERTIES LABELS cli TIMEOUT 10)
endfunction()
lockstep_bounded(plan_alltoallv_100k
  "^lockstep: error: --max-memory: the run would need about 671 GiB \\(program set 596 GiB, alltoallv matrix 74.5 GiB,.*over the budget of 8 GiB; try fewer --ranks"
  plan --op alltoallv --ranks 100000 --max-memory 8GiB)
# A billion sequences of 8,192 tokens pass 2^40 tokens per iteration (train_config.cpp);
# 100 million are within it and refused by the estimate.
lockstep_bounded(train_billion_batch
  "^lockstep: error: --global-batch: 1000000000 sequences of 8192 tokens make 8.19e\\+12 tokens per iteration, over lockstep's limit of 2\\^40$"
  train --model llama3-8b --global-batch 1000000000 --max-memory 8GiB)
lockstep_bounded(train_100m_batch
  "^lockstep: error: --max-memory: the run would need about [0-9.]+ TiB \\(training expansion"
  train --model llama3-8b --global-batch 100000000 --max-memory 8GiB)
lockstep_bounded(collective_flow_100k_nodes
  "^lockstep: error: --max-memory: the run would need about 25.8 GiB \\(flow engine 25.4 GiB, graph 391 MiB"
  collective --engine flow --nodes 100000 --max-memory 8GiB)
# The default sweep (8 B to 8 GiB) on 4 packet-engine nodes: minutes of CPU.
lockstep_bounded(collective_packet_8gib
  "^lockstep: error: --max-events: the simulation would take about 1.56e\\+09 events \\(about 279 s of CPU"
  collective --engine packet --nodes 4)
# The default scenario's job runs reduced (256 GPUs): one replica's 4 ranks, TP collapsed; its
# 21 s step's link series (16 + 12 links x a million float samples) dominate.
lockstep_bounded(run_over_budget
  "^lockstep: error: --max-memory: the run would need about 181 MiB \\(link series 107 MiB, training expansion 41.9 MiB, timeline and trace 23.4 MiB.*graph copy \\(why section\\) 128 KiB\\)"
  run ${PROJECT_SOURCE_DIR}/scenarios/default.yaml --max-memory 64MiB --out ${CMAKE_BINARY_DIR}/cli-memory-run)
lockstep_good(memory.dry_run
  "^memory estimate: 671 GiB \\(program set 596 GiB, alltoallv matrix 74.5 GiB, lockstep 8 MiB, per-rank summaries 6.1 MiB\\); budget 1 TiB$"
  plan --op alltoallv --ranks 100000 --max-memory 1TiB --dry-run)
lockstep_good(memory.dry_run_train "^memory estimate: .*training expansion"
  train --model llama3-8b --global-batch 64 --dry-run)
# A scenario from a pipe is read once: the report keeps its text (a second read found it empty).
add_test(NAME cli.output.scenario_from_pipe
  COMMAND sh -c "cat \"$1\" | \"$0\" run /dev/stdin --out \"$2\" -q && grep -q 'a bill of materials' \"$2/results.json\""
          $<TARGET_FILE:lockstep> ${LOCKSTEP_CLI_DIR}/output/small_run.yaml
          ${CMAKE_BINARY_DIR}/cli-scenario-pipe)
set_tests_properties(cli.output.scenario_from_pipe PROPERTIES LABELS cli TIMEOUT 60)
