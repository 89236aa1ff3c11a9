// Planning memory does not grow with slot counts (issue 37, item 1). A level with more slots than a loop of T
// steps can fill (T-1) is the same as one with T-1, and no planner may spend memory or time per slot: before,
// `remat plan --steps 1e12 --level host:1e8 --level disk:inf:5:5` ran for over 5 minutes at 1.3 GB (the stacked
// plan laid out every slot of every slot count it tried), host:1e10 died with std::bad_alloc, and
// `remat tradeoff --steps 1e12 --level host:4 --level disk:inf:5:5` (whose rows are these plans with the row's slots
// on the first level, and online_revolve(s).cost(T)) did not finish. Memory is measured deterministically: a
// counting global allocator records the peak of the bytes live on the heap while a plan is made and priced, which
// must stay within the planner's table limit (options::memory_limit, 200 MiB) plus a little.
#define BOOST_TEST_MODULE planning_memory
#include <boost/test/unit_test.hpp>

#include "remat/error.hpp"
#include "remat/schedule/multilevel.hpp"
#include "remat/schedule/online_revolve.hpp"
#include "remat/schedule/revolve.hpp"

#include <malloc.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <new>
#include <string>
#include <vector>

namespace {

// Bytes live on the heap (as malloc_usable_size counts them) and their peak since the last reset.
std::uint64_t live = 0;
std::uint64_t peak = 0;

void* counted(void* p)
{
    if (p == nullptr)
        throw std::bad_alloc();
    live += malloc_usable_size(p);
    peak = std::max(peak, live);
    return p;
}

void uncounted(void* p) noexcept
{
    if (p != nullptr)
        live -= malloc_usable_size(p);
    std::free(p); // NOLINT(cppcoreguidelines-no-malloc): operator new's malloc
}

} // namespace

// Every allocating form of operator new funnels through these two (the others forward to them). They
// malloc, so the matching deletes free: GCC, seeing operator new inlined next to free(), warns anyway.
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void* operator new(std::size_t size)
{
    return counted(std::malloc(size == 0 ? 1 : size)); // NOLINT(cppcoreguidelines-no-malloc)
}
void* operator new(std::size_t size, std::align_val_t align)
{
    const auto a = static_cast<std::size_t>(align);
    return counted(std::aligned_alloc(a, (size + a - 1) / a * a));
}
// The nothrow forms too (std::stable_sort's temporary buffer): forwarding to the throwing ones is only
// libstdc++'s default; a sanitizer's runtime defines them itself, and its memory must not reach free().
void* operator new(std::size_t size, const std::nothrow_t&) noexcept
{
    try {
        return operator new(size);
    } catch (const std::bad_alloc&) {
        return nullptr;
    }
}
void* operator new(std::size_t size, std::align_val_t align, const std::nothrow_t&) noexcept
{
    try {
        return operator new(size, align);
    } catch (const std::bad_alloc&) {
        return nullptr;
    }
}
void operator delete(void* p, const std::nothrow_t&) noexcept
{
    uncounted(p);
}
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept
{
    uncounted(p);
}
void operator delete(void* p) noexcept
{
    uncounted(p);
}
void operator delete(void* p, std::size_t) noexcept
{
    uncounted(p);
}
void operator delete(void* p, std::align_val_t) noexcept
{
    uncounted(p);
}
void operator delete(void* p, std::size_t, std::align_val_t) noexcept
{
    uncounted(p);
}

using namespace remat;

namespace {

constexpr slot_t inf = level_spec::unlimited;
constexpr step_t trillion = 1'000'000'000'000;

// The most heap a plan may hold: the table limit and 16 MiB for everything else.
constexpr std::uint64_t allowed = multilevel::options{}.memory_limit + (std::uint64_t{16} << 20);

// The peak heap above what was live before, while `body` runs.
std::uint64_t peak_bytes_of(auto&& body)
{
    const std::uint64_t before = live;
    peak = live;
    body();
    return peak - before;
}

struct planned {
    double cost = 0;
    std::uint64_t bytes = 0;
};

// Plans and prices `m`, and walks the first actions (the cursor must not lay out every slot either).
planned plan_of(step_t steps, const cost_model& m)
{
    planned out;
    out.bytes = peak_bytes_of([&] {
        const multilevel plan(steps, m);
        BOOST_TEST(plan.work() <= multilevel::options{}.near_optimal_work_limit);
        out.cost = plan.cost().predicted_cost;
        int shown = 0;
        for (auto c = plan.cursor(); shown < 1000; ++shown) {
            action a;
            if (!c.next(a))
                break;
        }
    });
    return out;
}

std::string describe(step_t steps, const cost_model& m)
{
    std::string s = "T = " + std::to_string(steps) + ":";
    for (const level_spec& l : m.levels)
        s += " " + l.name + ":" + (l.slots == inf ? std::string("inf") : std::to_string(l.slots));
    return s;
}

} // namespace

BOOST_AUTO_TEST_CASE(huge_fast_levels_cost_no_memory_per_slot)
{
    // The cases and the tradeoff's rows at its largest slot counts: host:1e8 held 1.3 GB after 5 minutes,
    // host:1e10 and more ran out of memory.
    for (const slot_t host : {slot_t{100'000'000}, slot_t{10'000'000'000}, trillion - 1, trillion, slot_t{1} << 62}) {
        const cost_model m{{{"host", host, 0, 0}, {"disk", inf, 5, 5}}};
        const planned p = plan_of(trillion, m);
        BOOST_TEST(p.bytes <= allowed, describe(trillion, m) << ": " << p.bytes << " bytes at the peak");
        BOOST_TEST(p.cost >= multilevel_lower_bound(trillion, m) * (1 - 1e-12), describe(trillion, m));
        // Never dearer than revolve on the host alone with all the slots the loop can use (priced free).
        const double revolve_alone =
            static_cast<double>(revolve(trillion, std::min(host, trillion - 1)).cost().forward_steps);
        BOOST_TEST(p.cost <= revolve_alone, describe(trillion, m) << ": " << p.cost << " against " << revolve_alone);
    }
}

BOOST_AUTO_TEST_CASE(more_slots_than_the_loop_can_fill_is_the_same_as_t_minus_one)
{
    // A loop of T steps never holds more than T-1 snapshots, so T slots, 2^62 and T-1 plan the same cost, on any
    // level, with three and four levels, on short loops (exact) and long ones (near-optimal).
    const std::vector<step_t> steps{100, 5'000};
    for (const step_t t : steps) {
        const auto three = [&](slot_t c) {
            return cost_model{{{"device", 4, 0, 0}, {"host", c, 1, 1}, {"disk", c, 10, 10}}};
        };
        const auto four = [&](slot_t c) {
            return cost_model{{{"device", c, 0, 0}, {"host", 16, 1, 1}, {"ssd", c, 4, 4}, {"disk", inf, 20, 20}}};
        };
        for (const auto& model : {std::function<cost_model(slot_t)>(three), std::function<cost_model(slot_t)>(four)}) {
            const double expected = multilevel(t, model(t - 1)).cost().predicted_cost;
            for (const slot_t c : {t, slot_t{1} << 62}) {
                const planned p = plan_of(t, model(c));
                BOOST_TEST(p.bytes <= allowed, describe(t, model(c)) << ": " << p.bytes << " bytes at the peak");
                BOOST_TEST(p.cost == expected, describe(t, model(c))
                                                   << ": " << p.cost << " against " << expected << " with T-1 slots");
            }
        }
    }
}

BOOST_AUTO_TEST_CASE(online_cost_of_millions_of_slots_lists_no_snapshot)
{
    // The tradeoff's online rows: with s slots and T-1 <= s + s(s+1)/2 the held snapshots follow in closed form;
    // they were listed twice (positions and lengths, 16 bytes per slot: 500 MB at 3*10^7 slots) before being
    // priced one segment at a time. Now they are priced as they come. The counts are checked against the same
    // cost with fewer slots (never more forward steps with more slots) and against revolve (never fewer).
    const slot_t s = 31'622'777;
    std::uint64_t bytes = 0;
    schedule_cost c;
    bytes = peak_bytes_of([&] { c = online_revolve(s).cost(trillion); });
    BOOST_TEST(bytes <= (std::uint64_t{16} << 20), bytes << " bytes at the peak");
    BOOST_TEST(c.forward_steps >= revolve(trillion, s).cost().forward_steps);
    BOOST_TEST(c.forward_steps <= online_revolve(s / 2).cost(trillion).forward_steps);
    BOOST_TEST(c.peak_slots <= s);
}

BOOST_AUTO_TEST_CASE(online_cost_past_level_one_is_refused_before_it_lists_millions_of_slots)
{
    // Past level one the held snapshots are replayed and kept (48 bytes each) and each is priced by a revolve
    // count: 1.6*10^7 slots just past level one took 8 s and 734 MB within a limit that counted one unit per slot.
    // Now 16 units per slot there: refused at once, while 2^21 slots (2^25 units: past the default limit of 2^23,
    // passed explicitly) stay within 160 MiB.
    const auto just_past_level_one = [](slot_t s) { return s + s * (s + 1) / 2 + 10; };
    std::uint64_t bytes = peak_bytes_of([&] {
        BOOST_CHECK_THROW((void)online_revolve(16'000'000).cost(just_past_level_one(16'000'000)), argument_error);
    });
    BOOST_TEST(bytes <= (std::uint64_t{1} << 20), bytes << " bytes at the peak");
    const slot_t s = slot_t{1} << 21;
    schedule_cost c;
    bytes = peak_bytes_of(
        [&] { c = online_revolve(s).cost(just_past_level_one(s), online_end::at_last_step, std::uint64_t{1} << 26); });
    BOOST_TEST(bytes <= (std::uint64_t{160} << 20), bytes << " bytes at the peak");
    BOOST_TEST(c.forward_steps >= revolve(just_past_level_one(s), s).cost().forward_steps);
}
