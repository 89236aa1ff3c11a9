// Resuming a run killed (SIGKILL) during its forward sweep, from the snapshots it left in its HDF5 file:
// the resumed gradient is bit-identical to an uninterrupted run's, the resume starts from the most
// advanced snapshot the schedule still needs (computed here independently from the actions), the forward
// steps saved and run add up to an uninterrupted run's, and a file written by another schedule or state
// type is refused; the terminal callable sees the bit-identical x_T once in the resumed run. Also: a host
// level that runs out of memory for a slot gives a clear error.
#define BOOST_TEST_MODULE hdf5_resume
#include <boost/test/unit_test.hpp>

#include "scratch_dir.hpp"

#include "remat/hdf5/hdf5_store.hpp"
#include "remat/hdf5/inspect.hpp"
#include "remat/remat.hpp"

#include <cmath>
#include <csignal>
#include <cstring>
#include <memory_resource>
#include <new>
#include <string>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

using namespace remat;

namespace {

constexpr step_t steps = 60;
constexpr slot_t slots = 5;
constexpr std::size_t points = 1000;

// A small nonlinear loop and its adjoint: x_{k+1} = x + 0.1 sin(x) + 0.01 k; J = sum x_T.
void step_loop(step_t k, std::vector<double>& x)
{
    for (double& v : x)
        v = v + 0.1 * std::sin(v) + 0.01 * static_cast<double>(k);
}

struct adjoint_state {
    std::vector<double> a = std::vector<double>(points, 1.0); // dJ/dx_T
    void step(step_t, const std::vector<double>& x)
    {
        for (std::size_t i = 0; i < x.size(); ++i)
            a[i] *= 1 + 0.1 * std::cos(x[i]);
    }
};

std::vector<double> initial()
{
    std::vector<double> x(points);
    for (std::size_t i = 0; i < points; ++i)
        x[i] = 0.001 * static_cast<double>(i);
    return x;
}

std::vector<double> reference_gradient()
{
    std::vector<double> x = initial();
    adjoint_state adj;
    host_store all(steps);
    run(store_all(steps, steps - 1), all, x, remat::forward_step(step_loop),
        remat::adjoint_step([&](step_t k, std::vector<double>& s) { adj.step(k, s); }));
    return adj.a;
}

// The step of the last store of the first sweep at or before step `k`: where a run killed just before
// forward step k must resume (every snapshot of revolve's first sweep is held until its reverse sweep).
step_t expected_resume_step(const revolve& plan, step_t k)
{
    step_t best = -1;
    for (const action& a : plan) {
        if (std::holds_alternative<reverse>(a))
            break;
        if (const auto* s = std::get_if<store>(&a); s != nullptr && s->step <= k)
            best = s->step;
    }
    return best;
}

// A child process runs the loop with its snapshots in `file` and kills itself (SIGKILL) just before
// forward step `kill_at`.
void run_killed_child(const std::filesystem::path& file, const revolve& plan, step_t kill_at)
{
    const pid_t pid = ::fork();
    BOOST_TEST_REQUIRE(pid >= 0);
    if (pid == 0) {
        std::vector<double> x = initial();
        adjoint_state adj;
        hdf5_store disk(file, level_capacity{slots},
                        {.element = hdf5_element::float64, .run_identity = run_identity(plan, x)});
        run(plan, disk, x, remat::forward_step([&](step_t k, std::vector<double>& s) {
                if (k == kill_at)
                    ::raise(SIGKILL);
                step_loop(k, s);
            }),
            remat::adjoint_step([&](step_t k, std::vector<double>& s) { adj.step(k, s); }));
        ::_exit(3); // not reached
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    BOOST_TEST_REQUIRE((WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL));
}

} // namespace

BOOST_AUTO_TEST_CASE(resume_after_kill_in_forward_sweep)
{
    const std::vector<double> reference = reference_gradient();
    const revolve plan(steps, slots);
    std::uint64_t uninterrupted = 0;
    {
        test::scratch_dir dir;
        std::vector<double> x = initial();
        adjoint_state adj;
        hdf5_store disk(dir / "whole.h5", level_capacity{slots});
        uninterrupted = run(plan, disk, x, remat::forward_step(step_loop),
                            remat::adjoint_step([&](step_t k, std::vector<double>& s) { adj.step(k, s); }))
                            .forward_steps;
    }
    std::vector<double> plain_final = initial(); // x_T by a plain forward sweep
    for (step_t k = 0; k < steps; ++k)
        step_loop(k, plain_final);
    for (const step_t kill_at : {step_t{1}, step_t{7}, step_t{20}, step_t{33}, step_t{50}, steps - 2}) {
        test::scratch_dir dir;
        const auto file = dir / "run.h5";
        run_killed_child(file, plan, kill_at);
        for (const hdf5_snapshot_info& s : hdf5_inspect(file, true).snapshots)
            BOOST_TEST((s.status != hdf5_snapshot_status::damaged), s.dataset << ": " << s.problem);

        std::vector<double> x = initial();
        hdf5_store disk(file, level_capacity{slots},
                        {.mode = hdf5_store::open_mode::resume,
                         .element = hdf5_element::float64,
                         .run_identity = run_identity(plan, x)});
        const std::optional<resume_point> point =
            find_resume_point(plan, [&](level_t, slot_t s) { return disk.snapshot_step(s); });
        BOOST_TEST_REQUIRE(point.has_value());
        BOOST_TEST(point->step == expected_resume_step(plan, kill_at), "killed at " << kill_at);
        BOOST_TEST(point->forward_steps_saved == static_cast<std::uint64_t>(point->step));
        release_except(disk, slots, *point);
        adjoint_state adj;
        x.assign(points, -1.0); // the resume must load x_k itself
        std::vector<double>
            seen; // x_T, given to the terminal callable by the resumed run (the killed one never got there)
        int calls = 0;
        const run_report r = run_resumed(plan, *point, disk, x, remat::forward_step(step_loop),
                                         remat::adjoint_step([&](step_t k, std::vector<double>& s) { adj.step(k, s); }),
                                         remat::final_state([&](const std::vector<double>& xT) {
                                             ++calls;
                                             seen = xT;
                                         }));
        BOOST_TEST(std::memcmp(adj.a.data(), reference.data(), points * sizeof(double)) == 0, "killed at " << kill_at);
        BOOST_TEST(calls == 1);
        BOOST_TEST(r.final_calls == 1u);
        BOOST_TEST(r.final_forward_steps == 1u);
        BOOST_TEST_REQUIRE(seen.size() == points);
        BOOST_TEST(std::memcmp(seen.data(), plain_final.data(), points * sizeof(double)) == 0, "killed at " << kill_at);
        BOOST_TEST(r.forward_steps + point->forward_steps_saved == uninterrupted, "killed at " << kill_at);
        BOOST_TEST(r.reverse_steps == static_cast<std::uint64_t>(steps));
    }
}

BOOST_AUTO_TEST_CASE(no_snapshot_means_no_resume_point)
{
    const revolve plan(steps, slots);
    BOOST_TEST(!find_resume_point(plan, [](level_t, slot_t) { return step_t{-1}; }).has_value());
    // Everything held: the last store of the first sweep.
    const auto all = find_resume_point(plan, [&](level_t, slot_t s) {
        for (const action& a : plan)
            if (const auto* st = std::get_if<store>(&a); st != nullptr && st->slot == s)
                return st->step; // the first store into each slot is the first sweep's
        return step_t{-1};
    });
    BOOST_TEST_REQUIRE(all.has_value());
    BOOST_TEST(all->step == expected_resume_step(plan, steps));
    BOOST_TEST(all->held.size() == static_cast<std::size_t>(slots));
}

BOOST_AUTO_TEST_CASE(a_file_of_another_run_is_refused)
{
    test::scratch_dir dir;
    const auto file = dir / "run.h5";
    const revolve plan(steps, slots);
    run_killed_child(file, plan, 30);
    const std::vector<double> x = initial();
    const std::vector<float> other_state(points);
    const std::string mine = run_identity(plan, x);
    for (const std::string& other :
         {run_identity(revolve(steps + 1, slots), x), run_identity(revolve(steps, slots + 1), x),
          run_identity(plan, other_state), run_identity(uniform(steps, 10), x)}) {
        BOOST_TEST(other != mine);
        BOOST_TEST(other.size() <= 255u);
        try {
            hdf5_store s(file, level_capacity{slots}, {.mode = hdf5_store::open_mode::resume, .run_identity = other});
            BOOST_ERROR("a file written by " << mine << " was resumed as " << other);
        } catch (const argument_error& e) {
            const std::string m = e.what();
            BOOST_TEST(m.find(mine) != std::string::npos, m);
            BOOST_TEST(m.find(other) != std::string::npos, m);
            BOOST_TEST(m.find(file.string()) != std::string::npos, m);
        }
    }
    // The right identity opens it, and so does a resume that asks for none.
    hdf5_store same(file, level_capacity{slots}, {.mode = hdf5_store::open_mode::resume, .run_identity = mine});
    BOOST_TEST(same.run_identity() == mine);
}

namespace {

// Memory that runs out after `room` bytes, as a machine short of memory does.
class scarce_memory final : public std::pmr::memory_resource {
public:
    explicit scarce_memory(std::size_t room) : room_(room) {}

private:
    void* do_allocate(std::size_t bytes, std::size_t alignment) override
    {
        if (bytes > room_)
            throw std::bad_alloc();
        room_ -= bytes;
        return std::pmr::new_delete_resource()->allocate(bytes, alignment);
    }
    void do_deallocate(void* p, std::size_t bytes, std::size_t alignment) override
    {
        room_ += bytes;
        std::pmr::new_delete_resource()->deallocate(p, bytes, alignment);
    }
    [[nodiscard]] bool do_is_equal(const std::pmr::memory_resource& o) const noexcept override { return this == &o; }
    std::size_t room_;
};

} // namespace

BOOST_AUTO_TEST_CASE(host_level_out_of_memory_is_a_clear_error)
{
    scarce_memory memory(2 * points * sizeof(double));
    host_store ram(slots, {.memory = &memory});
    std::vector<double> x = initial();
    adjoint_state adj;
    try {
        run(revolve(steps, slots), ram, x, remat::forward_step(step_loop),
            remat::adjoint_step([&](step_t k, std::vector<double>& s) { adj.step(k, s); }));
        BOOST_ERROR("the run did not run out of memory");
    } catch (const capacity_error& e) {
        const std::string m = e.what();
        BOOST_TEST(m.find("out of memory") != std::string::npos, m);
        BOOST_TEST(m.find("host slot 2") != std::string::npos, m);
        BOOST_TEST(m.find(std::to_string(points * sizeof(double))) != std::string::npos, m);
    }
    // The store is empty and usable again, within the memory it has.
    BOOST_TEST(ram.stats().slots_in_use == 0u);
    x = initial();
    adjoint_state again;
    run(revolve(steps, 2), ram, x, remat::forward_step(step_loop),
        remat::adjoint_step([&](step_t k, std::vector<double>& s) { again.step(k, s); }));
    const std::vector<double> reference = reference_gradient();
    BOOST_TEST(std::memcmp(again.a.data(), reference.data(), points * sizeof(double)) == 0);
}
