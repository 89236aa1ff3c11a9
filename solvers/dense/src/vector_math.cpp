// Vectorised tanh through glibc's libmvec (see remat/dense/detail/vector_math.hpp). The routines are
// libmvec's own, called by their vector-ABI names (_ZGV<isa>N<lanes>v_<name>): glibc declares them to the
// compiler only under -ffast-math, which this library does not use.
#include "remat/dense/detail/vector_math.hpp"

#include <cmath>
#include <cstring>

#if REMAT_HAVE_LIBMVEC
#include <immintrin.h>

extern "C" {
__m128d _ZGVbN2v_tanh(__m128d);
__m128 _ZGVbN4v_tanhf(__m128);
__attribute__((target("avx2"))) __m256d _ZGVdN4v_tanh(__m256d);
__attribute__((target("avx2"))) __m256 _ZGVdN8v_tanhf(__m256);
__attribute__((target("avx512f"))) __m512d _ZGVeN8v_tanh(__m512d);
__attribute__((target("avx512f"))) __m512 _ZGVeN16v_tanhf(__m512);
}
#endif

namespace remat::dense::detail {

namespace {

/// Applies `group` (lanes elements in place) over x; the last partial group goes through a zero-padded
/// buffer, so that every element takes the same routine wherever it sits.
template <int lanes, class T, void (*group)(T*)>
void by_groups(T* x, std::int64_t n) noexcept
{
    std::int64_t i = 0;
    for (; i + lanes <= n; i += lanes)
        group(x + i);
    if (i < n) {
        T buffer[lanes] = {};
        const auto bytes = static_cast<std::size_t>(n - i) * sizeof(T);
        std::memcpy(buffer, x + i, bytes);
        group(buffer);
        std::memcpy(x + i, buffer, bytes);
    }
}

#if REMAT_HAVE_LIBMVEC
void sse2_group(double* p)
{
    _mm_storeu_pd(p, _ZGVbN2v_tanh(_mm_loadu_pd(p)));
}
void sse2_group(float* p)
{
    _mm_storeu_ps(p, _ZGVbN4v_tanhf(_mm_loadu_ps(p)));
}
__attribute__((target("avx2"))) void avx2_group(double* p)
{
    _mm256_storeu_pd(p, _ZGVdN4v_tanh(_mm256_loadu_pd(p)));
}
__attribute__((target("avx2"))) void avx2_group(float* p)
{
    _mm256_storeu_ps(p, _ZGVdN8v_tanhf(_mm256_loadu_ps(p)));
}
__attribute__((target("avx512f"))) void avx512_group(double* p)
{
    _mm512_storeu_pd(p, _ZGVeN8v_tanh(_mm512_loadu_pd(p)));
}
__attribute__((target("avx512f"))) void avx512_group(float* p)
{
    _mm512_storeu_ps(p, _ZGVeN16v_tanhf(_mm512_loadu_ps(p)));
}

#else
void scalar_tanh(double* x, std::int64_t n) noexcept
{
    for (std::int64_t i = 0; i < n; ++i)
        x[i] = std::tanh(x[i]);
}
void scalar_tanh(float* x, std::int64_t n) noexcept
{
    for (std::int64_t i = 0; i < n; ++i)
        x[i] = std::tanh(x[i]);
}
#endif

struct routines {
    void (*tanh_double)(double*, std::int64_t) noexcept;
    void (*tanh_float)(float*, std::int64_t) noexcept;
    const char* isa;
};

routines pick() noexcept
{
#if REMAT_HAVE_LIBMVEC
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f"))
        return {by_groups<8, double, avx512_group>, by_groups<16, float, avx512_group>, "avx512"};
    if (__builtin_cpu_supports("avx2"))
        return {by_groups<4, double, avx2_group>, by_groups<8, float, avx2_group>, "avx2"};
    return {by_groups<2, double, sse2_group>, by_groups<4, float, sse2_group>, "sse2"};
#else
    return {scalar_tanh, scalar_tanh, "scalar"};
#endif
}

/// Chosen once per process: every call, hence every recomputation, takes the same routine.
const routines& chosen() noexcept
{
    static const routines r = pick();
    return r;
}

} // namespace

void tanh_in_place(double* x, std::int64_t n) noexcept
{
    chosen().tanh_double(x, n);
}

void tanh_in_place(float* x, std::int64_t n) noexcept
{
    chosen().tanh_float(x, n);
}

const char* vector_math_isa() noexcept
{
    return chosen().isa;
}

} // namespace remat::dense::detail
