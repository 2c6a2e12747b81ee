# End-to-end tests of `lockstep sweep` and of variants over any scenario key (label "cli"),
# included from tests.cmake.
set(LOCKSTEP_SWEEP_DIR ${LOCKSTEP_CLI_DIR}/sweep)
# Each runs the 12-point sweep of tests/cli/sweep/tp_fabric.yaml (job.tp x fabric) in its own
# directory (tests/cli/sweep.sh says what each mode checks).
foreach(mode local mpi resume equals_run grid variants)
  add_test(NAME cli.sweep.${mode}
           COMMAND sh ${LOCKSTEP_CLI_DIR}/sweep.sh $<TARGET_FILE:lockstep> ${LOCKSTEP_SWEEP_DIR}
                   ${CMAKE_BINARY_DIR}/cli-sweep-${mode} ${mode})
  set_tests_properties(cli.sweep.${mode} PROPERTIES LABELS cli SKIP_RETURN_CODE 77)
endforeach()
lockstep_bad_flags(sweep.bad_key "bad_key.yaml:4:12: grid.jbo.dp\\[0\\]: unknown scenario key 'jbo.dp' \\(a key starts with one of cluster, "
                   sweep ${LOCKSTEP_SWEEP_DIR}/bad_key.yaml --out ${CMAKE_BINARY_DIR}/cli-sweep-bad)
lockstep_bad_flags(sweep.bad_value "bad_value.yaml:4:14: points\\[1\\].job.tp: in point 'job.tp=3': 32 attention heads do not split over tp=3$"
                   sweep ${LOCKSTEP_SWEEP_DIR}/bad_value.yaml --out ${CMAKE_BINARY_DIR}/cli-sweep-bad)
lockstep_bad_flags(sweep.bad_point_path "bad_point_path.yaml:3:24: .*'collectives' is a list of 1 item, indexed 0..0"
                   sweep ${LOCKSTEP_SWEEP_DIR}/bad_point_path.yaml --out ${CMAKE_BINARY_DIR}/cli-sweep-bad)
