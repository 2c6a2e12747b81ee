# libFuzzer targets (issue 22), built where clang builds with sanitizers (the CI's asan build:
# scripts/build.sh asan with CXX=clang++-14), and run by ctest with the unit tests there:
#   fuzz_<t>_replay   every seed and every past finding (tests/fuzz/corpus/<t>, regress/<t>) once
#   fuzz_<t>_explore  a few seconds of mutation from the seeds (fixed seed); about a minute in all
# Longer runs: build/asan/tests/fuzz/fuzz_yaml -max_total_time=3600 DIR tests/fuzz/corpus/yaml
if(NOT (LOCKSTEP_SANITIZE AND CMAKE_CXX_COMPILER_ID STREQUAL "Clang"))
  return()
endif()

set(LOCKSTEP_FUZZ_SECONDS 10 CACHE STRING "Seconds of mutation per fuzz target in the test suite")
set(fuzz_dir ${PROJECT_SOURCE_DIR}/tests/fuzz)
set(fuzz_targets
    yaml:lockstep_config
    topology_json:lockstep_topology
    units:lockstep_core
    noise_faults:lockstep_workload
    rank_list:lockstep_workload
    job:lockstep_workload
    chakra:lockstep_chakra)
foreach(entry ${fuzz_targets})
  string(REPLACE ":" ";" parts "${entry}")
  list(GET parts 0 name)
  list(GET parts 1 library)
  add_executable(fuzz_${name} ${fuzz_dir}/fuzz_${name}.cpp)
  target_link_libraries(fuzz_${name} PRIVATE ${library})
  target_compile_options(fuzz_${name} PRIVATE -fsanitize=fuzzer)
  target_link_options(fuzz_${name} PRIVATE -fsanitize=fuzzer)
  set_target_properties(fuzz_${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/tests/fuzz)
  set(corpora ${fuzz_dir}/corpus/${name})
  if(EXISTS ${fuzz_dir}/regress/${name})
    list(APPEND corpora ${fuzz_dir}/regress/${name})
  endif()
  add_test(NAME fuzz_${name}_replay
           COMMAND bash ${fuzz_dir}/run_fuzz.sh replay $<TARGET_FILE:fuzz_${name}> ${corpora})
  add_test(NAME fuzz_${name}_explore
           COMMAND bash ${fuzz_dir}/run_fuzz.sh explore $<TARGET_FILE:fuzz_${name}>
                   ${LOCKSTEP_FUZZ_SECONDS} ${corpora})
  set_tests_properties(fuzz_${name}_replay fuzz_${name}_explore PROPERTIES LABELS "unit;fuzz")
endforeach()
