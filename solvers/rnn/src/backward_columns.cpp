// The CPU's GRU and LSTM backward gate passes (cell_columns.hpp), one batch column per call, vectorised as
// wide as this processor allows: AVX-512, AVX2 or SSE2, chosen once per process.
//
// Why here and not in the header: the header is compiled for the x86-64 baseline (SSE2), and there GCC left
// these loops scalar (it cannot rule out that the gate gradient overlaps the adjoint). That costs little on
// normal floats but a great deal late in a long sequence, where the adjoint has decayed into the subnormal
// range: an x86 core takes a microcode assist for each instruction with a subnormal operand or result, so a
// scalar pass takes one per element and operation, a 16-lane one one per 16 elements. On the bench's LSTM
// (H = 256, B = 64) a step's pass on subnormal values took 9.5 ms scalar, 3.0 SSE2, 1.5 AVX2 and 0.8 AVX-512
// (0.04-0.05 ms flushed), over the ~55 steps that a 1000-step sequence's adjoint spends there (docs/rnn.md,
// "Where the backward time goes"). PyTorch's element-wise kernels are dispatched the same way.
//
// Bits: each element is cell_kernels.hpp's gru_backward_element / lstm_backward_element, the arithmetic the
// per-element functors run too; vector lanes round exactly as the scalar operations do. This file
// is compiled with -ffp-contract=off (CMakeLists.txt), so no multiply and add fuse into an FMA under
// AVX-512's instruction set, which would round once instead of twice.
#include "remat/rnn/detail/cell_columns.hpp"

namespace remat::rnn::detail {

namespace {

// One column of lstm_backward (cell_kernels.hpp), its pointers already offset to column j. The buffers are
// distinct (tape, input c, adjoint dh and dc, gate gradient): restrict lets the compiler vectorise.
template <class T>
[[gnu::always_inline]] inline void lstm_column(const T* __restrict tape, const T* __restrict c, const T* __restrict dh,
                                               T* __restrict dc, T* __restrict dg, std::int64_t hidden,
                                               std::int64_t count) noexcept
{
    for (std::int64_t u = 0; u < hidden; ++u) {
        const lstm_element_gradient<T> d =
            lstm_backward_element(tape[u], tape[u + count], tape[u + 2 * count], tape[u + 3 * count],
                                  tape[u + 4 * count], c[u], dh[u], dc[u]);
        dg[u] = d.i;
        dg[hidden + u] = d.f;
        dg[2 * hidden + u] = d.g;
        dg[3 * hidden + u] = d.o;
        dc[u] = d.c;
    }
}

// One column of gru_backward; dh is read and then overwritten element by element (dh[u] = g z).
template <class T>
[[gnu::always_inline]] inline void gru_column(const T* __restrict tape, const T* __restrict h, T* __restrict dh,
                                              T* __restrict dgi, T* __restrict dgh, std::int64_t hidden,
                                              std::int64_t count) noexcept
{
    for (std::int64_t u = 0; u < hidden; ++u) {
        const gru_element_gradient<T> d =
            gru_backward_element(tape[u], tape[u + count], tape[u + 2 * count], tape[u + 3 * count], h[u], dh[u]);
        dgi[u] = d.r;
        dgh[u] = d.r;
        dgi[hidden + u] = d.z;
        dgh[hidden + u] = d.z;
        dgi[2 * hidden + u] = d.n;
        dgh[2 * hidden + u] = d.n_hidden;
        dh[u] = d.h;
    }
}

template <class T>
[[gnu::always_inline]] inline void lstm_at(const lstm_backward<T>& f, std::int64_t j) noexcept
{
    const std::int64_t e0 = j * f.at.hidden;
    lstm_column(f.tape + e0, f.c + e0, f.dh + e0, f.dc + e0, f.dg + j * f.at.rows, f.at.hidden, f.count);
}

template <class T>
[[gnu::always_inline]] inline void gru_at(const gru_backward<T>& f, std::int64_t j) noexcept
{
    const std::int64_t e0 = j * f.at.hidden;
    gru_column(f.tape + e0, f.h + e0, f.dh + e0, f.dgi + j * f.at.rows, f.dgh + j * f.at.rows, f.at.hidden, f.count);
}

// The same bodies, compiled once per instruction set.
#define REMAT_RNN_BACKWARD_PASSES(suffix, attributes)                                                                  \
    attributes void lstm_##suffix(const lstm_backward<float>& f, std::int64_t j) noexcept                              \
    {                                                                                                                  \
        lstm_at(f, j);                                                                                                 \
    }                                                                                                                  \
    attributes void lstm_##suffix(const lstm_backward<double>& f, std::int64_t j) noexcept                             \
    {                                                                                                                  \
        lstm_at(f, j);                                                                                                 \
    }                                                                                                                  \
    attributes void gru_##suffix(const gru_backward<float>& f, std::int64_t j) noexcept                                \
    {                                                                                                                  \
        gru_at(f, j);                                                                                                  \
    }                                                                                                                  \
    attributes void gru_##suffix(const gru_backward<double>& f, std::int64_t j) noexcept                               \
    {                                                                                                                  \
        gru_at(f, j);                                                                                                  \
    }

REMAT_RNN_BACKWARD_PASSES(baseline, )
#if defined(__x86_64__) && defined(__GNUC__)
#define REMAT_RNN_DISPATCH 1
REMAT_RNN_BACKWARD_PASSES(avx2, [[gnu::target("avx2")]])
REMAT_RNN_BACKWARD_PASSES(avx512, [[gnu::target("avx512f")]])
#endif
#undef REMAT_RNN_BACKWARD_PASSES

struct passes {
    void (*lstm_float)(const lstm_backward<float>&, std::int64_t) noexcept;
    void (*lstm_double)(const lstm_backward<double>&, std::int64_t) noexcept;
    void (*gru_float)(const gru_backward<float>&, std::int64_t) noexcept;
    void (*gru_double)(const gru_backward<double>&, std::int64_t) noexcept;
    const char* isa;
};

passes pick() noexcept
{
#ifdef REMAT_RNN_DISPATCH
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f"))
        return {lstm_avx512, lstm_avx512, gru_avx512, gru_avx512, "avx512"};
    if (__builtin_cpu_supports("avx2"))
        return {lstm_avx2, lstm_avx2, gru_avx2, gru_avx2, "avx2"};
    return {lstm_baseline, lstm_baseline, gru_baseline, gru_baseline, "sse2"};
#else
    return {lstm_baseline, lstm_baseline, gru_baseline, gru_baseline, "baseline"};
#endif
}

// Chosen once per process, so every evaluation of a step takes the same code (the bits would not differ
// anyway: the lanes round as the scalar operations do).
const passes& chosen() noexcept
{
    static const passes p = pick();
    return p;
}

} // namespace

void lstm_backward_column(const lstm_backward<float>& f, std::int64_t j) noexcept
{
    chosen().lstm_float(f, j);
}
void lstm_backward_column(const lstm_backward<double>& f, std::int64_t j) noexcept
{
    chosen().lstm_double(f, j);
}
void gru_backward_column(const gru_backward<float>& f, std::int64_t j) noexcept
{
    chosen().gru_float(f, j);
}
void gru_backward_column(const gru_backward<double>& f, std::int64_t j) noexcept
{
    chosen().gru_double(f, j);
}
const char* backward_columns_isa() noexcept
{
    return chosen().isa;
}

} // namespace remat::rnn::detail
