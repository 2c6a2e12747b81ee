# Run at build time by embed.cmake: installs the pinned charting library with `npm ci` unless
# node_modules is already current (so offline rebuilds work), then generates the C++ source that
# embeds it. Fails with a clear message when node/npm or the npm registry cannot be reached.
# Inputs: -DWEB_DIR=report/web -DOUT=generated.cpp -DNPM=path -DNODE=path
set(stamp "${WEB_DIR}/node_modules/.package-lock.json")
set(needed "${WEB_DIR}/node_modules/vega/build/vega.min.js"
  "${WEB_DIR}/node_modules/vega-lite/build/vega-lite.min.js"
  "${WEB_DIR}/node_modules/vega-embed/build/vega-embed.min.js")
set(current TRUE)
foreach(file ${stamp} ${needed})
  if(NOT EXISTS "${file}")
    set(current FALSE)
  endif()
endforeach()
if(current AND "${WEB_DIR}/package-lock.json" IS_NEWER_THAN "${stamp}")
  set(current FALSE)
endif()

if(NOT current)
  if(NOT NPM OR NOT EXISTS "${NPM}")
    message(FATAL_ERROR "lockstep report: npm not found, so the charting library cannot be "
      "installed into ${WEB_DIR}/node_modules. Install Node.js and npm (scripts/install-deps.sh "
      "does), then rebuild.")
  endif()
  message(STATUS "lockstep report: npm ci in ${WEB_DIR}")
  execute_process(COMMAND "${NPM}" ci --no-audit --no-fund --loglevel=error
    WORKING_DIRECTORY "${WEB_DIR}" RESULT_VARIABLE npm_result)
  if(NOT npm_result EQUAL 0)
    message(FATAL_ERROR "lockstep report: 'npm ci' failed in ${WEB_DIR} (is the npm registry "
      "reachable?). The report embeds Vega/Vega-Lite from npm at build time; run 'npm ci' there "
      "once with network access and later builds work offline.")
  endif()
endif()

if(NOT NODE OR NOT EXISTS "${NODE}")
  message(FATAL_ERROR "lockstep report: node not found; it is needed to embed the report page.")
endif()
execute_process(COMMAND "${NODE}" "${WEB_DIR}/embed.mjs" "${OUT}" RESULT_VARIABLE embed_result)
if(NOT embed_result EQUAL 0)
  message(FATAL_ERROR "lockstep report: embedding the report page failed (see above)")
endif()
