# The snippets_docs test: extracts every ```cpp block of README.md and docs/*.md (one translation unit per
# page, tests/snippets/extract_snippets.py), installs the build tree into a scratch prefix and compiles the
# pages as a downstream project would (tests/consumer/doc_snippets), in parallel, syntax only.
# Run by CTest with -D REMAT_BUILD_DIR, REMAT_SOURCE_DIR, WORK_DIR, GENERATOR, PYTHON and AVAILABLE (the
# comma-separated components this build has, and "thrust" where Thrust was found).
function(run_step)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "failed (${status}): ${ARGN}\n${out}\n${err}")
  endif()
  set(last_output "${out}" PARENT_SCOPE)
endfunction()

file(REMOVE_RECURSE ${WORK_DIR})
run_step(${PYTHON} ${REMAT_SOURCE_DIR}/tests/snippets/extract_snippets.py ${REMAT_SOURCE_DIR} ${WORK_DIR}/pages
         core,${AVAILABLE})
message(STATUS "${last_output}")
run_step(${CMAKE_COMMAND} --install ${REMAT_BUILD_DIR} --prefix ${WORK_DIR}/prefix)
run_step(${CMAKE_COMMAND} -S ${REMAT_SOURCE_DIR}/tests/consumer/doc_snippets -B ${WORK_DIR}/build -G ${GENERATOR}
         -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix -DSNIPPET_DIR=${WORK_DIR}/pages)
run_step(${CMAKE_COMMAND} --build ${WORK_DIR}/build --parallel)
file(REMOVE_RECURSE ${WORK_DIR})
