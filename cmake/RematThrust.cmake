# Thrust for the CPU back ends (CPP and OpenMP) under the host compiler. Installed with remat, so that
# downstream projects can build the same Thrust code on a machine without a GPU.
#
# Which Thrust: the CUDA toolkit's own (CCCL, under <toolkit>/include/cccl) whenever the toolkit is
# present, because nvcc always compiles against it and one program must never mix two Thrust versions;
# the system's Thrust (Debian's libthrust-dev) only on machines without the toolkit.
#
#     remat_find_thrust()                        # sets REMAT_THRUST_FOUND, _INCLUDE_DIR, _VERSION
#     remat_use_thrust(my_target BACKEND OMP)    # CPP or OMP; adds the headers, defines, OpenMP
include_guard(GLOBAL)

function(remat_find_thrust)
  if(REMAT_THRUST_FOUND)
    return()
  endif()
  find_package(CUDAToolkit QUIET)
  set(dir "")
  if(CUDAToolkit_FOUND)
    foreach(inc IN LISTS CUDAToolkit_INCLUDE_DIRS)
      if(NOT dir AND EXISTS ${inc}/cccl/thrust/version.h)
        set(dir ${inc}/cccl)
      elseif(NOT dir AND EXISTS ${inc}/thrust/version.h)
        set(dir ${inc})
      endif()
    endforeach()
    set(origin "the CUDA toolkit ${CUDAToolkit_VERSION}")
  endif()
  if(NOT dir)
    find_path(REMAT_SYSTEM_THRUST_DIR thrust/version.h)
    if(REMAT_SYSTEM_THRUST_DIR)
      set(dir ${REMAT_SYSTEM_THRUST_DIR})
      set(origin "the system (no CUDA toolkit found)")
    endif()
  endif()
  if(NOT dir)
    set(REMAT_THRUST_FOUND FALSE PARENT_SCOPE)
    message(STATUS "remat: no Thrust found; the CPU back-end tests are not built (install libthrust-dev)")
    return()
  endif()
  file(STRINGS ${dir}/thrust/version.h line REGEX "^#define THRUST_VERSION [0-9]+")
  string(REGEX MATCH "[0-9]+" version "${line}")
  set(REMAT_THRUST_FOUND TRUE CACHE INTERNAL "")
  set(REMAT_THRUST_INCLUDE_DIR ${dir} CACHE INTERNAL "")
  set(REMAT_THRUST_VERSION ${version} CACHE INTERNAL "")
  message(STATUS "remat: Thrust ${version} from ${origin}: ${dir}")
endfunction()

# remat_use_thrust(<target> BACKEND CPP|OMP): compiles <target> with the host compiler against Thrust's
# CPU back end, where "device" memory is host memory.
function(remat_use_thrust target)
  cmake_parse_arguments(arg "" "BACKEND" "" ${ARGN})
  if(NOT arg_BACKEND MATCHES "^(CPP|OMP)$")
    message(FATAL_ERROR "remat_use_thrust(${target}): BACKEND must be CPP or OMP, got '${arg_BACKEND}'")
  endif()
  remat_find_thrust()
  if(NOT REMAT_THRUST_FOUND)
    message(FATAL_ERROR "remat_use_thrust(${target}): no Thrust found (install the CUDA toolkit or libthrust-dev)")
  endif()
  get_target_property(libs ${target} LINK_LIBRARIES)
  if(libs MATCHES "(^|;)(remat::cuda|remat_cuda)(;|$)")
    message(FATAL_ERROR "remat_use_thrust(${target}): a CPU back-end target must not link remat::cuda "
                        "(Thrust's CUDA and CPU back ends define the same names differently)")
  endif()
  # SYSTEM: the headers come first on the search path (ahead of /usr/include and any other Thrust) and
  # their warnings are not ours.
  target_include_directories(${target} SYSTEM BEFORE PRIVATE ${REMAT_THRUST_INCLUDE_DIR})
  target_compile_definitions(${target} PRIVATE THRUST_DEVICE_SYSTEM=THRUST_DEVICE_SYSTEM_${arg_BACKEND}
                             THRUST_HOST_SYSTEM=THRUST_HOST_SYSTEM_CPP REMAT_THRUST_VERSION=${REMAT_THRUST_VERSION})
  if(arg_BACKEND STREQUAL "OMP")
    find_package(OpenMP REQUIRED COMPONENTS CXX)
    target_link_libraries(${target} PRIVATE OpenMP::OpenMP_CXX)
  endif()
endfunction()
