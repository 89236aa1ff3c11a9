// remat/dense/detail/vector_math.hpp — transcendental functions over arrays on the CPU (tanh and the
// logistic function), through glibc's vector math library (libmvec) where this build found it.
//
// A scalar tanh from libm is most of a small MLP's forward time on the CPU (about two thirds of the neural-ODE
// benchmark's). libmvec evaluates 2, 4 or 8 of them at once (SSE2, AVX2 or AVX-512, chosen once from the
// CPU), within a few ulp of libm. Every element goes through the same vector routine, the last partial group
// padded, so an element's result does not depend on the array's length or its place in it: recomputations of
// the same values (checkpointing) give the same bits. Without libmvec these are the scalar loops.
#pragma once

#include <cstdint>

namespace remat::dense::detail {

/// x[i] = tanh(x[i]) for i in [0, n).
void tanh_in_place(double* x, std::int64_t n) noexcept;
void tanh_in_place(float* x, std::int64_t n) noexcept;

/// x[i] = 1 / (1 + exp(-x[i])) for i in [0, n): libmvec's exp (within 4 ulp of std::exp), then the sum
/// and the division, each rounded as in the scalar formula.
void sigmoid_in_place(double* x, std::int64_t n) noexcept;
void sigmoid_in_place(float* x, std::int64_t n) noexcept;

/// Which routines these use on this CPU: "avx512", "avx2", "sse2" or "scalar".
[[nodiscard]] const char* vector_math_isa() noexcept;

} // namespace remat::dense::detail
