// The compiled serial kernels (solvers/cvodes/src/serial_kernels.hpp) against SUNDIALS's own serial
// operations, the library's compiled code as the reference: every operation, every special case of
// N_VLinearSum and N_VScale, with and without aliasing, gives the same bits.
#define BOOST_TEST_MODULE cvodes_kernels
#include <boost/test/unit_test.hpp>

#include "serial_kernels.hpp"

#include <nvector/nvector_serial.h>
#include <sundials/sundials_context.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

namespace {

struct context {
    SUNContext ctx = nullptr;
    context() { SUNContext_Create(nullptr, &ctx); }
    ~context() { SUNContext_Free(&ctx); }
    context(const context&) = delete;
    context& operator=(const context&) = delete;
};

// Values of both signs and many magnitudes, with the edges: zeros of both signs, a subnormal, a huge one.
std::vector<double> values(std::size_t n, std::uint64_t seed)
{
    std::mt19937_64 random(seed);
    std::uniform_real_distribution<double> mantissa(-2, 2);
    std::uniform_int_distribution<int> exponent(-30, 30);
    std::vector<double> v(n);
    for (auto& x : v)
        x = std::ldexp(mantissa(random), exponent(random));
    const double edges[] = {0.0, -0.0, 1e-310, -3e300, 1.0, -1.0};
    for (std::size_t i = 0; i < std::size(edges) && i < n; ++i)
        v[(i * 7) % n] = edges[i];
    return v;
}

// Three vectors (x, y, z) filled alike, once with the library's operations and once with the kernels.
struct pair_of_sets {
    std::vector<N_Vector> library;
    std::vector<N_Vector> compiled;
    pair_of_sets(std::size_t n, SUNContext ctx)
    {
        for (int k = 0; k < 3; ++k) {
            library.push_back(N_VNew_Serial(static_cast<sunindextype>(n), ctx));
            compiled.push_back(N_VNew_Serial(static_cast<sunindextype>(n), ctx));
            remat::cvodes::detail::use_compiled_kernels(compiled.back());
        }
        reset(n);
    }
    ~pair_of_sets()
    {
        for (auto* v : library)
            N_VDestroy(v);
        for (auto* v : compiled)
            N_VDestroy(v);
    }
    pair_of_sets(const pair_of_sets&) = delete;
    pair_of_sets& operator=(const pair_of_sets&) = delete;
    void reset(std::size_t n)
    {
        for (std::size_t k = 0; k < 3; ++k) {
            const auto v = values(n, 17 + k);
            std::memcpy(N_VGetArrayPointer(library[k]), v.data(), n * sizeof(double));
            std::memcpy(N_VGetArrayPointer(compiled[k]), v.data(), n * sizeof(double));
        }
    }
    // Every vector's bits agree between the two sets.
    [[nodiscard]] bool same_bits(std::size_t n) const
    {
        for (std::size_t k = 0; k < 3; ++k)
            if (std::memcmp(N_VGetArrayPointer(library[k]), N_VGetArrayPointer(compiled[k]), n * sizeof(double)) != 0)
                return false;
        return true;
    }
};

const std::size_t lengths[] = {1, 3, 1001};

} // namespace

BOOST_AUTO_TEST_CASE(the_kernels_replace_the_library_operations_and_clones_keep_them)
{
    context c;
    N_Vector v = N_VNew_Serial(4, c.ctx);
    remat::cvodes::detail::use_compiled_kernels(v);
    N_Vector w = N_VClone(v);
    for (N_Vector u : {v, w}) {
        BOOST_TEST((u->ops->nvlinearsum != &N_VLinearSum_Serial));
        BOOST_TEST((u->ops->nvwrmsnorm != &N_VWrmsNorm_Serial));
        BOOST_TEST((u->ops->nvscale != &N_VScale_Serial));
    }
    BOOST_TEST((w->ops->nvlinearsum == v->ops->nvlinearsum));
    N_VDestroy(w);
    N_VDestroy(v);
}

BOOST_AUTO_TEST_CASE(linear_sum_gives_the_library_bits_in_every_case_and_aliasing)
{
    context c;
    const double coefficients[] = {1.0, -1.0, 0.0, 0.5, -0.5, 2.0, -2.0, 0.3};
    for (const std::size_t n : lengths) {
        pair_of_sets s(n, c.ctx);
        for (const double a : coefficients)
            for (const double b : coefficients)
                for (int alias = 0; alias < 4; ++alias) { // z apart, z = x, z = y, x = y = z
                    s.reset(n);
                    for (auto* set : {&s.library, &s.compiled}) {
                        auto& v = *set;
                        N_Vector x = v[0];
                        N_Vector y = alias == 3 ? v[0] : v[1];
                        N_Vector z = alias == 1 || alias == 3 ? v[0] : alias == 2 ? v[1] : v[2];
                        N_VLinearSum(a, x, b, y, z);
                    }
                    BOOST_TEST(s.same_bits(n), "a " << a << ", b " << b << ", aliasing " << alias << ", n " << n);
                }
    }
}

BOOST_AUTO_TEST_CASE(elementwise_operations_give_the_library_bits)
{
    context c;
    for (const std::size_t n : lengths) {
        pair_of_sets s(n, c.ctx);
        auto check = [&](const char* what, auto op) {
            for (int in_place = 0; in_place < 2; ++in_place) {
                s.reset(n);
                op(s.library, in_place == 1);
                op(s.compiled, in_place == 1);
                BOOST_TEST(s.same_bits(n), what << (in_place == 1 ? " in place" : "") << ", n " << n);
            }
        };
        for (const double k : {1.0, -1.0, 0.0, 0.37, -5.0})
            check("scale", [k](auto& v, bool in_place) { N_VScale(k, v[0], in_place ? v[0] : v[2]); });
        check("const", [](auto& v, bool) { N_VConst(0.25, v[2]); });
        check("prod", [](auto& v, bool in_place) { N_VProd(v[0], v[1], in_place ? v[0] : v[2]); });
        check("div", [](auto& v, bool in_place) { N_VDiv(v[0], v[1], in_place ? v[1] : v[2]); });
        check("abs", [](auto& v, bool in_place) { N_VAbs(v[0], in_place ? v[0] : v[2]); });
        check("inv", [](auto& v, bool in_place) { N_VInv(v[1], in_place ? v[1] : v[2]); });
        check("addconst", [](auto& v, bool in_place) { N_VAddConst(v[0], 1e-3, in_place ? v[0] : v[2]); });
    }
}

BOOST_AUTO_TEST_CASE(reductions_give_the_library_bits)
{
    context c;
    for (const std::size_t n : lengths) {
        pair_of_sets s(n, c.ctx);
        auto same = [](double p, double q) {
            return std::bit_cast<std::uint64_t>(p) == std::bit_cast<std::uint64_t>(q);
        };
        auto& l = s.library;
        auto& k = s.compiled;
        BOOST_TEST(same(N_VDotProd(l[0], l[1]), N_VDotProd(k[0], k[1])), "n " << n);
        BOOST_TEST(same(N_VMaxNorm(l[0]), N_VMaxNorm(k[0])), "n " << n);
        BOOST_TEST(same(N_VWrmsNorm(l[0], l[1]), N_VWrmsNorm(k[0], k[1])), "n " << n);
        N_VConst(0.0, l[2]);
        N_VConst(0.0, k[2]);
        BOOST_TEST(same(N_VWrmsNorm(l[2], l[1]), N_VWrmsNorm(k[2], k[1])), "zero vector, n " << n);
        if (n > 6) // shorter ones hold only the edges (zeros, a subnormal whose square is 0)
            BOOST_TEST(N_VWrmsNorm(k[0], k[1]) > 0);
    }
}
