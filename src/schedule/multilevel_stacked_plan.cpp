// The stacked structure: revolve over the cheapest k slots of all levels, for the k that predicts least.
#include "multilevel_structures.hpp"

#include "remat/error.hpp"

#include <algorithm>
#include <limits>
#include <numeric>
#include <optional>
#include <unordered_map>

namespace remat::detail {
namespace {

constexpr double infinity = std::numeric_limits<double>::infinity();
constexpr std::size_t stacked_min_tasks = 50'000;
constexpr std::uint64_t stacked_task_work = 300;

/// The search for the stacked structure's k: the cheapest k slots of all levels, taken cheapest level first.
class stacked_search {
public:
    stacked_search(const multilevel_plan& base, std::size_t least_tasks)
        : base_(base), model_(base.model), steps_(base.steps), n_(model_.levels.size())
    {
        // All the k tried share one count of tasks (thousands of fast slots make many distinct tasks per k); once
        // it is spent, no further k is priced.
        // A quarter of what is left of the work limit, the tables the rest; at least 50,000 tasks when that much
        // is left (so that a small limit still gets a plan), never more than is left; `least` overrides the limit.
        const std::uint64_t left = work_cap::left() / stacked_task_work;
        tasks_left_ = static_cast<std::size_t>(std::max<std::uint64_t>(
            least_tasks,
            std::min<std::uint64_t>(stacked_max_tasks, std::max(left / 4, std::min(left, stacked_min_tasks)))));
        const auto most = static_cast<std::uint64_t>(steps_ - 1);
        // Cheapest first: the order in which k slots are taken.
        order_.resize(n_);
        std::iota(order_.begin(), order_.end(), std::size_t{0});
        std::stable_sort(order_.begin(), order_.end(), [&](std::size_t a, std::size_t b) {
            return model_.levels[a].write_cost + model_.levels[a].read_cost <
                   model_.levels[b].write_cost + model_.levels[b].read_cost;
        });
        bounds_.push_back(0); // cumulative slots along order_
        for (const std::size_t i : order_) {
            const std::uint64_t slots = model_.levels[i].slots == level_spec::unlimited
                                            ? unlimited_slots
                                            : std::min(static_cast<std::uint64_t>(model_.levels[i].slots), most);
            bounds_.push_back(std::min(most, bounds_.back() + slots));
        }
    }

    /// Prices the k of each range (bounds[j], bounds[j+1]]: every k where the range is short, else 32 samples and
    /// a refinement around the best of them.
    void search_ranges()
    {
        constexpr std::uint64_t samples = 32;
        for (std::size_t j = 0; j + 1 < bounds_.size(); ++j) {
            lo_ = bounds_[j] + 1;
            hi_ = bounds_[j + 1];
            if (hi_ < lo_)
                continue;
            memo_.tasks.clear();
            // Most slots first: they need the fewest tasks, and their cost bounds the forward steps of the others.
            if (hi_ - lo_ < 2 * samples) {
                for (std::uint64_t k = hi_; k >= lo_; --k)
                    price(k);
                continue;
            }
            // Coarse samples, then halve the spacing around the best of this range.
            std::uint64_t spacing = (hi_ - lo_) / samples;
            std::uint64_t at = hi_;
            double at_cost = price(hi_);
            for (std::uint64_t k = lo_; k < hi_; k += spacing)
                if (const double c = price(k); c < at_cost) {
                    at = k;
                    at_cost = c;
                }
            while (spacing > 1) {
                spacing /= 2;
                for (const std::uint64_t k : {at - std::min(at, spacing), at + spacing})
                    if (const double c = price(k); c < at_cost && k >= lo_ && k <= hi_) {
                        at = k;
                        at_cost = c;
                    }
            }
        }
    }

    /// Revolve on one level alone with all its slots (an unlimited level: 2^20), counted in closed form: a plan
    /// for the whole store that needs no work, so no plan made within any work limit is dearer.
    void try_single_levels()
    {
        const auto most = static_cast<std::uint64_t>(steps_ - 1);
        for (std::size_t level = 0; level < n_; ++level) {
            const std::uint64_t k =
                std::min({static_cast<std::uint64_t>(model_.levels[level].slots), most, std::uint64_t{1} << 20});
            schedule_cost c;
            try {
                c = revolve(steps_, static_cast<slot_t>(k)).cost();
            } catch (const overflow_error&) {
                continue;
            }
            const level_cost on_level =
                c.levels.empty() ? level_cost{c.stores, c.restores, c.peak_slots} : c.levels.front();
            c.levels.assign(n_, {});
            c.levels[level] = on_level;
            c.predicted_cost = predicted_cost(c, model_);
            if (best_ && c.predicted_cost >= best_->outer.predicted_cost)
                continue;
            std::vector<std::uint64_t> use(n_, 0);
            use[level] = k;
            keep(c, stack_levels(model_, use));
        }
    }

    [[nodiscard]] plan_ptr best() const { return best_; }

private:
    static constexpr std::uint64_t unlimited_slots = 1024;
    static constexpr std::size_t max_tasks = 100'000;

    /// How many slots of each level the cheapest k take.
    [[nodiscard]] std::vector<std::uint64_t> use_of(std::uint64_t k) const
    {
        std::vector<std::uint64_t> use(n_, 0);
        for (std::size_t j = 0; j < n_; ++j)
            use[order_[j]] = std::min(k, bounds_[j + 1]) - std::min(k, bounds_[j]);
        return use;
    }

    void keep(const schedule_cost& c, const stacked_layout& layout)
    {
        best_ = fresh_plan(base_);
        best_->used = multilevel::method::near_optimal;
        best_->shape = multilevel_shape::stacked;
        best_->outer = c;
        best_->layout = layout;
        best_->outer_slots = layout.slots();
    }

    /// The predicted cost of k slots (infinite outside the current range, or where it cannot be counted); keeps
    /// the plan where it is the cheapest so far.
    double price(std::uint64_t k)
    {
        if (k < lo_ || k > hi_)
            return infinity;
        if (const auto it = priced_.find(k); it != priced_.end())
            return it->second;
        // Revolve's forward steps over k slots, in closed form, are the plan's; when they alone cost more than
        // the best plan so far, or leave 64 bits, its tasks are not counted.
        double least = infinity;
        try {
            least =
                model_.step_cost * static_cast<double>(revolve(steps_, static_cast<slot_t>(k)).cost().forward_steps) +
                model_.reverse_cost * static_cast<double>(steps_);
        } catch (const overflow_error&) { // NOLINT(bugprone-empty-catch): infinite
        }
        if (least == infinity || (best_ && least >= best_->outer.predicted_cost)) {
            priced_.emplace(k, least);
            return least;
        }
        if (tasks_left_ == 0)
            return infinity;
        const stacked_layout layout = stack_levels(model_, use_of(k));
        std::size_t tasks = 0;
        const std::optional<schedule_cost> c =
            stacked_cost(steps_, model_, layout, std::min(max_tasks, tasks_left_), &tasks, &memo_);
        tasks_left_ -= std::min(tasks_left_, tasks);
        table_work_meter() += stacked_task_work * tasks;
        const double cost = c ? c->predicted_cost : infinity;
        priced_.emplace(k, cost);
        if (c && (!best_ || cost < best_->outer.predicted_cost))
            keep(*c, layout);
        return cost;
    }

    const multilevel_plan& base_;
    const cost_model& model_;
    const step_t steps_;
    const std::size_t n_;
    std::size_t tasks_left_ = 0;
    std::vector<std::size_t> order_;
    std::vector<std::uint64_t> bounds_;
    std::unordered_map<std::uint64_t, double> priced_;
    plan_ptr best_;
    // The k of one range (bounds[j], bounds[j+1]] share their dearest level, so their tasks' counts (see
    // stacked_memo); the memo is begun afresh for each range.
    stacked_memo memo_;
    std::uint64_t lo_ = 1;
    std::uint64_t hi_ = 0;
};

} // namespace

// Revolve over the cheapest k slots of all levels, the dearest at the bottom of its stack (see
// multilevel_stacked.hpp), for the k that predicts least. Every k is tried where the levels hold few slots;
// beyond, every level boundary, 32 points between two boundaries and a refinement around the best. An
// unlimited level offers at most `unlimited_slots` (more rarely pays: their stores are dear, and the spine
// serves such levels). Null when no k can be counted within the limits.
plan_ptr plan_stacked(const multilevel_plan& base, std::size_t least_tasks)
{
    if (base.steps < 2)
        return nullptr;
    stacked_search search(base, least_tasks);
    search.search_ranges();
    search.try_single_levels();
    return search.best();
}

} // namespace remat::detail
