# End-to-end tests of `lockstep sweep` and of variants over any scenario key (label "cli"),
# included from tests.cmake.
set(LOCKSTEP_SWEEP_DIR ${LOCKSTEP_CLI_DIR}/sweep)
# A scenario's variants reach any section too: job.tp with job.dp, as a sweep's points do.
lockstep_good(run.variants_job_keys "^Report: .*report.html$"
              run -q -o ${CMAKE_BINARY_DIR}/cli-variants-job ${LOCKSTEP_SWEEP_DIR}/variants_job.yaml)
