// Internal: the serial N_Vector operations CVODES spends its time in, compiled with remat's own flags.
// Debian's libsundials 6.4.1 is built without optimisation (its loops keep the index and the operands on
// the stack: 2.5 to 7 ns per element on the development VM, where the same loop compiled with -O2 takes
// 0.5), and at N = 4 x 10^4 those loops were 95% of a step (docs/cvodes.md, "Cost of a step").
// These kernels do the same arithmetic as SUNDIALS's serial vector, case for case (N_VLinearSum's special
// cases each round differently) and in the same order (the sums run from the first element to the last):
// every result keeps its bits, which tests/cvodes/kernels_test.cpp checks against the library's own.
#pragma once

#include <sundials/sundials_nvector.h>

namespace remat::cvodes::detail {

/// Replaces the elementwise operations, dot product, max norm and WRMS norm of a serial vector (or a
/// vector whose content starts with a serial one) with the compiled kernels; its clones copy them.
void use_compiled_kernels(N_Vector v) noexcept;

} // namespace remat::cvodes::detail
