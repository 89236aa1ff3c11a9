// The binomial numbers against independent computations: Pascal's triangle, a linear search for r,
// and the brute-force dynamic program for the forward-step optimum.
#define BOOST_TEST_MODULE binomial
#include <boost/test/unit_test.hpp>

#include "brute_force.hpp"

#include "remat/error.hpp"
#include "remat/schedule/binomial.hpp"

#include <vector>

using namespace remat;
namespace bin = remat::binomial;

namespace {
__extension__ typedef unsigned __int128 u128;
}

BOOST_AUTO_TEST_CASE(choose_matches_pascal_and_saturates)
{
    // Pascal's triangle in 128 bits, exact up to n = 120 for every k.
    std::vector<std::vector<u128>> pascal(121);
    for (std::size_t n = 0; n <= 120; ++n) {
        pascal[n].assign(n + 1, 1);
        for (std::size_t k = 1; k < n; ++k)
            pascal[n][k] = pascal[n - 1][k - 1] + pascal[n - 1][k];
    }
    const std::uint64_t cap = UINT64_MAX;
    for (std::size_t n = 0; n <= 120; ++n)
        for (std::size_t k = 0; k <= n; ++k) {
            const u128 exact = pascal[n][k];
            const std::uint64_t expected = exact >= cap ? cap : static_cast<std::uint64_t>(exact);
            BOOST_TEST_REQUIRE(bin::choose_saturated(n, k, cap) == expected, "C(" << n << "," << k << ")");
            const std::uint64_t small_cap = 1000;
            BOOST_TEST_REQUIRE(bin::choose_saturated(n, k, small_cap) ==
                               (exact >= small_cap ? small_cap : static_cast<std::uint64_t>(exact)));
        }
    BOOST_TEST(bin::choose_saturated(5, 6, cap) == 0u);
    // Huge arguments saturate instead of wrapping.
    BOOST_TEST(bin::choose_saturated(UINT64_MAX - 1, 2, cap) == cap);
    BOOST_TEST(bin::max_steps(INT64_MAX, UINT64_MAX) == UINT64_MAX);
}

BOOST_AUTO_TEST_CASE(repetition_number_is_the_smallest_sufficient_r)
{
    for (slot_t s = 1; s <= 12; ++s)
        for (step_t t = 1; t <= 2000; ++t) {
            std::uint64_t r = 0;
            while (bin::choose_saturated(static_cast<std::uint64_t>(s) + r, static_cast<std::uint64_t>(s), UINT64_MAX) <
                   static_cast<std::uint64_t>(t))
                ++r;
            BOOST_TEST_REQUIRE(bin::repetition_number(t, s) == r, "T=" << t << " s=" << s);
        }
    BOOST_TEST(bin::repetition_number(10, 3) == 2u);
    BOOST_TEST(bin::repetition_number(INT64_MAX, 1) == static_cast<std::uint64_t>(INT64_MAX - 1));
    // s = 2: C(r+2, 2) >= 2^63-1 first at r = 4294967295 (C = 2^63 + 2^31 - 1 ... exactly checked here).
    const std::uint64_t r2 = bin::repetition_number(INT64_MAX, 2);
    BOOST_TEST(bin::max_steps(2, r2) >= static_cast<std::uint64_t>(INT64_MAX));
    BOOST_TEST(bin::max_steps(2, r2 - 1) < static_cast<std::uint64_t>(INT64_MAX));
}

BOOST_AUTO_TEST_CASE(min_forward_steps_matches_the_brute_force_optimum)
{
    const test::split_optimum dp(300, 12);
    for (slot_t s = 1; s <= 12; ++s)
        for (step_t t = 1; t <= 300; ++t)
            BOOST_TEST_REQUIRE(bin::min_forward_steps(t, s) == dp(t, s).first, "T=" << t << " s=" << s);
    BOOST_TEST(bin::min_forward_steps(10, 3) == 15u);
    BOOST_TEST(bin::min_forward_steps(1, 1) == 0u);
    BOOST_TEST(bin::min_forward_steps(1000, 5000) == 999u); // store-all
}

BOOST_AUTO_TEST_CASE(huge_step_counts_are_exact_or_refused)
{
    // T = 10^15 with 20 slots: r*T - C(20+r, r-1) computed independently with 128-bit Pascal sums.
    const step_t t = 1'000'000'000'000'000;
    const std::uint64_t r = bin::repetition_number(t, 20);
    std::vector<u128> row(22, 0); // C(n, k) for k <= 21, built row by row up to n = 20 + r
    row[0] = 1;
    for (std::uint64_t n = 1; n <= 20 + r; ++n)
        for (std::size_t k = std::min<std::uint64_t>(n, 21); k >= 1; --k)
            row[k] += row[k - 1];
    const u128 c = row[21]; // C(20+r, 21) = C(20+r, r-1)
    const u128 expected = static_cast<u128>(r) * static_cast<std::uint64_t>(t) - c;
    BOOST_TEST((bin::min_forward_steps(t, 20) == static_cast<std::uint64_t>(expected)));
    // 2^63-1 steps with one slot needs about 2^125 forward steps: refused by name, never wrapped.
    BOOST_CHECK_EXCEPTION((void)bin::min_forward_steps(INT64_MAX, 1), overflow_error, [](const overflow_error& e) {
        const std::string m = e.what();
        BOOST_TEST_MESSAGE(m);
        // The count in scientific form (not 42535295865117307932921825928971026432.000000), and the
        // arguments as given.
        return m.find("forward steps for 9223372036854775807 steps and 1 slots is about 4.25e+37") !=
                   std::string::npos &&
               m.find(".000000") == std::string::npos;
    });
    // A negative slot count is refused, not wrapped to about 2^64 slots.
    BOOST_CHECK_EXCEPTION((void)bin::max_steps(-5, 3), argument_error, [](const argument_error& e) {
        return std::string(e.what()).find("got -5") != std::string::npos;
    });
    BOOST_CHECK_THROW((void)bin::max_steps(0, 3), argument_error);
    BOOST_CHECK_THROW((void)bin::repetition_number(0, 3), argument_error);
    BOOST_CHECK_THROW((void)bin::repetition_number(10, 0), argument_error);
}
