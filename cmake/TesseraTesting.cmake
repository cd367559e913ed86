# Helpers for registering tessera's tests with CTest.
#
# tessera_add_unit_test(NAME src... LIBS lib...)
#   A plain GoogleTest executable (no MPI), discovered test by test.
#
# tessera_add_mpi_test(NAME src... LIBS lib... PROCS 1 2 3 ...)
#   A GoogleTest executable linked with tests/mpi_test_main.cpp, run once per rank
#   count under mpiexec. The environment that Open MPI needs here (running as root,
#   more ranks than cores) is set by the build, not by the caller's shell.
include(GoogleTest)

set(TESSERA_MPI_TEST_ENV
    OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    OMPI_MCA_rmaps_base_oversubscribe=1 PRTE_MCA_rmaps_default_mapping_policy=:oversubscribe
    OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_hwloc_base_binding_policy=none
    # No test reads or writes the user's performance database: the default path moves
    # into the build tree (a user's database of an older schema would fail the programs'
    # read-only opens; its measurements would change the plans the tests run).
    TESSERA_PERFDB= XDG_DATA_HOME=${CMAKE_BINARY_DIR}/test-home)

function(tessera_add_unit_test name)
  cmake_parse_arguments(ARG "" "" "LIBS" ${ARGN})
  add_executable(${name} ${ARG_UNPARSED_ARGUMENTS})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} GTest::gtest_main)
  gtest_discover_tests(${name} DISCOVERY_TIMEOUT 60 PROPERTIES LABELS unit TIMEOUT 120)
endfunction()

function(tessera_add_mpi_test name)
  cmake_parse_arguments(ARG "" "TIMEOUT" "LIBS;PROCS" ${ARGN})
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 300)
  endif()
  add_executable(${name} ${ARG_UNPARSED_ARGUMENTS} ${PROJECT_SOURCE_DIR}/tests/mpi_test_main.cpp)
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} GTest::gtest MPI::MPI_CXX)
  foreach(np IN LISTS ARG_PROCS)
    add_test(NAME ${name}.np${np}
             COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${np} --oversubscribe
                     ${MPIEXEC_PREFLAGS} $<TARGET_FILE:${name}> ${MPIEXEC_POSTFLAGS})
    set_tests_properties(${name}.np${np} PROPERTIES
        ENVIRONMENT "${TESSERA_MPI_TEST_ENV}" LABELS mpi TIMEOUT ${ARG_TIMEOUT}
        PROCESSORS 1)
  endforeach()
endfunction()
