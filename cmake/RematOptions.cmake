# Build options. Parts that need a third-party library default to ON only when it is found.
option(REMAT_BUILD_TOOLS "Build the remat command-line tool (needs CLI11, nlohmann-json, fmt)" ${PROJECT_IS_TOP_LEVEL})
option(REMAT_BUILD_TESTS "Build the test suite (needs Boost.Test)" ${PROJECT_IS_TOP_LEVEL})
option(REMAT_BUILD_EXAMPLES "Build the examples" ${PROJECT_IS_TOP_LEVEL})
option(REMAT_BUILD_BENCH "Build the benchmarks under bench/" ${PROJECT_IS_TOP_LEVEL})
option(REMAT_WARNINGS_AS_ERRORS "Treat compiler warnings in remat's own code as errors" ON)
set(REMAT_SANITIZE "" CACHE STRING "Sanitizers for remat's own targets: empty, address,undefined, or thread")

set(CMAKE_CXX_STANDARD 20)
set(CMAKE_CXX_STANDARD_REQUIRED ON)
set(CMAKE_CXX_EXTENSIONS OFF)
set(CMAKE_EXPORT_COMPILE_COMMANDS ON)

if(REMAT_SANITIZE)
  # Applied to everything built here, so that instrumented code never calls uninstrumented copies.
  # (C and C++ only: nvcc takes no -fsanitize; see cmake/RematCuda.cmake.)
  add_compile_options($<$<COMPILE_LANGUAGE:C,CXX>:-fsanitize=${REMAT_SANITIZE}>
                      $<$<COMPILE_LANGUAGE:C,CXX>:-fno-omit-frame-pointer>
                      $<$<COMPILE_LANGUAGE:C,CXX>:-fno-sanitize-recover=all>)
  add_link_options(-fsanitize=${REMAT_SANITIZE})
endif()
