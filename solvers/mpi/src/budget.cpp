#include "remat/mpi/budget.hpp"

#include <remat/detail/checked_math.hpp>
#include <remat/error.hpp>

#include <algorithm>
#include <array>
#include <limits>
#include <string>
#include <vector>

namespace remat::mpi {

namespace {

std::string ranks_text(const std::vector<int>& ranks)
{
    return std::string(ranks.size() > 1 ? "ranks " : "rank ") + rank_list(ranks.data(), ranks.size());
}

} // namespace

budget_plan plan_for_budget(MPI_Comm comm, step_t steps, budget b, std::uint64_t rank_state_bytes)
{
    const int ranks = size(comm);
    // Everything any rank decides from is gathered first, so that every rank reaches the same verdict
    // (a rank that threw alone would leave the others waiting in their next collective).
    const std::array<std::uint64_t, 4> mine{static_cast<std::uint64_t>(steps), b.bytes,
                                            static_cast<std::uint64_t>(b.scope), rank_state_bytes};
    std::vector<std::uint64_t> all(4 * static_cast<std::size_t>(ranks));
    check(MPI_Allgather(mine.data(), 4, MPI_UINT64_T, all.data(), 4, MPI_UINT64_T, comm), "MPI_Allgather");
    auto field = [&](int r, int i) { return all[4 * static_cast<std::size_t>(r) + static_cast<std::size_t>(i)]; };

    auto differing_from_0 = [&](int i) {
        std::vector<int> d;
        for (int r = 1; r < ranks; ++r)
            if (field(r, i) != field(0, i))
                d.push_back(r);
        return d;
    };
    if (const auto d = differing_from_0(0); !d.empty())
        throw argument_error("remat::mpi::plan_for_budget: " + ranks_text(d) +
                             " planned T = " + std::to_string(static_cast<step_t>(field(d[0], 0))) +
                             " steps, rank 0 T = " + std::to_string(static_cast<step_t>(field(0, 0))));
    if (const auto d = differing_from_0(2); !d.empty())
        throw argument_error("remat::mpi::plan_for_budget: " + ranks_text(d) +
                             " gave a budget of another scope than rank 0 (per rank against for the job)");
    if (b.scope == budget_scope::job)
        if (const auto d = differing_from_0(1); !d.empty())
            throw argument_error("remat::mpi::plan_for_budget: a job budget must be the same on every rank; " +
                                 ranks_text(d) + " gave " + std::to_string(field(d[0], 1)) + " bytes, rank 0 " +
                                 std::to_string(field(0, 1)));

    budget_plan p;
    p.rank_state_bytes = rank_state_bytes;
    for (int r = 0; r < ranks; ++r)
        p.job_state_bytes = remat::detail::checked_add(p.job_state_bytes, field(r, 3), "the job's state bytes");
    if (p.job_state_bytes == 0)
        throw argument_error("remat::mpi::plan_for_budget: every rank's part of the state is 0 bytes");

    if (b.scope == budget_scope::job) {
        // A slot holds the whole state, spread over the ranks.
        const memory_plan whole = remat::plan_for_budget(steps, b.bytes, p.job_state_bytes);
        p.plan = whole;
        p.plan.budget_bytes = remat::detail::checked_mul(static_cast<std::uint64_t>(whole.slots), rank_state_bytes,
                                                         "this rank's share of the budget");
    } else {
        std::uint64_t slots = std::numeric_limits<std::uint64_t>::max();
        std::vector<int> empty;
        for (int r = 0; r < ranks; ++r) {
            if (field(r, 3) == 0)
                continue; // a rank without a part holds nothing
            const std::uint64_t fits = field(r, 1) / field(r, 3);
            if (fits == 0)
                empty.push_back(r);
            if (fits < slots) {
                slots = fits;
                p.limiting_rank = r;
            }
        }
        if (!empty.empty())
            throw capacity_error("remat::mpi::plan_for_budget: the budget of " + ranks_text(empty) +
                                 " holds no snapshot of its part (rank " + std::to_string(empty[0]) + ": " +
                                 std::to_string(field(empty[0], 1)) + " bytes for a part of " +
                                 std::to_string(field(empty[0], 3)) + " bytes); at least one slot is needed");
        slots = std::min<std::uint64_t>(slots, static_cast<std::uint64_t>(std::numeric_limits<slot_t>::max()));
        // Plan on a rank that holds a part (every rank computes the same slots and cost).
        const std::uint64_t part = field(p.limiting_rank, 3);
        const memory_plan shared = remat::plan_for_budget(steps, slots * part, part);
        p.plan = shared;
        p.plan.budget_bytes = b.bytes;
    }
    p.plan.state_bytes = rank_state_bytes;
    p.plan.peak_snapshot_bytes =
        remat::detail::checked_mul(p.plan.cost.peak_slots, rank_state_bytes, "this rank's peak snapshot bytes");
    p.job_peak_bytes =
        remat::detail::checked_mul(p.plan.cost.peak_slots, p.job_state_bytes, "the job's peak snapshot bytes");
    return p;
}

} // namespace remat::mpi
