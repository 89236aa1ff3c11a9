// remat/schedule/multilevel.hpp — checkpointing across storage levels (device, host, disk, ...) that
// minimises the predicted cost of remat/schedule/multilevel_model.hpp (H-Revolve, Disk-Revolve; see
// docs/multilevel.md).
//
// Two methods:
//  - exact: a dynamic program over (segment length, free slots per finite level, level of the segment's
//    start), documented in src/schedule/multilevel_table.hpp, in O(T^2/2 * rows * n) time and
//    O(rows * n * T) memory (rows = product of (c_L + 1) over finite levels). Snapshots on any level
//    may be read any number of times; a snapshot may be moved to another level; every slot is freed
//    after its last use, so finite capacities are never exceeded.
//  - near-optimal, for T beyond the exact table; the cheapest of the structures that fit:
//    grid:   the same dynamic program over super-steps of g steps, exact inside each super-step (every
//            snapshot whose right part spans whole super-steps sits on a multiple of g);
//    spine:  the slowest level (unlimited, or large enough) keeps x_0, x_k, x_2k, ... and each k-step
//            segment is reversed by the exact table for segments of up to K steps (the exact optimum
//            settles into such a period on long loops);
//    nested: a finite slowest level runs revolve over the k-step segments, the table reverses each;
//    layered: the exact recurrence over one level only (the outer one, usually the slowest) places its
//            checkpoints with segments of any length between them, each reversed by the exact table of
//            the other levels (a leaf); on a grid of g steps when the loop is too long for single steps.
//    O(1) amortised per action, memory independent of T (the tables), T up to 2^63-1 for spine and
//    nested, up to about the work limit for grid, and up to about the work limit times the leaves'
//    horizon for layered.
// One level with zero write cost is plain binomial checkpointing: the schedule is remat::revolve's.
#pragma once

#include "remat/schedule/action.hpp"
#include "remat/schedule/cost.hpp"
#include "remat/schedule/multilevel_model.hpp"
#include "remat/schedule/range.hpp"
#include "remat/schedule/revolve.hpp"

#include <cstdint>
#include <memory>
#include <vector>

namespace remat {

namespace detail {
struct multilevel_plan;
struct multilevel_walker;
struct stacked_layout;
} // namespace detail

/// The cheapest schedule (under `model`) for `steps` steps across several storage levels.
///
///     remat::cost_model m{{{"host", 4, 0, 0}, {"disk", remat::level_spec::unlimited, 5, 5}}};
///     remat::multilevel plan(1000, m);
///     plan.cost().predicted_cost;            // U * forward steps + disk writes and reads, priced
///     for (const remat::action& a : plan)    // store 1 0 0, advance 0 5, store 1 1 5, ... (level 1: disk)
///         std::cout << a << '\n';
class multilevel : public action_range<multilevel> {
public:
    enum class method {
        automatic,    ///< binomial when it is optimal, exact when its table fits the limits, else near-optimal
        exact,        ///< the dynamic program over the whole loop (throws capacity_error if too large)
        near_optimal, ///< the cheapest of grid, spine, nested and layered (exact when T fits one table)
        binomial,     ///< what automatic reports for one level with zero write cost: remat::revolve
    };

    /// How the plan is built (see the top of this header).
    enum class structure { binomial, exact, grid, spine, nested, layered, stacked };

    struct options {
        method how = method::automatic;
        /// automatic: use the exact method when building its table takes at most this many inner-loop
        /// iterations (about 0.7 ns each on one core) and the model's own part of the work limit below.
        std::uint64_t exact_work_limit = 2'000'000'000;
        /// exact: refuse, before building anything, a table beyond this many iterations (about 30 s).
        std::uint64_t exact_max_work = 100'000'000'000;
        /// automatic and near_optimal: the most work (multilevel::work: table iterations, and 300 per task the
        /// stacked structure counts) of the whole plan, the plans over subsets of the levels included. A model of
        /// k levels spends a fixed part of it on its own structures (1/128, 1/12, 1/10, 1/16 for k = 1..4, 1/2
        /// beyond), the same alone or as a subset, and a store of up to four levels plans every subset with its
        /// part, so adding a level never makes the plan dearer; the parts of four levels and their subsets add up
        /// to less than the limit. A table that would not fit what is left is not built. About 0.7 ns of CPU per
        /// iteration: up to 2 s for four levels on this project's 2-core machine (docs/multilevel.md). Not applied
        /// to a structure asked for alone (`only`), whose tables each get this much.
        std::uint64_t near_optimal_work_limit = 3'200'000'000;
        /// spine, nested and layered: the table's horizon K (most steps of one segment, of one leaf for
        /// layered); 0: the largest that fits.
        step_t horizon = 0;
        /// grid: steps per super-step g; layered: steps per unit of the outer recurrence; 0: the smallest
        /// whose tables fit.
        step_t grid = 0;
        /// near_optimal: consider only this structure (grid, spine, nested or layered), or the cheapest of
        /// those that apply when it does not; binomial: the cheapest.
        structure only = structure::binomial;
        /// Largest table (lengths x free-slot rows x levels) any method builds; 13 bytes per entry and 9
        /// per length and row.
        std::uint64_t max_table_entries = std::uint64_t{1} << 24;
        /// automatic and near_optimal: the most bytes of tables held at once (at most 22 per entry; a
        /// near-optimal plan holds the best structure's tables while it builds the next one's).
        std::uint64_t memory_limit = std::uint64_t{200} << 20;
    };

    /// Throws remat::argument_error for steps < 1 or an invalid model (see remat::validate), and
    /// remat::capacity_error when method::exact is asked for a table beyond max_table_entries.
    multilevel(step_t steps, const cost_model& model, const options& opts);
    multilevel(step_t steps, const cost_model& model) : multilevel(steps, model, options{}) {}

    [[nodiscard]] step_t steps() const noexcept;
    [[nodiscard]] const cost_model& model() const noexcept;
    /// The method in use: binomial, exact or near_optimal (never automatic).
    [[nodiscard]] method method_used() const noexcept;
    [[nodiscard]] structure structure_used() const noexcept;
    /// The levels the plan stores on: all of them, or the subset whose own plan was cheaper (a plan over
    /// fewer levels is a plan for the whole store; the chosen plan is never dearer than one of those).
    ///
    ///     plan.levels_used();   // {0, 1}, or {0} when the slow level does not pay
    [[nodiscard]] std::vector<level_t> levels_used() const;
    /// spine and nested: steps between two checkpoints of the slowest level (k); grid: steps per
    /// super-step (g); layered: steps per unit of the outer recurrence (g, 1 for single steps); 0 otherwise.
    [[nodiscard]] step_t period() const noexcept;
    /// Most table units of one segment (T for exact, K for spine and nested, super-steps for grid, the
    /// most steps of one leaf for layered).
    [[nodiscard]] step_t horizon() const noexcept;
    /// spine, nested and layered: the level the outer walk places its checkpoints on; -1 otherwise.
    ///
    ///     plan.model().levels[plan.outer_level()].name   // "disk"
    [[nodiscard]] level_t outer_level() const noexcept;

    /// The work it took to make the plan: inner-loop iterations of the tables built (and 300 for each task the
    /// stacked structure counted), the plans over subsets of the levels included. At most
    /// options::near_optimal_work_limit for automatic and near_optimal (the exact table included), whatever T and
    /// the levels.
    ///
    ///     plan.work() <= opts.near_optimal_work_limit;   // true for method::automatic
    [[nodiscard]] std::uint64_t work() const noexcept;

    /// Counts per level and predicted_cost, without enumerating the actions. For nested plans
    /// `repetition` is an upper bound; every other count is exact. Throws remat::overflow_error when a
    /// count exceeds 2^64-1.
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
        revolve::cursor_type binomial_;                       // method::binomial and the stacked structure
        std::shared_ptr<const detail::multilevel_plan> plan_; // keeps layout_ and levels_ alive
        const detail::stacked_layout* layout_ = nullptr;      // stacked: where each of revolve's depths lives
        const std::vector<level_t>* levels_ = nullptr;        // a plan over fewer levels: the store's level of each
        detail::action_queue<8> queue_;
        bool done_ = true;
    };

    [[nodiscard]] cursor_type cursor() const;

private:
    std::shared_ptr<const detail::multilevel_plan> plan_; // immutable: copies share it
};

/// A lower bound on the predicted cost of every schedule for `steps` steps under `model`: with P snapshots
/// held at most at once, binomial checkpointing's forward steps for P slots, one write and one read of each
/// of the P cheapest slots and the cheapest read for each further restore, minimised over P (revolve over all
/// slots with free transfers, tightened). Near-optimal plans report their gap to it.
///
///     remat::multilevel_lower_bound(10000, m) <= remat::multilevel(10000, m).cost().predicted_cost;   // true
[[nodiscard]] double multilevel_lower_bound(step_t steps, const cost_model& model);

} // namespace remat
