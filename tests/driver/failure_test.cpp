// A throwing user callable, at any step and in any phase: the exception names the step, the original is
// nested inside, the store is left consistent (no slot held), and the same store then completes a run.
// Under ASan this also shows that nothing leaks.
#define BOOST_TEST_MODULE driver_failure
#include <boost/test/unit_test.hpp>

#include "remat/driver/executor.hpp"
#include "remat/driver/run.hpp"
#include "remat/schedule/revolve.hpp"
#include "remat/store/host_store.hpp"

#include <optional>
#include <stdexcept>
#include <vector>

using namespace remat;

namespace {

struct user_failure : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// A state that serialises itself, so save/load failures can be provoked too.
struct two_buffers {
    std::vector<double> a, b;
    static inline int fail_save_at_call = -1;
    static inline int fail_load_at_call = -1;
    static inline int calls = 0;
};

} // namespace

template <>
struct remat::snapshot_traits<two_buffers> {
    static std::size_t size_bytes(const two_buffers& s) { return (s.a.size() + s.b.size()) * sizeof(double); }
    static void save(const two_buffers& s, std::span<std::byte> out)
    {
        if (two_buffers::calls++ == two_buffers::fail_save_at_call)
            throw user_failure("disk quota of the user's own buffer");
        std::memcpy(out.data(), s.a.data(), s.a.size() * sizeof(double));
        std::memcpy(out.data() + s.a.size() * sizeof(double), s.b.data(), s.b.size() * sizeof(double));
    }
    static void load(two_buffers& s, std::span<const std::byte> in)
    {
        if (two_buffers::calls++ == two_buffers::fail_load_at_call)
            throw user_failure("bad load");
        std::memcpy(s.a.data(), in.data(), s.a.size() * sizeof(double));
        std::memcpy(s.b.data(), in.data() + s.a.size() * sizeof(double), s.b.size() * sizeof(double));
    }
};

namespace {

void forward(step_t k, two_buffers& s)
{
    for (std::size_t i = 0; i < s.a.size(); ++i) {
        s.a[i] = s.a[i] * 0.999 + 0.001 * static_cast<double>(k);
        s.b[i] += s.a[i] * 1e-3;
    }
}

// The adjoint of something: here only a checksum of the states it sees, in order.
struct recorder {
    std::vector<double> seen;
    void operator()(step_t, two_buffers& s) { seen.push_back(s.a[0] + 3 * s.b[1]); }
};

two_buffers initial()
{
    return {{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}};
}

std::vector<double> reference(step_t steps)
{
    two_buffers x = initial();
    recorder r;
    host_store store(steps);
    (void)run(revolve(steps, steps), store, x, remat::forward_step(forward), remat::adjoint_step(r));
    return r.seen;
}

} // namespace

BOOST_AUTO_TEST_CASE(forward_failure_at_every_step)
{
    const step_t steps = 40;
    const std::vector<double> expected = reference(steps);
    for (step_t failing = 0; failing < steps - 1; ++failing) {
        for (const int occurrence : {1, 2}) { // the first run of the step, and a recomputation of it
            host_store store(4);
            two_buffers x = initial();
            recorder r;
            int seen = 0;
            auto flaky = [&](step_t k, two_buffers& s) {
                if (k == failing && ++seen == occurrence)
                    throw user_failure("diverged");
                forward(k, s);
            };
            bool threw = false;
            try {
                (void)run(revolve(steps, 4), store, x, remat::forward_step(flaky), remat::adjoint_step(r));
            } catch (const step_error& e) {
                threw = true;
                BOOST_TEST(e.step() == failing);
                BOOST_TEST((e.phase() == step_phase::forward));
                BOOST_TEST(std::string(e.what()).find("forward step " + std::to_string(failing) +
                                                      " failed: diverged") != std::string::npos,
                           e.what());
                try {
                    std::rethrow_if_nested(e);
                    BOOST_ERROR("no nested exception");
                } catch (const user_failure& inner) {
                    BOOST_TEST(std::string(inner.what()) == "diverged");
                }
            }
            // Step `failing` may run only once (then the second occurrence never comes).
            if (!threw) {
                BOOST_TEST(occurrence == 2);
                continue;
            }
            BOOST_TEST(store.stats().slots_in_use == 0u);
            // The same store runs the whole loop again, correctly.
            two_buffers y = initial();
            recorder ok;
            (void)run(revolve(steps, 4), store, y, remat::forward_step(forward), remat::adjoint_step(ok));
            BOOST_TEST_REQUIRE((ok.seen == expected));
        }
    }
}

BOOST_AUTO_TEST_CASE(adjoint_failure_at_every_step)
{
    const step_t steps = 30;
    for (step_t failing = 0; failing < steps; ++failing) {
        host_store store(3);
        two_buffers x = initial();
        auto adjoint = [&](step_t k, two_buffers&) {
            if (k == failing)
                throw std::logic_error("NaN in the adjoint");
        };
        BOOST_CHECK_EXCEPTION(
            (void)run(revolve(steps, 3), store, x, remat::forward_step(forward), remat::adjoint_step(adjoint)),
            step_error, [&](const step_error& e) {
                return e.step() == failing && e.phase() == step_phase::adjoint &&
                       std::string(e.what()).find("NaN in the adjoint") != std::string::npos;
            });
        BOOST_TEST(store.stats().slots_in_use == 0u);
    }
}

BOOST_AUTO_TEST_CASE(snapshot_save_and_load_failures)
{
    const step_t steps = 25;
    const std::vector<double> expected = reference(steps);
    for (int call = 0; call < 20; ++call) {
        for (const bool on_save : {true, false}) {
            two_buffers::calls = 0;
            two_buffers::fail_save_at_call = on_save ? call : -1;
            two_buffers::fail_load_at_call = on_save ? -1 : call;
            host_store store(3);
            two_buffers x = initial();
            recorder r;
            try {
                (void)run(revolve(steps, 3), store, x, remat::forward_step(forward), remat::adjoint_step(r));
            } catch (const step_error& e) {
                BOOST_TEST((e.phase() == (on_save ? step_phase::save : step_phase::load)));
                BOOST_TEST(std::string(e.what()).find("snapshot") != std::string::npos);
            }
            BOOST_TEST(store.stats().slots_in_use == 0u);
            two_buffers::fail_save_at_call = two_buffers::fail_load_at_call = -1;
            two_buffers y = initial();
            recorder ok;
            (void)run(revolve(steps, 3), store, y, remat::forward_step(forward), remat::adjoint_step(ok));
            BOOST_TEST_REQUIRE((ok.seen == expected));
        }
    }
}

BOOST_AUTO_TEST_CASE(wrong_schedules_are_caught_where_they_go_wrong)
{
    struct bad_case {
        std::vector<action> actions;
        std::string message;
    };
    const std::vector<bad_case> cases{
        {{advance{1, 2}}, "advance 1 2 but the state is x_0"},
        {{advance{0, 5}}, "at most at the next step to reverse (3)"},
        {{store{0, 0, 1}}, "store of x_1 but the state is x_0"},
        {{reverse{2}}, "reverse 2 out of order"},
        {{advance{0, 3}, reverse{3}, advance{0, 1}}, "state is undefined"},
        {{store{0, 0, 0}, advance{0, 1}, store{0, 0, 1}}, "still holds x_0"},
        {{store{0, 0, 0}, advance{0, 3}, reverse{3}, restore{0, 0, 1}}, "holds x_0, not x_1"},
        {{store{0, 9, 0}}, "outside the host store's 2 slots"},
        {{store{1, 0, 0}}, "level 1 does not exist; the store has 1"},
        {{free_slot{0, 1}}, "holds no snapshot"},
        {{advance{0, 1, true}}, "taped advances need the tape callables, remat::with_tapes"},
    };
    for (const auto& c : cases) {
        host_store store(2);
        std::vector<double> x{1.0};
        auto f = [](step_t, std::vector<double>& s) { s[0] += 1; };
        auto a = [](step_t, std::vector<double>&) {};
        executor ex(store, x, remat::forward_step(f), remat::adjoint_step(a), 4);
        try {
            for (const action& act : c.actions)
                ex.apply(act);
            BOOST_ERROR("accepted: " << c.message);
        } catch (const error& e) {
            BOOST_TEST(std::string(e.what()).find(c.message) != std::string::npos, e.what());
        }
        ex.abort();
        BOOST_TEST(store.stats().slots_in_use == 0u);
    }
    // A schedule that stops early.
    host_store store(2);
    std::vector<double> x{1.0};
    auto f = [](step_t, std::vector<double>& s) { s[0] += 1; };
    auto a = [](step_t, std::vector<double>&) {};
    executor ex(store, x, remat::forward_step(f), remat::adjoint_step(a), 4);
    ex.apply(advance{0, 3});
    ex.apply(reverse{3});
    BOOST_CHECK_EXCEPTION((void)ex.finish(), schedule_error, [](const schedule_error& e) {
        return std::string(e.what()).find("steps 0..2 not reversed") != std::string::npos;
    });
}
