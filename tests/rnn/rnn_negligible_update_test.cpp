// The proof that lets the CPU's RNN backward skip a weight gradient's product (rnn/detail/negligible_update.hpp),
// checked against the BLAS that would compute it: whenever product_is_negligible says C += A B^T changes no
// bit of C, OpenBLAS's gemm (the model's call: A not transposed, B transposed, beta 1) leaves C bit for bit as
// it was. Random problems at the bench's LSTM shapes and small ones, the gate gradient A from normal down to
// subnormal, float and double; problems built to sit at the bound's edge; and the refusals (a zero or
// subnormal in C, a NaN or infinity anywhere).
#define BOOST_TEST_MODULE rnn_negligible_update
#include <boost/test/unit_test.hpp>

#include "remat/dense/cpu_blas.hpp"
#include "remat/rnn/detail/negligible_update.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

using namespace remat;

namespace {

struct problem_size {
    std::int64_t m, n, k; // C m x n += A (m x k) B^T (B n x k)
};

struct counts {
    int negligible = 0;
    int not_negligible = 0;
};

// C += A B^T by the BLAS; true when the predicate said negligible and C kept its bits (or it did not say so).
template <class T>
bool consistent(dense::cpu_blas& blas, const std::vector<T>& a, const std::vector<T>& b, std::vector<T> c,
                problem_size s, counts& seen)
{
    const bool negligible =
        rnn::detail::product_is_negligible(a.data(), s.m * s.k, b.data(), s.n * s.k, s.k, c.data(), s.m * s.n);
    (negligible ? seen.negligible : seen.not_negligible) += 1;
    const std::vector<T> before = c;
    blas.gemm(dense::op::none, dense::op::transpose, s.m, s.n, s.k, T(1), a.data(), s.m, b.data(), s.n, T(1), c.data(),
              s.m);
    return !negligible || std::memcmp(before.data(), c.data(), c.size() * sizeof(T)) == 0;
}

template <class T>
void check_random(problem_size s, int trials, std::uint64_t seed)
{
    // A's magnitude 2^-e for e up to past T's smallest subnormal: both sides of the bound.
    const int deepest = std::numeric_limits<T>::digits - std::numeric_limits<T>::min_exponent + 4;
    std::mt19937_64 gen(seed);
    std::uniform_real_distribution<double> unit(-1, 1);
    // Every other trial near the bound (C's 2^-30..1 times eps / (16 k)), the others anywhere down to the subnormals.
    std::uniform_int_distribution<int> a_exponent(0, deepest);
    std::uniform_int_distribution<int> a_near(0, 2 * std::numeric_limits<T>::digits + 60);
    std::uniform_int_distribution<int> c_exponent(0, 30);
    dense::cpu_blas blas;
    counts seen;
    for (int t = 0; t < trials; ++t) {
        const double a_scale = std::ldexp(1.0, -(t % 2 == 0 ? a_near(gen) : a_exponent(gen)));
        std::vector<T> a(static_cast<std::size_t>(s.m * s.k));
        std::vector<T> b(static_cast<std::size_t>(s.n * s.k));
        std::vector<T> c(static_cast<std::size_t>(s.m * s.n));
        for (T& x : a)
            x = static_cast<T>(unit(gen) * a_scale);
        for (T& x : b)
            x = static_cast<T>(unit(gen));
        for (T& x : c) // spread over 30 binary orders, both signs, none zero
            x = static_cast<T>((unit(gen) < 0 ? -1 : 1) * std::ldexp(1 + std::abs(unit(gen)), -c_exponent(gen)));
        BOOST_TEST(consistent(blas, a, b, c, s, seen), "trial " << t << ", A scale " << a_scale);
    }
    BOOST_TEST(seen.negligible > trials / 10);
    BOOST_TEST(seen.not_negligible > trials / 10);
}

// A all +a, B all +1 (each sum k a, as large as the bound allows for it), C all -1 (a sum added moves it
// toward the finer spacing below 1, 2^-24 in float): an a the predicate accepts, 2, 4 and 128 times it.
template <class T>
void check_edge()
{
    const problem_size s{8, 4, 64};
    dense::cpu_blas blas;
    counts seen;
    const std::vector<T> b(static_cast<std::size_t>(s.n * s.k), T(1));
    const std::vector<T> c(static_cast<std::size_t>(s.m * s.n), T(-1));
    // The predicate's bound 2 k (a + denorm_min) <= eps / 8: a = eps / (32 k) passes, 2 a does not.
    const T passes = std::numeric_limits<T>::epsilon() / T(32 * s.k);
    for (const T a_value : {passes, 2 * passes, 4 * passes, 128 * passes}) {
        const std::vector<T> a(static_cast<std::size_t>(s.m * s.k), a_value);
        BOOST_TEST(consistent(blas, a, b, c, s, seen));
    }
    // 2 a too: its bound exceeds eps / 8 by 2 k denorm_min only, which the comparison's rounding absorbs
    // (harmless: the factor 2 is ample slack there). 4 a is refused.
    BOOST_TEST(seen.negligible == 2);
    // 128 times it: the sum k a = 4 eps moves -1 (the BLAS changes C there, so skipping would be wrong).
    std::vector<T> moved = c;
    const std::vector<T> a(static_cast<std::size_t>(s.m * s.k), 128 * passes);
    blas.gemm(dense::op::none, dense::op::transpose, s.m, s.n, s.k, T(1), a.data(), s.m, b.data(), s.n, T(1),
              moved.data(), s.m);
    BOOST_TEST(moved[0] != T(-1));
}

template <class T>
void check_refusals()
{
    const problem_size s{6, 3, 4};
    const std::vector<T> tiny(static_cast<std::size_t>(s.m * s.k), std::numeric_limits<T>::denorm_min());
    const std::vector<T> b(static_cast<std::size_t>(s.n * s.k), T(0.5));
    std::vector<T> c(static_cast<std::size_t>(s.m * s.n), T(1));
    const auto negligible = [&](const std::vector<T>& a, const std::vector<T>& bb, const std::vector<T>& cc) {
        return rnn::detail::product_is_negligible(a.data(), s.m * s.k, bb.data(), s.n * s.k, s.k, cc.data(), s.m * s.n);
    };
    BOOST_TEST(negligible(tiny, b, c)); // the case it is for
    for (const T bad : {T(0), -T(0), std::numeric_limits<T>::min() / 2, std::numeric_limits<T>::quiet_NaN(),
                        std::numeric_limits<T>::infinity()}) {
        std::vector<T> with_bad = c;
        with_bad[5] = bad;
        BOOST_TEST(!negligible(tiny, b, with_bad), "C holding " << bad);
        std::vector<T> a_bad = tiny;
        a_bad[3] = bad;
        std::vector<T> b_bad = b;
        b_bad[2] = bad;
        if (!(bad == T(0) || std::fpclassify(bad) == FP_SUBNORMAL)) { // a zero or subnormal in A or B is fine
            BOOST_TEST(!negligible(a_bad, b, c), "A holding " << bad);
            BOOST_TEST(!negligible(tiny, b_bad, c), "B holding " << bad);
        }
    }
}

} // namespace

BOOST_AUTO_TEST_CASE(a_product_called_negligible_leaves_the_blas_result_bit_for_bit)
{
    check_random<float>({96, 40, 64}, 300, 1);
    check_random<double>({96, 40, 64}, 300, 2);
    // The bench's LSTM: dW_hh (1024 x 256) and dW_ih (1024 x 32) over a batch of 64.
    check_random<float>({1024, 256, 64}, 12, 3);
    check_random<float>({1024, 32, 64}, 40, 4);
}

BOOST_AUTO_TEST_CASE(the_bound_holds_at_its_edge)
{
    check_edge<float>();
    check_edge<double>();
}

BOOST_AUTO_TEST_CASE(zeros_subnormals_nans_and_infinities_where_they_matter_are_refused)
{
    check_refusals<float>();
    check_refusals<double>();
}
