# Installs the build tree into a scratch prefix, then builds and runs downstream projects: one that asks
# find_package(remat) for no component (remat::core only, nothing else looked for), one that asks for every
# component this build has (-D REMAT_COMPONENTS=a,b,...), one through add_subdirectory, and (with
# -D REMAT_WITH_HDF5=1) one that uses remat::hdf5 without the C language; and checks that asking for a
# component remat lacks fails, naming it.
# Run by CTest with -D REMAT_BUILD_DIR, REMAT_SOURCE_DIR, WORK_DIR, GENERATOR and REMAT_COMPONENTS.
function(run_step)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "failed (${status}): ${ARGN}\n${out}\n${err}")
  endif()
  set(last_output "${out}" PARENT_SCOPE)
endfunction()

file(REMOVE_RECURSE ${WORK_DIR})
set(prefix ${WORK_DIR}/prefix)
run_step(${CMAKE_COMMAND} --install ${REMAT_BUILD_DIR} --prefix ${prefix})
foreach(required include/remat/remat.hpp bin/remat)
  if(NOT EXISTS ${prefix}/${required})
    message(FATAL_ERROR "the install lacks ${required}")
  endif()
endforeach()
run_step(${prefix}/bin/remat plan --steps 10 --slots 3 --format json)
if(NOT last_output MATCHES "\"forward_steps\": 15")
  message(FATAL_ERROR "installed remat printed: ${last_output}")
endif()

run_step(${CMAKE_COMMAND} -S ${REMAT_SOURCE_DIR}/tests/consumer/core_only -B ${WORK_DIR}/core_only -G ${GENERATOR}
         -DCMAKE_PREFIX_PATH=${prefix})
run_step(${CMAKE_COMMAND} --build ${WORK_DIR}/core_only)
run_step(${WORK_DIR}/core_only/consumer)
message(STATUS "core-only consumer: ${last_output}")

execute_process(COMMAND ${CMAKE_COMMAND} -S ${REMAT_SOURCE_DIR}/tests/consumer/bad_component -B ${WORK_DIR}/bad
                        -G ${GENERATOR} -DCMAKE_PREFIX_PATH=${prefix}
                RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(status EQUAL 0 OR NOT "${out}${err}" MATCHES "remat has no component 'core_dump'")
  message(FATAL_ERROR "asking for a component remat lacks did not fail naming it (${status}):\n${out}\n${err}")
endif()

run_step(${CMAKE_COMMAND} -S ${REMAT_SOURCE_DIR}/tests/consumer/find_package -B ${WORK_DIR}/find_package
         -G ${GENERATOR} -DCMAKE_PREFIX_PATH=${prefix} -DREMAT_COMPONENTS=${REMAT_COMPONENTS})
run_step(${CMAKE_COMMAND} --build ${WORK_DIR}/find_package)
run_step(${WORK_DIR}/find_package/consumer)
message(STATUS "find_package consumer: ${last_output}")
if(REMAT_WITH_CVODES AND NOT EXISTS ${WORK_DIR}/find_package/cvodes_consumer)
  message(FATAL_ERROR "this build has remat::cvodes, but the installed package did not offer it to a consumer")
endif()
if(REMAT_WITH_MPI AND NOT EXISTS ${WORK_DIR}/find_package/mpi_consumer)
  message(FATAL_ERROR "this build has remat::mpi, but the installed package did not offer it to a consumer")
endif()
foreach(optional cuda_consumer thrust_consumer ode_consumer cvodes_consumer mpi_consumer mpi_hdf5_consumer)
  if(EXISTS ${WORK_DIR}/find_package/${optional})
    run_step(${WORK_DIR}/find_package/${optional})
    message(STATUS "find_package ${optional}: ${last_output}")
  endif()
endforeach()

if(REMAT_WITH_HDF5)
  run_step(${CMAKE_COMMAND} -S ${REMAT_SOURCE_DIR}/tests/consumer/hdf5 -B ${WORK_DIR}/hdf5 -G ${GENERATOR}
           -DCMAKE_PREFIX_PATH=${prefix})
  run_step(${CMAKE_COMMAND} --build ${WORK_DIR}/hdf5)
  run_step(${WORK_DIR}/hdf5/hdf5_consumer)
  message(STATUS "remat::hdf5 consumer: ${last_output}")
endif()

run_step(${CMAKE_COMMAND} -S ${REMAT_SOURCE_DIR}/tests/consumer/add_subdirectory -B ${WORK_DIR}/add_subdirectory
         -G ${GENERATOR} -DREMAT_SOURCE_DIR=${REMAT_SOURCE_DIR})
run_step(${CMAKE_COMMAND} --build ${WORK_DIR}/add_subdirectory --target consumer)
run_step(${WORK_DIR}/add_subdirectory/consumer)
message(STATUS "add_subdirectory consumer: ${last_output}")
file(REMOVE_RECURSE ${WORK_DIR})
