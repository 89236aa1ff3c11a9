#include "taped_simulator.hpp"

#include <algorithm>

namespace remat::test {

taped_simulator::taped_simulator(step_t steps, slot_t units, slot_t tape_units, slot_t rerun_units)
    : steps_(steps), units_(units), tape_units_(tape_units), rerun_units_(rerun_units), next_reverse_(steps - 1)
{
}

std::optional<std::string> taped_simulator::fail(std::string why)
{
    broken_ = true;
    return why;
}

slot_t taped_simulator::held_units() const
{
    return static_cast<slot_t>(slots_.size()) + static_cast<slot_t>(tapes_.size()) * tape_units_;
}

std::optional<std::string> taped_simulator::apply(const action& a)
{
    if (broken_)
        return "the stream was already illegal";
    if (const auto* x = std::get_if<advance>(&a)) {
        if (!current_ || *current_ != x->from)
            return fail("advance from x_" + std::to_string(x->from) + " but that is not the current state");
        if (x->to <= x->from)
            return fail("advance must move forward");
        if (x->taped) {
            if (x->to != x->from + 1)
                return fail("a taped advance runs one step");
            if (x->from > next_reverse_)
                return fail("a tape of a step already reversed");
            if (tapes_.contains(x->from))
                return fail("the tape of step " + std::to_string(x->from) + " is held already");
            tapes_.insert(x->from);
            ++counts_.taped_steps;
        } else if (x->to > next_reverse_) {
            return fail("advance past the next step to reverse (" + std::to_string(next_reverse_) + ")");
        }
        counts_.forward_steps += static_cast<std::uint64_t>(x->to - x->from);
        current_ = x->to;
    } else if (const auto* s = std::get_if<store>(&a)) {
        if (s->level != 0 || s->slot < 0)
            return fail("store outside level 0");
        if (slots_.contains(s->slot))
            return fail("store into an occupied slot");
        if (!current_ || *current_ != s->step)
            return fail("store of x_" + std::to_string(s->step) + " but that is not the current state");
        slots_[s->slot] = s->step;
        ++counts_.stores;
    } else if (const auto* r = std::get_if<restore>(&a)) {
        const auto found = slots_.find(r->slot);
        if (r->level != 0 || found == slots_.end() || found->second != r->step)
            return fail("restore of x_" + std::to_string(r->step) + ", which that slot does not hold");
        current_ = r->step;
        ++counts_.restores;
    } else if (const auto* f = std::get_if<free_slot>(&a)) {
        if (f->level != 0 || slots_.erase(f->slot) == 0)
            return fail("free of an empty slot");
    } else if (const auto* v = std::get_if<reverse>(&a)) {
        if (v->step != next_reverse_)
            return fail("reverse out of order (expected " + std::to_string(next_reverse_) + ")");
        if (tapes_.erase(v->step) == 1)
            ++counts_.tape_reverses;
        else if (current_ && *current_ == v->step) {
            ++counts_.reruns;
            const bool input_stored =
                std::ranges::any_of(slots_, [&](const auto& slot) { return slot.second == v->step; });
            const slot_t during = held_units() + rerun_units_ - (rerun_units_ > 0 && input_stored ? 1 : 0);
            if (during > units_)
                return fail("reverse " + std::to_string(v->step) + " re-runs its step holding " +
                            std::to_string(during) + " units, more than " + std::to_string(units_));
            counts_.peak_units = std::max(counts_.peak_units, during);
        } else
            return fail("reverse " + std::to_string(v->step) + " with neither x_" + std::to_string(v->step) +
                        " current nor its tape held");
        --next_reverse_;
        current_.reset();
    }
    if (held_units() > units_)
        return fail("holds " + std::to_string(held_units()) + " units, more than " + std::to_string(units_));
    counts_.peak_slots = std::max(counts_.peak_slots, static_cast<slot_t>(slots_.size()));
    counts_.peak_tapes = std::max(counts_.peak_tapes, static_cast<std::uint64_t>(tapes_.size()));
    counts_.peak_units = std::max(counts_.peak_units, held_units());
    return std::nullopt;
}

std::optional<std::string> taped_simulator::finish()
{
    if (broken_)
        return "the stream was illegal";
    if (next_reverse_ != -1)
        return "steps 0.." + std::to_string(next_reverse_) + " were never reversed";
    if (!slots_.empty() || !tapes_.empty())
        return "snapshots or tapes still held at the end";
    if (counts_.tape_reverses + counts_.reruns != static_cast<std::uint64_t>(steps_))
        return "reverse count differs from T";
    return std::nullopt;
}

} // namespace remat::test
