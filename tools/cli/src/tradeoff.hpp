// The memory–recomputation trade-off behind `remat tradeoff`: what each schedule costs over a grid of
// slot counts, and the inverse questions (the fewest slots under an overhead, the overhead a budget
// reaches). docs/tradeoff.md explains the numbers.
#pragma once

#include "exact_overhead.hpp"
#include "level_option.hpp"

#include "remat/schedule/cost.hpp"
#include "remat/schedule/online_revolve.hpp"
#include "remat/types.hpp"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace remat::cli {

/// The schedules compared. The √T rule is uniform checkpointing every round(√T) steps (the textbook
/// rule); uniform is the best spacing for each slot count; multilevel only with --level.
enum class tradeoff_schedule { revolve, online, uniform, sqrt_rule, store_all, multilevel };

/// "revolve", "online", "uniform", "sqrt-rule", "store-all", "multilevel".
std::string_view schedule_name(tradeoff_schedule s);

struct tradeoff_setup {
    step_t steps = 1;
    double reverse_cost = 0; ///< one adjoint step, in forward steps
    std::optional<std::uint64_t> state_bytes;
    /// --level texts parsed: the multilevel rows put the row's slot count on the first level and keep
    /// the others as given. Empty: no multilevel rows.
    std::vector<parsed_level> levels;
};

/// One schedule with one slot count.
struct tradeoff_row {
    tradeoff_schedule schedule = tradeoff_schedule::revolve;
    slot_t slots = 0;         ///< slots given to the schedule (the first level's, for multilevel)
    schedule_cost cost;       ///< its counts, as `remat plan` reports them
    double recompute_ratio{}; ///< forward steps over store-all's
    double overhead{};        ///< predicted cost over store-all's
    std::optional<step_t> every;
};

/// A row that could not be computed (the online count's work limit, a multilevel plan's), and why.
struct omitted_row {
    tradeoff_schedule schedule = tradeoff_schedule::online;
    slot_t slots = 0;
    std::string reason;
};

/// The trade-off for one loop. Single-level schedules are priced as `remat plan` prices them without
/// --level (forward steps plus T adjoint steps, snapshots in memory at no cost); multilevel rows with
/// the levels' write and read costs. Store-all (max(T-1, 1) slots) is the baseline of every ratio.
class tradeoff {
public:
    /// Throws usage_error for a bad --level combination (from the multilevel planner).
    explicit tradeoff(tradeoff_setup setup);

    [[nodiscard]] const tradeoff_setup& setup() const noexcept { return setup_; }
    [[nodiscard]] slot_t store_all_slots() const noexcept { return all_; }
    [[nodiscard]] std::uint64_t baseline_forward_steps() const noexcept;
    [[nodiscard]] double baseline_cost() const noexcept { return baseline_; }
    /// round(√T), at least 1: the √T rule's spacing.
    [[nodiscard]] step_t sqrt_every() const noexcept { return sqrt_every_; }
    /// The √T rule's row (its slots: the peak of uniform checkpointing every sqrt_every() steps).
    [[nodiscard]] const tradeoff_row& sqrt_rule() const noexcept { return sqrt_rule_; }
    /// The fewest slots with which revolve runs at most one extra forward sweep (forward steps at most
    /// twice store-all's).
    [[nodiscard]] slot_t one_extra_sweep_slots() const;

    /// The schedules compared, in output order.
    [[nodiscard]] std::vector<tradeoff_schedule> schedules() const;
    /// The slot counts of the rows: about four per decade from 1 to store_all_slots(), with round(√T),
    /// the √T rule's count, the one-extra-sweep count and uniform's fewest added.
    [[nodiscard]] std::vector<slot_t> grid() const;

    /// `schedule` with `slots` slots; nullopt where it does not apply (uniform below its fewest slots,
    /// the √T rule and store-all at any count but their own). Throws remat::argument_error where the
    /// count is refused (a multilevel plan beyond its work limit; an online count beyond what is left of
    /// online_work_budget, which each online row priced here spends: online_revolve::cost_work).
    [[nodiscard]] std::optional<tradeoff_row> row(tradeoff_schedule schedule, slot_t slots) const;

    /// The units of work (online_revolve::cost_work) that one report spends on online counts in all, rows
    /// and answers together: online_revolve's limit for one count, 0.2 to 0.5 s. Past level one (s below
    /// about √(2T)) an online count replays the forward sweep's decisions, about T/r of them, so at large T
    /// those rows would take seconds to hours each; the rows beyond it are listed as not computed, the
    /// cheapest priced first.
    static constexpr std::uint64_t online_work_budget = online_revolve::cost_work_limit;
    /// What is left of online_work_budget.
    [[nodiscard]] std::uint64_t online_work_left() const noexcept { return online_work_left_; }

    /// Every schedule over grid(); rows that were refused go to `omitted`. `done(k, n)` is called before
    /// each of the n rows (multilevel plans take seconds each at T = 10^6), and done(n, n) at the end.
    [[nodiscard]] std::vector<tradeoff_row> rows(std::vector<omitted_row>& omitted,
                                                 const std::function<void(std::size_t, std::size_t)>& done = {}) const;

    /// The row with the fewest slots (in 1 .. store_all_slots()) whose overhead is at most
    /// `max_overhead`, compared exactly (exact_overhead.hpp); nullopt when none is. Exact: revolve, uniform
    /// and multilevel cost no more with more slots (binary search); online costs at least revolve's, so its
    /// search starts at revolve's answer and goes up one slot at a time.
    [[nodiscard]] std::optional<tradeoff_row> least_slots(tradeoff_schedule schedule,
                                                          const overhead_limit& max_overhead) const;
    /// Whether `r`'s predicted cost is at most `limit` times store-all's, exactly.
    [[nodiscard]] bool reaches(const tradeoff_row& r, const overhead_limit& limit) const;

    /// The schedule with all of `slots` slots (at most store_all_slots() are used), or the √T rule and
    /// store-all where they fit in them; nullopt where it does not fit.
    [[nodiscard]] std::optional<tradeoff_row> within(tradeoff_schedule schedule, slot_t slots) const;

private:
    /// The model `schedule`'s rows with `slots` slots are priced under.
    [[nodiscard]] cost_model model_for(tradeoff_schedule schedule, slot_t slots) const;
    /// The online row with `slots` slots, whose count takes `work` units (online_revolve::cost_work), charged to
    /// what is left of online_work_budget; argument_error where it does not fit in it.
    [[nodiscard]] tradeoff_row online_row(slot_t slots, std::uint64_t work) const;
    [[nodiscard]] tradeoff_row make_row(tradeoff_schedule schedule, slot_t slots, const schedule_cost& c,
                                        double predicted) const;

    tradeoff_setup setup_;
    slot_t all_ = 1;
    double baseline_ = 0;
    std::vector<cost_term> baseline_terms_; // baseline_ as exact terms
    step_t sqrt_every_ = 1;
    tradeoff_row sqrt_rule_;
    mutable std::uint64_t online_work_left_ = online_work_budget; // spent by row(online, ...)
};

} // namespace remat::cli
