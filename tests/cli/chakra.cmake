# `lockstep chakra run` and `train --chakra-out` (docs/chakra.md): a round trip on each engine,
# and bad traces refused in one line, exit 2.
foreach(engine analytical flow)
  add_test(NAME cli.chakra.roundtrip_${engine}
           COMMAND sh ${LOCKSTEP_CLI_DIR}/chakra_roundtrip.sh $<TARGET_FILE:lockstep>
                   ${CMAKE_CURRENT_BINARY_DIR}/chakra_roundtrip_${engine} ${engine})
  set_tests_properties(cli.chakra.roundtrip_${engine} PROPERTIES LABELS cli)
endforeach()
# A metadata message (length 7: version "0.0.4") and then a length byte whose continuation bit
# is set at the end of the file: the varint starts at byte 8.
set(chakra_bad ${CMAKE_CURRENT_BINARY_DIR}/chakra_bad)
file(MAKE_DIRECTORY ${chakra_bad})
add_test(NAME cli.chakra.write_truncated
         COMMAND sh -c "printf '\\007\\012\\0050.0.4\\226' > ${chakra_bad}/t.0.et")
add_test(NAME cli.bad_flags.chakra_truncated_varint
         COMMAND sh ${LOCKSTEP_CLI_DIR}/expect_error.sh $<TARGET_FILE:lockstep>
                 "t\\.0\\.et: truncated varint at byte 8 \\(message 1\\)$" chakra run ${chakra_bad}/t)
set_tests_properties(cli.bad_flags.chakra_truncated_varint PROPERTIES
                     DEPENDS cli.chakra.write_truncated FIXTURES_REQUIRED chakra_bad)
set_tests_properties(cli.chakra.write_truncated PROPERTIES FIXTURES_SETUP chakra_bad)
lockstep_bad_flags(chakra_no_trace "/nonexistent/t: no Chakra trace files" chakra run
                   /nonexistent/t)
lockstep_bad_flags(chakra_bad_engine "--engine: packet not in \\{analytical,flow\\}" chakra run
                   /nonexistent/t --engine packet)
set_tests_properties(cli.chakra.write_truncated cli.bad_flags.chakra_truncated_varint
                     PROPERTIES LABELS cli)
# A GlobalMetadata whose version string is not UTF-8 (field 1, one byte 0xff): libprotobuf's own
# log line is silenced, so stderr holds lockstep's one line (found by fuzz_chakra).
set(chakra_utf8 ${CMAKE_CURRENT_BINARY_DIR}/chakra_utf8)
file(MAKE_DIRECTORY ${chakra_utf8})
add_test(NAME cli.chakra.write_bad_utf8
         COMMAND sh -c "printf '\\003\\012\\001\\377' > ${chakra_utf8}/u.0.et")
add_test(NAME cli.bad_flags.chakra_bad_utf8
         COMMAND sh ${LOCKSTEP_CLI_DIR}/expect_error.sh $<TARGET_FILE:lockstep>
                 "u\\.0\\.et: message 0 at byte 0 is not a GlobalMetadata$" chakra run
                 ${chakra_utf8}/u)
set_tests_properties(cli.chakra.write_bad_utf8 PROPERTIES FIXTURES_SETUP chakra_utf8 LABELS cli)
set_tests_properties(cli.bad_flags.chakra_bad_utf8 PROPERTIES FIXTURES_REQUIRED chakra_utf8
                     LABELS cli)
