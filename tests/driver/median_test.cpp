// remat::detail::median, the one median of remat calibrate and the benchmarks: against values whose median
// is known by construction, in any order.
#define BOOST_TEST_MODULE median
#include <boost/test/unit_test.hpp>

#include "remat/detail/median.hpp"

#include <algorithm>
#include <random>
#include <vector>

BOOST_AUTO_TEST_CASE(middle_value_or_mean_of_the_middle_two_in_any_order)
{
    using remat::detail::median;
    BOOST_TEST(median({7.0}) == 7.0);
    BOOST_TEST(median({4.0, 1.0}) == 2.5);
    BOOST_TEST(median({3.0, 1.0, 2.0, 10.0}) == 2.5);
    // 2k + 1 values: k below 100, k above; 2k values: k - 1 below 100, then 100 and 102, k - 1 above
    std::mt19937_64 rng(4);
    for (int k = 1; k <= 20; ++k) {
        std::vector<double> odd{100.0};
        std::vector<double> even{100.0, 102.0};
        for (int i = 0; i < k; ++i) {
            odd.push_back(100.0 - 1.0 - i);
            odd.push_back(103.0 + i * 3.0);
            if (i + 1 < k) {
                even.push_back(50.0 - i);
                even.push_back(200.0 + i);
            }
        }
        std::shuffle(odd.begin(), odd.end(), rng);
        std::shuffle(even.begin(), even.end(), rng);
        BOOST_TEST(median(odd) == 100.0);
        BOOST_TEST(median(even) == 101.0);
    }
}
