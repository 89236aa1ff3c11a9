// remat/rnn/detail/cell_columns.hpp — the CPU back end's GRU and LSTM gates, one batch column per call.
//
// The same arithmetic as the per-element functors of cell_kernels.hpp (which the GPU runs, one thread per
// element), reorganised for a CPU core: in column j the G gates of units u0..u0+n sit at contiguous rows
// g H + u of the G H x B gate matrices, so a pass over a chunk of units reads each gate row once, adds the
// biases in plain loops the compiler vectorises, and evaluates the logistic functions and tanh of the
// whole chunk through glibc's vector math library (remat/dense/detail/vector_math.hpp) instead of one
// scalar expf/tanhf per element. Forward and backward are each one pass over the step's gate buffers; the
// backward passes are compiled in the library (solvers/rnn/src/backward_columns.cpp), once per instruction set.
//
// Bits: every element goes through the same vector routines (their last partial group padded), so a
// recomputed step gives the bits of its first evaluation wherever its elements sit; the sums and products
// are the functors' own, in their order. The results agree with the functors' to a few ulp (libmvec's
// exp and tanh against libm's), not bit for bit: a CPU run and a GPU run never did.
#pragma once

#include "remat/dense/detail/vector_math.hpp"
#include "remat/rnn/detail/cell_kernels.hpp"

#include <algorithm>
#include <cstdint>

namespace remat::rnn::detail {

/// Units per pass: the chunk's pre-activations stay on the stack (4 x 256 elements, in L1).
inline constexpr std::int64_t column_chunk = 256;

/// The backward passes over column j, vectorised as wide as this processor allows (AVX-512, AVX2 or SSE2,
/// chosen once per process; solvers/rnn/src/backward_columns.cpp): late in a long sequence the adjoint is subnormal,
/// and an x86 core takes a microcode assist per instruction on a subnormal, so a scalar pass would pay one per element
/// and operation. The functors' arithmetic, element by element, in their order: their bits.
void gru_backward_column(const gru_backward<float>& f, std::int64_t j) noexcept;
void gru_backward_column(const gru_backward<double>& f, std::int64_t j) noexcept;
void lstm_backward_column(const lstm_backward<float>& f, std::int64_t j) noexcept;
void lstm_backward_column(const lstm_backward<double>& f, std::int64_t j) noexcept;
/// Which instruction set those use here: "avx512", "avx2", "sse2" or "baseline" (not x86-64).
[[nodiscard]] const char* backward_columns_isa() noexcept;

/// gru_forward over column j.
template <class T>
struct gru_forward_columns {
    gru_forward<T> f;
    void operator()(std::int64_t j) const noexcept
    {
        const std::int64_t hidden = f.at.hidden;
        for (std::int64_t u0 = 0; u0 < hidden; u0 += column_chunk) {
            const std::int64_t n = std::min(column_chunk, hidden - u0);
            const std::int64_t col = j * f.at.rows + u0; // row u0 of gate 0 in column j
            const T* gi = f.gi + col;
            const T* gh = f.gh + col;
            const T* b_ih = f.b_ih + u0;
            const T* b_hh = f.b_hh + u0;
            T rz[2 * column_chunk]; // r in [0, n), z in [n, 2 n)
            T ghn[column_chunk];
            T cand[column_chunk]; // n, the candidate state
            for (std::int64_t u = 0; u < n; ++u) {
                rz[u] = gi[u] + b_ih[u] + gh[u] + b_hh[u];
                rz[n + u] = gi[hidden + u] + b_ih[hidden + u] + gh[hidden + u] + b_hh[hidden + u];
            }
            dense::detail::sigmoid_in_place(rz, 2 * n);
            for (std::int64_t u = 0; u < n; ++u) {
                ghn[u] = gh[2 * hidden + u] + b_hh[2 * hidden + u];
                cand[u] = gi[2 * hidden + u] + b_ih[2 * hidden + u] + rz[u] * ghn[u];
            }
            dense::detail::tanh_in_place(cand, n);
            const std::int64_t e0 = j * hidden + u0;
            const T* h = f.h + e0;
            T* h_out = f.h_out + e0;
            for (std::int64_t u = 0; u < n; ++u) {
                const T z = rz[n + u];
                const T hv = h[u];
                h_out[u] = (T(1) - z) * cand[u] + z * hv;
            }
            if (f.tape) {
                T* tape = f.tape + e0;
                for (std::int64_t u = 0; u < n; ++u) {
                    tape[u] = rz[u];
                    tape[u + f.count] = rz[n + u];
                    tape[u + 2 * f.count] = cand[u];
                    tape[u + 3 * f.count] = ghn[u];
                }
            }
        }
    }
};

/// gru_backward over column j (no transcendental): compiled in solvers/rnn/src/backward_columns.cpp, vectorised for
/// this CPU.
template <class T>
struct gru_backward_columns {
    gru_backward<T> f;
    void operator()(std::int64_t j) const noexcept { gru_backward_column(f, j); }
};

/// lstm_forward over column j.
template <class T>
struct lstm_forward_columns {
    lstm_forward<T> f;
    void operator()(std::int64_t j) const noexcept
    {
        const std::int64_t hidden = f.at.hidden;
        for (std::int64_t u0 = 0; u0 < hidden; u0 += column_chunk) {
            const std::int64_t n = std::min(column_chunk, hidden - u0);
            const std::int64_t col = j * f.at.rows + u0;
            const T* gi = f.gi + col;
            const T* gh = f.gh + col;
            const T* b_ih = f.b_ih + u0;
            const T* b_hh = f.b_hh + u0;
            const auto pre = [&](std::int64_t gate, std::int64_t u) {
                const std::int64_t r = gate * hidden + u;
                return gi[r] + b_ih[r] + gh[r] + b_hh[r];
            };
            T ifo[3 * column_chunk]; // i in [0, n), f in [n, 2 n), o in [2 n, 3 n)
            T g[column_chunk];
            T tc[column_chunk]; // c', then tanh(c')
            for (std::int64_t u = 0; u < n; ++u) {
                ifo[u] = pre(0, u);
                ifo[n + u] = pre(1, u);
                ifo[2 * n + u] = pre(3, u);
                g[u] = pre(2, u);
            }
            dense::detail::sigmoid_in_place(ifo, 3 * n);
            dense::detail::tanh_in_place(g, n);
            const std::int64_t e0 = j * hidden + u0;
            const T* c = f.c + e0;
            T* c_out = f.c_out + e0;
            for (std::int64_t u = 0; u < n; ++u) {
                const T cn = ifo[n + u] * c[u] + ifo[u] * g[u];
                tc[u] = cn;
                c_out[u] = cn;
            }
            dense::detail::tanh_in_place(tc, n);
            T* h_out = f.h_out + e0;
            for (std::int64_t u = 0; u < n; ++u)
                h_out[u] = ifo[2 * n + u] * tc[u];
            if (f.tape) {
                T* tape = f.tape + e0;
                for (std::int64_t u = 0; u < n; ++u) {
                    tape[u] = ifo[u];
                    tape[u + f.count] = ifo[n + u];
                    tape[u + 2 * f.count] = g[u];
                    tape[u + 3 * f.count] = ifo[2 * n + u];
                    tape[u + 4 * f.count] = tc[u];
                }
            }
        }
    }
};

/// lstm_backward over column j: compiled in solvers/rnn/src/backward_columns.cpp, vectorised for this CPU.
template <class T>
struct lstm_backward_columns {
    lstm_backward<T> f;
    void operator()(std::int64_t j) const noexcept { lstm_backward_column(f, j); }
};

/// sums(i) = sum over j of a(i, j), for the G H x B gate gradient (column-major, ld == rows): the biases'
/// gradient. dense::row_sums's bits (each row summed from 0 in column order), with the loops swapped so that
/// the inner one runs down a column, contiguous and vectorised, where row_sums strides across columns.
template <class T>
void row_sums_by_columns(const T* a, std::int64_t rows, std::int64_t cols, T* sums) noexcept
{
    for (std::int64_t i = 0; i < rows; ++i)
        sums[i] = T(0);
    for (std::int64_t j = 0; j < cols; ++j) {
        const T* column = a + j * rows;
        for (std::int64_t i = 0; i < rows; ++i)
            sums[i] += column[i];
    }
}

/// out(i) += sums(i): row_sums's beta = 1 (1 x out + s, the same bits).
template <class T>
void add_sums(const T* sums, std::int64_t rows, T* out) noexcept
{
    for (std::int64_t i = 0; i < rows; ++i)
        out[i] += sums[i];
}

/// The column pass of a cell functor: for_each_index over the B columns instead of the H B elements.
template <class T>
gru_forward_columns<T> by_columns(const gru_forward<T>& f) noexcept
{
    return {f};
}
template <class T>
gru_backward_columns<T> by_columns(const gru_backward<T>& f) noexcept
{
    return {f};
}
template <class T>
lstm_forward_columns<T> by_columns(const lstm_forward<T>& f) noexcept
{
    return {f};
}
template <class T>
lstm_backward_columns<T> by_columns(const lstm_backward<T>& f) noexcept
{
    return {f};
}

} // namespace remat::rnn::detail
