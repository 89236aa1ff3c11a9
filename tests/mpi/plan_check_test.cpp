// remat::mpi's collective checks under mpirun -np 4: plans that agree pass, plans that differ are refused
// on every rank naming the ranks that differ; budgets per rank and for the job; the failure message.
#define BOOST_TEST_MODULE mpi_plan_check
#include "contains.hpp"
#include "mpi_session.hpp"

#include <remat/mpi/mpi.hpp>
#include <remat/remat.hpp>

#include <boost/test/unit_test.hpp>

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

using remat::test::mpi_session;
BOOST_TEST_GLOBAL_FIXTURE(mpi_session);

namespace {

int me()
{
    return remat::mpi::rank(MPI_COMM_WORLD);
}
int ranks()
{
    return remat::mpi::size(MPI_COMM_WORLD);
}

// Runs check_same_plan with `plan` and returns the mismatch every rank must see (or none).
template <class Schedule>
std::optional<remat::mpi::plan_mismatch> mismatch_of(const Schedule& plan)
{
    try {
        remat::mpi::check_same_plan(MPI_COMM_WORLD, plan);
        return std::nullopt;
    } catch (const remat::mpi::plan_mismatch& e) {
        return e;
    }
}

using remat::test::contains;

} // namespace

BOOST_AUTO_TEST_CASE(runs_with_four_ranks)
{
    BOOST_TEST(ranks() == 4); // the cases below name ranks 1 to 3
}

BOOST_AUTO_TEST_CASE(equal_plans_pass)
{
    BOOST_TEST(!mismatch_of(remat::revolve(1000, 10)));
    BOOST_TEST(!mismatch_of(remat::uniform::fit(1000, 80)));
    BOOST_TEST(!mismatch_of(remat::store_all(50, 50)));
}

BOOST_AUTO_TEST_CASE(other_slots_on_one_rank_are_named_on_every_rank)
{
    const auto m = mismatch_of(remat::revolve(1000, me() == 2 ? 11 : 10));
    BOOST_REQUIRE(m);
    BOOST_TEST(m->ranks() == std::vector<int>{2});
    const std::string w = m->what();
    BOOST_TEST(contains(w, "rank 2 differs from rank 0"), w);
    BOOST_TEST(contains(w, "ranks 0, 1, 3: remat::revolve: T = 1000, 10 slots"), w);
    BOOST_TEST(contains(w, "rank 2: remat::revolve: T = 1000, 11 slots"), w);
}

BOOST_AUTO_TEST_CASE(other_steps_on_two_ranks)
{
    const auto m = mismatch_of(remat::revolve(me() % 2 == 1 ? 999 : 1000, 10));
    BOOST_REQUIRE(m);
    BOOST_TEST(m->ranks() == (std::vector<int>{1, 3}));
    BOOST_TEST(contains(m->what(), "ranks 1, 3 differ from rank 0"), m->what());
    BOOST_TEST(contains(m->what(), "ranks 1, 3: remat::revolve: T = 999"), m->what());
}

BOOST_AUTO_TEST_CASE(another_method_with_the_same_steps_and_slots)
{
    // Rank 3 runs every-k-th checkpointing where the others run revolve: same T, same slot budget.
    const remat::slot_t slots = 80; // uniform needs at least 61 for T = 1000
    std::optional<remat::mpi::plan_mismatch> m =
        me() == 3 ? mismatch_of(remat::uniform::fit(1000, slots)) : mismatch_of(remat::revolve(1000, slots));
    BOOST_REQUIRE(m);
    BOOST_TEST(m->ranks() == std::vector<int>{3});
    BOOST_TEST(contains(m->what(), "rank 3: remat::uniform: T = 1000"), m->what());
}

BOOST_AUTO_TEST_CASE(equal_cost_but_other_actions)
{
    // Two schedules of equal cost whose actions differ are told apart by the hash of their actions.
    remat::mpi::plan_signature s = remat::mpi::signature_of(remat::revolve(200, 5));
    if (me() == 1)
        s.actions_hash ^= 1;
    std::optional<remat::mpi::plan_mismatch> m;
    try {
        remat::mpi::check_same_plan(MPI_COMM_WORLD, s);
    } catch (const remat::mpi::plan_mismatch& e) {
        m = e;
    }
    BOOST_REQUIRE(m);
    BOOST_TEST(m->ranks() == std::vector<int>{1});
}

BOOST_AUTO_TEST_CASE(signature_is_what_the_schedule_reports)
{
    const remat::revolve plan(1000, 10);
    const remat::mpi::plan_signature s = remat::mpi::signature_of(plan);
    BOOST_TEST(s.method == "remat::revolve");
    BOOST_TEST((s.cost == plan.cost()));
    BOOST_TEST(s.hashed_actions == std::min<std::uint64_t>(remat::mpi::signature_actions, [&] {
                   std::uint64_t n = 0;
                   for ([[maybe_unused]] const remat::action& a : plan)
                       ++n;
                   return n;
               }()));
}

// Budgets: parts of 1000, 2000, 3000 and 4000 bytes on ranks 0..3.
BOOST_AUTO_TEST_CASE(budget_per_rank_takes_the_smallest_slot_count)
{
    const std::uint64_t part = 1000 * static_cast<std::uint64_t>(me() + 1);
    // 40000 bytes per rank: 40, 20, 13 and 10 slots fit; every rank plans with 10, set by rank 3.
    const remat::mpi::budget_plan p = remat::mpi::plan_for_budget(MPI_COMM_WORLD, 5000, {.bytes = 40000}, part);
    BOOST_TEST(p.plan.slots == 10);
    BOOST_TEST(p.limiting_rank == 3);
    BOOST_TEST((p.plan.cost == remat::revolve(5000, 10).cost()));
    BOOST_TEST(p.rank_state_bytes == part);
    BOOST_TEST(p.job_state_bytes == 10000u);
    BOOST_TEST(p.plan.peak_snapshot_bytes == 10 * part);
    BOOST_TEST(p.plan.peak_snapshot_bytes <= 40000u);
    BOOST_TEST(p.job_peak_bytes == 100000u);
}

BOOST_AUTO_TEST_CASE(budget_for_the_job_is_split_by_part_size)
{
    const std::uint64_t part = 1000 * static_cast<std::uint64_t>(me() + 1);
    // 125000 bytes in all for a state of 10000 bytes: 12 slots; each rank holds 12 x its part.
    const remat::mpi::budget_plan p = remat::mpi::plan_for_budget(
        MPI_COMM_WORLD, 5000, {.bytes = 125000, .scope = remat::mpi::budget_scope::job}, part);
    BOOST_TEST(p.plan.slots == 12);
    BOOST_TEST(p.plan.budget_bytes == 12 * part);
    BOOST_TEST(p.plan.peak_snapshot_bytes == 12 * part);
    BOOST_TEST(p.job_peak_bytes == 120000u);
    BOOST_TEST(p.job_peak_bytes <= 125000u);
}

BOOST_AUTO_TEST_CASE(budget_errors_are_the_same_on_every_rank)
{
    const std::uint64_t part = 1000 * static_cast<std::uint64_t>(me() + 1);
    // Rank 2's budget holds no snapshot of its part.
    try {
        (void)remat::mpi::plan_for_budget(MPI_COMM_WORLD, 100, {.bytes = me() == 2 ? 2999u : 100000u}, part);
        BOOST_ERROR("no capacity_error");
    } catch (const remat::capacity_error& e) {
        BOOST_TEST(contains(e.what(), "the budget of rank 2 holds no snapshot of its part (rank 2: 2999 bytes for "
                                      "a part of 3000 bytes)"),
                   e.what());
    }
    // A job budget that differs on rank 1.
    try {
        (void)remat::mpi::plan_for_budget(
            MPI_COMM_WORLD, 100, {.bytes = me() == 1 ? 5000u : 50000u, .scope = remat::mpi::budget_scope::job}, part);
        BOOST_ERROR("no argument_error");
    } catch (const remat::argument_error& e) {
        BOOST_TEST(contains(e.what(), "a job budget must be the same on every rank; rank 1 gave 5000 bytes, rank 0 "
                                      "50000"),
                   e.what());
    }
    // Another T on rank 3.
    try {
        (void)remat::mpi::plan_for_budget(MPI_COMM_WORLD, me() == 3 ? 99 : 100, {.bytes = 100000}, part);
        BOOST_ERROR("no argument_error");
    } catch (const remat::argument_error& e) {
        BOOST_TEST(contains(e.what(), "rank 3 planned T = 99 steps, rank 0 T = 100"), e.what());
    }
}

BOOST_AUTO_TEST_CASE(failure_message_names_rank_step_and_cause)
{
    // A step_error from the driver: its step and phase, and the cause it nests.
    std::exception_ptr failure;
    try {
        try {
            throw std::runtime_error("boom");
        } catch (...) {
            std::throw_with_nested(remat::step_error(17, remat::step_phase::adjoint, "adjoint step 17 failed: boom"));
        }
    } catch (...) {
        failure = std::current_exception();
    }
    const std::string m = remat::mpi::failure_message(MPI_COMM_WORLD, failure, {});
    BOOST_TEST(contains(m, "remat::mpi: rank " + std::to_string(me()) + " of 4 ("), m);
    BOOST_TEST(contains(m, "failed in step 17 (adjoint): std::runtime_error: boom"), m);

    // A store failure outside the user's steps: the last step entered, the error's type and message.
    const std::string io = remat::mpi::failure_message(
        MPI_COMM_WORLD, std::make_exception_ptr(remat::io_error("writing x_6 into disk slot 2 failed: No space")),
        {.step = 5, .phase = remat::step_phase::forward});
    BOOST_TEST(contains(io, "failed after step 5 (forward): remat::io_error: writing x_6 into disk slot 2 failed: "
                            "No space"),
               io);
}
