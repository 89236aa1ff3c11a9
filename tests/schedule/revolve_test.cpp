// The binomial schedule: legal under an independent simulator, optimal against brute force, and its
// closed-form cost equal to what replaying it counts — exhaustively on a grid, randomly beyond it, and
// at step counts far beyond enumeration.
#define BOOST_TEST_MODULE revolve
#include <boost/test/unit_test.hpp>

#include "brute_force.hpp"
#include "simulator.hpp"

#include "remat/detail/checked_math.hpp"
#include "remat/error.hpp"
#include "remat/schedule/binomial.hpp"
#include "remat/schedule/revolve.hpp"

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <limits>
#include <random>
#include <ranges>
#include <vector>

using namespace remat;

static_assert(std::ranges::input_range<revolve>);
static_assert(schedule<revolve>);

namespace {

std::vector<action> all_actions(const revolve& plan)
{
    std::vector<action> out;
    std::ranges::copy(plan, std::back_inserter(out));
    return out;
}

void check_counts_match_cost(const revolve& plan, const test::replay_counts& n)
{
    const schedule_cost c = plan.cost();
    BOOST_TEST_REQUIRE(n.forward_steps == c.forward_steps);
    BOOST_TEST_REQUIRE(n.reverse_steps == c.reverse_steps);
    BOOST_TEST_REQUIRE(n.stores == c.stores);
    BOOST_TEST_REQUIRE(n.restores == c.restores);
    BOOST_TEST_REQUIRE(n.peak_slots == c.peak_slots);
    BOOST_TEST_REQUIRE(c.levels.size() == 1u);
    BOOST_TEST_REQUIRE(c.levels[0].stores == c.stores);
}

} // namespace

BOOST_AUTO_TEST_CASE(ten_steps_three_slots_is_the_textbook_case)
{
    const revolve plan(10, 3);
    BOOST_TEST(plan.cost().forward_steps == 15u);
    BOOST_TEST(plan.repetition() == 2u);
    const std::vector<action> actions = all_actions(plan);
    BOOST_TEST_REQUIRE(actions.size() >= 3u);
    BOOST_TEST((actions[0] == action{store{0, 0, 0}}));
    BOOST_TEST((actions.back() == action{free_slot{0, 0}}));
}

BOOST_AUTO_TEST_CASE(every_schedule_on_the_grid_is_legal_and_optimal)
{
    // T <= 300, s <= 12: forward steps and stores equal the lexicographic optimum of the dynamic program,
    // the counts equal the closed form, and no step runs forward more than r times.
    const test::split_optimum dp(300, 12);
    for (slot_t s = 1; s <= 12; ++s)
        for (step_t t = 1; t <= 300; ++t) {
            const revolve plan(t, s);
            test::replay_counts n;
            const auto e = test::replay(plan, {s}, n);
            BOOST_TEST_REQUIRE(!e.has_value(), "T=" << t << " s=" << s << ": " << e.value_or(""));
            const auto [forward, stores] = dp(t, s);
            BOOST_TEST_REQUIRE(n.forward_steps == forward, "T=" << t << " s=" << s);
            BOOST_TEST_REQUIRE(n.stores == stores, "T=" << t << " s=" << s << " (fewest stores among optima)");
            BOOST_TEST_REQUIRE(n.max_advances_of_one_step <= plan.repetition());
            check_counts_match_cost(plan, n);
        }
}

BOOST_AUTO_TEST_CASE(the_split_family_is_the_true_optimum)
{
    // The dynamic program assumes the recursive split structure; a search over all legal action
    // sequences confirms that structure loses nothing, in forward steps or in stores.
    const test::split_optimum dp(10, 4);
    for (slot_t s = 1; s <= 4; ++s)
        for (step_t t = 1; t <= 10; ++t)
            BOOST_TEST_REQUIRE((test::general_optimum(t, s) == dp(t, s)), "T=" << t << " s=" << s);
}

BOOST_AUTO_TEST_CASE(random_step_and_slot_counts)
{
    std::mt19937_64 rng(20261122);
    std::uniform_int_distribution<step_t> steps(1, 200000);
    std::uniform_int_distribution<slot_t> slots(1, 64);
    for (int i = 0; i < 40; ++i) {
        const step_t t = steps(rng);
        const slot_t s = std::min<slot_t>(slots(rng), t > 3000 ? 64 : 6); // keep one-slot runs short
        const revolve plan(t, s == 1 && t > 3000 ? 2 : s);
        test::replay_counts n;
        const auto e = test::replay(plan, {plan.slots()}, n, false);
        BOOST_TEST_REQUIRE(!e.has_value(), "T=" << t << " s=" << s << ": " << e.value_or(""));
        check_counts_match_cost(plan, n);
        BOOST_TEST_REQUIRE(n.forward_steps == binomial::min_forward_steps(t, plan.slots()));
    }
}

BOOST_AUTO_TEST_CASE(million_steps_replayed_in_full)
{
    for (const slot_t s : {2, 10, 100}) {
        const revolve plan(1'000'000, s);
        test::replay_counts n;
        const auto e = test::replay(plan, {s}, n, false);
        BOOST_TEST_REQUIRE(!e.has_value(), e.value_or(""));
        check_counts_match_cost(plan, n);
    }
}

BOOST_AUTO_TEST_CASE(astronomical_step_counts_run_without_overflow)
{
    // T = 10^15 and 2^63-1: the first million actions are a legal prefix (the full stream has ~10^16
    // actions); the prefix check reuses the simulator without finish(). At 10^15 the cost is exact;
    // at 2^63-1 the forward steps exceed 2^64-1 for any s < T-1, and the count is refused by name.
    for (const step_t t : {step_t{1'000'000'000'000'000}, step_t{INT64_MAX}}) {
        for (const slot_t s : {10, 100, 1000}) {
            const revolve plan(t, s);
            if (t == INT64_MAX) {
                BOOST_CHECK_EXCEPTION((void)plan.cost(), overflow_error, [](const overflow_error& e) {
                    return std::string(e.what()).find("forward steps") != std::string::npos;
                });
            } else {
                const schedule_cost c = plan.cost();
                BOOST_TEST(c.forward_steps == binomial::min_forward_steps(t, s));
                BOOST_TEST(c.forward_steps > static_cast<std::uint64_t>(t));
                BOOST_TEST(c.peak_slots == s);
                BOOST_TEST(c.stores < c.forward_steps);
            }
            test::simulator sim(t, {s}, false);
            int count = 0;
            bool reversed = false;
            for (const action& a : plan) {
                if (const auto e = sim.apply(a)) // assert on failure only: a million actions per case
                    BOOST_FAIL(to_string(a) << ": " << *e);
                reversed = reversed || std::holds_alternative<reverse>(a);
                if (++count == 1'000'000)
                    break;
            }
            BOOST_TEST(reversed); // the prefix reaches x_{T-1} and starts reversing
        }
    }
    // With T-1 slots even 2^63-1 steps are countable: store-all.
    BOOST_TEST(revolve(INT64_MAX, INT64_MAX).cost().forward_steps == static_cast<std::uint64_t>(INT64_MAX - 1));
}

BOOST_AUTO_TEST_CASE(cursors_are_independent_passes)
{
    const revolve plan(50, 4);
    const std::vector<action> first = all_actions(plan);
    auto a = plan.cursor();
    auto b = plan.cursor();
    action x, y;
    std::size_t i = 0;
    while (a.next(x)) {
        BOOST_TEST_REQUIRE(b.next(y));
        BOOST_TEST_REQUIRE((x == y));
        BOOST_TEST_REQUIRE((x == first[i++]));
    }
    BOOST_TEST(!b.next(y));
    BOOST_TEST(!a.next(x)); // stays done
}

namespace {

// The actions drain() hands over after `skip` actions taken with next(), each as its own type, turned back
// into actions; the cursor must be done afterwards.
std::vector<action> drained_after(const revolve& plan, std::size_t skip)
{
    auto c = plan.cursor();
    action a;
    std::size_t taken = 0;
    while (taken < skip && c.next(a))
        ++taken;
    BOOST_TEST_REQUIRE(taken == skip);
    std::vector<action> out;
    c.drain([&out](const auto& act) { out.emplace_back(act); });
    BOOST_TEST_REQUIRE(!c.next(a));
    return out;
}

void check_drain_matches_next(const revolve& plan)
{
    const std::vector<action> all = all_actions(plan);
    const std::size_t n = all.size();
    // From the start (what remat::run does) and from part-way, at every phase of the first few actions.
    for (const std::size_t skip : {std::size_t{0}, std::size_t{1}, std::size_t{2}, std::size_t{3}, std::size_t{4},
                                   std::size_t{7}, n / 3, n / 2, n - 1, n}) {
        if (skip > n)
            continue;
        const std::vector<action> rest = drained_after(plan, skip);
        BOOST_TEST_REQUIRE(rest.size() == n - skip, "T=" << plan.steps() << " s=" << plan.slots() << " skip=" << skip);
        // One check per drain, not per action: millions of Boost assertions dominate the sanitizer build's time.
        const auto differ = std::mismatch(rest.begin(), rest.end(), all.begin() + static_cast<std::ptrdiff_t>(skip));
        BOOST_TEST_REQUIRE((differ.first == rest.end()),
                           "T=" << plan.steps() << " s=" << plan.slots() << " action "
                                << skip + static_cast<std::size_t>(differ.first - rest.begin()));
    }
}

} // namespace

// drain() (the driver's path) walks the task tree in its own code: it must give next()'s actions exactly,
// which the tests above check against the simulator and the optimum.
BOOST_AUTO_TEST_CASE(a_drained_cursor_gives_the_actions_of_next)
{
    for (step_t t = 1; t <= 120; ++t)
        for (slot_t s = 1; s <= 10; ++s)
            check_drain_matches_next(revolve(t, s));
    check_drain_matches_next(revolve(130, 200));   // more slots than steps
    check_drain_matches_next(revolve(100000, 1));  // one slot all the way
    check_drain_matches_next(revolve(100000, 20)); // deep trees
    check_drain_matches_next(revolve(20000, 150)); // more pending parts than the cursor holds at first (64)
}

BOOST_AUTO_TEST_CASE(bad_arguments_name_the_value)
{
    BOOST_CHECK_EXCEPTION(revolve(0, 3), argument_error, [](const argument_error& e) {
        return std::string(e.what()).find("got 0") != std::string::npos;
    });
    BOOST_CHECK_EXCEPTION(revolve(-5, 3), argument_error, [](const argument_error& e) {
        return std::string(e.what()).find("-5") != std::string::npos;
    });
    BOOST_CHECK_EXCEPTION(revolve(10, 0), argument_error, [](const argument_error& e) {
        return std::string(e.what()).find("slots") != std::string::npos;
    });
}

namespace {

using u128 = detail::uint128;

/// beta(a, b) = C(a+b, b) in 128 bits, capped at 2^100 (only ever compared with 64-bit lengths): an
/// independent reference for the cursor's cached binomials, which it derives by Pascal's rule.
u128 beta_reference(std::uint64_t a, std::uint64_t b)
{
    const u128 cap = u128{1} << 100;
    const std::uint64_t k = std::min(a, b);
    const u128 n = u128{a} + b;
    u128 c = 1;
    for (std::uint64_t i = 0; i < k; ++i) {
        const u128 factor = n - i;
        if (c > ~u128{0} / factor)
            return cap;
        c = c * factor / (i + 1); // exact: C(n, i+1) = C(n, i) (n-i) / (i+1)
        if (c >= cap)
            return cap;
    }
    return c;
}

/// The split the header comment of src/schedule/revolve.cpp states, from 128-bit binomials.
std::uint64_t split_reference(std::uint64_t l, std::uint64_t s)
{
    // The smallest r with beta(s, r) >= l, by doubling then bisection (r reaches 4e9 at s = 2).
    std::uint64_t above = 1;
    while (beta_reference(s, above) < l)
        above *= 2;
    std::uint64_t below = 0; // beta(s, 0) = 1 < l
    while (above - below > 1) {
        const std::uint64_t mid = below + (above - below) / 2;
        (beta_reference(s, mid) < l ? below : above) = mid;
    }
    const std::uint64_t r = above;
    if (r == 1)
        return 1;
    const auto beta = [](std::uint64_t a, std::uint64_t b) { return beta_reference(a, b); };
    u128 lo = beta(s, r - 2);
    if (beta(s - 1, r) < l)
        lo = std::max(lo, l - beta(s - 1, r));
    const u128 hi = std::min(beta(s, r - 1), l - beta(s - 1, r - 1));
    const u128 plateau = beta(s - 1, r - 1) + beta(s - 2, r - 1);
    return static_cast<std::uint64_t>(l > plateau ? std::clamp(l - plateau, lo, hi) : lo);
}

} // namespace

BOOST_AUTO_TEST_CASE(splits_at_astronomical_step_counts_follow_the_rule)
{
    // The first actions descend the rightmost parts: advance, store, advance, store, ... with one slot less
    // each time. Each advance's length must be the rule's split of the part, from exact binomials. At
    // T = 2^63-1 with s = 1000 or 10^5, beta(s-1, r) exceeds 2^63 at the top, where the cursor can no
    // longer take the right part's binomials by subtraction (remat/detail/revolve_band.hpp).
    const step_t t = std::numeric_limits<step_t>::max();
    for (const step_t steps : {t, t / 2 + 1, step_t{1'000'000'000'000'000'000}})
        for (const slot_t slots : {slot_t{2}, slot_t{3}, slot_t{10}, slot_t{1000}, slot_t{100'000}}) {
            auto cursor = revolve(steps, slots).cursor();
            action a;
            BOOST_TEST_REQUIRE(cursor.next(a));
            BOOST_TEST_REQUIRE((a == action{store{0, 0, 0}}));
            step_t start = 0;
            int checked = 0;
            for (slot_t s = slots; s >= 2; --s) {
                BOOST_TEST_REQUIRE(cursor.next(a));
                const auto* adv = std::get_if<advance>(&a);
                BOOST_TEST_REQUIRE(adv != nullptr);
                BOOST_TEST_REQUIRE(adv->from == start);
                const auto l = static_cast<std::uint64_t>(steps - start);
                const std::uint64_t m = split_reference(l, static_cast<std::uint64_t>(s));
                BOOST_TEST_REQUIRE(static_cast<std::uint64_t>(adv->to - adv->from) == m,
                                   "T=" << steps << " s=" << slots << " part of " << l << " steps, " << s << " slots");
                ++checked;
                start = adv->to;
                if (steps - start < 2)
                    break; // reversed where it stands: no store, and the descent ends
                BOOST_TEST_REQUIRE(cursor.next(a));
                BOOST_TEST_REQUIRE((a == action{store{0, slots - s + 1, start}}));
                if (checked == 3000)
                    break;
            }
            BOOST_TEST(checked >= 1);
        }
}
