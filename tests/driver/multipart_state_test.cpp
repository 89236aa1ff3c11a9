// States made of several parts (snapshot_traits<>::parts): gathered into one slot and scattered back.
// Through remat::run on the host level and on tiered stores (synchronous and asynchronous levels), the
// gradients are bit-identical to store-all and every x_k the adjoint sees equals the forward sweep's in
// every part; a history array whose length changes from step to step is resized on restore; parts of the
// wrong size or number are refused naming the part and both sizes; x_{T-1} is put back around the
// terminal callable part by part.
#define BOOST_TEST_MODULE driver_multipart_state
#include <boost/test/unit_test.hpp>

#include "multipart_problems.hpp"
#include "same_bits.hpp"
#include "vector_schedule.hpp"

#include "remat/driver/run.hpp"
#include "remat/error.hpp"
#include "remat/schedule/revolve.hpp"
#include "remat/schedule/uniform.hpp"
#include "remat/store/host_store.hpp"
#include "remat/store/tiered_store.hpp"

#include <array>
#include <cmath>
#include <memory>
#include <span>
#include <string>
#include <tuple>
#include <vector>

using namespace remat;
using namespace remat::test;

static_assert(multipart_state<history_state> && !contiguous_state<history_state>);
static_assert(multipart_state<lstm_cell>);
static_assert(multipart_state<std::tuple<std::vector<float>, std::array<double, 2>, std::vector<int>>>);
static_assert(contiguous_state<std::array<double, 2>>);
static_assert(multipart_state<std::pair<double, double>>); // not trivially copyable: two parts
static_assert(!snapshot_state<std::pair<std::vector<double>, std::vector<std::vector<double>>>>);
static_assert(gathering_level<host_store>);
static_assert(store_for_parts<host_store>);
static_assert(store_for_parts<tiered_store<host_store, host_store>>);

namespace {

constexpr step_t steps = 150;

// The store-all reference and the same problem under revolve with `slots` slots on `store`.
template <class Problem, class Adjoint, class Store, class Plan>
void check_against_store_all(const Problem& problem, const Adjoint& adjoint, Store& store, const Plan& plan)
{
    host_store all(steps);
    const multipart_result ref = run_multipart(problem, adjoint, store_all(steps, steps), all, steps);
    BOOST_TEST_REQUIRE(ref.wrong_states == 0u);
    for (const double g : ref.gradient)
        BOOST_TEST_REQUIRE(std::isfinite(g));
    const multipart_result r = run_multipart(problem, adjoint, plan, store, steps);
    BOOST_TEST(r.wrong_states == 0u);
    BOOST_TEST(same_bits(r.gradient, ref.gradient));
    BOOST_TEST(r.report.restores > 0u);
    BOOST_TEST(r.report.final_calls == 1u);
}

} // namespace

BOOST_AUTO_TEST_CASE(history_array_plus_scalars_on_the_host_level)
{
    const history_problem problem;
    for (const slot_t slots : {1, 2, 5, 17}) {
        host_store store(slots);
        check_against_store_all(problem, history_adjoint(&problem), store, revolve(steps, slots));
    }
}

BOOST_AUTO_TEST_CASE(lstm_pair_on_the_host_level)
{
    const lstm_problem problem;
    for (const slot_t slots : {1, 3, 9}) {
        host_store store(slots);
        check_against_store_all(problem, lstm_adjoint{}, store, revolve(steps, slots));
    }
}

BOOST_AUTO_TEST_CASE(adjoint_agrees_with_finite_differences)
{
    // The history problem's dJ/ds (J = sum of x_T's history) against central differences: the adjoint that
    // the bit-identity tests rely on is a real one.
    history_problem problem;
    problem.fixed_length = true;
    const step_t t = 40;
    auto objective = [&](double s) {
        history_state x = problem.initial();
        x.second[2] = s;
        for (step_t k = 0; k < t; ++k)
            problem.step(k, x);
        double j = 0;
        for (const double v : x.first)
            j += v;
        return j;
    };
    host_store store(4);
    const multipart_result r = run_multipart(problem, history_adjoint(&problem), revolve(t, 4), store, t);
    const double s = problem.initial().second[2];
    const double h = 1e-6;
    const double fd = (objective(s + h) - objective(s - h)) / (2 * h);
    BOOST_TEST(std::abs(r.gradient.back() - fd) <= 1e-6 * std::abs(fd));
}

BOOST_AUTO_TEST_CASE(parts_go_back_exactly_and_resize)
{
    host_store store(2);
    std::vector<double> history{1.5, -2.25, 3.125};
    std::array<double, 3> scalars{0.5, 0.01, 7.0};
    history_state x{history, scalars};
    const auto out = snapshot_traits<history_state>::parts(std::as_const(x));
    store.write(1, 42, const_parts(out));
    BOOST_TEST(store.snapshot_bytes(1) == 6 * sizeof(double));
    const std::span<const std::size_t> sizes = store.part_sizes(1);
    BOOST_TEST_REQUIRE(sizes.size() == 2u);
    BOOST_TEST(sizes[0] == 3 * sizeof(double));
    BOOST_TEST(sizes[1] == 3 * sizeof(double));

    history_state y{{9.0}, {0, 0, 0}}; // a history of another length: resized to the snapshot's
    const auto in = snapshot_traits<history_state>::parts_for(y, sizes);
    store.read(1, 42, mutable_parts(in));
    BOOST_TEST(y.first == history);
    BOOST_TEST(y.second == scalars);
    BOOST_TEST(store.part_sizes(0).empty());
}

BOOST_AUTO_TEST_CASE(wrong_part_sizes_are_refused_naming_the_part)
{
    host_store store(1);
    std::vector<double> a(3, 1.0);
    std::array<double, 1> b{2.0};
    const std::array<const_bytes, 2> out{host_bytes(std::as_bytes(std::span(a))),
                                         host_bytes(std::as_bytes(std::span(b)))};
    store.write(0, 5, const_parts(out));

    std::vector<double> c(2), d(2); // 32 bytes in all, as written, but split 16 + 16 instead of 24 + 8
    const std::array<mutable_bytes, 2> in{host_bytes(std::as_writable_bytes(std::span(c))),
                                          host_bytes(std::as_writable_bytes(std::span(d)))};
    try {
        store.read(0, 5, mutable_parts(in));
        BOOST_FAIL("parts of the wrong sizes were accepted");
    } catch (const integrity_error& e) {
        BOOST_TEST(std::string(e.what()) == "host slot 0 holds x_5 in 2 parts (24, 8 bytes), but part 0 of the state "
                                            "has 16 bytes where the snapshot's has 24");
    }
    BOOST_TEST(c == std::vector<double>(2, 0.0)); // nothing was scattered
    const std::array<mutable_bytes, 1> one{host_bytes(std::as_writable_bytes(std::span(a)))};
    try {
        store.read(0, 5, mutable_parts(one));
        BOOST_FAIL("a single view was accepted for a two-part snapshot");
    } catch (const integrity_error& e) {
        BOOST_TEST(std::string(e.what()) ==
                   "host slot 0 holds x_5 in 2 parts (24, 8 bytes), but the state has 1 part (24 bytes)");
    }
    // A single view reads a single-part snapshot as before, message included.
    host_store single(1);
    single.write(0, 1, host_bytes(std::as_bytes(std::span(a))));
    try {
        single.read(0, 1, host_bytes(std::as_writable_bytes(std::span(c))));
        BOOST_FAIL("a short state was accepted");
    } catch (const integrity_error& e) {
        BOOST_TEST(std::string(e.what()) == "host slot 0 holds 24 bytes of x_1, but the state has 16");
    }
}

namespace {
// A state whose parts cannot be resized (no parts_for): a forward step that changes a part's size makes
// the next restore fail, naming the part.
struct growing {
    std::vector<double> a, b;
};
} // namespace

template <>
struct remat::snapshot_traits<growing> {
    using part = remat::snapshot_traits<std::vector<double>>;
    static std::array<const_bytes, 2> parts(const growing& g) noexcept { return {part::bytes(g.a), part::bytes(g.b)}; }
    static std::array<mutable_bytes, 2> parts(growing& g) noexcept { return {part::bytes(g.a), part::bytes(g.b)}; }
};

BOOST_AUTO_TEST_CASE(a_restore_into_parts_that_changed_size_is_an_integrity_error)
{
    host_store store(2);
    growing x{std::vector<double>(4, 1.0), std::vector<double>(2, 2.0)};
    try {
        (void)run(revolve(10, 2), store, x, remat::forward_step([](step_t, growing& g) { g.b.push_back(0.0); }),
                  remat::adjoint_step([](step_t, growing&) {}));
        BOOST_FAIL("a restore into a part of another size was accepted");
    } catch (const integrity_error& e) {
        const std::string what = e.what();
        BOOST_TEST(what.find("but part 1 of the state has") != std::string::npos, what);
        BOOST_TEST(what.find("in 2 parts (32, ") != std::string::npos, what);
        BOOST_TEST(what.find("bytes where the snapshot's has ") != std::string::npos, what);
    }
    BOOST_TEST(store.stats().slots_in_use == 0u); // released for the next run
}

BOOST_AUTO_TEST_CASE(tiered_store_of_host_levels_synchronous_and_asynchronous)
{
    // Revolve spread over a fast level of 3 slots and a slow level of 9; the slow level runs on the
    // asynchronous engine (staging buffers gather the parts; write-behind, read-ahead, cache) or not.
    const history_problem history;
    const lstm_problem lstm;
    const vector_schedule plan = split_levels(revolve(steps, 12), 3);
    for (const bool asynchronous : {false, true}) {
        for (const std::size_t staging : {std::size_t{1}, std::size_t{4}}) {
            auto make = [&] {
                return std::make_unique<tiered_store<host_store, host_store>>(
                    std::array<tier_options, 2>{
                        tier_options{},
                        tier_options{.asynchronous = asynchronous, .async = async_options{.staging_buffers = staging}}},
                    host_store(3), host_store(level_capacity{.slots = 9}, host_store::options{.name = "slow"}));
            };
            auto a = make();
            check_against_store_all(history, history_adjoint(&history), *a, plan);
            auto b = make();
            check_against_store_all(lstm, lstm_adjoint{}, *b, plan);
            BOOST_TEST(b->stats().levels[1].stores > 0u);
        }
    }
}
