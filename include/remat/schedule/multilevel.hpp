// remat/schedule/multilevel.hpp — checkpointing across storage levels (device, host, disk, ...) that
// minimises the predicted cost of remat/schedule/multilevel_model.hpp (H-Revolve, Disk-Revolve; see
// docs/multilevel.md).
//
// Two methods:
//  - exact: a dynamic program over (segment length, free slots per finite level, level of the segment's
//    start), documented in remat/detail/multilevel_table.hpp, in O(T^2/2 * rows * n) time and
//    O(rows * n * T) memory (rows = product of (c_L + 1) over finite levels). Snapshots on any level
//    may be read any number of times; a snapshot may be moved to another level; every slot is freed
//    after its last use, so finite capacities are never exceeded.
//  - periodic (near-optimal, for T beyond the exact table): the slowest level keeps a checkpoint every
//    k steps — all of them when it is unlimited, along a binomial (revolve) schedule over the k-step
//    segments when it is finite — and each segment is reversed by the exact schedule of the table for
//    segments of up to K steps. k, the number of segments and the last segment's length are chosen to
//    minimise the predicted cost. O(1) amortised per action, memory O(table + slots), T up to 2^63-1.
// One level with zero write cost is plain binomial checkpointing: the schedule is remat::revolve's.
#pragma once

#include "remat/schedule/action.hpp"
#include "remat/schedule/cost.hpp"
#include "remat/schedule/multilevel_model.hpp"
#include "remat/schedule/range.hpp"
#include "remat/schedule/revolve.hpp"

#include <cstdint>
#include <memory>

namespace remat {

namespace detail {
struct multilevel_plan;
struct multilevel_walker;
} // namespace detail

/// The cheapest schedule (under `model`) for `steps` steps across several storage levels.
///
///     remat::cost_model m{{{"host", 4, 0, 0}, {"disk", remat::level_spec::unlimited, 5, 5}}};
///     remat::multilevel plan(1000, m);
///     plan.cost().predicted_cost;            // U * forward steps + disk writes and reads, priced
///     for (const remat::action& a : plan)    // store 1 0 0, advance 0 37, ... (level 1 = disk)
///         std::cout << a << '\n';
class multilevel : public action_range<multilevel> {
public:
    enum class method {
        automatic, ///< binomial when it is optimal, exact when its table fits the limits, else periodic
        exact,     ///< the dynamic program over the whole loop (throws capacity_error if too large)
        periodic,  ///< the near-optimal method (exact when T fits the inner table's horizon)
        binomial,  ///< what automatic reports for one level with zero write cost: remat::revolve
    };

    struct options {
        method how = method::automatic;
        /// automatic: use the exact method when building its table takes at most this many inner-loop
        /// iterations (about 1 ns each: the default is a few seconds at worst).
        std::uint64_t exact_work_limit = 3'000'000'000;
        /// periodic: the inner table's horizon K (most steps of one segment); 0 picks the largest K whose
        /// table takes at most `periodic_work_limit` iterations.
        step_t horizon = 0;
        std::uint64_t periodic_work_limit = 300'000'000;
        /// Largest table (lengths x free-slot rows x levels) either method builds; 8 bytes and 5 more per entry.
        std::uint64_t max_table_entries = std::uint64_t{1} << 24;
    };

    /// Throws remat::argument_error for steps < 1 or an invalid model (see remat::validate), and
    /// remat::capacity_error when method::exact is asked for a table beyond max_table_entries.
    multilevel(step_t steps, const cost_model& model, const options& opts);
    multilevel(step_t steps, const cost_model& model) : multilevel(steps, model, options{}) {}

    [[nodiscard]] step_t steps() const noexcept;
    [[nodiscard]] const cost_model& model() const noexcept;
    /// The method in use: binomial, exact or periodic (never automatic).
    [[nodiscard]] method method_used() const noexcept;
    /// periodic: steps between two checkpoints of the slowest level (k); 0 otherwise.
    [[nodiscard]] step_t period() const noexcept;
    /// Most steps of one segment the table covers (T for exact, K for periodic, 0 for binomial).
    [[nodiscard]] step_t horizon() const noexcept;

    /// Counts per level and predicted_cost, without enumerating the actions. For the periodic method with
    /// a finite slowest level, `repetition` is an upper bound; every other count is exact. Throws
    /// remat::overflow_error when a count exceeds 2^64-1.
    [[nodiscard]] schedule_cost cost() const;

    /// One pass over the actions; see remat/schedule/range.hpp.
    class cursor_type {
    public:
        cursor_type();
        ~cursor_type();
        cursor_type(cursor_type&&) noexcept;
        cursor_type& operator=(cursor_type&&) noexcept;
        bool next(action& out)
        {
            if (queue_.pop(out)) [[likely]]
                return true;
            if (done_)
                return false;
            refill();
            return queue_.pop(out);
        }

    private:
        friend class multilevel;
        void refill();
        std::unique_ptr<detail::multilevel_walker> walker_;
        revolve::cursor_type binomial_; // method::binomial
        bool use_binomial_ = false;
        detail::action_queue<8> queue_;
        bool done_ = true;
    };

    [[nodiscard]] cursor_type cursor() const;

private:
    std::shared_ptr<const detail::multilevel_plan> plan_; // immutable: copies share it
};

} // namespace remat
