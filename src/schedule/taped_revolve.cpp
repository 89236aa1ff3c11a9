// remat::taped_revolve: checks its arguments, fills the table of optima (taped_table.cpp) and walks the
// optimal choices once, writing the actions and counting what they cost.
#include "remat/schedule/taped_revolve.hpp"

#include "remat/error.hpp"
#include "remat/schedule/revolve.hpp"
#include "taped_plan_builder.hpp"
#include "taped_table.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <type_traits>
#include <variant>

namespace remat {
namespace {

constexpr step_t max_steps = 1'000'000;   // the plan's O(T) actions are held in memory
constexpr step_t max_table_steps = 90000; // evaluations fit the table's 32-bit entries

// Replays a state-only schedule (revolve's) into the builder, so that its counts are taken as for a
// planned one.
void write_state_only(const revolve& plan, detail::taped_plan_builder& out)
{
    for (const action& a : plan)
        std::visit(
            [&](const auto& x) {
                using kind = std::decay_t<decltype(x)>;
                if constexpr (std::is_same_v<kind, remat::advance>)
                    out.advance(x.from, x.to, false);
                else if constexpr (std::is_same_v<kind, remat::store>)
                    out.store(x.slot, x.step);
                else if constexpr (std::is_same_v<kind, remat::restore>)
                    out.restore(x.slot, x.step);
                else if constexpr (std::is_same_v<kind, free_slot>)
                    out.release(x.slot);
                else
                    out.reverse(x.step, false);
            },
            a);
}

// Every step but the last taped, the last re-run: T evaluations, the lower bound.
void write_all_taped(step_t steps, detail::taped_plan_builder& out)
{
    for (step_t k = 0; k + 1 < steps; ++k)
        out.advance(k, k + 1, true);
    out.reverse(steps - 1, false);
    for (step_t k = steps - 1; k-- > 0;)
        out.reverse(k, true);
}

// Writes the actions of the optimal plan with an explicit stack (segments nest T deep).
class plan_writer {
public:
    plan_writer(const detail::taped_table& table, slot_t tape_units, detail::taped_plan_builder& out)
        : table_(table), tape_units_(tape_units), out_(out)
    {
    }

    void write(step_t steps, slot_t units)
    {
        work_.push_back({task::segment, 0, steps, units, -1});
        while (!work_.empty()) {
            const task t = work_.back();
            work_.pop_back();
            switch (t.kind) {
            case task::segment:
                segment(t.from, t.length, t.units, t.held);
                break;
            case task::left_part:
                out_.restore(t.held, t.from);
                segment(t.from, t.length, t.units, t.held);
                break;
            case task::reverse_tape:
                out_.reverse(t.from, true);
                break;
            }
        }
    }

private:
    struct task {
        enum kind_t { segment, left_part, reverse_tape } kind;
        step_t from;
        step_t length;
        slot_t units;
        slot_t held; // the slot holding x_from that the segment owns, or -1
    };

    // Reverses [s, s+l) from x_s current with b units (the slot `held`, if any, among them).
    void segment(step_t s, step_t l, slot_t b, slot_t held)
    {
        if (l == 1) {
            out_.reverse(s, false);
            release(held);
            return;
        }
        if (table_.taped_is_best(l, b)) {
            release(held); // the tape holds x_s
            out_.advance(s, s + 1, true);
            work_.push_back({task::reverse_tape, s, 1, 0, -1});
            work_.push_back({task::segment, s + 1, l - 1, b - tape_units_, -1});
            return;
        }
        const step_t j = table_.best_split(l, b);
        if (held < 0) {
            held = out_.snapshots_held(); // snapshots nest: the next slot is free
            out_.store(held, s);
        }
        out_.advance(s, s + j, false);
        work_.push_back({task::left_part, s, j, b, held});
        work_.push_back({task::segment, s + j, l - j, b - 1, -1});
    }

    void release(slot_t held)
    {
        if (held >= 0)
            out_.release(held);
    }

    const detail::taped_table& table_;
    slot_t tape_units_;
    detail::taped_plan_builder& out_;
    std::vector<task> work_;
};

} // namespace

taped_revolve::taped_revolve(step_t steps, slot_t units, slot_t tape_units, double forward_cost, double backward_cost,
                             std::uint64_t work_limit, slot_t rerun_units)
    : steps_(steps), units_(units), tape_units_(tape_units), rerun_units_(rerun_units)
{
    if (steps < 1 || steps > max_steps)
        throw argument_error("taped_revolve: steps = " + std::to_string(steps) + " (expected 1 to " +
                             std::to_string(max_steps) + ": the plan's actions are held in memory)");
    if (units < 1)
        throw argument_error("taped_revolve: units = " + std::to_string(units) +
                             " (expected at least 1: x_0's snapshot; memory is counted in states)");
    if (tape_units < 1)
        throw argument_error("taped_revolve: tape_units = " + std::to_string(tape_units) +
                             " (expected at least 1: a tape holds its step's input state)");
    // A re-run's graph is what a taped advance keeps: more than a tape would make taping the last step of a
    // segment pay, which the table's E(1, b) does not consider.
    if (rerun_units < 0 || rerun_units > tape_units)
        throw argument_error("taped_revolve: rerun_units = " + std::to_string(rerun_units) +
                             " (expected 0 to tape_units = " + std::to_string(tape_units) +
                             ": what a reverse from a state holds while it re-runs its step)");
    detail::check_step_cost("taped_revolve", "forward_cost", forward_cost);
    detail::check_step_cost("taped_revolve", "backward_cost", backward_cost);
    // The least memory: x_0's snapshot and, inside a reverse, its re-run beside one snapshot (T >= 2).
    const slot_t least = steps == 1 ? std::max<slot_t>(rerun_units, 1) : rerun_units + 1;
    if (units < least)
        throw capacity_error(
            "taped_revolve: units = " + std::to_string(units) + " with rerun_units = " + std::to_string(rerun_units) +
            " (expected at least " + std::to_string(least) +
            (steps == 1 ? ": x_0's snapshot, inside the units its reverse holds while it re-runs step 0)"
                        : ": a snapshot of x_0 beside the units a reverse holds while it re-runs its "
                          "step)"));
    detail::taped_plan_builder builder(steps, tape_units, rerun_units);
    if (tape_units > units - rerun_units) {
        // No tape fits beside the re-run of the step after it: the optimum is revolve's with the units the
        // re-runs leave, in closed form (the table's rows would all be its, rerun_units rows down).
        write_state_only(revolve(steps, std::max<slot_t>(units - rerun_units, 1)), builder);
    } else if ((units - rerun_units) / tape_units >= steps - 1) {
        // More than (T-1) tapes' worth of memory never helps: every step but the last taped is the optimum.
        write_all_taped(steps, builder);
    } else {
        if (steps > max_table_steps)
            throw argument_error("taped_revolve: steps = " + std::to_string(steps) + " with units = " +
                                 std::to_string(units) + " and tape_units = " + std::to_string(tape_units) +
                                 " (expected at most " + std::to_string(max_table_steps) +
                                 " steps when a tape fits but not T - 1 of them: the exact planner's table holds "
                                 "32-bit evaluation counts)");
        const slot_t rows = units; // < (T-1) x tape_units + rerun_units here
        const auto entries = static_cast<std::uint64_t>(rows + 1) * static_cast<std::uint64_t>(steps + 1);
        if (entries > max_table_entries)
            throw argument_error("taped_revolve: steps = " + std::to_string(steps) +
                                 " with units = " + std::to_string(units) + " needs a table of " +
                                 std::to_string(entries) + " entries, more than the limit of " +
                                 std::to_string(max_table_entries) + " (4 bytes each)");
        const detail::taped_table table(steps, rows, tape_units, rerun_units, work_limit);
        planning_work_ = table.work();
        if (!table.complete())
            throw argument_error("taped_revolve: steps = " + std::to_string(steps) + " with units = " +
                                 std::to_string(units) + " and tape_units = " + std::to_string(tape_units) +
                                 " needs more planning work than work_limit = " + std::to_string(work_limit) +
                                 " units of work (table entries and splits priced; the default is under 1 s; the exact "
                                 "planner's work grows up to T^2 x units): pass taped_revolve a larger work_limit, or "
                                 "plan with remat::taped_uniform or remat::revolve");
        plan_writer(table, tape_units, builder).write(steps, rows);
    }
    detail::taped_plan_builder::plan p = builder.finish(forward_cost, backward_cost);
    cost_ = std::move(p.cost);
    evaluations_ = p.evaluations;
    peak_units_ = p.peak_units;
    actions_ = std::move(p.actions);
}

} // namespace remat
