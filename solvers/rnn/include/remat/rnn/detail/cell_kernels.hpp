// remat/rnn/detail/cell_kernels.hpp — the element-wise halves of the GRU and LSTM cells, forward and
// backward, as device functors over the H x B elements of one layer-step (B batch columns of H units).
//
// The matrix halves are BLAS products done by the caller: Gi = W_ih x and Gh = W_hh h (G H x B each,
// column-major, biases not yet added), and on the way back dW += dG x^T, dx = W^T dG. These functors add
// the biases, apply the gates, and keep on the tape what the backward pass needs:
//   GRU tape:  r, z, n, Gh_n + b_hn          (4 H x B)
//   LSTM tape: i, f, g, o, tanh(c')          (5 H x B)
// Gate g of unit u in column j sits at row g H + u of the G H x B gate matrices.
#pragma once

#include "remat/cuda/config.hpp"
#include "remat/rnn/dropout.hpp"

#include <cmath>
#include <cstdint>

namespace remat::rnn::detail {

template <class T>
REMAT_HOST_DEVICE inline T sigmoid(T x)
{
    using std::exp;
    return T(1) / (T(1) + exp(-x));
}

/// Where element e (unit u, column j) of a layer-step finds its gates.
struct gate_index {
    std::int64_t hidden; // H
    std::int64_t rows;   // G H (the gate matrices' leading dimension)
    /// Row g H + u of column j of a G H x B matrix.
    REMAT_HOST_DEVICE std::int64_t at(std::int64_t e, std::int64_t gate) const
    {
        return gate * hidden + e % hidden + (e / hidden) * rows;
    }
    /// Row g H + u of a bias vector.
    REMAT_HOST_DEVICE std::int64_t bias(std::int64_t e, std::int64_t gate) const { return gate * hidden + e % hidden; }
};

/// h' from h and the gates; h_out may be h itself (each element reads its h before writing it).
template <class T>
struct gru_forward {
    const T* gi;
    const T* gh;
    const T* b_ih;
    const T* b_hh;
    const T* h;
    T* h_out;
    T* tape;            // nullptr: nothing kept; else r, z, n, Gh_n + b_hn at tape + k * count
    std::int64_t count; // H B
    gate_index at;
    REMAT_HOST_DEVICE void operator()(std::int64_t e) const
    {
        using std::tanh;
        const T r = sigmoid(gi[at.at(e, 0)] + b_ih[at.bias(e, 0)] + gh[at.at(e, 0)] + b_hh[at.bias(e, 0)]);
        const T z = sigmoid(gi[at.at(e, 1)] + b_ih[at.bias(e, 1)] + gh[at.at(e, 1)] + b_hh[at.bias(e, 1)]);
        const T ghn = gh[at.at(e, 2)] + b_hh[at.bias(e, 2)];
        const T n = tanh(gi[at.at(e, 2)] + b_ih[at.bias(e, 2)] + r * ghn);
        const T hv = h[e];
        h_out[e] = (T(1) - z) * n + z * hv;
        if (tape) {
            tape[e] = r;
            tape[e + count] = z;
            tape[e + 2 * count] = n;
            tape[e + 3 * count] = ghn;
        }
    }
};

/// One element of the GRU's backward: from its taped r, z, n, (W_hn h + b_hn), h and dh', the gates'
/// pre-activation gradients, dGh's n row (scaled by r) and the direct part z dh' of dL/dh. The one copy of
/// this arithmetic: gru_backward (the GPU's, per element) and the CPU's vectorised column pass
/// (solvers/rnn/src/backward_columns.cpp) both call it, so both give the same bits.
template <class T>
struct gru_element_gradient {
    T r, z, n, n_hidden, h;
};

template <class T>
REMAT_HOST_DEVICE inline gru_element_gradient<T> gru_backward_element(T r, T z, T n, T ghn, T h, T g)
{
    const T dn = g * (T(1) - z) * (T(1) - n * n);
    const T dz = g * (h - n) * z * (T(1) - z);
    const T dr = dn * ghn * r * (T(1) - r);
    return {dr, dz, dn, dn * r, g * z};
}

/// From dh' (in dh, replaced by its direct part z dh'): the pre-activation gradients dGi and dGh
/// (G H x B; they differ in the n rows, where Gh_n is scaled by r).
template <class T>
struct gru_backward {
    const T* tape;
    const T* h;
    T* dh;
    T* dgi;
    T* dgh;
    std::int64_t count;
    gate_index at;
    REMAT_HOST_DEVICE void operator()(std::int64_t e) const
    {
        const gru_element_gradient<T> d =
            gru_backward_element(tape[e], tape[e + count], tape[e + 2 * count], tape[e + 3 * count], h[e], dh[e]);
        dgi[at.at(e, 0)] = d.r;
        dgh[at.at(e, 0)] = d.r;
        dgi[at.at(e, 1)] = d.z;
        dgh[at.at(e, 1)] = d.z;
        dgi[at.at(e, 2)] = d.n;
        dgh[at.at(e, 2)] = d.n_hidden;
        dh[e] = d.h;
    }
};

/// (h', c') from c and the gates; h_out and c_out may be the state's own h and c.
template <class T>
struct lstm_forward {
    const T* gi;
    const T* gh;
    const T* b_ih;
    const T* b_hh;
    const T* c;
    T* h_out;
    T* c_out;
    T* tape; // nullptr, or i, f, g, o, tanh(c')
    std::int64_t count;
    gate_index at;
    REMAT_HOST_DEVICE T pre(std::int64_t e, std::int64_t gate) const
    {
        return gi[at.at(e, gate)] + b_ih[at.bias(e, gate)] + gh[at.at(e, gate)] + b_hh[at.bias(e, gate)];
    }
    REMAT_HOST_DEVICE void operator()(std::int64_t e) const
    {
        using std::tanh;
        const T i = sigmoid(pre(e, 0));
        const T f = sigmoid(pre(e, 1));
        const T g = tanh(pre(e, 2));
        const T o = sigmoid(pre(e, 3));
        const T cn = f * c[e] + i * g;
        const T tc = tanh(cn);
        c_out[e] = cn;
        h_out[e] = o * tc;
        if (tape) {
            tape[e] = i;
            tape[e + count] = f;
            tape[e + 2 * count] = g;
            tape[e + 3 * count] = o;
            tape[e + 4 * count] = tc;
        }
    }
};

/// An LSTM layer's output h' = o tanh(c') from its taped gates (lstm_forward's product, so its bits).
template <class T>
struct lstm_output {
    const T* tape; // i, f, g, o, tanh(c')
    T* h;
    std::int64_t count;
    REMAT_HOST_DEVICE void operator()(std::int64_t e) const { h[e] = tape[e + 3 * count] * tape[e + 4 * count]; }
};

/// One element of the LSTM's backward: from its taped i, f, g, o, tanh(c'), its c, dh' and dc', the four
/// gates' pre-activation gradients and dL/dc. The one copy of this arithmetic: lstm_backward (the GPU's, per
/// element) and the CPU's vectorised column pass (solvers/rnn/src/backward_columns.cpp) both call it.
template <class T>
struct lstm_element_gradient {
    T i, f, g, o, c;
};

template <class T>
REMAT_HOST_DEVICE inline lstm_element_gradient<T> lstm_backward_element(T i, T f, T g, T o, T tc, T c, T gh, T dc)
{
    const T dcn = dc + gh * o * (T(1) - tc * tc);
    return {dcn * g * i * (T(1) - i), dcn * c * f * (T(1) - f), dcn * i * (T(1) - g * g), gh * tc * o * (T(1) - o),
            dcn * f};
}

/// From dh' and dc' (dc replaced by dc f, the gradient reaching c): the pre-activation gradient dG
/// (G H x B, the same for W_ih and W_hh).
template <class T>
struct lstm_backward {
    const T* tape;
    const T* c;
    const T* dh;
    T* dc;
    T* dg;
    std::int64_t count;
    gate_index at;
    REMAT_HOST_DEVICE void operator()(std::int64_t e) const
    {
        const lstm_element_gradient<T> d =
            lstm_backward_element(tape[e], tape[e + count], tape[e + 2 * count], tape[e + 3 * count],
                                  tape[e + 4 * count], c[e], dh[e], dc[e]);
        dg[at.at(e, 0)] = d.i;
        dg[at.at(e, 1)] = d.f;
        dg[at.at(e, 2)] = d.g;
        dg[at.at(e, 3)] = d.o;
        dc[e] = d.c;
    }
};

/// x *= mask / (1 - p) for the dropout mask of `key` (forward: a layer's input; backward: its gradient).
template <class T>
struct dropout_apply {
    T* x;
    std::uint64_t seed;
    std::int64_t step;
    std::int64_t layer;
    double p;
    T scale; // 1 / (1 - p)
    REMAT_HOST_DEVICE void operator()(std::int64_t e) const
    {
        x[e] = dropout_keeps({seed, step, layer}, e, p) ? x[e] * scale : T(0);
    }
};

/// The mean-squared-error read-out: dy = (y - t) * 2 / N, and the term's (y - t)^2 / N summed elsewhere.
template <class T>
struct squared_error {
    const T* y;
    const T* target;
    REMAT_HOST_DEVICE double operator()(std::int64_t e) const
    {
        const double d = static_cast<double>(y[e]) - static_cast<double>(target[e]);
        return d * d;
    }
};

template <class T>
struct squared_error_gradient {
    T* y; // replaced by dy
    const T* target;
    T factor; // 2 / N
    REMAT_HOST_DEVICE void operator()(std::int64_t e) const { y[e] = factor * (y[e] - target[e]); }
};

} // namespace remat::rnn::detail
