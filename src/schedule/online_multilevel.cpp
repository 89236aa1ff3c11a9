#include "remat/schedule/online_multilevel.hpp"

#include "remat/error.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

namespace remat {
namespace {

// Predicted cost of one full segment of `period` steps: its forward sweep with online placement (the
// spill that starts it, the fast stores a later spill discards) and its reverse by revolve with the start
// read from the slow level. Enumerates both (O(period * repetition)).
double segment_cost(const cost_model& m, slot_t fast, step_t period)
{
    const level_spec& f = m.levels[0];
    const level_spec& s = m.levels[1];
    double cost = s.write_cost + s.read_cost; // the spill, and the read that starts the reverse
    auto c = online_revolve(fast + 1).cursor();
    action a;
    for (step_t k = 0; k < period; ++k) {
        c.answer(false);
        while (c.next(a)) {
            if (const auto* st = std::get_if<store>(&a); st != nullptr && st->step != 0)
                cost += f.write_cost;
            else if (const auto* adv = std::get_if<advance>(&a))
                cost += m.step_cost * static_cast<double>(adv->to - adv->from);
        }
    }
    for (auto r = revolve(period, fast + 1).cursor(); r.next(a);) {
        if (const auto* adv = std::get_if<advance>(&a))
            cost += m.step_cost * static_cast<double>(adv->to - adv->from);
        else if (const auto* st = std::get_if<store>(&a); st != nullptr && st->step != 0)
            cost += f.write_cost;
        else if (const auto* re = std::get_if<restore>(&a))
            cost += re->step == 0 ? s.read_cost : f.read_cost;
    }
    return cost;
}

step_t choose_period(const cost_model& m, slot_t fast, step_t max_period)
{
    step_t best = 1;
    double best_rate = std::numeric_limits<double>::infinity();
    auto consider = [&](step_t p) {
        const double rate = segment_cost(m, fast, p) / static_cast<double>(p);
        if (rate < best_rate) {
            best_rate = rate;
            best = p;
        }
    };
    // Every period up to 64, then a geometric grid (ratio 1.1) up to max_period, and max_period itself.
    step_t p = 1;
    for (; p <= std::min<step_t>(64, max_period); ++p)
        consider(p);
    for (double q = 64 * 1.1; q < static_cast<double>(max_period); q *= 1.1)
        consider(static_cast<step_t>(q));
    if (max_period > 64)
        consider(max_period);
    return best;
}

} // namespace

online_multilevel::online_multilevel(const cost_model& model, const options& opts) : model_(model)
{
    if (model.levels.size() != 2)
        throw argument_error("online_multilevel needs a model of two levels (fast, slow), got " +
                             std::to_string(model.levels.size()));
    validate(model);
    if (model.levels[0].slots == level_spec::unlimited)
        throw argument_error("online_multilevel's fast level (" + model.levels[0].name +
                             ") needs a finite number of slots, got unlimited");
    if (model.levels[0].slots > (slot_t{1} << 31))
        throw argument_error("online_multilevel's fast level (" + model.levels[0].name +
                             ") may have at most 2^31 slots, got " + std::to_string(model.levels[0].slots));
    if (opts.period < 0)
        throw argument_error("online_multilevel period must be at least 1 (or 0: chosen from the model), got " +
                             std::to_string(opts.period));
    if (opts.max_period < 1)
        throw argument_error("online_multilevel max_period must be at least 1, got " + std::to_string(opts.max_period));
    period_ = opts.period > 0 ? opts.period : choose_period(model_, model_.levels[0].slots, opts.max_period);
}

std::vector<slot_t> online_multilevel::slot_bounds() const
{
    return {model_.levels[0].slots, model_.levels[1].slots}; // level_spec::unlimited is unlimited_slots too
}

online_multilevel::cursor_type online_multilevel::cursor() const
{
    cursor_type c;
    c.fast_slots_ = model_.levels[0].slots;
    c.slow_slots_ = model_.levels[1].slots;
    c.period_ = period_;
    c.phase_ = cursor_type::phase::forward;
    c.online_ = online_revolve(c.fast_slots_ + 1).cursor();
    c.starts_ = {0};
    c.map_.assign(static_cast<std::size_t>(c.fast_slots_) + 1, {});
    for (slot_t f = c.fast_slots_; f-- > 0;)
        c.fast_free_.push_back(f); // slot 0 is taken first
    c.queue_.reserve(static_cast<std::size_t>(c.fast_slots_) + 16);
    return c;
}

void online_multilevel::cursor_type::push(const action& a)
{
    queue_.push_back(a);
}

bool online_multilevel::cursor_type::next(action& out)
{
    for (;;) {
        if (head_ < queue_.size()) {
            out = queue_[head_++];
            if (head_ == queue_.size()) {
                queue_.clear(); // keeps its capacity
                head_ = 0;
            }
            return true;
        }
        action a;
        switch (phase_) {
        case phase::forward:
        case phase::done:
            return false;
        case phase::last_segment:
            if (online_.next(a)) {
                translate(a, false);
            } else {
                release_segment();
                phase_ = start_earlier_segment() ? phase::earlier_segments : phase::done;
            }
            break;
        case phase::earlier_segments:
            if (revolve_.next(a)) {
                translate(a, true);
            } else {
                release_segment();
                phase_ = start_earlier_segment() ? phase::earlier_segments : phase::done;
            }
            break;
        }
    }
}

void online_multilevel::cursor_type::answer(bool last)
{
    if (phase_ != phase::forward || head_ != queue_.size())
        throw schedule_error(
            "online_multilevel: no answer is awaited (actions are still queued or the loop has ended)");
    if (!last && position_ - offset_ >= period_ && static_cast<slot_t>(starts_.size()) < slow_slots_)
        spill();
    online_.answer(last);
    drain_online();
    if (last) {
        steps_ = position_ + 1;
        phase_ = phase::last_segment;
    } else {
        position_ = offset_ + online_.position();
    }
}

void online_multilevel::cursor_type::end_state()
{
    if (phase_ != phase::forward || head_ != queue_.size())
        throw schedule_error(
            "online_multilevel: no answer is awaited (actions are still queued or the loop has ended)");
    online_.end_state(); // throws at x_0; later segments start with an answer(false), so never at their start
    drain_online();
    steps_ = position_;
    phase_ = phase::last_segment;
}

void online_multilevel::cursor_type::drain_online()
{
    action a;
    while (online_.next(a)) {
        translate(a, false);
        if (phase_ == phase::forward && std::holds_alternative<reverse>(a))
            break; // the loop has ended: the rest comes lazily from next()
    }
}

// The fast level is "full" for this segment: its snapshots are dropped, the current state goes to the slow
// level as the start of a new segment (its store is online_revolve's store of the new segment's x_0).
void online_multilevel::cursor_type::spill()
{
    for (mapped& m : map_) {
        if (m.level == 0) {
            push(free_slot{0, m.slot});
            fast_free_.push_back(m.slot);
        }
        m.level = -1;
    }
    start_held_ = false;
    offset_ = position_;
    starts_.push_back(offset_);
    online_ = online_revolve(fast_slots_ + 1).cursor();
}

void online_multilevel::cursor_type::translate(const action& a, bool start_on_slow)
{
    const auto slow_slot = static_cast<slot_t>(starts_.size() - 1);
    std::visit(
        [&](const auto& x) {
            using A = std::decay_t<decltype(x)>;
            if constexpr (std::is_same_v<A, advance>) {
                push(advance{x.from + offset_, x.to + offset_});
            } else if constexpr (std::is_same_v<A, reverse>) {
                push(reverse{x.step + offset_});
            } else if constexpr (std::is_same_v<A, store>) {
                mapped& m = map_.at(static_cast<std::size_t>(x.slot));
                if (x.step == 0) { // the segment's start lives on the slow level
                    m = {1, slow_slot};
                    if (!start_on_slow)
                        push(store{1, slow_slot, offset_});
                    start_held_ = true;
                    return;
                }
                if (fast_free_.empty())
                    throw schedule_error("online_multilevel: no free fast slot (internal error)");
                m = {0, fast_free_.back()};
                fast_free_.pop_back();
                push(store{0, m.slot, x.step + offset_});
            } else if constexpr (std::is_same_v<A, restore>) {
                const mapped& m = map_.at(static_cast<std::size_t>(x.slot));
                push(restore{m.level, m.slot, x.step + offset_});
            } else {
                mapped& m = map_.at(static_cast<std::size_t>(x.slot));
                push(free_slot{m.level, m.slot});
                if (m.level == 0)
                    fast_free_.push_back(m.slot);
                else
                    start_held_ = false;
                m.level = -1;
            }
        },
        a);
}

// A segment's reverse is over: free what its sub-schedule left held, and its start on the slow level.
void online_multilevel::cursor_type::release_segment()
{
    for (mapped& m : map_) {
        if (m.level == 0) {
            push(free_slot{0, m.slot});
            fast_free_.push_back(m.slot);
        }
        m.level = -1;
    }
    if (start_held_)
        push(free_slot{1, static_cast<slot_t>(starts_.size() - 1)});
    start_held_ = false;
    starts_.pop_back();
}

// The segment before the one just reversed: read its start from the slow level, reverse it with revolve.
bool online_multilevel::cursor_type::start_earlier_segment()
{
    if (starts_.empty())
        return false;
    const step_t end = offset_;
    offset_ = starts_.back();
    const auto slow_slot = static_cast<slot_t>(starts_.size() - 1);
    start_held_ = true;
    push(restore{1, slow_slot, offset_});
    revolve_ = revolve(end - offset_, fast_slots_ + 1).cursor();
    return true;
}

online_multilevel_replay online_multilevel::replay(step_t steps, online_end end) const
{
    return {*this, steps, end};
}

schedule_cost online_multilevel::cost(step_t steps, online_end end) const
{
    schedule_cost c;
    c.steps = steps;
    c.levels.assign(2, {});
    std::vector<slot_t> held(2, 0);
    // Advances per step, for the repetition number (only where T fits a table of 2^24 counters).
    const bool track = steps <= (step_t{1} << 24);
    std::vector<std::uint32_t> runs(track ? static_cast<std::size_t>(steps) : 0, 0);
    slot_t total_held = 0;
    for (const action& a : replay(steps, end)) {
        std::visit(
            [&](const auto& x) {
                using A = std::decay_t<decltype(x)>;
                if constexpr (std::is_same_v<A, advance>) {
                    c.forward_steps += static_cast<std::uint64_t>(x.to - x.from);
                    if (track)
                        for (step_t k = x.from; k < x.to; ++k)
                            c.repetition = std::max<std::uint64_t>(c.repetition, ++runs[static_cast<std::size_t>(k)]);
                } else if constexpr (std::is_same_v<A, reverse>) {
                    ++c.reverse_steps;
                } else if constexpr (std::is_same_v<A, store>) {
                    auto& l = c.levels[static_cast<std::size_t>(x.level)];
                    ++l.stores;
                    ++c.stores;
                    l.peak_slots = std::max(l.peak_slots, ++held[static_cast<std::size_t>(x.level)]);
                    c.peak_slots = std::max(c.peak_slots, ++total_held);
                } else if constexpr (std::is_same_v<A, restore>) {
                    ++c.levels[static_cast<std::size_t>(x.level)].restores;
                    ++c.restores;
                } else {
                    --held[static_cast<std::size_t>(x.level)];
                    --total_held;
                }
            },
            a);
    }
    c.predicted_cost = predicted_cost(c, model_);
    return c;
}

} // namespace remat
