// remat/mpi/budget.hpp — a snapshot budget per rank or for the whole job, turned into one slot count that
// every rank plans with.
//
// All ranks must run the same schedule, so they need the same slot count; what differs is the size of
// each rank's part of the state, and with it the bytes a slot costs on that rank.
//   - per rank: each rank may hold `bytes` of its own snapshots; the slot count is the smallest any rank
//     can afford, min over ranks of floor(bytes_r / part_bytes_r).
//   - for the job: all ranks together may hold `bytes` (the same value on every rank); a slot costs the
//     whole state's bytes (the sum of the parts), and each rank holds slots * its part's bytes.
#pragma once

#include "remat/mpi/communicator.hpp"

#include <remat/schedule/budget.hpp>
#include <remat/types.hpp>

#include <mpi.h>

#include <cstdint>

namespace remat::mpi {

/// Whether a budget is each rank's own or shared by the whole job.
enum class budget_scope { per_rank, job };

/// A snapshot budget in bytes and what it covers.
///
///     remat::mpi::budget{.bytes = 512ull << 20}                                        // 512 MiB per rank
///     remat::mpi::budget{.bytes = 8ull << 30, .scope = remat::mpi::budget_scope::job}  // 8 GiB in all
struct budget {
    std::uint64_t bytes = 0;
    budget_scope scope = budget_scope::per_rank;
};

/// The plan every rank shares, seen from this rank.
struct budget_plan {
    /// The binomial plan with the agreed slot count (the same slots and cost on every rank); its
    /// budget_bytes, state_bytes and peak_snapshot_bytes are this rank's.
    memory_plan plan;
    std::uint64_t rank_state_bytes = 0; ///< this rank's part of the state
    std::uint64_t job_state_bytes = 0;  ///< the whole state, all parts
    std::uint64_t job_peak_bytes = 0;   ///< peak snapshot bytes of all ranks together
    int limiting_rank = 0;              ///< per rank: the (lowest) rank whose budget set the slot count
};

/// Collective over `comm`: plans T steps within `b` for a state of which this rank holds
/// `rank_state_bytes`. Every rank gets the same slot count and schedule cost, or the same exception:
/// remat::argument_error when the ranks disagree on T, on the scope or (for a job budget) on the bytes,
/// or all parts are empty; remat::capacity_error when a budget holds no snapshot, naming the ranks.
///
///     remat::mpi::budget_plan p = remat::mpi::plan_for_budget(MPI_COMM_WORLD, T, {.bytes = 64ull << 20},
///                                                            local.size() * sizeof(double));
///     remat::revolve plan(T, p.plan.slots);
[[nodiscard]] budget_plan plan_for_budget(MPI_Comm comm, step_t steps, budget b, std::uint64_t rank_state_bytes);

} // namespace remat::mpi
