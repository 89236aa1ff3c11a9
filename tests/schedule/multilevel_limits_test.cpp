// Multi-level planning has a work limit: every table is priced before it is built, so a plan beyond the limits
// is refused (method::exact) or made near-optimal (automatic) at once instead of after minutes. The three cases
// that once ran for 20 s, 35 s and many minutes, each checked for its outcome and (optimised builds) the CPU
// time it takes.
#define BOOST_TEST_MODULE multilevel_limits
#include <boost/test/unit_test.hpp>

#include "remat/error.hpp"
#include "remat/schedule/multilevel.hpp"

#include <ctime>
#include <string>

using namespace remat;

namespace {

constexpr std::uint64_t inf = level_spec::unlimited;

double cpu_seconds_of(auto&& body)
{
    const std::clock_t start = std::clock();
    body();
    return static_cast<double>(std::clock() - start) / CLOCKS_PER_SEC;
}

// Optimised builds only: sanitizers and debug code make the same work several times slower.
void check_time(double seconds, [[maybe_unused]] double limit)
{
#if defined(NDEBUG) && !defined(REMAT_SANITIZED)
    BOOST_TEST(seconds <= limit);
#else
    BOOST_TEST_MESSAGE("time not checked in this build: " << seconds << " s");
#endif
}

multilevel::options exact()
{
    multilevel::options o;
    o.how = multilevel::method::exact;
    return o;
}

} // namespace

BOOST_AUTO_TEST_CASE(eight_levels_are_planned_near_optimally_in_bounded_time)
{
    // Under the sanitizers five levels (still beyond the four whose subsets are guarded one by one): eight took
    // over 350 s there.
#if defined(REMAT_SANITIZED)
    constexpr int levels = 5;
#else
    constexpr int levels = 8;
#endif
    cost_model m;
    for (int i = 0; i < levels; ++i)
        m.levels.push_back({"level" + std::to_string(i), i < levels - 1 ? std::uint64_t{3} : inf, 0.5 * i, 0.5 * i});
    double cost = 0;
    const double seconds = cpu_seconds_of([&] {
        const multilevel plan(1000, m);
        if (levels == 8) // five levels fit the exact method's limits
            BOOST_TEST((plan.method_used() == multilevel::method::near_optimal));
        cost = plan.cost().predicted_cost;
    });
    BOOST_TEST(cost >= multilevel_lower_bound(1000, m));
    // Not yet within the one-second goal: 5-7 s of CPU on the loaded development machine (20 s before the
    // shared limits); only printed until the near-optimal structures get cheaper for many levels.
    BOOST_TEST_MESSAGE(levels << " levels, T = 1000: " << seconds << " s of CPU");
}

BOOST_AUTO_TEST_CASE(exact_tables_beyond_the_limits_are_refused_before_any_is_built)
{
    // T = 10^5, host 16 + disk 16: 5.8*10^7 entries; with the disk unlimited 1.7*10^11 iterations.
    const cost_model finite{{{"host", 16, 0, 0}, {"disk", 16, 2, 2}}};
    // T = 10^6, host 4 + an unlimited disk: 10^7 entries fit, but 5*10^12 iterations do not.
    const cost_model unlimited{{{"host", 4, 0, 0}, {"disk", inf, 5, 5}}};
    for (const auto& [steps, m] : {std::pair{step_t{100'000}, finite}, std::pair{step_t{1'000'000}, unlimited}}) {
        std::string message;
        const double seconds = cpu_seconds_of([&] {
            try {
                (void)multilevel(steps, m, exact());
            } catch (const capacity_error& e) {
                message = e.what();
            }
        });
        BOOST_TEST(message.find("entries") != std::string::npos, message);
        BOOST_TEST(message.find("iterations") != std::string::npos, message);
        BOOST_TEST(message.find(std::to_string(steps) + " steps") != std::string::npos, message);
        check_time(seconds, 1.0);
        // automatic falls back to the near-optimal method, saying so.
        const multilevel plan(steps, m);
        BOOST_TEST((plan.method_used() == multilevel::method::near_optimal));
    }
}
