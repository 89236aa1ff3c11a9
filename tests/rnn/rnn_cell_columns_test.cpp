// The CPU's backward gate passes (rnn/detail/cell_columns.hpp, compiled once per instruction set in
// solvers/rnn/src/backward_columns.cpp) against the per-element functors of cell_kernels.hpp, compiled here for the
// x86-64 baseline (both call the same element arithmetic; what differs is the loop, its indexing, the
// instruction set and the compiler's freedom to fuse): the gate gradients and the updated adjoint bit for bit, GRU and
// LSTM, float and double, with the adjoint normal and subnormal (late in a long sequence it is subnormal, where the
// vectorised passes save the microcode assists of a scalar one), and a hidden size that leaves a partial vector.
#define BOOST_TEST_MODULE rnn_cell_columns
#include <boost/test/unit_test.hpp>

#include "remat/rnn/detail/cell_columns.hpp"
#include "remat/rnn/detail/cell_kernels.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

using namespace remat;

namespace {

constexpr std::int64_t hidden = 37; // not a multiple of any vector width
constexpr std::int64_t batch = 5;

// n values in (-scale, scale), or in (0, 1) for gate activations.
template <class T>
std::vector<T> random_values(std::int64_t n, std::uint64_t seed, double lo, double hi, double scale = 1)
{
    std::mt19937_64 gen(seed);
    std::uniform_real_distribution<double> u(lo, hi);
    std::vector<T> v(static_cast<std::size_t>(n));
    for (T& x : v)
        x = static_cast<T>(u(gen) * scale);
    return v;
}

template <class T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b)
{
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

template <class T>
long subnormals(const std::vector<T>& v)
{
    long n = 0;
    for (const T x : v)
        n += std::fpclassify(x) == FP_SUBNORMAL ? 1 : 0;
    return n;
}

// An adjoint of magnitude `scale`: 1, or deep in T's subnormal range.
template <class T>
void check_lstm(double scale)
{
    const std::int64_t count = hidden * batch;
    const rnn::detail::gate_index at{hidden, 4 * hidden};
    const std::vector<T> tape = random_values<T>(5 * count, 1, 0, 1); // i, f, g, o, tanh(c'): in (0, 1) will do
    const std::vector<T> c = random_values<T>(count, 2, -2, 2);
    const std::vector<T> dh = random_values<T>(count, 3, -1, 1, scale);
    const std::vector<T> dc0 = random_values<T>(count, 4, -1, 1, scale);
    std::vector<T> dc_want = dc0;
    std::vector<T> dg_want(static_cast<std::size_t>(4 * count));
    const rnn::detail::lstm_backward<T> element{tape.data(),    c.data(), dh.data(), dc_want.data(),
                                                dg_want.data(), count,    at};
    for (std::int64_t e = 0; e < count; ++e)
        element(e);
    std::vector<T> dc_got = dc0;
    std::vector<T> dg_got(dg_want.size());
    const auto columns = rnn::detail::by_columns(
        rnn::detail::lstm_backward<T>{tape.data(), c.data(), dh.data(), dc_got.data(), dg_got.data(), count, at});
    for (std::int64_t j = 0; j < batch; ++j)
        columns(j);
    BOOST_TEST(same_bits(dg_got, dg_want), sizeof(T) << "-byte LSTM dG, adjoint scale " << scale);
    BOOST_TEST(same_bits(dc_got, dc_want), sizeof(T) << "-byte LSTM dc, adjoint scale " << scale);
    if (scale < 1) // the case the vectorisation is for: the gate gradient is subnormal
        BOOST_TEST(subnormals(dg_want) > count);
}

template <class T>
void check_gru(double scale)
{
    const std::int64_t count = hidden * batch;
    const rnn::detail::gate_index at{hidden, 3 * hidden};
    const std::vector<T> tape = random_values<T>(4 * count, 5, 0, 1); // r, z, n, W_hn h + b_hn
    const std::vector<T> h = random_values<T>(count, 6, -1, 1);
    const std::vector<T> dh0 = random_values<T>(count, 7, -1, 1, scale);
    std::vector<T> dh_want = dh0;
    std::vector<T> dgi_want(static_cast<std::size_t>(3 * count));
    std::vector<T> dgh_want(dgi_want.size());
    const rnn::detail::gru_backward<T> element{tape.data(), h.data(), dh_want.data(), dgi_want.data(), dgh_want.data(),
                                               count,       at};
    for (std::int64_t e = 0; e < count; ++e)
        element(e);
    std::vector<T> dh_got = dh0;
    std::vector<T> dgi_got(dgi_want.size());
    std::vector<T> dgh_got(dgi_want.size());
    const auto columns = rnn::detail::by_columns(
        rnn::detail::gru_backward<T>{tape.data(), h.data(), dh_got.data(), dgi_got.data(), dgh_got.data(), count, at});
    for (std::int64_t j = 0; j < batch; ++j)
        columns(j);
    BOOST_TEST(same_bits(dgi_got, dgi_want), sizeof(T) << "-byte GRU dGi, adjoint scale " << scale);
    BOOST_TEST(same_bits(dgh_got, dgh_want), sizeof(T) << "-byte GRU dGh, adjoint scale " << scale);
    BOOST_TEST(same_bits(dh_got, dh_want), sizeof(T) << "-byte GRU dh, adjoint scale " << scale);
    if (scale < 1)
        BOOST_TEST(subnormals(dgi_want) > count);
}

} // namespace

BOOST_AUTO_TEST_CASE(backward_column_passes_have_the_per_element_functors_bits_subnormals_included)
{
    // Subnormal adjoints: below 2^-126 (float) and 2^-1022 (double), a few bits of precision left.
    for (const double scale : {1.0, 0x1p-130})
        check_lstm<float>(scale), check_gru<float>(scale);
    for (const double scale : {1.0, 0x1p-1026})
        check_lstm<double>(scale), check_gru<double>(scale);
}

BOOST_AUTO_TEST_CASE(backward_column_passes_use_the_widest_vectors_this_processor_has)
{
    const std::string isa = rnn::detail::backward_columns_isa();
    BOOST_TEST_MESSAGE("backward gate passes: " << isa);
#if defined(__x86_64__) && defined(__GNUC__)
    __builtin_cpu_init();
    const char* widest = __builtin_cpu_supports("avx512f") ? "avx512"
                         : __builtin_cpu_supports("avx2")  ? "avx2"
                                                           : "sse2";
    BOOST_TEST(isa == widest);
#else
    BOOST_TEST(isa == "baseline");
#endif
}
