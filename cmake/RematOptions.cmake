# Build options. Parts that need a third-party library default to ON only when it is found.
# `pip install .` (pyproject.toml) sets REMAT_PYTHON_PACKAGE: then only remat::core, remat::hdf5 where HDF5 is
# found, and the Python extension remat._remat are built (no tools, tests, examples, benchmarks or adapters),
# and only the Python package is installed (install component `python`).
option(REMAT_PYTHON_PACKAGE "Build only the core, the HDF5 level and the Python extension (pip install . sets it)" OFF)
set(remat_full_default ${PROJECT_IS_TOP_LEVEL})
if(REMAT_PYTHON_PACKAGE)
  set(remat_full_default OFF)
endif()
option(REMAT_BUILD_TOOLS "Build the remat command-line tool (needs CLI11, nlohmann-json, fmt)" ${remat_full_default})
option(REMAT_BUILD_TESTS "Build the test suite (needs Boost.Test)" ${remat_full_default})
option(REMAT_BUILD_EXAMPLES "Build the examples" ${remat_full_default})
option(REMAT_BUILD_BENCH "Build the benchmarks under bench/" ${remat_full_default})
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
