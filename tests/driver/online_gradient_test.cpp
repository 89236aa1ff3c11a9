// The online driver: gradients of loops that find their length as they run are bit-identical to a
// store-everything run of the same length, for both termination conventions; the report matches the
// schedule's predicted cost (failures: online_failure_test).
#define BOOST_TEST_MODULE driver_online
#include <boost/test/unit_test.hpp>

#include "burgers.hpp"
#include "lorenz63.hpp"
#include "lorenz_gradient.hpp"

#include "remat/driver/run.hpp"
#include "remat/driver/run_online.hpp"
#include "remat/schedule/online_revolve.hpp"
#include "remat/schedule/uniform.hpp"
#include "remat/store/host_store.hpp"

#include <cstring>
#include <vector>

using namespace remat;
using examples::vec3;
using test::lorenz_adjoint;
using test::lorenz_gradient;
using test::same_bits;
using test::store_all_reference;

namespace {

// The loop stops at the state where z rises above `level` for the `times`-th time: a criterion on the
// trajectory, so T is found only by running. Called once per state, in order.
struct z_crossings {
    double level;
    int times;
    int seen = 0;
    bool below = true;
    bool operator()(step_t, const vec3& x)
    {
        if (below && x[2] > level)
            ++seen;
        below = x[2] <= level;
        return seen >= times;
    }
};

step_t steps_until(const examples::lorenz63& model, vec3 x, z_crossings test)
{
    step_t k = 0;
    while (!test(k, x)) {
        model.step(x);
        ++k;
    }
    return k + 1; // step k is the last one
}

void check_report(const run_report& r, const schedule_cost& c)
{
    BOOST_TEST(r.steps == c.steps);
    BOOST_TEST(r.forward_steps == c.forward_steps);
    BOOST_TEST(r.reverse_steps == c.reverse_steps);
    BOOST_TEST(r.stores == c.stores);
    BOOST_TEST(r.restores == c.restores);
    BOOST_TEST(r.peak_slots == c.peak_slots);
    BOOST_TEST(r.bytes_written == c.stores * sizeof(vec3));
}

// A host store that asks to be told about coming restores, to run the driver's lookahead path.
struct prefetching_store {
    host_store inner;
    std::vector<step_t> prefetched;
    static constexpr bool prefetches = true;
    explicit prefetching_store(slot_t slots) : inner(slots) {}
    [[nodiscard]] level_capacity capacity() const { return inner.capacity(); }
    void write(slot_t s, step_t k, const_bytes b) { inner.write(s, k, b); }
    void read(slot_t s, step_t k, mutable_bytes b) { inner.read(s, k, b); }
    void release(slot_t s) { inner.release(s); }
    void release_all() noexcept { inner.release_all(); }
    void prefetch(slot_t, step_t k) { prefetched.push_back(k); }
    [[nodiscard]] std::size_t snapshot_bytes(slot_t s) const { return inner.snapshot_bytes(s); }
    [[nodiscard]] level_stats stats() const { return inner.stats(); }
};
static_assert(storage_level<prefetching_store>);

} // namespace

BOOST_AUTO_TEST_CASE(lorenz_gradients_are_bit_identical_to_store_all_when_the_loop_knows_its_last_step)
{
    const examples::lorenz63 model;
    const vec3 x0{1.0, 1.0, 1.0};
    for (const z_crossings test : {z_crossings{-1.0, 1}, z_crossings{2.0, 1}, z_crossings{25.0, 1},
                                   z_crossings{40.0, 1}, z_crossings{40.0, 4}, z_crossings{35.0, 12}}) {
        const step_t steps = steps_until(model, x0, test);
        const lorenz_gradient reference = store_all_reference(model, x0, steps);
        for (const slot_t s : {1, 2, 3, 8, 30, 100}) {
            if (s == 1 && steps > 2000)
                continue; // quadratic recomputation: covered by the shorter loops
            lorenz_gradient g;
            vec3 lambda{0, 0, 1};
            step_t found = 0;
            host_store store(s);
            vec3 x = x0;
            g.report =
                run_online(online_revolve(s), store, x, remat::forward_step([&](step_t, vec3& v) { model.step(v); }),
                           remat::adjoint_step(lorenz_adjoint(model, g, lambda, found)),
                           [&, is_last = test](step_t k, const vec3& v) mutable {
                               const bool last = is_last(k, v);
                               if (last)
                                   found = k + 1;
                               return last;
                           });
            g.dx0 = lambda;
            BOOST_TEST_REQUIRE(found == steps, "level " << test.level << " times " << test.times);
            BOOST_TEST_REQUIRE(same_bits(g.dx0, reference.dx0), "T=" << steps << " s=" << s);
            BOOST_TEST_REQUIRE(same_bits(g.dp, reference.dp), "T=" << steps << " s=" << s);
            BOOST_TEST_REQUIRE(g.objective == reference.objective);
            check_report(g.report, online_revolve(s).cost(steps));
            BOOST_TEST(g.report.peak_slots <= s);
        }
    }
}

BOOST_AUTO_TEST_CASE(lorenz_gradients_are_bit_identical_when_the_loop_learns_its_end_afterwards)
{
    const examples::lorenz63 model;
    const vec3 x0{1.0, 1.0, 1.0};
    for (const step_t steps : {1, 2, 3, 9, 57, 400, 2500}) {
        const lorenz_gradient reference = store_all_reference(model, x0, steps);
        for (const slot_t s : {2, 3, 7, 40}) {
            lorenz_gradient g;
            vec3 lambda{0, 0, 1};
            step_t found = 0;
            double seen_at_end = 0;
            host_store store(s);
            vec3 x = x0;
            g.report = run_online_converged(
                online_revolve(s), store, x, remat::forward_step([&](step_t, vec3& v) { model.step(v); }),
                remat::adjoint_step(lorenz_adjoint(model, g, lambda, found)), [&](step_t k, const vec3& v) {
                    BOOST_TEST_REQUIRE(k >= 1);
                    if (k != steps)
                        return false;
                    found = k;
                    seen_at_end = v[2]; // the loop's own view of x_T
                    return true;
                });
            g.dx0 = lambda;
            BOOST_TEST_REQUIRE(found == steps);
            BOOST_TEST_REQUIRE(same_bits(g.dx0, reference.dx0), "T=" << steps << " s=" << s);
            BOOST_TEST_REQUIRE(same_bits(g.dp, reference.dp), "T=" << steps << " s=" << s);
            BOOST_TEST_REQUIRE(g.objective == reference.objective);
            BOOST_TEST_REQUIRE(seen_at_end == reference.objective);
            check_report(g.report, online_revolve(s).cost(steps, online_end::after_last_step));
        }
    }
}

BOOST_AUTO_TEST_CASE(burgers_vector_state_with_a_prefetching_store)
{
    examples::burgers model;
    model.points = 64;
    model.dt = 1e-3;
    model.nu = 0.05;
    const step_t steps = 300;
    auto gradient = [&](auto&& drive) {
        std::vector<double> lambda, scratch;
        std::vector<double> u = model.initial_field();
        auto forward = [&](step_t, std::vector<double>& s) { model.step(s, scratch); };
        auto adjoint = [&](step_t k, std::vector<double>& s) {
            if (k == steps - 1) {
                std::vector<double> last = s;
                model.step(last, scratch);
                lambda = model.objective_gradient(last);
            }
            model.adjoint_step(s, lambda, scratch);
        };
        drive(u, forward, adjoint);
        return lambda;
    };
    const std::vector<double> reference = gradient([&](auto& u, auto& f, auto& a) {
        host_store store(steps - 1);
        (void)run(store_all(steps, steps - 1), store, u, remat::forward_step(f), remat::adjoint_step(a));
    });
    for (const slot_t s : {2, 5, 12}) {
        prefetching_store store(s);
        const std::vector<double> g = gradient([&](auto& u, auto& f, auto& a) {
            const run_report r = run_online(online_revolve(s), store, u, remat::forward_step(f), remat::adjoint_step(a),
                                            [&](step_t k, const auto&) { return k == steps - 1; });
            BOOST_TEST(r.restores == online_revolve(s).cost(steps).restores);
        });
        BOOST_TEST_REQUIRE(std::memcmp(g.data(), reference.data(), g.size() * sizeof(double)) == 0, "s=" << s);
        BOOST_TEST(store.prefetched.size() == online_revolve(s).cost(steps).restores, "s=" << s);
    }
}
