# tessera-plan on a real schema-3 database (a legacy run without quality), migrated with
# `tessera-perfdb migrate`: the JSON names the run it priced from ("p3pc_run": 1, quality
# null) and stderr says in one note that no run passes the quality and which run is used.
# Usage: cmake -DPLAN=... -DPERFDB_TOOL=... -DDB=... -DWORK=... -P check_plan_run.cmake
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
file(COPY ${DB} DESTINATION ${WORK})
get_filename_component(name ${DB} NAME)
set(copy ${WORK}/${name})
execute_process(COMMAND ${PERFDB_TOOL} --perfdb ${copy} migrate RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "migrate failed (${rc}): ${err}")
endif()
execute_process(
  COMMAND ${PLAN} --perfdb ${copy} --machine v3-box --width 512 --height 512 --sigma 1 --max-procs 2 --json --top 1
  OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "tessera-plan failed (${rc}): ${err}")
endif()
string(JSON run GET "${out}" p3pc_run)
if(NOT run EQUAL 1)
  message(FATAL_ERROR "p3pc_run is '${run}', expected 1")
endif()
string(JSON quality TYPE "${out}" p3pc_quality)
if(NOT quality STREQUAL "NULL")
  message(FATAL_ERROR "p3pc_quality of a legacy run is ${quality}, expected null")
endif()
string(FIND "${err}" "passes the P-3PC repeatability quality; using the newest, run 1 (quality not recorded)" at)
if(at EQUAL -1)
  message(FATAL_ERROR "no fallback note on stderr: ${err}")
endif()
