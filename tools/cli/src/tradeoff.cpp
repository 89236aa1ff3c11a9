#include "tradeoff.hpp"

#include "remat/cli/parse.hpp"

#include "remat/error.hpp"
#include "remat/schedule/multilevel.hpp"
#include "remat/schedule/multilevel_model.hpp"
#include "remat/schedule/online_revolve.hpp"
#include "remat/schedule/revolve.hpp"
#include "remat/schedule/uniform.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <set>
#include <utility>

namespace remat::cli {
namespace {

// Single-level schedules are priced as `remat plan` prices them: one level of free slots.
cost_model single_level_model(slot_t slots, double reverse_cost)
{
    cost_model m = cost_model::single_level(std::max<slot_t>(slots, 1));
    m.reverse_cost = reverse_cost;
    return m;
}

} // namespace

std::string_view schedule_name(tradeoff_schedule s)
{
    switch (s) {
    case tradeoff_schedule::revolve:
        return "revolve";
    case tradeoff_schedule::online:
        return "online";
    case tradeoff_schedule::uniform:
        return "uniform";
    case tradeoff_schedule::sqrt_rule:
        return "sqrt-rule";
    case tradeoff_schedule::store_all:
        return "store-all";
    case tradeoff_schedule::multilevel:
        return "multilevel";
    }
    return "?";
}

tradeoff::tradeoff(tradeoff_setup setup) : setup_(std::move(setup))
{
    const step_t t = setup_.steps;
    all_ = std::max<step_t>(t - 1, 1);
    const schedule_cost base = store_all(t, all_).cost();
    baseline_ = predicted_cost(base, single_level_model(all_, setup_.reverse_cost));
    baseline_terms_ = cost_terms(base, single_level_model(all_, setup_.reverse_cost));
    if (!std::isfinite(baseline_)) // every overhead would be inf / inf
        throw usage_error(fmt::format("--reverse-cost {}: store-all's predicted cost ({} forward steps and {} adjoint "
                                      "steps at that cost) passes the largest double, 1.8e308",
                                      setup_.reverse_cost, t - 1, t));
    sqrt_every_ = std::max<step_t>(1, std::llround(std::sqrt(static_cast<double>(t))));
    const schedule_cost c = uniform(t, sqrt_every_).cost();
    sqrt_rule_ = make_row(tradeoff_schedule::sqrt_rule, std::max<slot_t>(c.peak_slots, 1), c,
                          predicted_cost(c, single_level_model(all_, setup_.reverse_cost)));
    sqrt_rule_.every = sqrt_every_;
    if (!setup_.levels.empty())
        (void)row(tradeoff_schedule::multilevel, 1); // a bad level combination fails here, once
}

std::uint64_t tradeoff::baseline_forward_steps() const noexcept
{
    return store_all_forward_steps(setup_.steps);
}

tradeoff_row tradeoff::make_row(tradeoff_schedule schedule, slot_t slots, const schedule_cost& c,
                                double predicted) const
{
    tradeoff_row r;
    r.schedule = schedule;
    r.slots = slots;
    r.cost = c;
    const std::uint64_t base = baseline_forward_steps();
    r.recompute_ratio = base == 0 ? 1.0 : static_cast<double>(c.forward_steps) / static_cast<double>(base);
    r.overhead = baseline_ > 0 ? predicted / baseline_ : 1.0;
    return r;
}

slot_t tradeoff::one_extra_sweep_slots() const
{
    // Revolve's forward steps do not grow with more slots: the least count by bisection.
    const std::uint64_t target = 2 * baseline_forward_steps();
    slot_t lo = 1, hi = all_;
    while (lo < hi) {
        const slot_t mid = lo + (hi - lo) / 2;
        bool within = false;
        try {
            within = revolve(setup_.steps, mid).cost().forward_steps <= target;
        } catch (const overflow_error&) { // beyond 64 bits: certainly more than two sweeps
        }
        if (within)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

std::vector<tradeoff_schedule> tradeoff::schedules() const
{
    std::vector<tradeoff_schedule> s{tradeoff_schedule::revolve, tradeoff_schedule::online, tradeoff_schedule::uniform,
                                     tradeoff_schedule::sqrt_rule, tradeoff_schedule::store_all};
    if (!setup_.levels.empty())
        s.push_back(tradeoff_schedule::multilevel);
    return s;
}

std::vector<slot_t> tradeoff::grid() const
{
    std::set<slot_t> g;
    for (int k = 0;; ++k) {
        // Compared as a double: past 9.2e18 (T near 2^63) llround's result would not fit in 64 bits.
        const double s = std::round(std::pow(10.0, k / 4.0));
        if (s > static_cast<double>(all_))
            break;
        g.insert(static_cast<slot_t>(s));
    }
    g.insert(all_);
    g.insert(std::clamp<slot_t>(std::llround(std::sqrt(static_cast<double>(setup_.steps))), 1, all_));
    g.insert(std::min(sqrt_rule_.slots, all_));
    g.insert(one_extra_sweep_slots());
    g.insert(std::clamp<slot_t>(uniform::min_slots(setup_.steps), 1, all_));
    return {g.begin(), g.end()};
}

cost_model tradeoff::model_for(tradeoff_schedule schedule, slot_t slots) const
{
    if (schedule != tradeoff_schedule::multilevel)
        return single_level_model(slots, setup_.reverse_cost);
    cost_model model;
    model.reverse_cost = setup_.reverse_cost;
    for (const parsed_level& l : setup_.levels)
        model.levels.push_back(l.spec);
    model.levels.front().slots = slots;
    return model;
}

bool tradeoff::reaches(const tradeoff_row& r, const overhead_limit& limit) const
{
    return limit.admits(cost_terms(r.cost, model_for(r.schedule, r.slots)), baseline_terms_);
}

std::optional<tradeoff_row> tradeoff::row(tradeoff_schedule schedule, slot_t slots) const
{
    const step_t t = setup_.steps;
    const cost_model plain = model_for(schedule, slots);
    switch (schedule) {
    case tradeoff_schedule::revolve: {
        const schedule_cost c = revolve(t, slots).cost();
        return make_row(schedule, slots, c, predicted_cost(c, plain));
    }
    case tradeoff_schedule::online:
        return online_row(slots, online_revolve(slots).cost_work(t));
    case tradeoff_schedule::uniform: {
        if (slots < uniform::min_slots(t))
            return std::nullopt;
        const uniform plan = uniform::fit(t, slots);
        const schedule_cost c = plan.cost();
        tradeoff_row r = make_row(schedule, slots, c, predicted_cost(c, plain));
        r.every = plan.every();
        return r;
    }
    case tradeoff_schedule::sqrt_rule:
        return slots == sqrt_rule_.slots ? std::optional(sqrt_rule_) : std::nullopt;
    case tradeoff_schedule::store_all: {
        if (slots != all_)
            return std::nullopt;
        const schedule_cost c = store_all(t, all_).cost();
        return make_row(schedule, slots, c, predicted_cost(c, plain));
    }
    case tradeoff_schedule::multilevel: {
        const schedule_cost c = multilevel(t, plain).cost(); // as `remat plan` plans it;
        return make_row(schedule, slots, c, predicted_cost(c, plain));
    }
    }
    return std::nullopt;
}

tradeoff_row tradeoff::online_row(slot_t slots, std::uint64_t work) const
{
    if (work > online_work_left_)
        throw argument_error(
            fmt::format("counting online revolve with {} slots replays its forward sweep: about {} units of work "
                        "(25 to 55 ns each), more than the {} left of the {} this report spends on online counts "
                        "(0.2 to 0.5 s)",
                        slots, work, online_work_left_, online_work_budget));
    online_work_left_ -= work;
    // `work` is the count's own limit: cost() replays no more than was charged.
    const schedule_cost c = online_revolve(slots).cost(setup_.steps, online_end::at_last_step, work);
    return make_row(tradeoff_schedule::online, slots, c,
                    predicted_cost(c, single_level_model(slots, setup_.reverse_cost)));
}

std::vector<tradeoff_row> tradeoff::rows(std::vector<omitted_row>& omitted,
                                         const std::function<void(std::size_t, std::size_t)>& done) const
{
    std::vector<tradeoff_row> out;
    const std::vector<slot_t> slot_counts = grid();
    const std::vector<tradeoff_schedule> all = schedules();
    const std::size_t total = all.size() * slot_counts.size();
    std::size_t count = 0;
    for (const tradeoff_schedule schedule : all) {
        if (schedule == tradeoff_schedule::sqrt_rule) {
            out.push_back(sqrt_rule_);
            count += slot_counts.size();
            continue;
        }
        // Online counts share one budget: the cheapest are priced first, so that the rows left out are
        // the dearest (the mid-range slot counts at large T), then all are listed in slot order.
        // Each online count's work is counted once, here, and charged once, as its row is priced.
        std::vector<std::size_t> order(slot_counts.size());
        for (std::size_t i = 0; i < order.size(); ++i)
            order[i] = i;
        std::vector<std::uint64_t> work;
        if (schedule == tradeoff_schedule::online) {
            work.resize(slot_counts.size());
            for (std::size_t i = 0; i < work.size(); ++i)
                work[i] = online_revolve(slot_counts[i]).cost_work(setup_.steps);
            std::stable_sort(order.begin(), order.end(),
                             [&](std::size_t a, std::size_t b) { return work[a] < work[b]; });
        }
        std::vector<std::optional<tradeoff_row>> found(slot_counts.size());
        std::vector<std::optional<std::string>> refused(slot_counts.size());
        for (const std::size_t i : order) {
            if (done)
                done(count++, total);
            try {
                found[i] = work.empty() ? row(schedule, slot_counts[i]) : online_row(slot_counts[i], work[i]);
            } catch (const remat::error& e) {
                refused[i] = e.what();
            }
        }
        for (std::size_t i = 0; i < slot_counts.size(); ++i) {
            if (found[i])
                out.push_back(*found[i]);
            else if (refused[i])
                omitted.push_back({schedule, slot_counts[i], *refused[i]});
        }
    }
    if (done)
        done(total, total);
    return out;
}

std::optional<tradeoff_row> tradeoff::least_slots(tradeoff_schedule schedule, const overhead_limit& max_overhead) const
{
    // Each count tried is priced once, its row kept for the answer: an online row priced again would charge the
    // report's online work budget again (and replay its sweep again), multilevel plans take seconds each.
    const auto priced = [&](tradeoff_schedule which, slot_t s) -> std::optional<tradeoff_row> {
        try {
            return row(which, s);
        } catch (const overflow_error&) { // a count beyond 64 bits is beyond any limit
            return std::nullopt;
        }
    };
    const auto within = [&](const std::optional<tradeoff_row>& r) { return r && reaches(*r, max_overhead); };
    switch (schedule) {
    case tradeoff_schedule::sqrt_rule:
        return reaches(sqrt_rule_, max_overhead) ? std::optional(sqrt_rule_) : std::nullopt;
    case tradeoff_schedule::store_all: {
        std::optional<tradeoff_row> r = row(schedule, all_);
        return within(r) ? r : std::nullopt;
    }
    case tradeoff_schedule::revolve:
    case tradeoff_schedule::uniform:
    case tradeoff_schedule::multilevel: {
        std::optional<tradeoff_row> best = priced(schedule, all_); // the row at hi
        if (!within(best))
            return std::nullopt;
        slot_t lo =
            schedule == tradeoff_schedule::uniform ? std::clamp<slot_t>(uniform::min_slots(setup_.steps), 1, all_) : 1;
        slot_t hi = all_;
        while (lo < hi) {
            const slot_t mid = lo + (hi - lo) / 2;
            std::optional<tradeoff_row> r = priced(schedule, mid);
            if (within(r)) {
                hi = mid;
                best = std::move(r);
            } else {
                lo = mid + 1;
            }
        }
        return best;
    }
    case tradeoff_schedule::online: {
        // Online runs at least revolve's forward steps with the same slots (revolve is optimal), so no
        // count below revolve's answer can do; from there, one slot at a time.
        const std::optional<tradeoff_row> offline = least_slots(tradeoff_schedule::revolve, max_overhead);
        if (!offline)
            return std::nullopt;
        for (slot_t s = offline->slots; s <= all_; ++s)
            if (std::optional<tradeoff_row> r = priced(schedule, s); within(r))
                return r;
        return std::nullopt;
    }
    }
    return std::nullopt;
}

std::optional<tradeoff_row> tradeoff::within(tradeoff_schedule schedule, slot_t slots) const
{
    const slot_t s = std::min(slots, all_);
    switch (schedule) {
    case tradeoff_schedule::sqrt_rule:
        return sqrt_rule_.slots <= slots ? std::optional(sqrt_rule_) : std::nullopt;
    case tradeoff_schedule::store_all:
        return all_ <= slots ? row(schedule, all_) : std::nullopt;
    default:
        return row(schedule, s);
    }
}

} // namespace remat::cli
