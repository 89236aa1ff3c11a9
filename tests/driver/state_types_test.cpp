// Every kind of state goes through the driver without extra code: trivially copyable structs, vectors,
// spans over the user's buffer, and serialised states with their own traits; each with and without a
// terminal callable (x_T seen exactly, x_{T-1} put back for the adjoint).
#define BOOST_TEST_MODULE driver_state_types
#include <boost/test/unit_test.hpp>

#include "test_states.hpp"

#include "remat/driver/run.hpp"
#include "remat/schedule/revolve.hpp"
#include "remat/store/host_store.hpp"

#include <array>
#include <cstring>
#include <span>
#include <vector>

using namespace remat;
using test::mesh_state;
using test::particle;

namespace {

// A test of the recorded x_k sequence: the adjoint records what it was given; it must be exactly the
// states of a plain forward sweep, in reverse.
template <class State, class Forward, class Fingerprint>
void check_states_seen(State x0, Forward forward, Fingerprint fingerprint, step_t steps, slot_t slots)
{
    std::vector<double> expected;
    double expected_final = 0;
    {
        State x = x0;
        for (step_t k = 0; k < steps; ++k) {
            expected.push_back(fingerprint(x));
            forward(k, x);
        }
        expected_final = fingerprint(x);
    }
    for (const bool with_final : {false, true}) {
        std::vector<double> seen;
        std::vector<double> finals; // x_T as the terminal callable saw it
        host_store store(slots);
        State x = x0;
        auto record = [&](step_t, State& s) { seen.push_back(fingerprint(s)); };
        if (with_final) {
            // x_{T-1} is kept aside while step T-1 runs once more for x_T: the adjoint must still see it.
            const run_report r =
                run(revolve(steps, slots), store, x, remat::forward_step(forward), remat::adjoint_step(record),
                    remat::final_state([&](const State& xT) { finals.push_back(fingerprint(xT)); }));
            BOOST_TEST(r.final_calls == 1u);
            BOOST_TEST_REQUIRE(finals.size() == 1u);
            BOOST_TEST(std::memcmp(&finals[0], &expected_final, sizeof(double)) == 0);
        } else {
            (void)run(revolve(steps, slots), store, x, remat::forward_step(forward), remat::adjoint_step(record));
        }
        std::reverse(seen.begin(), seen.end());
        BOOST_TEST_REQUIRE(seen.size() == expected.size());
        BOOST_TEST(std::memcmp(seen.data(), expected.data(), seen.size() * sizeof(double)) == 0,
                   "final " << with_final);
    }
}

} // namespace

static_assert(contiguous_state<particle>);
static_assert(contiguous_state<std::array<double, 4>>);
static_assert(contiguous_state<std::vector<double>>);
static_assert(contiguous_state<std::span<double>>);
static_assert(serialised_state<mesh_state> && !contiguous_state<mesh_state>);
static_assert(!snapshot_state<std::vector<std::vector<double>>>); // not contiguous: needs traits
static_assert(!snapshot_state<double*>);

BOOST_AUTO_TEST_CASE(trivially_copyable_struct)
{
    check_states_seen(
        particle{0.0, 1.0, 0},
        [](step_t, particle& p) {
            p.x += 0.1 * p.v;
            if (p.x > 1.0) {
                p.v = -p.v;
                ++p.collisions;
            }
        },
        [](const particle& p) { return p.x + 1000.0 * p.collisions; }, 200, 5);
}

BOOST_AUTO_TEST_CASE(std_array_and_vector)
{
    check_states_seen(
        std::array<double, 4>{1, 2, 3, 4},
        [](step_t k, std::array<double, 4>& a) { a[static_cast<std::size_t>(k) % 4] *= 1.01; },
        [](const std::array<double, 4>& a) { return a[0] + 10 * a[1] + 100 * a[2] + 1000 * a[3]; }, 150, 3);
    check_states_seen(
        std::vector<double>(1000, 1.0),
        [](step_t k, std::vector<double>& v) {
            v[static_cast<std::size_t>(k) % v.size()] += 1.0 / static_cast<double>(k + 1);
        },
        [](const std::vector<double>& v) {
            double s = 0;
            for (std::size_t i = 0; i < v.size(); ++i)
                s += v[i] * static_cast<double>(i + 1);
            return s;
        },
        300, 7);
}

BOOST_AUTO_TEST_CASE(span_over_the_users_buffer)
{
    std::vector<double> buffer(64, 0.5);
    std::vector<double> expected_buffer = buffer;
    std::span<double> view(buffer);
    std::vector<double> seen;
    host_store store(4);
    (void)run(revolve(100, 4), store, view, remat::forward_step([](step_t k, std::span<double>& s) {
                  s[static_cast<std::size_t>(k) % s.size()] += 1.0;
              }),
              remat::adjoint_step([&](step_t, std::span<double>& s) { seen.push_back(s[0] + 2 * s[1] + 4 * s[63]); }));
    BOOST_TEST(seen.size() == 100u);
    // The fingerprint of x_0 is last: the buffer was restored into, in place.
    BOOST_TEST(seen.back() == 0.5 + 1.0 + 2.0);
}

BOOST_AUTO_TEST_CASE(serialised_state_with_traits)
{
    check_states_seen(
        mesh_state{std::vector<float>(33, 1.0f), std::vector<double>(17, 2.0)},
        [](step_t k, mesh_state& m) {
            m.density[static_cast<std::size_t>(k) % 33] *= 1.5f;
            m.velocity[static_cast<std::size_t>(k) % 17] -= 0.25;
        },
        [](const mesh_state& m) {
            double s = 0;
            for (std::size_t i = 0; i < m.density.size(); ++i)
                s += m.density[i] * static_cast<double>(i + 1);
            for (std::size_t i = 0; i < m.velocity.size(); ++i)
                s += m.velocity[i] * static_cast<double>(i + 100);
            return s;
        },
        120, 4);
}

BOOST_AUTO_TEST_CASE(vector_restored_into_a_resized_vector)
{
    // A restore into a vector of another length resizes it to the snapshot.
    host_store store(1);
    std::vector<int> v{1, 2, 3};
    store.write(0, 0, snapshot_traits<std::vector<int>>::bytes(std::as_const(v)));
    std::vector<int> w{9};
    auto bytes = snapshot_traits<std::vector<int>>::bytes_for(w, store.snapshot_bytes(0));
    store.read(0, 0, bytes);
    BOOST_TEST((w == v));
}
