// remat::evaluate: any single-level schedule priced on a heterogeneous chain, by walking its actions once.
#include "remat/error.hpp"
#include "remat/schedule/any_schedule.hpp"
#include "remat/schedule/chain.hpp"

#include <algorithm>
#include <string>
#include <variant>
#include <vector>

namespace remat {

chain_evaluation evaluate(const chain_model& m, const any_schedule& plan)
{
    if (plan.steps() != m.size())
        throw argument_error("a schedule of " + std::to_string(plan.steps()) + " steps on a chain of " +
                             std::to_string(m.size()));
    chain_evaluation e;
    schedule_cost& c = e.counts;
    c.steps = m.size();
    std::vector<std::uint32_t> advanced(static_cast<std::size_t>(m.size()), 0);
    std::vector<std::int64_t> slot_step; // what each slot of level 0 holds, -1 when free
    std::uint64_t held = 0;
    slot_t slots = 0;
    const auto bad = [](const action& a, const char* why) {
        throw schedule_error("evaluate: " + to_string(a) + " " + why);
    };
    for (const action& a : plan) {
        if (const auto* v = std::get_if<advance>(&a)) {
            for (step_t k = v->from; k < v->to; ++k) {
                e.peak_bytes = std::max(e.peak_bytes, held + std::max(m.state_bytes(k), m.state_bytes(k + 1)));
                e.cost += m.steps[static_cast<std::size_t>(k)].forward;
                ++advanced[static_cast<std::size_t>(k)];
            }
            c.forward_steps += static_cast<std::uint64_t>(v->to - v->from);
        } else if (const auto* s = std::get_if<store>(&a)) {
            if (s->level != 0 || s->slot < 0)
                bad(a, "is not a slot of level 0");
            if (slot_step.size() <= static_cast<std::size_t>(s->slot))
                slot_step.resize(static_cast<std::size_t>(s->slot) + 1, -1);
            if (slot_step[static_cast<std::size_t>(s->slot)] >= 0)
                bad(a, "stores into a slot in use");
            slot_step[static_cast<std::size_t>(s->slot)] = s->step;
            held += m.state_bytes(s->step);
            e.peak_bytes = std::max(e.peak_bytes, held + m.state_bytes(s->step));
            ++c.stores;
            c.peak_slots = std::max(c.peak_slots, ++slots);
        } else if (const auto* r = std::get_if<restore>(&a)) {
            e.peak_bytes = std::max(e.peak_bytes, held + m.state_bytes(r->step));
            ++c.restores;
        } else if (const auto* f = std::get_if<free_slot>(&a)) {
            if (f->level != 0 || f->slot < 0 || static_cast<std::size_t>(f->slot) >= slot_step.size() ||
                slot_step[static_cast<std::size_t>(f->slot)] < 0)
                bad(a, "frees a slot not in use");
            held -= m.state_bytes(slot_step[static_cast<std::size_t>(f->slot)]);
            slot_step[static_cast<std::size_t>(f->slot)] = -1;
            --slots;
        } else {
            const step_t k = std::get<reverse>(a).step;
            e.peak_bytes = std::max(e.peak_bytes, held + m.adjoint_need(k));
            e.cost += m.steps[static_cast<std::size_t>(k)].adjoint;
            ++c.reverse_steps;
        }
    }
    c.repetition = advanced.empty() ? 0 : *std::max_element(advanced.begin(), advanced.end());
    finish_single_level(c);
    c.predicted_cost = e.cost;
    return e;
}

} // namespace remat
