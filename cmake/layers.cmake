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
