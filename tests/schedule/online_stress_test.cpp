// The online schedule at scale (label stress): long random loops replayed in full by the simulator with
// their closed-form counts, every level's end on the offline-optimal cut for more slots, and costs of
// loops far too long to replay action by action, against the offline optimum and its repetition number.
#define BOOST_TEST_MODULE online_stress
#include <boost/test/unit_test.hpp>

#include "simulator.hpp"

#include "remat/detail/online_placement.hpp"
#include "remat/error.hpp"
#include "remat/schedule/binomial.hpp"
#include "remat/schedule/online_revolve.hpp"
#include "remat/schedule/revolve.hpp"

#include <algorithm>
#include <random>
#include <vector>

using namespace remat;

BOOST_AUTO_TEST_CASE(long_random_loops_replayed_in_full)
{
    std::mt19937_64 rng(7031);
    std::uniform_int_distribution<step_t> steps(100'000, 1'000'000);
    std::uniform_int_distribution<slot_t> slots(2, 200);
    for (int i = 0; i < 5; ++i) {
        const step_t t = steps(rng);
        const slot_t s = slots(rng);
        const online_replay plan = online_revolve(s).replay(t);
        test::replay_counts n;
        const auto e = test::replay(plan, {s}, n, false);
        BOOST_TEST_REQUIRE(!e.has_value(), "T=" << t << " s=" << s << ": " << e.value_or(""));
        const schedule_cost c = plan.cost();
        BOOST_TEST_REQUIRE(n.forward_steps == c.forward_steps, "T=" << t << " s=" << s);
        BOOST_TEST_REQUIRE(n.stores == c.stores);
        BOOST_TEST_REQUIRE(n.restores == c.restores);
        BOOST_TEST_REQUIRE(n.peak_slots == c.peak_slots);
        BOOST_TEST_REQUIRE(static_cast<double>(c.forward_steps) <=
                           1.13 * static_cast<double>(binomial::min_forward_steps(t, s)));
    }
}

BOOST_AUTO_TEST_CASE(levels_end_on_the_optimal_cut_with_more_slots)
{
    for (const slot_t s : {20, 32, 48, 64, 100}) {
        detail::online_placement place(s);
        const auto limit = static_cast<step_t>(std::min<std::uint64_t>(binomial::max_steps(s, 6), 3'000'000));
        for (step_t p = 0; p < limit; ++p) {
            for (std::uint64_t level = 1; level <= 5; ++level) {
                if (static_cast<std::uint64_t>(p) + 1 != binomial::max_steps(s, level + 1))
                    continue;
                std::vector<step_t> cut{0};
                for (slot_t sigma = s; sigma >= 2; --sigma)
                    cut.push_back(cut.back() + static_cast<step_t>(binomial::max_steps(sigma, level)));
                BOOST_TEST_REQUIRE((place.positions() == cut), "s=" << s << " level " << level);
            }
            (void)place.decide(p);
        }
        BOOST_TEST(place.fallbacks() == 0u, "s=" << s);
    }
}

BOOST_AUTO_TEST_CASE(costs_of_loops_too_long_to_replay)
{
    struct loop {
        step_t steps;
        slot_t slots;
    };
    // Up to ~10^8 store decisions replayed in all; s = 100000 just past C(s+2,2) = 5 000 150 001.
    for (const loop l : {loop{1'000'000'000, 8}, loop{100'000'000, 64}, loop{100'000'000, 3}, loop{20'000'000, 1000},
                         loop{5'050'000'000, 100'000}}) {
        // Past the default limit (2^23 units, 0.2 to 0.5 s): up to 2.5*10^7 decisions each here.
        const schedule_cost c = online_revolve(l.slots).cost(l.steps, online_end::at_last_step, std::uint64_t{1} << 26);
        const std::uint64_t offline = binomial::min_forward_steps(l.steps, l.slots);
        BOOST_TEST(c.forward_steps >= offline, "T=" << l.steps << " s=" << l.slots);
        BOOST_TEST(static_cast<double>(c.forward_steps) <= 1.13 * static_cast<double>(offline),
                   "T=" << l.steps << " s=" << l.slots);
        BOOST_TEST(c.repetition == revolve(l.steps, l.slots).repetition(), "T=" << l.steps << " s=" << l.slots);
        BOOST_TEST(c.peak_slots <= l.slots);
        BOOST_TEST(c.reverse_steps == static_cast<std::uint64_t>(l.steps));
    }
    // Every state kept (slots >= T-1): closed form, no memory for the cut, even at 2^63-1 steps.
    const schedule_cost all = online_revolve(INT64_MAX).cost(INT64_MAX);
    BOOST_TEST(all.forward_steps == static_cast<std::uint64_t>(INT64_MAX - 1));
    BOOST_TEST(all.peak_slots == INT64_MAX - 1);
    // Too many forward steps for 64 bits: refused by name, as revolve does (s = 2, T = 10^13: ~4.5e19).
    BOOST_CHECK_EXCEPTION(
        (void)online_revolve(2).cost(10'000'000'000'000, online_end::at_last_step, std::uint64_t{1} << 26),
        overflow_error,
        [](const overflow_error& e) { return std::string(e.what()).find("forward steps") != std::string::npos; });
}
