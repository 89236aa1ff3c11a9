// remat/dense/elementwise.hpp — the dense-math seam's element-wise maps and reductions over Thrust, one
// source for both back ends: CUDA kernels on the BLAS handle's stream under nvcc, loops (CPP) or OpenMP
// (OMP) under a Thrust CPU back end.
//
// Everything takes the seam's `blas` for its stream, views for its operands (remat/dense/matrix.hpp) and
// returns at once on the GPU, except the reductions, which wait for their result. Thrust failures under
// CUDA become remat::cuda::cuda_error naming the operation; failed allocations remat::capacity_error.
//
//     remat::dense::add_bias(b, H, bias);                               // H(i, j) += bias(i)
//     remat::dense::activate(b, remat::dense::activation::tanh, h);     // h = tanh(h)
//     remat::dense::backprop_activation(b, activation::tanh, h, g);     // g *= tanh'(z), from h = tanh(z)
//     remat::dense::row_sums(b, G, db, 1.0);                            // db += G 1
#pragma once

#include <thrust/device_vector.h>
#include <thrust/execution_policy.h>
#include <thrust/for_each.h>
#include <thrust/functional.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/system_error.h>
#include <thrust/transform_reduce.h>

#include "remat/cuda/error.hpp"
#include "remat/dense/activation.hpp"
#include "remat/dense/blas.hpp"
#include "remat/dense/config.hpp"
#include "remat/dense/detail/blas_checks.hpp"
#include "remat/dense/detail/vector_math.hpp"
#include "remat/dense/matrix.hpp"
#include "remat/error.hpp"

#include <cmath>
#include <cstdint>
#include <new>
#include <string>
#include <type_traits>

namespace remat::dense {

inline namespace REMAT_DENSE_BACKEND_NS {

/// The Thrust execution policy of this back end on b's stream, for your own Thrust calls:
/// thrust::cuda::par_nosync on the stream under CUDA (no host wait), thrust::device on the CPU.
///
///     thrust::transform(remat::dense::policy(b), x.begin(), x.end(), y.begin(), my_functor{});
#if REMAT_DEVICE_SYSTEM_HOST
[[nodiscard]] inline auto policy(const blas&) noexcept
{
    return thrust::device;
}
#else
[[nodiscard]] inline auto policy(const blas& b) noexcept
{
    return thrust::cuda::par_nosync.on(static_cast<cudaStream_t>(b.stream()));
}
#endif

/// The elements of a Thrust vector as a view.
///
///     thrust::device_vector<double> y(n);
///     remat::dense::vector_view<double> v = remat::dense::view(y);
template <class T, class Alloc>
[[nodiscard]] vector_view<T> view(thrust::device_vector<T, Alloc>& v) noexcept
{
    return {thrust::raw_pointer_cast(v.data()), static_cast<std::int64_t>(v.size())};
}
template <class T, class Alloc>
[[nodiscard]] vector_view<const T> view(const thrust::device_vector<T, Alloc>& v) noexcept
{
    return {thrust::raw_pointer_cast(v.data()), static_cast<std::int64_t>(v.size())};
}

namespace impl {

/// Runs a Thrust call, turning its failures into remat errors that name `what`.
template <class Body>
decltype(auto) thrust_call(const char* what, Body&& body)
{
    try {
        return body();
    } catch (const std::bad_alloc&) {
        throw capacity_error(std::string(what) + ": out of device memory");
    } catch (const thrust::system_error& e) {
        throw remat::cuda::cuda_error(e.code().value(), std::string(what) + " failed: " + e.what());
    }
}

/// Calls f(i) for i in [0, n) on the back end (a CUDA kernel, a loop, an OpenMP loop).
template <class F>
void for_each_index(const blas& b, std::int64_t n, F f, const char* what)
{
    if (n <= 0)
        return;
    thrust_call(what, [&] {
        thrust::for_each(policy(b), thrust::counting_iterator<std::int64_t>(0),
                         thrust::counting_iterator<std::int64_t>(n), f);
    });
}

template <class T>
struct fill_fn {
    T* x;
    T value;
    REMAT_HOST_DEVICE void operator()(std::int64_t i) const { x[i] = value; }
};

template <class T>
struct copy_fn {
    const T* x;
    T* y;
    REMAT_HOST_DEVICE void operator()(std::int64_t i) const { y[i] = x[i]; }
};

template <class T>
struct activate_in_place {
    T* x;
    activate_fn<T> f;
    REMAT_HOST_DEVICE void operator()(std::int64_t i) const { x[i] = f(x[i]); }
};

/// tanh or the logistic function over one chunk of x through the vectorised CPU routines (chunks let
/// Thrust's OpenMP back end split it).
template <class T>
struct vector_math_chunk {
    static constexpr std::int64_t size = 4096;
    T* x;
    std::int64_t n;
    bool sigmoid; // else tanh
    void operator()(std::int64_t c) const noexcept
    {
        const std::int64_t begin = c * size;
        const std::int64_t length = n - begin < size ? n - begin : size;
        if (sigmoid)
            detail::sigmoid_in_place(x + begin, length);
        else
            detail::tanh_in_place(x + begin, length);
    }
};

template <class T>
struct backprop_in_place {
    const T* y;
    T* g;
    derivative_from_output_fn<T> df;
    REMAT_HOST_DEVICE void operator()(std::int64_t i) const { g[i] *= df(y[i]); }
};

template <class T>
struct add_bias_fn {
    T* c;
    const T* bias;
    std::int64_t rows;
    std::int64_t ld;
    REMAT_HOST_DEVICE void operator()(std::int64_t e) const
    {
        const std::int64_t i = e % rows;
        c[i + (e / rows) * ld] += bias[i];
    }
};

template <class T>
struct row_sum_fn {
    const T* a;
    T* out;
    std::int64_t cols;
    std::int64_t ld;
    T beta;
    REMAT_HOST_DEVICE void operator()(std::int64_t i) const
    {
        T s = T(0);
        for (std::int64_t j = 0; j < cols; ++j) // a fixed order: the same bits on every call
            s += a[i + j * ld];
        out[i] = beta == T(0) ? s : beta * out[i] + s;
    }
};

template <class T>
struct abs_fn {
    const T* x;
    REMAT_HOST_DEVICE T operator()(std::int64_t i) const { return x[i] < T(0) ? -x[i] : x[i]; }
};

template <class T>
struct value_fn {
    const T* x;
    REMAT_HOST_DEVICE T operator()(std::int64_t i) const { return x[i]; }
};

template <class T>
struct finite_fn {
    const T* x;
    REMAT_HOST_DEVICE bool operator()(std::int64_t i) const
    {
        using std::isfinite;
        return isfinite(x[i]);
    }
};

struct max_op {
    template <class T>
    REMAT_HOST_DEVICE T operator()(T a, T b) const
    {
        return a < b ? b : a;
    }
};

} // namespace impl

/// x = value.
template <class T>
void fill(const blas& b, vector_view<T> x, std::type_identity_t<T> value)
{
    impl::for_each_index(b, x.size, impl::fill_fn<T>{x.data, value}, "fill");
}

/// y = x.
template <class T>
void copy(const blas& b, vector_view<const T> x, vector_view<T> y)
{
    detail::check_same_size("copy", "the length of y", x.size, y.size);
    impl::for_each_index(b, x.size, impl::copy_fn<T>{x.data, y.data}, "copy");
}

/// x = f(x) element by element. On the CPU, tanh and sigmoid go through glibc's vector math library
/// (detail/vector_math.hpp): within 4 ulp of the scalar formulas, and the same bits for the same input
/// wherever it sits.
template <class T>
void activate(const blas& b, activation a, vector_view<T> x)
{
#if REMAT_DEVICE_SYSTEM_HOST
    if constexpr (std::is_same_v<T, double> || std::is_same_v<T, float>) {
        if (a == activation::tanh || a == activation::sigmoid) { // several lanes at once
            const std::int64_t chunks =
                (x.size + impl::vector_math_chunk<T>::size - 1) / impl::vector_math_chunk<T>::size;
            impl::for_each_index(b, chunks, impl::vector_math_chunk<T>{x.data, x.size, a == activation::sigmoid},
                                 "activate");
            return;
        }
    }
#endif
    impl::for_each_index(b, x.size, impl::activate_in_place<T>{x.data, {a}}, "activate");
}

/// g *= f'(z) element by element, where y = f(z) is the activation's output.
template <class T>
void backprop_activation(const blas& b, activation a, vector_view<const std::type_identity_t<T>> y, vector_view<T> g)
{
    detail::check_same_size("backprop_activation", "the length of the gradient", y.size, g.size);
    impl::for_each_index(b, g.size, impl::backprop_in_place<T>{y.data, g.data, {a}}, "backprop_activation");
}

/// C(i, j) += bias(i) for every column j.
template <class T>
void add_bias(const blas& b, matrix_view<T> c, vector_view<const std::type_identity_t<T>> bias)
{
    detail::check_same_size("add_bias", "the bias length", c.rows, bias.size);
    impl::for_each_index(b, c.rows * c.cols, impl::add_bias_fn<T>{c.data, bias.data, c.rows, c.ld}, "add_bias");
}

/// out(i) = beta out(i) + sum_j A(i, j), summed in column order (the same bits on every call).
template <class T>
void row_sums(const blas& b, matrix_view<const std::type_identity_t<T>> a, vector_view<T> out,
              std::type_identity_t<T> beta = 0)
{
    detail::check_same_size("row_sums", "the output length", a.rows, out.size);
    impl::for_each_index(b, a.rows, impl::row_sum_fn<T>{a.data, out.data, a.cols, a.ld, beta}, "row_sums");
}

/// Calls f(i) for i in [0, n) on the back end; f must be callable on the device (REMAT_HOST_DEVICE) and
/// capture only raw pointers and values. Nothing else is ordered with it beyond b's stream.
///
///     struct adam_fn { double* p; const double* g; ...; REMAT_HOST_DEVICE void operator()(std::int64_t i) const; };
///     remat::dense::for_each_index(b, n, adam_fn{...});
template <class F>
void for_each_index(const blas& b, std::int64_t n, F f)
{
    impl::for_each_index(b, n, f, "for_each_index");
}

/// The sum of f(i) for i in [0, n) under `reduce` (a device functor), starting from init; waits for the result.
///
///     double s = remat::dense::transform_reduce(b, n, my_term{...}, 0.0, thrust::plus<double>{});
template <class T, class F, class Reduce>
[[nodiscard]] T transform_reduce(const blas& b, std::int64_t n, F f, T init, Reduce reduce)
{
    if (n <= 0)
        return init;
    return impl::thrust_call("transform_reduce", [&] {
        return thrust::transform_reduce(policy(b), thrust::counting_iterator<std::int64_t>(0),
                                        thrust::counting_iterator<std::int64_t>(n), f, init, reduce);
    });
}

/// The sum of the elements.
template <class T>
[[nodiscard]] std::remove_const_t<T> sum(const blas& b, vector_view<T> x)
{
    using V = std::remove_const_t<T>;
    return transform_reduce(b, x.size, impl::value_fn<V>{x.data}, V(0), thrust::plus<V>{});
}

/// The largest |x_i| (0 for an empty vector; NaN elements are skipped by the comparison: use all_finite).
template <class T>
[[nodiscard]] std::remove_const_t<T> max_abs(const blas& b, vector_view<T> x)
{
    using V = std::remove_const_t<T>;
    return transform_reduce(b, x.size, impl::abs_fn<V>{x.data}, V(0), impl::max_op{});
}

/// Whether every element is finite (no NaN, no infinity).
template <class T>
[[nodiscard]] bool all_finite(const blas& b, vector_view<T> x)
{
    using V = std::remove_const_t<T>;
    return transform_reduce(b, x.size, impl::finite_fn<V>{x.data}, true, thrust::logical_and<bool>{});
}

} // namespace REMAT_DENSE_BACKEND_NS

} // namespace remat::dense
