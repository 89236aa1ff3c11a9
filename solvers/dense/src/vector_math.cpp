// Vectorised tanh and logistic function through glibc's libmvec (see remat/dense/detail/vector_math.hpp). The routines
// are libmvec's own, called by their vector-ABI names (_ZGV<isa>N<lanes>v_<name>): glibc declares them to the compiler
// only under -ffast-math, which this library does not use.
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
__m128d _ZGVbN2v_exp(__m128d);
__m128 _ZGVbN4v_expf(__m128);
__attribute__((target("avx2"))) __m256d _ZGVdN4v_exp(__m256d);
__attribute__((target("avx2"))) __m256 _ZGVdN8v_expf(__m256);
__attribute__((target("avx512f"))) __m512d _ZGVeN8v_exp(__m512d);
__attribute__((target("avx512f"))) __m512 _ZGVeN16v_expf(__m512);
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
// tanh(x), and the logistic function 1 / (1 + exp(-x)) with the negation, the sum and the division in the
// same vector registers (IEEE operations, so they round as the scalar formula does).
void sse2_tanh(double* p)
{
    _mm_storeu_pd(p, _ZGVbN2v_tanh(_mm_loadu_pd(p)));
}
void sse2_tanh(float* p)
{
    _mm_storeu_ps(p, _ZGVbN4v_tanhf(_mm_loadu_ps(p)));
}
void sse2_sigmoid(double* p)
{
    const __m128d one = _mm_set1_pd(1.0);
    const __m128d e = _ZGVbN2v_exp(_mm_xor_pd(_mm_loadu_pd(p), _mm_set1_pd(-0.0)));
    _mm_storeu_pd(p, _mm_div_pd(one, _mm_add_pd(one, e)));
}
void sse2_sigmoid(float* p)
{
    const __m128 one = _mm_set1_ps(1.0F);
    const __m128 e = _ZGVbN4v_expf(_mm_xor_ps(_mm_loadu_ps(p), _mm_set1_ps(-0.0F)));
    _mm_storeu_ps(p, _mm_div_ps(one, _mm_add_ps(one, e)));
}
__attribute__((target("avx2"))) void avx2_tanh(double* p)
{
    _mm256_storeu_pd(p, _ZGVdN4v_tanh(_mm256_loadu_pd(p)));
}
__attribute__((target("avx2"))) void avx2_tanh(float* p)
{
    _mm256_storeu_ps(p, _ZGVdN8v_tanhf(_mm256_loadu_ps(p)));
}
__attribute__((target("avx2"))) void avx2_sigmoid(double* p)
{
    const __m256d one = _mm256_set1_pd(1.0);
    const __m256d e = _ZGVdN4v_exp(_mm256_xor_pd(_mm256_loadu_pd(p), _mm256_set1_pd(-0.0)));
    _mm256_storeu_pd(p, _mm256_div_pd(one, _mm256_add_pd(one, e)));
}
__attribute__((target("avx2"))) void avx2_sigmoid(float* p)
{
    const __m256 one = _mm256_set1_ps(1.0F);
    const __m256 e = _ZGVdN8v_expf(_mm256_xor_ps(_mm256_loadu_ps(p), _mm256_set1_ps(-0.0F)));
    _mm256_storeu_ps(p, _mm256_div_ps(one, _mm256_add_ps(one, e)));
}
__attribute__((target("avx512f"))) void avx512_tanh(double* p)
{
    _mm512_storeu_pd(p, _ZGVeN8v_tanh(_mm512_loadu_pd(p)));
}
__attribute__((target("avx512f"))) void avx512_tanh(float* p)
{
    _mm512_storeu_ps(p, _ZGVeN16v_tanhf(_mm512_loadu_ps(p)));
}
// (AVX-512F has no xor of floating-point registers: the sign is flipped by 0 - x, which differs from -x
// only for x = +0, where exp gives 1 either way.)
__attribute__((target("avx512f"))) void avx512_sigmoid(double* p)
{
    const __m512d one = _mm512_set1_pd(1.0);
    const __m512d e = _ZGVeN8v_exp(_mm512_sub_pd(_mm512_setzero_pd(), _mm512_loadu_pd(p)));
    _mm512_storeu_pd(p, _mm512_div_pd(one, _mm512_add_pd(one, e)));
}
__attribute__((target("avx512f"))) void avx512_sigmoid(float* p)
{
    const __m512 one = _mm512_set1_ps(1.0F);
    const __m512 e = _ZGVeN16v_expf(_mm512_sub_ps(_mm512_setzero_ps(), _mm512_loadu_ps(p)));
    _mm512_storeu_ps(p, _mm512_div_ps(one, _mm512_add_ps(one, e)));
}

#else
template <class T>
void scalar_tanh(T* x, std::int64_t n) noexcept
{
    for (std::int64_t i = 0; i < n; ++i)
        x[i] = std::tanh(x[i]);
}
template <class T>
void scalar_sigmoid(T* x, std::int64_t n) noexcept
{
    for (std::int64_t i = 0; i < n; ++i)
        x[i] = T(1) / (T(1) + std::exp(-x[i]));
}
#endif

struct routines {
    void (*tanh_double)(double*, std::int64_t) noexcept;
    void (*tanh_float)(float*, std::int64_t) noexcept;
    void (*sigmoid_double)(double*, std::int64_t) noexcept;
    void (*sigmoid_float)(float*, std::int64_t) noexcept;
    const char* isa;
};

routines pick() noexcept
{
#if REMAT_HAVE_LIBMVEC
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f"))
        return {by_groups<8, double, avx512_tanh>, by_groups<16, float, avx512_tanh>,
                by_groups<8, double, avx512_sigmoid>, by_groups<16, float, avx512_sigmoid>, "avx512"};
    if (__builtin_cpu_supports("avx2"))
        return {by_groups<4, double, avx2_tanh>, by_groups<8, float, avx2_tanh>, by_groups<4, double, avx2_sigmoid>,
                by_groups<8, float, avx2_sigmoid>, "avx2"};
    return {by_groups<2, double, sse2_tanh>, by_groups<4, float, sse2_tanh>, by_groups<2, double, sse2_sigmoid>,
            by_groups<4, float, sse2_sigmoid>, "sse2"};
#else
    return {scalar_tanh<double>, scalar_tanh<float>, scalar_sigmoid<double>, scalar_sigmoid<float>, "scalar"};
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

void sigmoid_in_place(double* x, std::int64_t n) noexcept
{
    chosen().sigmoid_double(x, n);
}

void sigmoid_in_place(float* x, std::int64_t n) noexcept
{
    chosen().sigmoid_float(x, n);
}

const char* vector_math_isa() noexcept
{
    return chosen().isa;
}

} // namespace remat::dense::detail
