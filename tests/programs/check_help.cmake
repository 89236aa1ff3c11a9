# The programs_help test: every program of the build (the tool, the examples, the benchmarks; the list comes
# from CMake, tests/CMakeLists.txt) run with --help answers as a user expects: exit 0, a usage line on
# stdout, nothing on stderr. All are run; the failures are listed together.
# Run by CTest with -D PROGRAMS=path1;path2;... (a list, quoted).
set(failures "")
list(LENGTH PROGRAMS count)
foreach(program IN LISTS PROGRAMS)
  get_filename_component(name ${program} NAME)
  execute_process(COMMAND ${program} --help RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err
                  TIMEOUT 30)
  set(why "")
  if(NOT status STREQUAL "0")
    string(APPEND why " exit ${status};")
  endif()
  if(NOT out MATCHES "(^|\n)[ \t]*[Uu]sage:")
    string(APPEND why " no usage line on stdout;")
  endif()
  if(NOT err STREQUAL "")
    string(APPEND why " stderr not empty: ${err};")
  endif()
  if(why)
    string(APPEND failures "  ${name} --help:${why}\n")
  endif()
endforeach()
if(failures)
  message(FATAL_ERROR "of ${count} programs, these do not answer --help as they should:\n${failures}")
endif()
message(STATUS "all ${count} programs answer --help: usage on stdout, exit 0, stderr empty")
