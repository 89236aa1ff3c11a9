// The online schedule: forward decisions from detail::online_placement, then the reverse sweep as offline
// binomial schedules on the segments between the kept states, last segment first.
//
// Segment i (from x_0) starts at snapshot c_i and ends where the next one starts (the last segment at
// x_{T-1}, which the loop reverses where it stands, or at x_T when the loop learned its end only there).
// While it runs, c_0..c_{i-1} are still held, so it has s-i slots, c_i's own included: exactly the slots
// an offline schedule with that cut would give it. revolve(l, s-i) is replayed on it with its slot 0
// mapped to c_i's slot (the initial `store 0 0 0` is dropped: x_{c_i} is already stored and is restored
// first) and its other slots mapped to free ones.
#include "remat/schedule/online_revolve.hpp"

#include "action_rewrite.hpp"

#include "remat/detail/checked_math.hpp"
#include "remat/detail/validate.hpp"
#include "remat/error.hpp"
#include "remat/schedule/binomial.hpp"

#include <algorithm>
#include <limits>
#include <string>

namespace remat {
namespace {

// cost()'s work past level one: the replay's decisions, and each snapshot held at the end kept in a list (48 bytes)
// and its segment priced by a revolve count of a few hundred ns (1.6*10^7 slots took 8 s and 734 MB within a limit
// that counted one unit per slot).
std::uint64_t work_past_level_one(std::uint64_t replayed, slot_t slots)
{
    return detail::add_saturated(
        replayed, detail::mul_saturated(static_cast<std::uint64_t>(slots), online_revolve::work_per_slot));
}

// Whether cost() counts `decisions` in closed form, with no replay: every state kept (decisions <= slots), or the
// wave of level one. cost_work is 0 exactly there.
bool counted_in_closed_form(slot_t slots, step_t decisions)
{
    return decisions <= slots || (slots >= 2 && decisions <= detail::online_placement::wave_end(slots));
}

} // namespace

online_revolve::online_revolve(slot_t slots) : slots_(slots)
{
    detail::require_positive_slots(slots);
}

online_revolve::cursor_type online_revolve::cursor() const
{
    cursor_type c;
    c.place_ = detail::online_placement(slots_);
    c.phase_ = cursor_type::phase::forward;
    return c;
}

void online_revolve::cursor_type::answer(bool last)
{
    if (!awaiting_answer())
        throw schedule_error(phase_ == phase::forward
                                 ? "answer about step " + std::to_string(position_) +
                                       " while actions are still queued: take them with next() first"
                                 : std::string("answer after the loop has ended"));
    const step_t k = position_;
    if (last) {
        steps_ = k + 1;
        queue_.push(reverse{k});
        start_reverse(k);
        return;
    }
    if (k == std::numeric_limits<step_t>::max() - 1)
        throw argument_error("the loop passed 2^63-1 steps, the most a step count can hold");
    const detail::online_placement::decision d = place_.decide(k);
    if (d.evicts)
        queue_.push(free_slot{0, d.evicted_slot});
    if (d.store)
        queue_.push(store{0, d.slot, k});
    queue_.push(advance{k, k + 1});
    position_ = k + 1;
}

void online_revolve::cursor_type::end_state()
{
    if (!awaiting_answer())
        throw schedule_error(phase_ == phase::forward
                                 ? "end_state at x_" + std::to_string(position_) +
                                       " while actions are still queued: take them with next() first"
                                 : std::string("end_state after the loop has ended"));
    if (position_ < 1)
        throw schedule_error("end_state at x_0: a loop that learns its end afterwards runs at least one step");
    steps_ = position_;
    start_reverse(position_);
}

void online_revolve::cursor_type::start_reverse(step_t end)
{
    phase_ = phase::reverse;
    node_ = place_.tail();
    index_ = static_cast<std::int64_t>(place_.size()) - 1;
    segment_end_ = end;
    in_segment_ = false;
    fresh_ = static_cast<slot_t>(place_.size());
    free_.clear();
}

slot_t online_revolve::cursor_type::take_slot()
{
    if (!free_.empty()) {
        const slot_t s = free_.back();
        free_.pop_back();
        return s;
    }
    return fresh_++;
}

void online_revolve::cursor_type::push_translated(const action& a)
{
    const step_t base = place_.at(node_).position;
    auto slot = [&](slot_t j) { return j == 0 ? start_slot_ : extra_[static_cast<std::size_t>(j - 1)]; };
    queue_.push(detail::relabelled(detail::rebased(a, base),
                                   [&](level_t, slot_t j) { return std::pair{level_t{0}, slot(j)}; }));
}

void online_revolve::cursor_type::start_segment()
{
    const detail::online_placement::node& n = place_.at(node_);
    const step_t length = segment_end_ - n.position;
    const slot_t sigma = place_.slots() - static_cast<slot_t>(index_);
    start_slot_ = n.slot;
    queue_.push(restore{0, n.slot, n.position});
    if (length == 1) {
        queue_.push(reverse{n.position});
        queue_.push(free_slot{0, n.slot});
        finish_segment();
        return;
    }
    const slot_t used = std::min<slot_t>(sigma, length - 1);
    extra_.clear();
    for (slot_t j = 1; j < used; ++j)
        extra_.push_back(take_slot());
    sub_ = revolve(length, sigma).cursor();
    action first;
    (void)sub_.next(first); // `store 0 0 0`: x_{c_i} is stored already
    in_segment_ = true;
}

void online_revolve::cursor_type::finish_segment()
{
    // The sub-schedule freed every slot it used; c_i's own slot is free too now.
    for (const slot_t s : extra_)
        free_.push_back(s);
    extra_.clear();
    free_.push_back(start_slot_);
    in_segment_ = false;
    segment_end_ = place_.at(node_).position;
    node_ = place_.at(node_).prev;
    --index_;
}

void online_revolve::cursor_type::refill()
{
    if (in_segment_) {
        action a;
        if (sub_.next(a)) {
            push_translated(a);
            return;
        }
        finish_segment();
    }
    if (node_ < 0) {
        phase_ = phase::done;
        return;
    }
    start_segment();
}

online_replay online_revolve::replay(step_t steps, online_end end) const
{
    return online_replay(*this, steps, end);
}

schedule_cost online_revolve::cost(step_t steps, online_end end, std::uint64_t work_limit) const
{
    detail::require_positive_steps(steps);
    const step_t decisions = end == online_end::at_last_step ? steps - 1 : steps;
    schedule_cost c;
    if (decisions <= slots_) {
        // Every state the sweep passed is kept and every segment is one step long (no cut to list, so that
        // huge slot counts cost no memory).
        const auto d = static_cast<std::uint64_t>(decisions);
        c.steps = steps;
        c.reverse_steps = static_cast<std::uint64_t>(steps);
        c.forward_steps = c.stores = c.restores = d;
        c.peak_slots = decisions;
        c.repetition = d > 0 ? 1 : 0;
        finish_single_level(c);
        return c;
    }
    if (counted_in_closed_form(slots_, decisions)) {
        // The wave (level one; past the branch above): every segment has at most one step more than its slots, so each
        // reverses in one sweep that stores all its states but the last (a segment of l >= 2 steps: l-1 forward steps,
        // l-1 stores but its start's, l restores, l-1 slots; of one step: its restore). Summed over the s segments that
        // cover [0, decisions), in closed form: no snapshot is listed.
        const auto d = static_cast<std::uint64_t>(decisions);
        const auto s = static_cast<std::uint64_t>(slots_);
        const detail::online_placement::wave_cut cut = detail::online_placement::wave_counts(slots_, decisions);
        c.steps = steps;
        c.reverse_steps = static_cast<std::uint64_t>(steps);
        c.forward_steps = d + (d - s); // the sweep's d, and l-1 per segment: d - s in all
        c.stores = cut.stores + (d - s) - cut.long_segments;
        c.restores = d;
        c.peak_slots = slots_; // every segment i (from x_0) with l >= 2 steps holds i + l-1 = s at its peak
        c.repetition = cut.long_segments > 0 ? 2 : 1;
        finish_single_level(c);
        return c;
    }
    // No closed form is known beyond level 1: refuse a replay that would run for long, before starting it.
    const std::uint64_t replayed = replay_decisions(steps);
    if (replayed > work_limit)
        throw argument_error("online_revolve(" + std::to_string(slots_) + ").cost(" + std::to_string(steps) +
                             ") needs a replay of about " + std::to_string(replayed) +
                             " store decisions, more than the work limit of " + std::to_string(work_limit) +
                             "; use more slots or fewer steps, or raise the limit");
    if (work_past_level_one(replayed, slots_) > work_limit) // cost_work(steps, end), its replay counted once
        throw argument_error("online_revolve(" + std::to_string(slots_) + ").cost(" + std::to_string(steps) +
                             ") lists the " + std::to_string(slots_) + " snapshots held at the end past level one (" +
                             std::to_string(work_per_slot) + " units each), more than the work limit of " +
                             std::to_string(work_limit) +
                             "; use fewer slots (or at least C(s+2,2)-1 decisions, which cost nothing to count), or "
                             "raise the limit");
    c.steps = steps;
    c.reverse_steps = static_cast<std::uint64_t>(steps);
    c.forward_steps = static_cast<std::uint64_t>(decisions);
    c.repetition = decisions > 0 ? 1 : 0;
    // Segment i runs from the i-th snapshot kept to the next (the last to x_decisions) with σ = s - i slots.
    // Taken one at a time as the positions arrive: millions of slots would otherwise cost hundreds of MB.
    std::size_t index = 0;
    step_t start = -1;
    const auto segment = [&](step_t stop) {
        const auto i = static_cast<slot_t>(index++);
        const step_t length = stop - start;
        const slot_t sigma = slots_ - i;
        slot_t used = 1;
        if (length == 1) {
            c.restores += 1;
        } else {
            const schedule_cost part = revolve(length, sigma).cost();
            c.forward_steps = detail::checked_add(c.forward_steps, part.forward_steps, "the number of forward steps");
            c.stores += part.stores - 1;
            c.restores += part.restores + 1;
            c.repetition = std::max(c.repetition, 1 + part.repetition);
            used = part.peak_slots;
        }
        c.peak_slots = std::max(c.peak_slots, i + used);
    };
    const std::uint64_t forward_stores =
        detail::online_placement::visit_positions(slots_, decisions, [&](step_t position) {
            if (start >= 0)
                segment(position);
            start = position;
        });
    c.stores += forward_stores;
    if (start >= 0)
        segment(decisions);
    c.peak_slots = std::max(c.peak_slots, static_cast<slot_t>(index));
    finish_single_level(c);
    return c;
}

std::uint64_t online_revolve::cost_work(step_t steps, online_end end) const
{
    detail::require_positive_steps(steps);
    const step_t decisions = end == online_end::at_last_step ? steps - 1 : steps;
    if (counted_in_closed_form(slots_, decisions))
        return 0;
    return work_past_level_one(replay_decisions(steps), slots_);
}

std::uint64_t online_revolve::replay_decisions(step_t steps) const
{
    detail::require_positive_steps(steps);
    const auto s = static_cast<std::uint64_t>(slots_);
    const auto t = static_cast<std::uint64_t>(steps);
    const std::uint64_t level_two = binomial::max_steps(slots_, 2);
    if (s == 1 || t <= level_two)
        return 0;
    // Level L spans the decisions [β(s,L)-1, β(s,L+1)-1): at most one per L+1 steps plus its s-1 cut
    // points. Summed level by level over the first levels; past them (only a handful of slots and a huge T:
    // s = 2 has about sqrt(2T) levels, and summing 1.4*10^7 of them took 0.2-0.4 s a call) levels [a, 2a) at
    // once, each bounded by its steps over a+1, under twice the level-by-level sum (floors aside): O(log r).
    const std::uint64_t levels = binomial::repetition_number(steps, slots_); // the last level is r-1
    constexpr std::uint64_t summed_levels = 4096;
    std::uint64_t total = 0;
    std::uint64_t begin = level_two; // β(s, L) for L = 2
    std::uint64_t level = 2;
    for (; begin < t && level < summed_levels; ++level) {
        const std::uint64_t end = detail::mul_div_saturated(begin, s + level + 1, level + 1); // β(s, L+1)
        const std::uint64_t length = std::min(end, t) - begin;
        total = detail::checked_add(total, length / (level + 1) + s, "the number of store decisions");
        begin = end;
    }
    while (begin < t) {
        const std::uint64_t next = std::min(2 * level, levels); // levels [level, next)
        const std::uint64_t end = binomial::max_steps(slots_, next);
        const std::uint64_t length = std::min(end, t) - begin;
        total = detail::add_saturated(
            total, detail::add_saturated(length / (level + 1), detail::mul_saturated(s, next - level)));
        begin = end;
        level = next;
    }
    return total;
}

} // namespace remat
