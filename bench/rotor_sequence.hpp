// rotor's operation sequence (bench/rotor_plan.py's "sequence") as remat actions, so that rockmate's plan
// can be priced and checked under remat's own model (remat::evaluate) next to remat::chain's.
//
// rotor's operations: "Fc k" runs step k keeping x_k as a checkpoint, "Fn k" runs it keeping nothing,
// "Fe k" runs it keeping what its backward needs (here: x_k), "Bwd k" reverses it, "Loss" marks x_T.
// In remat's vocabulary a kept x_k is a stored snapshot (one slot per kept state, the lowest free one),
// an operation on x_k when x_k is not current restores it, and "Bwd k" frees x_k's slot before it
// reverses (remat's "restore, free, reverse"). An "Fe k" followed at once by "Bwd k" (with "Loss" between
// for the last step) is the reverse of step k where it stands, as remat's plans do it. A step run to reach
// x_T (rotor's loss) is left out: remat's adjoint of the last step re-runs it (b_{T-1} includes it).
#pragma once

#include <remat/error.hpp>
#include <remat/schedule/action.hpp>

#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace remat::bench {

inline std::vector<action> rotor_actions(step_t steps, const std::vector<std::string>& sequence)
{
    struct op {
        std::string kind;
        step_t step = -1;
    };
    std::vector<op> ops;
    for (const std::string& text : sequence) {
        std::istringstream in(text);
        op o;
        in >> o.kind;
        if (o.kind != "Loss" && !(in >> o.step))
            throw argument_error("rotor sequence: \"" + text + "\" has no step");
        if ((o.kind != "Loss" && o.kind != "Fc" && o.kind != "Fn" && o.kind != "Fe" && o.kind != "Bwd") ||
            (o.kind != "Loss" && (o.step < 0 || o.step >= steps)))
            throw argument_error("rotor sequence: \"" + text + "\" is not an operation of this chain");
        ops.push_back(o);
    }

    std::vector<action> out;
    std::map<step_t, slot_t> slot_of; // kept states
    std::vector<bool> slot_used;
    step_t current = 0; // the step of the current state; -1 when undefined (after a reverse)
    advance pending{0, 0};
    const auto flush = [&] {
        if (pending.to > pending.from)
            out.emplace_back(pending);
        pending = {0, 0};
    };
    const auto make_current = [&](step_t k) {
        if (current == k)
            return;
        const auto held = slot_of.find(k);
        if (held == slot_of.end())
            throw schedule_error("rotor sequence: x_" + std::to_string(k) + " is needed but neither current nor kept");
        flush();
        out.emplace_back(restore{0, held->second, k});
        current = k;
    };
    const auto keep = [&](step_t k) {
        if (slot_of.contains(k))
            return;
        flush();
        slot_t slot = 0;
        while (static_cast<std::size_t>(slot) < slot_used.size() && slot_used[static_cast<std::size_t>(slot)])
            ++slot;
        if (static_cast<std::size_t>(slot) == slot_used.size())
            slot_used.push_back(false);
        slot_used[static_cast<std::size_t>(slot)] = true;
        slot_of[k] = slot;
        out.emplace_back(store{0, slot, k});
    };
    const auto run_step = [&](step_t k) {
        if (pending.to != k || pending.to == pending.from) {
            flush();
            pending = {k, k};
        }
        pending.to = k + 1;
        current = k + 1;
    };
    const auto reverse_step = [&](step_t k) {
        make_current(k);
        flush();
        if (const auto held = slot_of.find(k); held != slot_of.end()) {
            out.emplace_back(free_slot{0, held->second});
            slot_used[static_cast<std::size_t>(held->second)] = false;
            slot_of.erase(held);
        }
        out.emplace_back(reverse{k});
        current = -1;
    };

    for (std::size_t i = 0; i < ops.size(); ++i) {
        const op& o = ops[i];
        if (o.kind == "Loss")
            continue;
        if (o.kind == "Bwd") {
            reverse_step(o.step);
            continue;
        }
        make_current(o.step);
        if (o.kind == "Fe") {
            const std::size_t next = i + 1 < ops.size() && ops[i + 1].kind == "Loss" ? i + 2 : i + 1;
            if (next < ops.size() && ops[next].kind == "Bwd" && ops[next].step == o.step) {
                reverse_step(o.step); // reversed where it stands
                i = next;
                continue;
            }
        }
        if (o.kind != "Fn")
            keep(o.step);
        if (o.step + 1 == steps) { // x_T for rotor's loss: remat's last adjoint re-runs that step itself
            flush();
            current = -1;
            continue;
        }
        run_step(o.step);
    }
    flush();
    if (!slot_of.empty())
        throw schedule_error("rotor sequence: " + std::to_string(slot_of.size()) + " kept states never reversed");
    return out;
}

} // namespace remat::bench
