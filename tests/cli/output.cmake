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
