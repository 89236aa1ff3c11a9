// remat/schedule/chain.hpp — the time-optimal schedule for a chain whose steps differ in cost and state
// size, under a memory budget in bytes (Beaumont, Eyraud-Dubois, Herrmann, Joly & Shilova 2019; the model
// is in remat/schedule/chain_model.hpp, the method in docs/heterogeneous.md).
//
// A dynamic program over (first step s, length l, free memory M): memory is counted in units of
// `granularity` bytes, every size rounded up to whole units and the budget down, so a plan always fits
// the true budget. With horizon K = T the plan is optimal for the rounded model, and its cost is at most
// the true optimum for the budget less (T + 3) * granularity bytes (docs/heterogeneous.md proves it); when
// the granularity divides every size it is the true optimum. Work ~ T * K^2/2 * U and a table of about
// T * K * U float entries for U = budget / granularity units; for long chains K < T limits the left parts of
// the outermost chain of checkpoints to K steps (the plan says `exact() == false`).
//
// With every f_k, b_k, m_k equal (and a_k = 0), a budget of (s+1) * m gives remat::revolve(T, s)'s cost.
#pragma once

#include "remat/schedule/action.hpp"
#include "remat/schedule/chain_model.hpp"
#include "remat/schedule/cost.hpp"
#include "remat/schedule/range.hpp"

#include <cstdint>
#include <memory>
#include <vector>

namespace remat {

namespace detail {
struct chain_plan;
} // namespace detail

/// The cheapest schedule for a heterogeneous chain within `budget_bytes`.
///
///     remat::chain_model m = remat::chain_model::uniform(10, 1, 2, 1024);
///     m.steps[4].state_bytes = 8192;                    // one wide layer
///     remat::chain plan(m, 5 * 1024 + 8192);
///     plan.cost().predicted_cost;                       // forward recomputation + adjoints
///     plan.peak_bytes();                                // <= the budget
///     for (const remat::action& a : plan) std::cout << a << '\n';   // store 0 0 0, advance 0 3, ...
class chain : public action_range<chain> {
public:
    struct options {
        /// Bytes per memory unit; 0 chooses: the greatest common divisor of every size when the budget is
        /// at most max_units of it (exact), else the budget over as many units as a table of horizon
        /// min(T, 8) allows (max_table_entries / (8 T)), clamped to [units_target, max_units], less an
        /// eighth kept for the rounding's slack (use_rounding_slack).
        std::uint64_t granularity = 0;
        /// Automatic granularity: units of the budget to aim for when the sizes' divisor gives too many.
        std::uint64_t units_target = 256;
        /// Automatic granularity: the most units before the divisor is given up for units_target.
        std::uint64_t max_units = 4096;
        /// Most steps of a left part of the outermost chain of checkpoints; 0: T when the table fits
        /// max_table_entries, else the largest that fits.
        step_t horizon = 0;
        /// Steps per planned block; 0 chooses: the chain itself, or where its table allows too short a
        /// horizon for any plan to fit (long chains: the checkpoints a short horizon forces fill the budget),
        /// blocks of max(2, ceil(T / 1000)) steps, doubled until a plan fits. A block is either kept (advanced
        /// storing its inner states, which its adjoint restores) or re-run inside its adjoint, as the tables
        /// choose (see docs/heterogeneous.md); 1: never in blocks.
        step_t block_steps = 0;
        /// Largest table the plan builds: min(K, T - s) rows of U + 1 entries (4 bytes each) for each start
        /// s, K T - K (K - 1) / 2 rows in all (T (T + 1) / 2 when K = T).
        std::uint64_t max_table_entries = std::uint64_t{1} << 25;
        /// With an automatic granularity that loses something: make the tables reach past the budget (by up
        /// to T + 3 units, at most an eighth) and walk the plan from the most units whose plan still fits
        /// the budget in true bytes. Sizes are rounded up, so such plans exist and cost no more.
        bool use_rounding_slack = true;
        /// Where the plan is not exact(): take remat::greedy_ranking's plan when it costs less (method()).
        bool greedy_fallback = true;
        /// Where the plan is exact() and the chain small (T (T + 1) / 2 x (U + 1) <= 2^22 table entries and
        /// T^2 (T + 1) (U + 1) <= 10^8), also solve the recurrence extended by one non-persistent split
        /// (a checkpoint freed at its last restore, its step reversed from the enclosing checkpoint;
        /// docs/heterogeneous.md) and take its plan where it costs less (method() "dynamic program,
        /// non-persistent"). Off by default: the plan is then the persistent optimum, what rotor computes.
        bool non_persistent = false;
    };

    /// Throws remat::argument_error for an invalid chain (remat::validate) or a budget below the largest
    /// single step's need (max(m_k, m_{k+1}) + a_k), and remat::capacity_error when no schedule fits the
    /// budget at this granularity (naming the least budget that does) or when the table cannot fit
    /// max_table_entries even with a horizon of 1.
    chain(chain_model model, std::uint64_t budget_bytes, const options& opts);
    chain(chain_model model, std::uint64_t budget_bytes) : chain(std::move(model), budget_bytes, options{}) {}

    [[nodiscard]] step_t steps() const noexcept;
    [[nodiscard]] const chain_model& model() const noexcept;
    [[nodiscard]] std::uint64_t budget_bytes() const noexcept;
    /// Bytes per memory unit of the dynamic program.
    [[nodiscard]] std::uint64_t granularity() const noexcept;
    /// Memory units of the budget (budget / granularity, rounded down), at most those of storing every state
    /// (more are never used).
    [[nodiscard]] std::uint64_t units() const noexcept;
    /// Memory units the plan was made for: units(), or more where the rounding's slack let a plan for more
    /// units fit the budget in true bytes (options::use_rounding_slack).
    [[nodiscard]] std::uint64_t planned_units() const noexcept;
    /// K: the most steps of a left part of the outermost chain of checkpoints (T when exact).
    [[nodiscard]] step_t horizon() const noexcept;
    /// Steps per planned block: 1, or the block size of a long chain (options::block_steps).
    [[nodiscard]] step_t block_steps() const noexcept;
    /// Whether the plan is optimal for the model at this granularity (horizon == T, no blocks).
    [[nodiscard]] bool exact() const noexcept;
    /// Where the plan comes from: "dynamic program", or "greedy ranking" where the plan is not exact() and
    /// remat::greedy_ranking's plan costs less than the dynamic program's (a safety net, not an optimum: the
    /// plan then is that plan, priced and checked the same way), or "dynamic program, non-persistent"
    /// (options::non_persistent).
    [[nodiscard]] const char* method() const noexcept;
    /// Whether the granularity divides every size: the discretisation then costs nothing.
    [[nodiscard]] bool lossless() const noexcept;
    /// The budget the discretisation may cost: the plan is at most as expensive as the true optimum for
    /// budget_bytes() minus this ((T + 3) * granularity; 0 when lossless).
    [[nodiscard]] std::uint64_t discretisation_gap_bytes() const noexcept;
    /// The plan's peak memory under the model, in true bytes (<= budget_bytes()).
    [[nodiscard]] std::uint64_t peak_bytes() const noexcept;
    /// Bytes of the plan's tables (what planning holds in memory besides the model).
    [[nodiscard]] std::uint64_t table_bytes() const noexcept;
    /// The smallest budget (a multiple of the granularity) this chain needs at this granularity.
    [[nodiscard]] std::uint64_t least_budget_bytes() const noexcept;

    /// Counts, and predicted_cost = the f_k of every advanced step + every b_k (computed from the plan, in
    /// true bytes and double precision). levels holds the one level 0.
    [[nodiscard]] schedule_cost cost() const;

    /// One pass over the actions; see remat/schedule/range.hpp.
    class cursor_type {
    public:
        cursor_type() = default;
        bool next(action& out)
        {
            for (;;) {
                if (listed_ != nullptr) [[unlikely]] {
                    if (listed_at_ >= listed_->size())
                        return false;
                    out = (*listed_)[listed_at_++];
                    return true;
                }
                if (expanded_at_ < expanded_.size()) [[unlikely]] {
                    out = expanded_[expanded_at_++];
                    return true;
                }
                if (queue_.pop(out)) [[likely]] {
                    if (block_ != 1) [[unlikely]]
                        widen(out);
                    return true;
                }
                if (done_)
                    return false;
                step();
            }
        }

    private:
        friend class chain;
        // A left part waiting for its right part: restore x_start from `slot`, then reverse `length` steps
        // with `units` free (x_start's own snapshot included). A kept block (chains planned in blocks, keep
        // option `option` >= 0) holds x_start in `slot` and its stored inner states in the slots above.
        struct task {
            step_t start = 0;
            step_t length = 0;
            std::uint64_t units = 0;
            slot_t slot = 0;
            int option = -1;
        };
        enum class phase { outer, unheld, held, keep, kept };
        void widen(action& a); // a planned block's action as the steps' own
        void step();           // one decision of the plan: at most three actions, or a block's expansion
        void step_outer();     // step() by phase
        void step_unheld();
        void step_held();
        void step_keep();
        void step_kept();
        void pop(); // the next pending task (done when none)
        std::shared_ptr<const detail::chain_plan> plan_;
        phase phase_ = phase::outer;
        phase after_keep_ = phase::outer; // where a keep's right part goes on
        task current_{};
        slot_t depth_ = 0; // slots in use; the held snapshots form a stack
        std::vector<task> pending_;
        detail::action_queue<4> queue_;
        std::vector<action> expanded_; // a block's actions as the steps' own, given before the queue's
        std::size_t expanded_at_ = 0;
        const std::vector<action>* listed_ = nullptr; // the greedy ranking's plan (method())
        std::size_t listed_at_ = 0;
        step_t block_ = 1;
        step_t fine_steps_ = 0;
        bool done_ = true;
    };

    [[nodiscard]] cursor_type cursor() const;

private:
    // Plans p (its fine chain, budget and block set) or throws capacity_error; `limited`: the table's horizon
    // was shorter than the chain planned.
    void build(const std::shared_ptr<detail::chain_plan>& p, const options& opts, bool& limited);
    std::shared_ptr<const detail::chain_plan> plan_; // immutable: copies and cursors share it
};

class any_schedule;

/// What a schedule costs on a chain: its counts, its time (predicted_cost: the f_k of every advanced step
/// + every b_k) and its peak memory under the model of chain_model.hpp, in true bytes. Any single-level
/// schedule (revolve, uniform, a chain plan) can be priced, to compare them on the same chain.
struct chain_evaluation {
    schedule_cost counts;
    double cost = 0;
    std::uint64_t peak_bytes = 0;
};

/// Prices `plan` on `chain` by walking its actions once. Throws remat::argument_error when the step
/// counts differ and remat::schedule_error for a store into a slot in use or a free of an empty one.
///
///     remat::chain_evaluation e = remat::evaluate(m, remat::uniform(m.size(), 4));
///     e.peak_bytes <= budget;   e.cost;
[[nodiscard]] chain_evaluation evaluate(const chain_model& chain, const any_schedule& plan);

} // namespace remat
