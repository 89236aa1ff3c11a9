// remat/mpi/plan_check.hpp — the collective check that every rank planned the same schedule.
//
// Every rank runs the same schedule on its part of the state. A rank that planned another one (another T,
// another slot count, another method) would store and restore at other steps than its neighbours, whose
// halo exchanges would then pair the wrong steps: a wrong gradient or a hang. check_same_plan compares a
// signature of each rank's schedule once, before step 0, and throws the same plan_mismatch on every rank,
// naming the ranks that differ from rank 0.
#pragma once

#include "remat/mpi/communicator.hpp"

#include <remat/error.hpp>
#include <remat/schedule/action.hpp>
#include <remat/schedule/cost.hpp>
#include <remat/schedule/range.hpp>

#include <mpi.h>

#include <cstdint>
#include <string>
#include <typeinfo>
#include <vector>

namespace remat::mpi {

/// What identifies a schedule across ranks: its method, its closed-form cost (T, forward steps, stores
/// and restores, peak slots per level, repetition, predicted cost) and a hash of its first actions.
struct plan_signature {
    std::string method;               ///< the schedule's type, "remat::revolve"
    schedule_cost cost;               ///< the schedule's cost() (T is cost.steps)
    std::uint64_t actions_hash = 0;   ///< XXH64 of the text form of the first `hashed_actions` actions
    std::uint64_t hashed_actions = 0; ///< min(signature_actions, the number of actions)
    friend bool operator==(const plan_signature&, const plan_signature&) = default;
};

/// How many leading actions a signature hashes (cheap, and schedules of equal cost but other actions
/// differ within them).
inline constexpr std::uint64_t signature_actions = 4096;

/// The schedules of some ranks differ from rank 0's. Thrown on every rank with the same message;
/// ranks() lists the ranks that differ.
class plan_mismatch : public schedule_error {
public:
    plan_mismatch(const std::string& what, std::vector<int> ranks) : schedule_error(what), ranks_(std::move(ranks)) {}
    [[nodiscard]] const std::vector<int>& ranks() const noexcept { return ranks_; }

private:
    std::vector<int> ranks_;
};

namespace detail {
[[nodiscard]] std::string demangle(const char* name);
[[nodiscard]] std::uint64_t hash_actions(const std::vector<std::string>& texts);
} // namespace detail

/// The signature of `plan` (local, no communication).
///
///     remat::mpi::plan_signature s = remat::mpi::signature_of(remat::revolve(1000, 10));
///     // s.method == "remat::revolve", s.cost.steps == 1000, s.cost.peak_slots == 10
template <schedule Schedule>
[[nodiscard]] plan_signature signature_of(const Schedule& plan)
{
    plan_signature s;
    s.method = detail::demangle(typeid(Schedule).name());
    s.cost = plan.cost();
    std::vector<std::string> texts;
    auto cursor = plan.cursor();
    action a;
    while (texts.size() < signature_actions && cursor.next(a))
        texts.push_back(to_string(a));
    s.actions_hash = detail::hash_actions(texts);
    s.hashed_actions = texts.size();
    return s;
}

/// One line: "remat::revolve: T = 1000, 10 slots, 2891 forward steps, 12 stores, ...".
[[nodiscard]] std::string describe(const plan_signature& s);

/// Collective over `comm` (every rank must call it): returns when every rank's signature equals rank 0's,
/// else throws plan_mismatch on every rank, naming each group of ranks with the schedule it planned.
///
///     remat::mpi::check_same_plan(MPI_COMM_WORLD, remat::mpi::signature_of(plan));
void check_same_plan(MPI_Comm comm, const plan_signature& mine);

/// check_same_plan(comm, signature_of(plan)).
///
///     remat::revolve plan(T, slots);
///     remat::mpi::check_same_plan(MPI_COMM_WORLD, plan); // plan_mismatch if a rank has other T or slots
template <schedule Schedule>
void check_same_plan(MPI_Comm comm, const Schedule& plan)
{
    check_same_plan(comm, signature_of(plan));
}

} // namespace remat::mpi
