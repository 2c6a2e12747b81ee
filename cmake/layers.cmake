# One static library per layer (src/<layer>/**.cpp), one test binary per layer
# (tests/unit/<layer>/*.cpp). Layers without sources yet are interface libraries, so that
# the build never depends on a layer having code.
set(LOCKSTEP_LAYERS "" CACHE INTERNAL "")

function(lockstep_layer path)
  cmake_parse_arguments(ARG "" "" "DEPS" ${ARGN})
  string(REPLACE "/" "_" name "${path}")
  file(GLOB_RECURSE sources CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/${path}/*.cpp)
  if(path STREQUAL "engine")
    # engine/ holds the shared interface; its subfolders are layers of their own.
    file(GLOB sources CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/engine/*.cpp)
  endif()
  if(sources)
    add_library(lockstep_${name} STATIC ${sources})
    target_include_directories(lockstep_${name} PUBLIC ${PROJECT_SOURCE_DIR}/include)
    target_link_libraries(lockstep_${name} PUBLIC ${ARG_DEPS})
  else()
    add_library(lockstep_${name} INTERFACE)
    target_include_directories(lockstep_${name} INTERFACE ${PROJECT_SOURCE_DIR}/include)
    target_link_libraries(lockstep_${name} INTERFACE ${ARG_DEPS})
  endif()
  set(LOCKSTEP_LAYERS ${LOCKSTEP_LAYERS} ${path} CACHE INTERNAL "")
  # The layers this one may include: itself and every layer its DEPS reach.
  set(reach ${path})
  foreach(dep ${ARG_DEPS})
    if(dep MATCHES "^lockstep_(.+)$")
      get_property(dep_reach GLOBAL PROPERTY LOCKSTEP_REACH_${CMAKE_MATCH_1})
      list(APPEND reach ${dep_reach})
    endif()
  endforeach()
  list(REMOVE_DUPLICATES reach)
  set_property(GLOBAL PROPERTY LOCKSTEP_REACH_${name} ${reach})
endfunction()

# A test (label "layers") that every include follows the layer rule (cmake/check_layers.cmake),
# and one that the check finds a planted upward include (tests/layers/upward).
function(lockstep_layer_check)
  set(lines "")
  foreach(path ${LOCKSTEP_LAYERS})
    string(REPLACE "/" "_" name "${path}")
    get_property(reach GLOBAL PROPERTY LOCKSTEP_REACH_${name})
    string(REPLACE ";" "," reach "${reach}")
    string(APPEND lines "${path} ${reach}\n")
  endforeach()
  file(WRITE ${PROJECT_BINARY_DIR}/layers.txt "${lines}")
  set(check ${PROJECT_SOURCE_DIR}/cmake/check_layers.cmake)
  add_test(NAME layers.rule
           COMMAND ${CMAKE_COMMAND} -DROOT=${PROJECT_SOURCE_DIR}
                   -DLAYERS_FILE=${PROJECT_BINARY_DIR}/layers.txt -P ${check})
  add_test(NAME layers.rule_catches_upward_include
           COMMAND ${CMAKE_COMMAND} -DROOT=${PROJECT_SOURCE_DIR}/tests/layers/upward
                   -DLAYERS_FILE=${PROJECT_BINARY_DIR}/layers.txt -P ${check})
  # The planted file is core code including topology: the check must name it (and fail).
  set(expected "src/core/upward.cpp includes lockstep/topology/graph.hpp \\(layer topology\\); ")
  string(APPEND expected "core may include: core.*layers: 1 include")
  set_tests_properties(layers.rule_catches_upward_include PROPERTIES
                       PASS_REGULAR_EXPRESSION "${expected}")
  set_tests_properties(layers.rule layers.rule_catches_upward_include PROPERTIES LABELS layers)
endfunction()

function(lockstep_layer_tests)
  foreach(path ${LOCKSTEP_LAYERS})
    string(REPLACE "/" "_" name "${path}")
    file(GLOB tests CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/tests/unit/${path}/*.cpp)
    if(tests)
      add_executable(test_${name} ${tests})
      target_link_libraries(test_${name} PRIVATE lockstep_${name} GTest::gtest GTest::gtest_main GTest::gmock)
      target_compile_definitions(test_${name} PRIVATE
        LOCKSTEP_SOURCE_DIR="${PROJECT_SOURCE_DIR}" LOCKSTEP_BINARY_DIR="${PROJECT_BINARY_DIR}")
      gtest_discover_tests(test_${name} DISCOVERY_TIMEOUT 60 PROPERTIES LABELS unit)
    endif()
  endforeach()
endfunction()
