# The report page (template, script and the Vega charting library from npm) embedded into
# lockstep_report at build time. Included from the top CMakeLists.txt after the layers.
set(LOCKSTEP_WEB_DIR ${PROJECT_SOURCE_DIR}/report/web)
set(LOCKSTEP_REPORT_ASSETS_CPP ${PROJECT_BINARY_DIR}/generated/report_assets.cpp)
find_program(LOCKSTEP_NPM npm)
find_program(LOCKSTEP_NODE node)
file(MAKE_DIRECTORY ${PROJECT_BINARY_DIR}/generated)
add_custom_command(
  OUTPUT ${LOCKSTEP_REPORT_ASSETS_CPP}
  COMMAND ${CMAKE_COMMAND} -DWEB_DIR=${LOCKSTEP_WEB_DIR} -DOUT=${LOCKSTEP_REPORT_ASSETS_CPP}
          -DNPM=${LOCKSTEP_NPM} -DNODE=${LOCKSTEP_NODE} -P ${LOCKSTEP_WEB_DIR}/build_assets.cmake
  DEPENDS ${LOCKSTEP_WEB_DIR}/package.json ${LOCKSTEP_WEB_DIR}/package-lock.json
          ${LOCKSTEP_WEB_DIR}/template.html ${LOCKSTEP_WEB_DIR}/report.js
          ${LOCKSTEP_WEB_DIR}/embed.mjs ${LOCKSTEP_WEB_DIR}/build_assets.cmake
  COMMENT "Report page: npm ci (when needed) and embedding Vega into lockstep"
  VERBATIM)
target_sources(lockstep_report PRIVATE ${LOCKSTEP_REPORT_ASSETS_CPP})
