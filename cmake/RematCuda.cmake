# The optional CUDA part (remat::cuda): configured only when nvcc is found, so that a machine without the
# CUDA toolkit builds and tests everything else. Included from the top-level CMakeLists.txt, whose scope
# enable_language(CUDA) needs.
#
# Architectures: 80 (A100) as SASS only and 90 (H100/H200) as SASS plus PTX, which the driver compiles
# for newer GPUs (Blackwell) at load time. Two targets keep nvcc's compile time small (every .cu file is
# compiled once per architecture); set CMAKE_CUDA_ARCHITECTURES (e.g. `native`) to choose others.
include(CheckLanguage)
check_language(CUDA)

# CUDA and the sanitizers do not mix: ASan needs protect_shadow_gap=0 for the CUDA driver and TSan does
# not support it. Sanitized builds therefore leave the CUDA part out unless asked for explicitly; the
# logic of the device level is still exercised there on the CPU back end (tests/thrust). The Python package
# (REMAT_PYTHON_PACKAGE) needs no device level and leaves it out too.
set(remat_cuda_default OFF)
if(CMAKE_CUDA_COMPILER AND NOT REMAT_SANITIZE AND NOT REMAT_PYTHON_PACKAGE)
  set(remat_cuda_default ON)
endif()
option(REMAT_WITH_CUDA "Build remat::cuda, the GPU level (needs nvcc)" ${remat_cuda_default})

if(REMAT_WITH_CUDA)
  if(NOT CMAKE_CUDA_COMPILER)
    message(FATAL_ERROR "REMAT_WITH_CUDA is ON but no CUDA compiler (nvcc) was found; set CMAKE_CUDA_COMPILER "
                        "or configure with -DREMAT_WITH_CUDA=OFF")
  endif()
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
    set(CMAKE_CUDA_ARCHITECTURES 80-real 90)
  endif()
  enable_language(CUDA)
  # CMake < 3.26 knows no C++20 flag for nvcc; nvcc has accepted -std=c++20 since CUDA 12.0.
  if(NOT CMAKE_CUDA20_STANDARD_COMPILE_OPTION)
    if(CMAKE_CUDA_COMPILER_VERSION VERSION_LESS 12.0)
      message(FATAL_ERROR "remat::cuda needs C++20 device code: nvcc 12.0 or newer, found ${CMAKE_CUDA_COMPILER_VERSION}")
    endif()
    set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION -std=c++20)
    set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION -std=c++20)
  endif()
  set(CMAKE_CUDA_STANDARD 20)
  set(CMAKE_CUDA_STANDARD_REQUIRED ON)
  set(CMAKE_CUDA_EXTENSIONS OFF)
  # One shared CUDA runtime for the library and every program linking it.
  set(CMAKE_CUDA_RUNTIME_LIBRARY Shared)
  find_package(CUDAToolkit REQUIRED)
  message(STATUS "remat: CUDA ${CMAKE_CUDA_COMPILER_VERSION}, architectures ${CMAKE_CUDA_ARCHITECTURES}")
else()
  message(STATUS "remat: building without CUDA (no nvcc found, or REMAT_WITH_CUDA=OFF)")
endif()
