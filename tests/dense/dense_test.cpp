// The dense-math seam on the Thrust CPU back end against naive loops: every transpose combination of
// gemm and gemv, strided batches, the element-wise maps, the activations' derivatives against finite
// differences, the reductions, and the errors for bad shapes.
#define BOOST_TEST_MODULE dense
#include <boost/test/unit_test.hpp>

#include "remat/dense/activation.hpp"
#include "remat/dense/blas.hpp"
#include "remat/dense/detail/vector_math.hpp"
#include "remat/dense/elementwise.hpp"
#include "remat/error.hpp"

#include <thrust/device_vector.h>
#include <thrust/host_vector.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

using namespace remat::dense;

namespace {

template <class T>
std::vector<T> random_values(std::size_t n, unsigned seed)
{
    std::mt19937_64 gen(seed);
    std::uniform_real_distribution<double> dist(-1, 1);
    std::vector<T> v(n);
    for (T& x : v)
        x = static_cast<T>(dist(gen));
    return v;
}

/// How many representable numbers lie between a and b (0: the same bits, or both zero).
template <class T>
long ulps_apart(T a, T b)
{
    if (a == b || (std::isnan(a) && std::isnan(b)))
        return 0;
    using bits = std::conditional_t<sizeof(T) == 8, std::int64_t, std::int32_t>;
    bits ia = 0, ib = 0;
    std::memcpy(&ia, &a, sizeof(T));
    std::memcpy(&ib, &b, sizeof(T));
    if ((ia < 0) != (ib < 0))
        return std::numeric_limits<long>::max(); // opposite signs, neither zero
    return std::labs(static_cast<long>(ia) - static_cast<long>(ib));
}

template <class T>
std::vector<T> to_host(const thrust::device_vector<T>& v)
{
    thrust::host_vector<T> h = v;
    return {h.begin(), h.end()};
}

// op(X)(i, j) of a column-major matrix stored with leading dimension ld.
template <class T>
T at(const std::vector<T>& x, std::int64_t ld, op o, std::int64_t i, std::int64_t j)
{
    return o == op::none ? x[static_cast<std::size_t>(i + j * ld)] : x[static_cast<std::size_t>(j + i * ld)];
}

template <class T>
double tolerance()
{
    return std::is_same_v<T, float> ? 1e-5 : 1e-13;
}

template <class T>
void check_gemm(op ta, op tb, std::int64_t m, std::int64_t n, std::int64_t k, T alpha, T beta)
{
    // Leading dimensions larger than the rows, so that the strides are exercised.
    const std::int64_t a_rows = ta == op::none ? m : k;
    const std::int64_t a_cols = ta == op::none ? k : m;
    const std::int64_t b_rows = tb == op::none ? k : n;
    const std::int64_t b_cols = tb == op::none ? n : k;
    const std::int64_t lda = a_rows + 2;
    const std::int64_t ldb = b_rows + 1;
    const std::int64_t ldc = m + 3;
    const auto ha = random_values<T>(static_cast<std::size_t>(lda * a_cols), 1);
    const auto hb = random_values<T>(static_cast<std::size_t>(ldb * b_cols), 2);
    const auto hc = random_values<T>(static_cast<std::size_t>(ldc * n), 3);
    thrust::device_vector<T> da(ha.begin(), ha.end());
    thrust::device_vector<T> db(hb.begin(), hb.end());
    thrust::device_vector<T> dc(hc.begin(), hc.end());
    blas b;
    gemm(b, ta, tb, alpha, matrix_view<const T>{view(da).data, a_rows, a_cols, lda},
         matrix_view<const T>{view(db).data, b_rows, b_cols, ldb}, beta, matrix_view<T>{view(dc).data, m, n, ldc});
    const auto got = to_host(dc);
    for (std::int64_t i = 0; i < m; ++i)
        for (std::int64_t j = 0; j < n; ++j) {
            double s = 0;
            for (std::int64_t l = 0; l < k; ++l)
                s += static_cast<double>(at(ha, lda, ta, i, l)) * static_cast<double>(at(hb, ldb, tb, l, j));
            const double expected = alpha * s + beta * static_cast<double>(hc[static_cast<std::size_t>(i + j * ldc)]);
            BOOST_TEST(std::abs(got[static_cast<std::size_t>(i + j * ldc)] - expected) <=
                       tolerance<T>() * (1 + std::abs(expected)));
        }
    // Padding rows below C's m rows are untouched.
    for (std::int64_t j = 0; j < n; ++j)
        for (std::int64_t i = m; i < ldc; ++i)
            BOOST_TEST(got[static_cast<std::size_t>(i + j * ldc)] == hc[static_cast<std::size_t>(i + j * ldc)]);
}

} // namespace

BOOST_AUTO_TEST_CASE(gemm_matches_a_naive_product_for_every_transpose)
{
    for (op ta : {op::none, op::transpose})
        for (op tb : {op::none, op::transpose}) {
            check_gemm<double>(ta, tb, 5, 7, 3, 1.5, 0.0);
            check_gemm<double>(ta, tb, 4, 1, 6, -0.5, 2.0);
            check_gemm<float>(ta, tb, 6, 3, 5, 1.0f, 1.0f);
        }
}

BOOST_AUTO_TEST_CASE(strided_batched_gemm_is_a_loop_of_gemms)
{
    const std::int64_t m = 3, n = 4, k = 2, count = 5;
    const auto ha = random_values<double>(static_cast<std::size_t>(k * m * count), 4); // A_i stored k x m (transposed)
    const auto hb = random_values<double>(static_cast<std::size_t>(k * n * count), 5);
    thrust::device_vector<double> da(ha.begin(), ha.end());
    thrust::device_vector<double> db(hb.begin(), hb.end());
    thrust::device_vector<double> dc(static_cast<std::size_t>(m * n * count), 7.0);
    blas b;
    gemm_batched(b, op::transpose, op::none, 2.0, dense_matrix<const double>(view(da).data, k, m), k * m,
                 dense_matrix<const double>(view(db).data, k, n), k * n, 0.0, dense_matrix(view(dc).data, m, n), m * n,
                 count);
    const auto got = to_host(dc);
    for (std::int64_t c = 0; c < count; ++c)
        for (std::int64_t i = 0; i < m; ++i)
            for (std::int64_t j = 0; j < n; ++j) {
                double s = 0;
                for (std::int64_t l = 0; l < k; ++l)
                    s += ha[static_cast<std::size_t>(c * k * m + l + i * k)] *
                         hb[static_cast<std::size_t>(c * k * n + l + j * k)];
                BOOST_TEST(std::abs(got[static_cast<std::size_t>(c * m * n + i + j * m)] - 2 * s) <= 1e-14);
            }
}

BOOST_AUTO_TEST_CASE(gemv_axpy_scale_and_dot_match_loops)
{
    const std::int64_t m = 6, n = 4;
    const auto ha = random_values<double>(static_cast<std::size_t>(m * n), 6);
    const auto hx = random_values<double>(static_cast<std::size_t>(m), 7);
    const auto hy = random_values<double>(static_cast<std::size_t>(n), 8);
    thrust::device_vector<double> da(ha.begin(), ha.end());
    thrust::device_vector<double> dx(hx.begin(), hx.end());
    thrust::device_vector<double> dy(hy.begin(), hy.end());
    blas b;
    gemv(b, op::transpose, 2.0, dense_matrix<const double>(view(da).data, m, n), view(std::as_const(dx)), 0.5,
         view(dy));
    auto got = to_host(dy);
    for (std::int64_t j = 0; j < n; ++j) {
        double s = 0;
        for (std::int64_t i = 0; i < m; ++i)
            s += ha[static_cast<std::size_t>(i + j * m)] * hx[static_cast<std::size_t>(i)];
        BOOST_TEST(std::abs(got[static_cast<std::size_t>(j)] - (2 * s + 0.5 * hy[static_cast<std::size_t>(j)])) <=
                   1e-14);
    }
    thrust::device_vector<double> u(dx);
    axpy(b, -2.0, view(std::as_const(dx)), view(u)); // u = x - 2x = -x
    scale(b, -1.0, view(u));                         // u = x
    BOOST_TEST(to_host(u) == hx);
    double expected = 0;
    for (double v : hx)
        expected += v * v;
    BOOST_TEST(std::abs(dot(b, view(std::as_const(u)), view(std::as_const(dx))) - expected) <= 1e-14);
}

BOOST_AUTO_TEST_CASE(bias_row_sums_fill_copy_and_reductions)
{
    const std::int64_t rows = 3, cols = 5;
    const auto hc = random_values<double>(static_cast<std::size_t>(rows * cols), 9);
    const std::vector<double> bias{1.0, -2.0, 0.25};
    thrust::device_vector<double> dc(hc.begin(), hc.end());
    thrust::device_vector<double> dbias(bias.begin(), bias.end());
    blas b;
    add_bias(b, dense_matrix(view(dc).data, rows, cols), view(std::as_const(dbias)));
    const auto got = to_host(dc);
    for (std::int64_t j = 0; j < cols; ++j)
        for (std::int64_t i = 0; i < rows; ++i)
            BOOST_TEST(got[static_cast<std::size_t>(i + j * rows)] ==
                       hc[static_cast<std::size_t>(i + j * rows)] + bias[static_cast<std::size_t>(i)]);
    thrust::device_vector<double> sums(rows, 10.0);
    row_sums(b, dense_matrix<const double>(view(dc).data, rows, cols), view(sums), 1.0);
    const auto s = to_host(sums);
    for (std::int64_t i = 0; i < rows; ++i) {
        double e = 0.0;
        for (std::int64_t j = 0; j < cols; ++j)
            e += got[static_cast<std::size_t>(i + j * rows)];
        BOOST_TEST(s[static_cast<std::size_t>(i)] == 1.0 * 10.0 + e); // the documented order of additions
    }
    thrust::device_vector<double> z(4);
    fill(b, view(z), -3.0);
    BOOST_TEST(to_host(z) == std::vector<double>(4, -3.0));
    copy(b, view(std::as_const(dbias)), view(z).sub(1, 3));
    BOOST_TEST(to_host(z) == (std::vector<double>{-3.0, 1.0, -2.0, 0.25}));
    BOOST_TEST(sum(b, view(std::as_const(z))) == -4.0 + 0.25);
    BOOST_TEST(max_abs(b, view(std::as_const(z))) == 3.0);
    BOOST_TEST(all_finite(b, view(std::as_const(z))));
    // (Elements are set through host copies: Thrust's element references bind a null policy, which
    // UBSan reports.)
    for (double bad : {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity()}) {
        std::vector<double> h = to_host(z);
        h[2] = bad;
        const thrust::device_vector<double> w(h.begin(), h.end());
        BOOST_TEST(!all_finite(b, view(w)));
    }
}

BOOST_AUTO_TEST_CASE(vectorised_tanh_is_within_four_ulp_of_libm_and_independent_of_where_an_element_sits)
{
    std::cout << "vector math routine on this CPU: " << detail::vector_math_isa() << "\n";
    // A sweep over the regimes of tanh (tiny, linear, curved, saturating) and its special values.
    std::vector<double> z;
    for (double e = -320; e <= 3; e += 0.0173)
        for (double sign : {-1.0, 1.0})
            z.push_back(sign * std::pow(10.0, e));
    for (double v : {0.0, -0.0, 19.0, 19.1, 22.0, 710.0, std::numeric_limits<double>::denorm_min(),
                     std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity()})
        z.push_back(v);
    std::vector<double> y = z;
    detail::tanh_in_place(y.data(), static_cast<std::int64_t>(y.size()));
    long worst = 0;
    for (std::size_t i = 0; i < z.size(); ++i) {
        worst = std::max(worst, ulps_apart(y[i], std::tanh(z[i])));
        BOOST_TEST(std::signbit(y[i]) == std::signbit(z[i]), "sign of tanh(" << z[i] << ")");
    }
    BOOST_TEST(worst <= 4, "worst " << worst << " ulp from std::tanh over " << z.size() << " values");
    std::vector<double> nan{std::numeric_limits<double>::quiet_NaN()};
    detail::tanh_in_place(nan.data(), 1);
    BOOST_TEST(std::isnan(nan[0]));
    std::vector<float> zf(z.begin(), z.end()), yf = zf;
    detail::tanh_in_place(yf.data(), static_cast<std::int64_t>(yf.size()));
    for (std::size_t i = 0; i < zf.size(); ++i)
        BOOST_TEST(ulps_apart(yf[i], std::tanh(zf[i])) <= 4, "float tanh at " << zf[i]);

    // Checkpointing recomputes values in arrays of other lengths and offsets: each element's bits must not
    // depend on them (the last partial group of lanes is padded, not computed by another routine).
    const std::vector<double> r = random_values<double>(67, 11);
    std::vector<double> whole = r;
    detail::tanh_in_place(whole.data(), static_cast<std::int64_t>(whole.size()));
    for (std::size_t offset = 0; offset < 17; ++offset)
        for (std::size_t length = 1; offset + length <= r.size(); length += 3) {
            std::vector<double> part(r.begin() + static_cast<std::ptrdiff_t>(offset),
                                     r.begin() + static_cast<std::ptrdiff_t>(offset + length));
            detail::tanh_in_place(part.data(), static_cast<std::int64_t>(length));
            BOOST_TEST(std::memcmp(part.data(), whole.data() + offset, length * sizeof(double)) == 0,
                       "offset " << offset << ", length " << length);
        }
    // And through the seam, in chunks: a vector longer than one chunk equals the element-wise routine.
    const std::vector<double> big = random_values<double>(3 * 4096 + 5, 12);
    thrust::device_vector<double> d(big.begin(), big.end());
    blas b;
    activate(b, activation::tanh, view(d));
    std::vector<double> expected = big;
    detail::tanh_in_place(expected.data(), static_cast<std::int64_t>(expected.size()));
    BOOST_TEST(std::memcmp(to_host(d).data(), expected.data(), big.size() * sizeof(double)) == 0);
}

BOOST_AUTO_TEST_CASE(vectorised_sigmoid_is_within_four_ulp_of_the_scalar_formula_wherever_an_element_sits)
{
    // The logistic function 1 / (1 + exp(-z)) over its regimes: saturated at 0 (exp overflowing), curved,
    // saturated at 1, and the special values; against the same formula with libm's scalar exp.
    std::vector<double> z;
    for (double v = -800; v <= 800; v += 0.0731)
        z.push_back(v);
    for (double v : {0.0, -0.0, 1e-300, -1e-300, 88.7, -88.7, 709.0, -709.0, 745.2, -745.2,
                     std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity()})
        z.push_back(v);
    const auto scalar = [](auto v) { return decltype(v)(1) / (decltype(v)(1) + std::exp(-v)); };
    std::vector<double> y = z;
    detail::sigmoid_in_place(y.data(), static_cast<std::int64_t>(y.size()));
    long worst = 0;
    for (std::size_t i = 0; i < z.size(); ++i)
        worst = std::max(worst, ulps_apart(y[i], scalar(z[i])));
    BOOST_TEST(worst <= 4, "worst " << worst << " ulp from the scalar formula over " << z.size() << " values");
    std::vector<double> nan{std::numeric_limits<double>::quiet_NaN()};
    detail::sigmoid_in_place(nan.data(), 1);
    BOOST_TEST(std::isnan(nan[0]));
    std::vector<float> zf(z.begin(), z.end()), yf = zf;
    detail::sigmoid_in_place(yf.data(), static_cast<std::int64_t>(yf.size()));
    for (std::size_t i = 0; i < zf.size(); ++i)
        BOOST_TEST(ulps_apart(yf[i], scalar(zf[i])) <= 4, "float sigmoid at " << zf[i]);

    // Recomputations see other lengths and offsets: each element's bits must not depend on them.
    const std::vector<float> r = [] {
        const std::vector<double> d = random_values<double>(67, 13);
        return std::vector<float>(d.begin(), d.end());
    }();
    std::vector<float> whole = r;
    detail::sigmoid_in_place(whole.data(), static_cast<std::int64_t>(whole.size()));
    for (std::size_t offset = 0; offset < 17; ++offset)
        for (std::size_t length = 1; offset + length <= r.size(); length += 3) {
            std::vector<float> part(r.begin() + static_cast<std::ptrdiff_t>(offset),
                                    r.begin() + static_cast<std::ptrdiff_t>(offset + length));
            detail::sigmoid_in_place(part.data(), static_cast<std::int64_t>(length));
            BOOST_TEST(std::memcmp(part.data(), whole.data() + offset, length * sizeof(float)) == 0,
                       "offset " << offset << ", length " << length);
        }
}

BOOST_AUTO_TEST_CASE(activations_and_their_derivatives_from_the_output)
{
    const std::vector<double> z{-30.0, -3.0, -0.5, 0.0, 0.7, 4.0, 40.0};
    for (activation a :
         {activation::identity, activation::tanh, activation::softplus, activation::sigmoid, activation::relu}) {
        BOOST_TEST((parse_activation(name(a)) == a));
        thrust::device_vector<double> y(z.begin(), z.end());
        blas b;
        activate(b, a, view(y));
        thrust::device_vector<double> g(z.size(), 2.0);
        backprop_activation(b, a, view(std::as_const(y)), view(g));
        const auto hy = to_host(y);
        const auto hg = to_host(g);
        const activate_fn<double> f{a};
        for (std::size_t i = 0; i < z.size(); ++i) {
            if (a == activation::tanh || a == activation::sigmoid) // vectorised on the CPU (vector_math.hpp)
                BOOST_TEST(ulps_apart(hy[i], f(z[i])) <= 4, name(a) << " at " << z[i]);
            else
                BOOST_TEST(hy[i] == f(z[i]));
            if (a == activation::relu && z[i] == 0.0)
                continue; // not differentiable there
            const double h = 1e-6;
            const double fd = (f(z[i] + h) - f(z[i] - h)) / (2 * h);
            BOOST_TEST(std::abs(hg[i] - 2 * fd) <= 1e-8 * (1 + std::abs(fd)), name(a) << " at " << z[i]);
        }
    }
    // softplus keeps its precision far out on both sides (no overflow, no cancellation).
    const activate_fn<double> sp{activation::softplus};
    BOOST_TEST(sp(800.0) == 800.0);
    BOOST_TEST(std::abs(sp(-40.0) - std::exp(-40.0)) <= 1e-30);
    BOOST_TEST(std::abs(derivative_from_output_fn<double>{activation::softplus}(sp(-40.0))-std::exp(-40.0)) <= 1e-28);
    BOOST_CHECK_EXCEPTION((void)parse_activation("gelu"), remat::argument_error, [](const remat::argument_error& e) {
        return std::string(e.what()).find("'gelu'") != std::string::npos &&
               std::string(e.what()).find("softplus") != std::string::npos;
    });
}

BOOST_AUTO_TEST_CASE(bad_shapes_are_refused_naming_the_numbers)
{
    thrust::device_vector<double> v(64);
    double* p = view(v).data;
    blas b;
    auto message_has = [](const std::string& text) {
        return [text](const remat::error& e) { return std::string(e.what()).find(text) != std::string::npos; };
    };
    BOOST_CHECK_EXCEPTION(gemm(b, op::none, op::none, 1.0, dense_matrix<const double>(p, 2, 3),
                               dense_matrix<const double>(p, 4, 2), 0.0, dense_matrix(p, 2, 2)),
                          remat::argument_error, message_has("op(A) is 2 x 3, op(B) is 4 x 2"));
    BOOST_CHECK_EXCEPTION(gemm(b, op::none, op::none, 1.0, matrix_view<const double>{p, 4, 2, 3},
                               dense_matrix<const double>(p, 2, 2), 0.0, dense_matrix(p, 4, 2)),
                          remat::argument_error, message_has("lda = 3"));
    BOOST_CHECK_EXCEPTION(b.gemm(op::none, op::none, -1, 2, 2, 1.0, p, 2, p, 2, 0.0, p, 2), remat::argument_error,
                          message_has("m = -1 is negative"));
    BOOST_CHECK_EXCEPTION(b.gemm(op::none, op::none, std::int64_t{1} << 32, 1, 1, 1.0, p, std::int64_t{1} << 32, p, 1,
                                 0.0, p, std::int64_t{1} << 32),
                          remat::overflow_error, message_has("exceeds the BLAS integer range"));
    BOOST_CHECK_EXCEPTION(gemv(b, op::none, 1.0, dense_matrix<const double>(p, 3, 2), vector_view<const double>{p, 3},
                               0.0, vector_view<double>{p, 3}),
                          remat::argument_error, message_has("the length of x is 3 (expected 2)"));
    BOOST_CHECK_EXCEPTION(add_bias(b, dense_matrix(p, 3, 2), vector_view<const double>{p, 2}), remat::argument_error,
                          message_has("the bias length is 2 (expected 3)"));
    BOOST_CHECK_EXCEPTION(b.gemm_strided_batched(op::none, op::none, 2, 2, 2, 1.0, p, 2, 3, p, 2, 4, 0.0, p, 2, 4, 2),
                          remat::argument_error, message_has("stride_a = 3"));
}
