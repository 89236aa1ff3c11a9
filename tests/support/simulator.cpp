#include "simulator.hpp"

#include <algorithm>

namespace remat::test {

simulator::simulator(step_t steps, std::vector<slot_t> capacity, bool track_steps)
    : steps_(steps), capacity_(std::move(capacity)), slots_(capacity_.size()), occupied_(capacity_.size(), 0),
      next_reverse_(steps - 1), advances_(track_steps ? static_cast<std::size_t>(steps) : 0, 0)
{
    counts_.stores_per_level.assign(capacity_.size(), 0);
    counts_.restores_per_level.assign(capacity_.size(), 0);
    counts_.peak_per_level.assign(capacity_.size(), 0);
}

std::optional<std::string> simulator::apply(const action& a)
{
    if (broken_)
        return "the stream was already illegal";
    ++counts_.actions;
    auto fail = [&](std::string message) -> std::optional<std::string> {
        broken_ = true;
        return message;
    };
    auto slot_ref = [&](level_t level, slot_t slot) -> std::optional<step_t>* {
        if (level < 0 || static_cast<std::size_t>(level) >= capacity_.size())
            return nullptr;
        if (slot < 0 || slot >= capacity_[static_cast<std::size_t>(level)])
            return nullptr;
        auto& v = slots_[static_cast<std::size_t>(level)];
        if (static_cast<std::size_t>(slot) >= v.size())
            v.resize(static_cast<std::size_t>(slot) + 1);
        return &v[static_cast<std::size_t>(slot)];
    };
    if (const auto* x = std::get_if<advance>(&a)) {
        if (x->taped)
            return fail("a taped advance: this simulator replays state-only schedules (taped_simulator.hpp)");
        if (!current_)
            return fail("advance with no current state (after a reverse, restore first)");
        if (*current_ != x->from)
            return fail("advance from x_" + std::to_string(x->from) + " but the current state is x_" +
                        std::to_string(*current_));
        if (x->to <= x->from)
            return fail("advance must move forward");
        if (x->to > next_reverse_)
            return fail("advance past the next step to reverse (" + std::to_string(next_reverse_) + ")");
        counts_.forward_steps += static_cast<std::uint64_t>(x->to - x->from);
        if (!advances_.empty())
            for (step_t k = x->from; k < x->to; ++k)
                counts_.max_advances_of_one_step =
                    std::max<std::uint64_t>(counts_.max_advances_of_one_step, ++advances_[static_cast<std::size_t>(k)]);
        current_ = x->to;
    } else if (const auto* s = std::get_if<store>(&a)) {
        auto* slot = slot_ref(s->level, s->slot);
        if (slot == nullptr)
            return fail("no such slot (outside the level's capacity)");
        if (slot->has_value())
            return fail("store into an occupied slot (holding x_" + std::to_string(**slot) + ")");
        if (!current_ || *current_ != s->step)
            return fail("store of x_" + std::to_string(s->step) + " but the current state is not that");
        *slot = s->step;
        const auto L = static_cast<std::size_t>(s->level);
        ++counts_.stores;
        ++counts_.stores_per_level[L];
        ++occupied_[L];
        ++occupied_total_;
        counts_.peak_per_level[L] = std::max(counts_.peak_per_level[L], occupied_[L]);
        counts_.peak_slots = std::max(counts_.peak_slots, occupied_total_);
    } else if (const auto* r = std::get_if<restore>(&a)) {
        auto* slot = slot_ref(r->level, r->slot);
        if (slot == nullptr)
            return fail("no such slot (outside the level's capacity)");
        if (!slot->has_value())
            return fail("restore from an empty slot");
        if (**slot != r->step)
            return fail("restore claims x_" + std::to_string(r->step) + " but the slot holds x_" +
                        std::to_string(**slot));
        current_ = r->step;
        ++counts_.restores;
        ++counts_.restores_per_level[static_cast<std::size_t>(r->level)];
    } else if (const auto* f = std::get_if<free_slot>(&a)) {
        auto* slot = slot_ref(f->level, f->slot);
        if (slot == nullptr)
            return fail("no such slot (outside the level's capacity)");
        if (!slot->has_value())
            return fail("free of an empty slot");
        slot->reset();
        --occupied_[static_cast<std::size_t>(f->level)];
        --occupied_total_;
    } else if (const auto* v = std::get_if<reverse>(&a)) {
        if (v->step != next_reverse_)
            return fail("reverse " + std::to_string(v->step) + " out of order (expected " +
                        std::to_string(next_reverse_) + ")");
        if (!current_ || *current_ != v->step)
            return fail("reverse " + std::to_string(v->step) + " without x_" + std::to_string(v->step) +
                        " as the current state");
        --next_reverse_;
        ++counts_.reverse_steps;
        current_.reset();
    }
    return std::nullopt;
}

std::optional<std::string> simulator::finish()
{
    if (broken_)
        return "the stream was illegal";
    if (next_reverse_ != -1)
        return "steps 0.." + std::to_string(next_reverse_) + " were never reversed";
    if (occupied_total_ != 0)
        return std::to_string(occupied_total_) + " slot(s) still held at the end";
    if (counts_.reverse_steps != static_cast<std::uint64_t>(steps_))
        return "reverse count differs from T";
    return std::nullopt;
}

} // namespace remat::test
