# Runs tessera-plan --app APP on a P-3PC CSV for up to 4 ranks with --json and checks
# the program's cost: its operations and steps listed with every phase, and the program's
# total equal to the chosen candidate's (the unit tests check the sums).
# Usage: cmake -DPLAN=... -DCSV=... -DAPP=corners -DOPS=<operations> -P check_plan_app.cmake
execute_process(
  COMMAND ${PLAN} --p3pc-csv ${CSV} --app ${APP} --width 300 --height 200 --sigma 1.5 --max-procs 4 --json
  OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "tessera-plan --app ${APP} failed (${rc}): ${err}")
endif()
string(JSON app GET "${out}" app)
string(JSON nops LENGTH "${out}" program operations)
if(NOT app STREQUAL APP OR NOT nops EQUAL OPS)
  message(FATAL_ERROR "expected app ${APP} with ${OPS} operations, got ${app} with ${nops}")
endif()
string(JSON total GET "${out}" program predicted_us total)
string(JSON chosen_total GET "${out}" chosen predicted_us total)
string(JSON nsteps LENGTH "${out}" program steps)
if(nsteps LESS 3)
  message(FATAL_ERROR "expected the program's steps, got ${nsteps}")
endif()
foreach(key scatter exchange compute reduce gather total)
  string(JSON v GET "${out}" program predicted_us ${key})
endforeach()
if(NOT total STREQUAL chosen_total)
  message(FATAL_ERROR "program total ${total} differs from the chosen candidate's ${chosen_total}")
endif()
message(STATUS "${APP}: ${nops} operations, ${nsteps} steps, total ${total} us")
