# dmlbench_add_mpi_test(NAME <name> TARGET <exe> RANKS <n> [ARGS ...] [LABELS ...])
# Runs a GoogleTest executable through real mpirun with n ranks. The two
# OMPI_ALLOW_RUN_AS_ROOT variables let CI (root) run it; --oversubscribe
# because these machines have 2 cores; rtc_hwloc_vmhole=none as for every
# mpirun dmlbench starts (kMpirunEnvironment in orchestrator/launch/launcher.h).
function(dmlbench_add_mpi_test)
  cmake_parse_arguments(T "" "NAME;TARGET;RANKS;TIMEOUT" "ARGS;LABELS" ${ARGN})
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 300)
  endif()
  add_test(NAME ${T_NAME}
           COMMAND ${MPIEXEC_PROGRAM} --oversubscribe --mca btl self,tcp
                   -np ${T_RANKS} $<TARGET_FILE:${T_TARGET}> ${T_ARGS})
  set(env "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;OMPI_MCA_rmaps_base_oversubscribe=1;OMPI_MCA_rtc_hwloc_vmhole=none")
  set_tests_properties(${T_NAME} PROPERTIES
    ENVIRONMENT "${env}"
    LABELS "mpi;${T_LABELS}"
    TIMEOUT ${T_TIMEOUT})
endfunction()
