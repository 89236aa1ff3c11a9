// No heap allocation per step: a counting global allocator shows that the number of allocations of a
// whole run does not grow with the number of steps (and is zero once the store's slots exist), with or
// without a terminal callable.
#define BOOST_TEST_MODULE driver_allocation
#include <boost/test/unit_test.hpp>

#include "burgers.hpp"
#include "multipart_problems.hpp"
#include "vector_schedule.hpp"

#include "remat/driver/run.hpp"
#include "remat/schedule/revolve.hpp"
#include "remat/schedule/taped_revolve.hpp"
#include "remat/schedule/uniform.hpp"
#include "remat/store/host_store.hpp"
#include "remat/store/tiered_store.hpp"

#include <atomic>
#include <cstdlib>
#include <new>
#include <tuple>
#include <vector>

namespace {
std::atomic<std::uint64_t> allocations{0};
}

// Every allocating form of operator new funnels through these two (the others forward to them). They
// malloc, so the matching deletes free: GCC, seeing operator new inlined next to free(), warns anyway.
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void* operator new(std::size_t size)
{
    allocations.fetch_add(1, std::memory_order_relaxed);
    if (void* p = std::malloc(size == 0 ? 1 : size))
        return p;
    throw std::bad_alloc();
}
void* operator new(std::size_t size, std::align_val_t align)
{
    allocations.fetch_add(1, std::memory_order_relaxed);
    const std::size_t a = static_cast<std::size_t>(align);
    if (void* p = std::aligned_alloc(a, (size + a - 1) / a * a))
        return p;
    throw std::bad_alloc();
}
void operator delete(void* p) noexcept
{
    std::free(p);
}
void operator delete(void* p, std::size_t) noexcept
{
    std::free(p);
}
void operator delete(void* p, std::align_val_t) noexcept
{
    std::free(p);
}
void operator delete(void* p, std::size_t, std::align_val_t) noexcept
{
    std::free(p);
}

using namespace remat;

namespace {

template <class Schedule>
std::uint64_t allocations_of_run(const Schedule& plan, host_store& store, bool with_final = false)
{
    examples::burgers model;
    model.points = 256;
    model.dt = 1e-4;
    std::vector<double> u = model.initial_field();
    std::vector<double> lambda(u.size(), 1.0);
    std::vector<double> scratch(u.size());
    double energy = 0;
    auto forward = [&](step_t, std::vector<double>& s) { model.step(s, scratch); };
    auto adjoint = [&](step_t, std::vector<double>& s) { model.adjoint_step(s, lambda, scratch); };
    const std::uint64_t before = allocations.load();
    if (with_final)
        (void)run(plan, store, u, remat::forward_step(forward), remat::adjoint_step(adjoint),
                  remat::final_state([&](const std::vector<double>& uT) { energy = uT[0]; }));
    else
        (void)run(plan, store, u, remat::forward_step(forward), remat::adjoint_step(adjoint));
    return allocations.load() - before;
}

} // namespace

BOOST_AUTO_TEST_CASE(allocations_do_not_grow_with_the_step_count)
{
    for (const slot_t slots : {2, 10, 50}) {
        host_store small(slots), large(slots);
        const std::uint64_t short_run = allocations_of_run(revolve(1000, slots), small);
        const std::uint64_t long_run = allocations_of_run(revolve(8000, slots), large);
        BOOST_TEST(short_run == long_run, "slots " << slots << ": " << short_run << " vs " << long_run);
        // Once the store's slots exist, a run allocates only its fixed bookkeeping (report, counters,
        // the cursor's task stack): the same for 20 steps as for 8000.
        const std::uint64_t tiny = allocations_of_run(revolve(20, slots), large);
        const std::uint64_t reused = allocations_of_run(revolve(8000, slots), large);
        BOOST_TEST(reused == tiny, "slots " << slots << ": " << reused << " vs " << tiny);
        BOOST_TEST(reused < long_run);
        BOOST_TEST(reused <= 16u);
    }
    host_store store(uniform(5000, 50).cost().peak_slots);
    (void)allocations_of_run(uniform(5000, 50), store);
    BOOST_TEST(allocations_of_run(uniform(5000, 50), store) == allocations_of_run(uniform(100, 50), store));
}

BOOST_AUTO_TEST_CASE(a_terminal_callable_allocates_once_per_run_not_per_step)
{
    // x_{T-1} is kept aside in one buffer while x_T is computed for the terminal callable.
    for (const slot_t slots : {2, 10}) {
        host_store store(slots);
        (void)allocations_of_run(revolve(20, slots), store, true);
        const std::uint64_t tiny = allocations_of_run(revolve(20, slots), store, true);
        const std::uint64_t reused = allocations_of_run(revolve(8000, slots), store, true);
        const std::uint64_t without = allocations_of_run(revolve(8000, slots), store, false);
        BOOST_TEST(reused == tiny, "slots " << slots << ": " << reused << " vs " << tiny);
        BOOST_TEST(reused <= without + 1, "slots " << slots << ": " << reused << " vs " << without);
    }
}

namespace {

// The same for a state of several parts (a history array plus scalars, an LSTM-like (h, c) pair), on the
// host level and on a tiered store whose second level is asynchronous: the parts are gathered into the
// slots and the staging buffers and scattered back without allocating.
template <class Problem, class Plan, class Store>
std::uint64_t allocations_of_multipart_run(const Problem& problem, const Plan& plan, Store& store)
{
    auto x = problem.initial();
    using state = decltype(x);
    double sum = 0;
    auto forward = [&](step_t k, state& s) { problem.step(k, s); };
    auto adjoint = [&](step_t, state& s) { sum += static_cast<double>(test::all_parts_size(s)); };
    const std::uint64_t before = allocations.load();
    (void)run(plan, store, x, remat::forward_step(forward), remat::adjoint_step(adjoint),
              remat::final_state([&](const state& xT) { sum += static_cast<double>(test::all_parts_size(xT)); }));
    return allocations.load() - before;
}

} // namespace

BOOST_AUTO_TEST_CASE(multipart_states_allocate_nothing_per_step)
{
    test::history_problem history;
    history.fixed_length = true;
    const test::lstm_problem lstm;
    for (const slot_t slots : {2, 10}) {
        host_store store(slots);
        (void)allocations_of_multipart_run(history, revolve(20, slots), store);
        const std::uint64_t tiny = allocations_of_multipart_run(history, revolve(20, slots), store);
        const std::uint64_t reused = allocations_of_multipart_run(history, revolve(8000, slots), store);
        BOOST_TEST(reused == tiny, "history, slots " << slots << ": " << reused << " vs " << tiny);
        BOOST_TEST(reused <= 16u);
        (void)allocations_of_multipart_run(lstm, revolve(20, slots), store);
        BOOST_TEST(allocations_of_multipart_run(lstm, revolve(8000, slots), store) ==
                   allocations_of_multipart_run(lstm, revolve(20, slots), store));
    }
    for (const bool asynchronous : {false, true}) {
        tiered_store<host_store, host_store> store(
            {tier_options{}, tier_options{.asynchronous = asynchronous, .async = {.staging_buffers = 3}}},
            host_store(3), host_store(9));
        const test::vector_schedule long_plan = test::split_levels(revolve(4000, 12), 3);
        const test::vector_schedule short_plan = test::split_levels(revolve(40, 12), 3);
        (void)allocations_of_multipart_run(lstm, long_plan, store);
        const std::uint64_t tiny = allocations_of_multipart_run(lstm, short_plan, store);
        const std::uint64_t reused = allocations_of_multipart_run(lstm, long_plan, store);
        BOOST_TEST(reused == tiny, "asynchronous " << asynchronous << ": " << reused << " vs " << tiny);
    }
}

BOOST_AUTO_TEST_CASE(the_counter_sees_allocations)
{
    // Guards the test above against a counter that never counts.
    const std::uint64_t before = allocations.load();
    auto* v = new std::vector<int>(100);
    delete v;
    BOOST_TEST(allocations.load() - before >= 2u);
}

namespace {

// A taped run of Burgers' equation whose tape is x_k (one allocation per tape, made by the factory).
std::uint64_t allocations_of_taped_run(const taped_revolve& plan, host_store& store, std::uint64_t& tapes_made)
{
    examples::burgers model;
    model.points = 256;
    model.dt = 1e-4;
    std::vector<double> u = model.initial_field();
    std::vector<double> lambda(u.size(), 1.0);
    std::vector<double> scratch(u.size());
    auto forward = [&](step_t, std::vector<double>& s) { model.step(s, scratch); };
    auto adjoint = [&](step_t, std::vector<double>& s) { model.adjoint_step(s, lambda, scratch); };
    auto taped = [&](step_t, std::vector<double>& s, std::vector<double>& tape) {
        tape = s; // the same size: no allocation
        model.step(s, scratch);
    };
    auto from_tape = [&](step_t, std::vector<double>& tape) { model.adjoint_step(tape, lambda, scratch); };
    tapes_made = 0;
    const std::uint64_t before = allocations.load();
    (void)run(plan, store, u, remat::forward_step(forward), remat::adjoint_step(adjoint),
              remat::with_tapes(remat::taped_step(taped), remat::tape_adjoint(from_tape), [&] {
                  ++tapes_made;
                  return std::vector<double>(256);
              }));
    return allocations.load() - before;
}

} // namespace

BOOST_AUTO_TEST_CASE(a_taped_run_makes_its_tapes_before_step_0_and_allocates_nothing_per_step)
{
    // Beyond its tapes (one allocation each), a run makes the same few allocations for 30 steps as for
    // 3000, whatever its plan holds.
    std::vector<std::uint64_t> beyond_tapes;
    for (const auto& [steps, units, tape_units] :
         {std::tuple{30, 8, 2}, std::tuple{3000, 8, 2}, std::tuple{3000, 60, 3}, std::tuple{3000, 400, 1}}) {
        const taped_revolve plan(steps, units, tape_units);
        BOOST_TEST_REQUIRE(plan.cost().peak_tapes > 0u);
        host_store store(plan.cost().peak_slots);
        std::uint64_t tapes = 0;
        (void)allocations_of_taped_run(plan, store, tapes); // the store's slots now exist
        const std::uint64_t all = allocations_of_taped_run(plan, store, tapes);
        BOOST_TEST(tapes == plan.cost().peak_tapes);
        beyond_tapes.push_back(all - tapes);
    }
    for (const std::uint64_t n : beyond_tapes)
        BOOST_TEST(n == beyond_tapes.front());
    BOOST_TEST(beyond_tapes.front() <= 20u);
}
