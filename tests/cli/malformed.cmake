# The malformed-input corpus (issue 22): each tests/cli/malformed/*.yaml starts with a line
# "# expect: REGEX"; `lockstep run FILE` must exit 2 with one stderr line matching REGEX (which
# names the file, line, column and field), within the bounds of expect_bounded_error.sh.
file(GLOB LOCKSTEP_MALFORMED CONFIGURE_DEPENDS ${LOCKSTEP_CLI_DIR}/malformed/*.yaml)
foreach(file ${LOCKSTEP_MALFORMED})
  get_filename_component(name ${file} NAME_WE)
  file(STRINGS ${file} header LIMIT_COUNT 1 REGEX "^# expect: ")
  string(REGEX REPLACE "^# expect: " "" regex "${header}")
  add_test(NAME cli.malformed.${name}
           COMMAND sh ${LOCKSTEP_CLI_DIR}/expect_bounded_error.sh $<TARGET_FILE:lockstep>
                   "${regex}" run ${file} --out ${PROJECT_BINARY_DIR}/cli_malformed_out -q)
  set_tests_properties(cli.malformed.${name} PROPERTIES LABELS cli)
endforeach()
