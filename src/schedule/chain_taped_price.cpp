// remat::price_taped_chain (remat/schedule/chain_taped_price.hpp): a plan's peak bytes and cost under the taped
// chain model, walking its actions once and checking each against the model's rules.
#include "remat/schedule/chain_taped_price.hpp"

#include "remat/error.hpp"

#include <algorithm>
#include <optional>
#include <string>
#include <variant>

namespace remat {

taped_chain_price price_taped_chain(const chain_model& c, const std::vector<action>& actions)
{
    validate(c);
    const step_t T = c.size();
    taped_chain_price p;
    std::uint64_t held = 0;
    std::vector<std::optional<step_t>> slot_step; // the state each slot of level 0 holds
    std::vector<std::uint64_t> tape(c.steps.size(), 0);
    std::vector<std::uint64_t> runs(c.steps.size(), 0); // of each step by advances
    slot_t in_use = 0;
    std::optional<step_t> at = 0; // the current state's step; none after a reverse
    std::uint64_t current = c.state_bytes(0);
    step_t next_reverse = T - 1;
    std::size_t i = 0;
    const auto bad = [&](const action& a, const std::string& why) {
        throw argument_error("price_taped_chain: action " + std::to_string(i) + " (" + to_string(a) + ") " + why);
    };
    const auto from_current = [&](const action& a, step_t k) {
        if (at != k)
            bad(a, at ? "needs x_" + std::to_string(k) + " current, where x_" + std::to_string(*at) + " is"
                      : "needs x_" + std::to_string(k) + " current, where no state is (after a reverse)");
    };
    const auto slot_of = [&](const action& a, level_t level, slot_t slot) -> std::optional<step_t>& {
        if (level != 0 || slot < 0 || static_cast<std::size_t>(slot) >= slot_step.size() ||
            !slot_step[static_cast<std::size_t>(slot)])
            bad(a, "names a slot not in use");
        return slot_step[static_cast<std::size_t>(slot)];
    };
    const auto moment = [&](std::uint64_t bytes) { p.peak_bytes = std::max(p.peak_bytes, bytes); };
    moment(current);
    for (; i < actions.size(); ++i) {
        const action& a = actions[i];
        if (const auto* v = std::get_if<advance>(&a)) {
            if (v->from < 0 || v->to <= v->from || v->to > T)
                bad(a, "is not a range of steps of a chain of " + std::to_string(T));
            if (v->taped && v->to != v->from + 1)
                bad(a, "keeps the tape of more than one step");
            from_current(a, v->from);
            // past x_k, k the next step to reverse, only the taped advance of step k (its tape serves reverse k)
            if (v->to > next_reverse + (v->taped ? 1 : 0))
                bad(a, "passes x_" + std::to_string(next_reverse) + ", the next step to reverse's input");
            for (step_t k = v->from; k < v->to; ++k) {
                const chain_step& st = c.steps[static_cast<std::size_t>(k)];
                moment(held + std::max(c.state_bytes(k), c.state_bytes(k + 1)) + (v->taped ? st.adjoint_bytes : 0));
                p.cost += st.forward;
                ++p.forward_steps;
                p.repetition = std::max(p.repetition, ++runs[static_cast<std::size_t>(k)]);
            }
            if (v->taped) {
                std::uint64_t& t = tape[static_cast<std::size_t>(v->from)];
                if (t != 0)
                    bad(a, "keeps a tape of step " + std::to_string(v->from) + " already held");
                ++p.taped_steps;
                t = c.tape_bytes(v->from);
                held += t;
                moment(held + c.state_bytes(v->to));
            }
            at = v->to;
            current = c.state_bytes(v->to);
        } else if (const auto* s = std::get_if<store>(&a)) {
            if (s->level != 0 || s->slot < 0)
                bad(a, "is not a slot of level 0");
            from_current(a, s->step);
            if (s->step >= T)
                bad(a, "stores x_" + std::to_string(T) + ", which no reverse needs");
            if (slot_step.size() <= static_cast<std::size_t>(s->slot))
                slot_step.resize(static_cast<std::size_t>(s->slot) + 1);
            if (slot_step[static_cast<std::size_t>(s->slot)])
                bad(a, "stores into a slot in use");
            slot_step[static_cast<std::size_t>(s->slot)] = s->step;
            ++p.stores;
            p.peak_slots = std::max(p.peak_slots, ++in_use);
            held += c.state_bytes(s->step);
            moment(held + current);
        } else if (const auto* r = std::get_if<restore>(&a)) {
            if (slot_of(a, r->level, r->slot) != r->step)
                bad(a, "names a step its slot does not hold");
            if (r->step > next_reverse)
                bad(a, "restores a state past the next step to reverse, " + std::to_string(next_reverse));
            ++p.restores;
            at = r->step;
            current = c.state_bytes(r->step);
            moment(held + current);
        } else if (const auto* f = std::get_if<free_slot>(&a)) {
            std::optional<step_t>& freed = slot_of(a, f->level, f->slot);
            held -= c.state_bytes(*freed);
            freed.reset();
            --in_use;
        } else {
            const step_t k = std::get<reverse>(a).step;
            if (k != next_reverse)
                bad(a, next_reverse < 0 ? "comes after every step was reversed"
                                        : "is out of order: step " + std::to_string(next_reverse) + " is next");
            const chain_step& st = c.steps[static_cast<std::size_t>(k)];
            std::uint64_t& t = tape[static_cast<std::size_t>(k)];
            if (t != 0) {
                if (at && *at != k + 1)
                    bad(a, "reverses step " + std::to_string(k) + " from its tape with x_" + std::to_string(*at) +
                               " current (only x_" + std::to_string(k + 1) + " or none may be)");
                moment(held);
                p.cost += std::max(0.0, st.adjoint - st.forward);
                held -= t;
                t = 0;
            } else {
                from_current(a, k);
                moment(held + std::max(c.state_bytes(k), c.state_bytes(k + 1)) + st.adjoint_bytes);
                p.cost += st.adjoint;
            }
            --next_reverse;
            at.reset();
            current = 0;
        }
    }
    if (next_reverse >= 0)
        throw argument_error("price_taped_chain: the actions end before step " + std::to_string(next_reverse) +
                             " is reversed");
    for (std::size_t s = 0; s < slot_step.size(); ++s)
        if (slot_step[s])
            throw argument_error("price_taped_chain: the actions end with slot " + std::to_string(s) +
                                 " still holding x_" + std::to_string(*slot_step[s]));
    return p;
}

} // namespace remat
