# remat_warnings(target): strict warnings for remat's own code (never propagated to consumers).
function(remat_warnings target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wnon-virtual-dtor
      -Wold-style-cast -Wcast-align -Woverloaded-virtual -Wimplicit-fallthrough -Wmissing-declarations>
    # GCC 12 reports false -Wrestrict overlaps inside std::string's operator+ at -O2/-O3 (GCC bug 105651).
    $<$<AND:$<COMPILE_LANGUAGE:CXX>,$<CXX_COMPILER_ID:GNU>,$<VERSION_LESS:$<CXX_COMPILER_VERSION>,13>>:-Wno-restrict>
    $<$<AND:$<COMPILE_LANGUAGE:CXX>,$<BOOL:${REMAT_WARNINGS_AS_ERRORS}>>:-Werror>
    # nvcc: the host compiler's warnings on the host side, and nvcc's own (front end, ptxas) as errors.
    $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra,-Wshadow,-Wconversion,-Wnon-virtual-dtor,-Wcast-align>
    $<$<AND:$<COMPILE_LANGUAGE:CUDA>,$<BOOL:${REMAT_WARNINGS_AS_ERRORS}>>:--Werror=all-warnings -Xcompiler=-Werror>)
endfunction()
