# End-to-end tests of `lockstep run` and its report (label "report"): the default scenario runs
# once (fixture), then its report is opened in headless Chromium, its results.json validated
# against docs/results.schema.json and its key numbers compared with the golden file; a second
# run is interrupted with SIGINT. Needs node (as the build does) and Debian's chromium.
set(LOCKSTEP_REPORT_TEST_DIR ${PROJECT_BINARY_DIR}/report-test)
set(LOCKSTEP_REPORT_TESTS ${PROJECT_SOURCE_DIR}/tests/report)
find_program(LOCKSTEP_NODE_EXE node)

add_test(NAME report.default_run
  COMMAND lockstep run ${PROJECT_SOURCE_DIR}/scenarios/default.yaml
          --out ${LOCKSTEP_REPORT_TEST_DIR}/default --quiet)
set_tests_properties(report.default_run PROPERTIES
  FIXTURES_SETUP report_default LABELS report TIMEOUT 300)

add_test(NAME report.browser
  COMMAND ${LOCKSTEP_NODE_EXE} ${LOCKSTEP_REPORT_TESTS}/browser_test.mjs
          ${LOCKSTEP_REPORT_TEST_DIR}/default/report.html ${PROJECT_BINARY_DIR}/report-screenshot.png)
set_tests_properties(report.browser PROPERTIES
  FIXTURES_REQUIRED report_default LABELS report TIMEOUT 300
  ENVIRONMENT "EXPECT_CHARTS=bom-chart,busbw-chart,breakdown-chart,jitter-chart")

add_test(NAME report.schema
  COMMAND ${LOCKSTEP_NODE_EXE} ${LOCKSTEP_REPORT_TESTS}/validate_results.mjs
          ${PROJECT_SOURCE_DIR}/docs/results.schema.json ${LOCKSTEP_REPORT_TEST_DIR}/default/results.json)
set_tests_properties(report.schema PROPERTIES FIXTURES_REQUIRED report_default LABELS report)

add_test(NAME report.golden
  COMMAND ${LOCKSTEP_NODE_EXE} ${LOCKSTEP_REPORT_TESTS}/golden.mjs
          ${LOCKSTEP_REPORT_TEST_DIR}/default/results.json ${LOCKSTEP_REPORT_TESTS}/golden/default.json)
set_tests_properties(report.golden PROPERTIES FIXTURES_REQUIRED report_default LABELS report)

add_test(NAME report.interrupt
  COMMAND bash ${LOCKSTEP_REPORT_TESTS}/interrupt_test.sh $<TARGET_FILE:lockstep>
          ${LOCKSTEP_REPORT_TESTS}/scenarios/interrupt.yaml ${LOCKSTEP_REPORT_TEST_DIR}/interrupted 1)
set_tests_properties(report.interrupt PROPERTIES LABELS report TIMEOUT 120)

# results.json of report-test/NAME validated against the schema (report.NAME_schema).
function(lockstep_report_schema name)
  add_test(NAME report.${name}_schema
    COMMAND ${LOCKSTEP_NODE_EXE} ${LOCKSTEP_REPORT_TESTS}/validate_results.mjs
            ${PROJECT_SOURCE_DIR}/docs/results.schema.json ${LOCKSTEP_REPORT_TEST_DIR}/${name}/results.json)
  set_tests_properties(report.${name}_schema PROPERTIES FIXTURES_REQUIRED report_${name} LABELS report)
endfunction()

# `lockstep run SCENARIO` into report-test/NAME (test report.NAME_run, fixture report_NAME), and
# its results.json validated against the schema (report.NAME_schema).
function(lockstep_report_scenario name scenario)
  add_test(NAME report.${name}_run
    COMMAND lockstep run ${scenario} --out ${LOCKSTEP_REPORT_TEST_DIR}/${name} --quiet)
  set_tests_properties(report.${name}_run PROPERTIES FIXTURES_SETUP report_${name} LABELS report)
  lockstep_report_schema(${name})
endfunction()

# report-test/NAME/report.html opened in headless Chromium (report.NAME_browser), with the
# browser test's expectations as ENVIRONMENT (browser_test.mjs reads EXPECT_*).
function(lockstep_report_browser name environment)
  add_test(NAME report.${name}_browser
    COMMAND ${LOCKSTEP_NODE_EXE} ${LOCKSTEP_REPORT_TESTS}/browser_test.mjs
            ${LOCKSTEP_REPORT_TEST_DIR}/${name}/report.html ${PROJECT_BINARY_DIR}/report-${name}-screenshot.png)
  set_tests_properties(report.${name}_browser PROPERTIES
    FIXTURES_REQUIRED report_${name} LABELS report TIMEOUT 300 ENVIRONMENT "${environment}")
endfunction()

# The map form of variants (3 fabrics x 2 node counts) through the preset builder: runs, validates
# against the schema and renders in the browser (no training: those sections say so).
lockstep_report_scenario(variants ${LOCKSTEP_REPORT_TESTS}/scenarios/fabric_nodes_variants.yaml)
lockstep_report_browser(variants
  "EXPECT_CHARTS=bom-chart,busbw-chart;EXPECT_VARIANTS=6")

# An inference job (docs/inference.md): results.json's inference object, and the report's
# inference section showing its numbers, with names holding HTML rendered as text (issue 26).
lockstep_report_scenario(serve ${LOCKSTEP_REPORT_TESTS}/scenarios/serve.yaml)
lockstep_report_browser(serve
  "EXPECT_INFERENCE=2;EXPECT_VARIANTS=2;EXPECT_LITERAL=<b>tp 4</b>||<script>window.lockstepInjected = 'variant'</script>||<img src=m onerror=\"window.lockstepInjected = 'model'\">")

# One schema per result kind: `train`, `collective --scenario` and `topo` with --format json
# print the objects of results.json for the same scenario (tests/report/cli_json.mjs).
lockstep_report_scenario(cli_json ${LOCKSTEP_REPORT_TESTS}/scenarios/cli_json.yaml)
add_test(NAME report.cli_json
  COMMAND ${LOCKSTEP_NODE_EXE} ${LOCKSTEP_REPORT_TESTS}/cli_json.mjs
          ${PROJECT_SOURCE_DIR}/docs/results.schema.json $<TARGET_FILE:lockstep>
          ${LOCKSTEP_REPORT_TESTS}/scenarios/cli_json.yaml ${LOCKSTEP_REPORT_TEST_DIR}/cli_json/results.json)
set_tests_properties(report.cli_json PROPERTIES FIXTURES_REQUIRED report_cli_json LABELS report)

# Scenario text holding HTML and script renders as text (issue 22): the name, description, title
# and variant names of tests/report/scenarios/html_injection.yaml.
lockstep_report_scenario(injection ${LOCKSTEP_REPORT_TESTS}/scenarios/html_injection.yaml)
lockstep_report_browser(injection
  "EXPECT_LITERAL=<svg onload=\"window.lockstepInjected = 'title'\"></svg>\"'&amp;||<script>window.lockstepInjected = 'name'</script>")

# Network counters (docs/telemetry.md): a packet-engine sweep's rows carry their busiest links
# and the run's totals, valid against the schema.
lockstep_report_scenario(packet_telemetry ${LOCKSTEP_REPORT_TESTS}/scenarios/packet_telemetry.yaml)
set_tests_properties(report.packet_telemetry_schema PROPERTIES ENVIRONMENT "EXPECT_LINKS=1")

# `lockstep sweep`'s merged report: 12 points (job.tp x fabric, tests/cli/sweep/tp_fabric.yaml)
# as variants, the four TP degrees of a fabric with identical bus bandwidth (each must keep a
# dash of its own), valid against the schema.
add_test(NAME report.sweep_run
  COMMAND lockstep sweep ${PROJECT_SOURCE_DIR}/tests/cli/sweep/tp_fabric.yaml --force --quiet
          --out ${LOCKSTEP_REPORT_TEST_DIR}/sweep)
set_tests_properties(report.sweep_run PROPERTIES FIXTURES_SETUP report_sweep LABELS report)
lockstep_report_schema(sweep)
lockstep_report_browser(sweep
  "EXPECT_CHARTS=bom-chart,busbw-chart,breakdown-chart;EXPECT_VARIANTS=12")

# Issue 23: a packet all-to-all on a small RoCE fabric with a low PFC Xoff (16 KiB: the 4 nodes'
# rail traffic meets at one spine, an incast) pauses links; the report's links-under-load table
# shows results.json's counts and the why-section says how often PFC paused.
lockstep_report_scenario(pushback ${LOCKSTEP_REPORT_TESTS}/scenarios/packet_pushback.yaml)
lockstep_report_browser(pushback
  "EXPECT_CHARTS=bom-chart,busbw-chart;EXPECT_PAUSED_LINKS=5")

# Issue 21: the pipeline's and kernels' job keys where the user reads results: DualPipe (simulated
# as its own schedule), BF16 moments, the unfused attention core recomputed, and
# the interleaved schedule's N = 8 at pp 4, interleave 2: in results.json (schema) and on the
# report's configuration lines, written out by hand.
lockstep_report_scenario(pipeline_keys ${LOCKSTEP_REPORT_TESTS}/scenarios/pipeline_keys.yaml)
add_test(NAME report.pipeline_keys_browser
  COMMAND ${LOCKSTEP_NODE_EXE} ${LOCKSTEP_REPORT_TESTS}/browser_test.mjs
          ${LOCKSTEP_REPORT_TEST_DIR}/pipeline_keys/report.html ${PROJECT_BINARY_DIR}/report-pipeline-keys-screenshot.png)
set_tests_properties(report.pipeline_keys_browser PROPERTIES
  FIXTURES_REQUIRED report_pipeline_keys LABELS report TIMEOUT 300
  ENVIRONMENT "EXPECT_VARIANTS=2;EXPECT_LITERAL=dualpipe: llama3-8b, TP1 PP4 DualPipe DP2 ZeRO-1; bf16 weight GEMMs, unfused attention, optimizer moments bf16, selective recomputation of core_attn.||interleaved: llama3-8b, TP1 PP4 VP2 N8 DP2 ZeRO-1; bf16 weight GEMMs, unfused attention, optimizer moments bf16, selective recomputation of core_attn.")
