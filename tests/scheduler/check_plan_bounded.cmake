# tessera-plan keeps what it prints bounded: a sweep over many grids lists at most --top
# candidates and exclusions in its JSON while counting all of them, and --max-procs beyond
# the image's pixels is clamped with a note. (No timing: sizes only.)
# Usage: cmake -DPLAN=... -DCSV=... -P check_plan_bounded.cmake
execute_process(
  COMMAND ${PLAN} --p3pc-csv ${CSV} --width 96 --height 64 --sigma 1 --max-procs 20000 --json --top 7
  OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "tessera-plan failed (${rc}): ${err}")
endif()
string(JSON n LENGTH "${out}" candidates)
string(JSON total GET "${out}" candidates_total)
string(JSON nex LENGTH "${out}" excluded)
string(JSON extotal GET "${out}" excluded_total)
if(NOT n EQUAL 7 OR NOT nex EQUAL 7)
  message(FATAL_ERROR "expected 7 candidates and 7 exclusions listed, got ${n} and ${nex}")
endif()
if(total LESS 1000 OR extotal LESS 1000)
  message(FATAL_ERROR "expected the counts of every candidate and exclusion, got ${total} and ${extotal}")
endif()
string(LENGTH "${out}" bytes)
if(bytes GREATER 20000)
  message(FATAL_ERROR "JSON of ${bytes} bytes for --top 7")
endif()
string(JSON first GET "${out}" candidates 0 grid)
string(JSON chosen GET "${out}" chosen grid)
if(NOT first STREQUAL chosen)
  message(FATAL_ERROR "first candidate ${first} is not the chosen ${chosen}")
endif()

# 96x64 has 6144 pixels: more ranks are clamped with a note, exactly P ranks are refused.
if(NOT err MATCHES "--max-procs 20000 clamped to 6144")
  message(FATAL_ERROR "no clamp note: ${err}")
endif()
execute_process(COMMAND ${PLAN} --p3pc-csv ${CSV} --width 96 --height 64 --procs 7000 --json
                OUTPUT_VARIABLE out2 ERROR_VARIABLE err2 RESULT_VARIABLE rc2)
if(rc2 EQUAL 0 OR NOT err2 MATCHES "--procs 7000 exceeds the image's 6144 pixels")
  message(FATAL_ERROR "--procs beyond the pixels not refused (${rc2}): ${err2}")
endif()
message(STATUS "${n} of ${total} candidates, ${nex} of ${extotal} exclusions, ${bytes} bytes")
