// remat/ode/detail/stage_kernels.hpp — the one element-wise kernel of the Runge–Kutta solvers: a linear
// combination of up to max_terms vectors, out = base + scale * sum_j coef_j v_j, summed in j order (the
// same bits on every call and in every sweep).
#pragma once

#include "remat/cuda/config.hpp"
#include "remat/dense/config.hpp"
#include "remat/dense/elementwise.hpp"
#include "remat/error.hpp"

#include <cstdint>
#include <string>

namespace remat::ode {

inline namespace REMAT_DENSE_BACKEND_NS {

namespace rk_impl {

inline constexpr int max_terms = 16;

template <class T>
struct combination {
    T* out = nullptr;
    const T* base = nullptr; // null: 0
    T scale = T(1);
    int count = 0;
    const T* v[max_terms] = {};
    T coef[max_terms] = {};

    void add(const T* vector, T c)
    {
        if (c == T(0))
            return;
        if (count == max_terms)
            throw argument_error("a Runge–Kutta combination of more than " + std::to_string(max_terms) + " terms");
        v[count] = vector;
        coef[count] = c;
        ++count;
    }
    REMAT_HOST_DEVICE void operator()(std::int64_t e) const
    {
        T s = T(0);
        for (int j = 0; j < count; ++j)
            s += coef[j] * v[j][e];
        out[e] = base == nullptr ? scale * s : base[e] + scale * s;
    }
};

// sum_e (err_e / (atol + rtol max(|y_e|, |y_new_e|)))^2, the error estimate's squared norm before the mean.
template <class T>
struct scaled_error_term {
    const T* err;
    const T* y;
    const T* y_new;
    double atol;
    double rtol;
    REMAT_HOST_DEVICE double operator()(std::int64_t e) const
    {
        const double a = y[e] < T(0) ? -static_cast<double>(y[e]) : static_cast<double>(y[e]);
        const double b = y_new[e] < T(0) ? -static_cast<double>(y_new[e]) : static_cast<double>(y_new[e]);
        const double r = static_cast<double>(err[e]) / (atol + rtol * (a > b ? a : b));
        return r * r;
    }
};

/// Applies the combination to n elements.
template <class T>
void apply(const dense::blas& b, std::int64_t n, const combination<T>& c)
{
    dense::for_each_index(b, n, c);
}

} // namespace rk_impl

} // namespace REMAT_DENSE_BACKEND_NS

} // namespace remat::ode
