// remat::taped_revolve: checks its arguments, fills the table of optima (taped_table.cpp) and walks the
// optimal choices once, writing the actions and counting what they cost.
#include "remat/schedule/taped_revolve.hpp"

#include "remat/error.hpp"
#include "taped_table.hpp"

#include <algorithm>
#include <cmath>
#include <string>

namespace remat {
namespace {

constexpr step_t max_steps = 90000;                   // evaluations fit the table's 32-bit entries
constexpr std::uint64_t max_table_entries = 1u << 27; // 512 MiB

void check_cost(double value, const char* name)
{
    if (!std::isfinite(value) || value < 0)
        throw argument_error(std::string("taped_revolve: ") + name + " = " + std::to_string(value) +
                             " (expected a finite cost >= 0)");
}

// Writes the actions of the optimal plan with an explicit stack (segments nest T deep).
class plan_writer {
public:
    plan_writer(const detail::taped_table& table, slot_t tape_units, std::vector<action>& out, step_t steps)
        : table_(table), tape_units_(tape_units), out_(out), advanced_(static_cast<std::size_t>(steps), 0)
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
                emit(restore{0, t.held, t.from});
                ++cost_.restores;
                segment(t.from, t.length, t.units, t.held);
                break;
            case task::reverse_tape:
                emit(reverse{t.from});
                --tapes_;
                break;
            }
        }
    }

    schedule_cost cost_;
    slot_t peak_units_ = 0;

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
            emit(reverse{s});
            release(held);
            return;
        }
        if (table_.taped_is_best(l, b)) {
            release(held); // the tape holds x_s
            run(s, s + 1, true);
            ++tapes_;
            note_memory();
            work_.push_back({task::reverse_tape, s, 1, 0, -1});
            work_.push_back({task::segment, s + 1, l - 1, b - tape_units_, -1});
            return;
        }
        const step_t j = table_.best_split(l, b);
        if (held < 0) {
            held = snapshots_++;
            emit(store{0, held, s});
            ++cost_.stores;
            note_memory();
        }
        run(s, s + j, false);
        work_.push_back({task::left_part, s, j, b, held});
        work_.push_back({task::segment, s + j, l - j, b - 1, -1});
    }

    void run(step_t from, step_t to, bool taped)
    {
        emit(advance{from, to, taped});
        cost_.forward_steps += static_cast<std::uint64_t>(to - from);
        cost_.taped_steps += taped ? 1 : 0;
        for (step_t k = from; k < to; ++k)
            cost_.repetition = std::max<std::uint64_t>(cost_.repetition, ++advanced_[static_cast<std::size_t>(k)]);
    }

    void release(slot_t held)
    {
        if (held < 0)
            return;
        emit(free_slot{0, held});
        --snapshots_;
    }

    void note_memory()
    {
        cost_.peak_slots = std::max(cost_.peak_slots, snapshots_);
        cost_.peak_tapes = std::max(cost_.peak_tapes, static_cast<std::uint64_t>(tapes_));
        peak_units_ = std::max(peak_units_, snapshots_ + tapes_ * tape_units_);
    }

    void emit(const action& a) { out_.push_back(a); }

    const detail::taped_table& table_;
    slot_t tape_units_;
    std::vector<action>& out_;
    std::vector<std::uint32_t> advanced_;
    std::vector<task> work_;
    slot_t snapshots_ = 0; // held now; the next store takes this slot (snapshots nest)
    slot_t tapes_ = 0;
};

} // namespace

taped_revolve::taped_revolve(step_t steps, slot_t units, slot_t tape_units, double forward_cost, double backward_cost)
    : steps_(steps), units_(units), tape_units_(tape_units)
{
    if (steps < 1 || steps > max_steps)
        throw argument_error("taped_revolve: steps = " + std::to_string(steps) + " (expected 1 to " +
                             std::to_string(max_steps) + ")");
    if (units < 1)
        throw argument_error("taped_revolve: units = " + std::to_string(units) +
                             " (expected at least 1: x_0's snapshot; memory is counted in states)");
    if (tape_units < 1)
        throw argument_error("taped_revolve: tape_units = " + std::to_string(tape_units) +
                             " (expected at least 1: a tape holds its step's input state)");
    check_cost(forward_cost, "forward_cost");
    check_cost(backward_cost, "backward_cost");
    // More than (T-1) tapes' worth of memory never helps: every step but the last taped is the optimum.
    const slot_t useful = tape_units > units / std::max<step_t>(steps - 1, 1) ? units : (steps - 1) * tape_units;
    const slot_t rows = std::max<slot_t>(std::min(units, useful), 1);
    const auto entries = static_cast<std::uint64_t>(rows + 1) * static_cast<std::uint64_t>(steps + 1);
    if (entries > max_table_entries)
        throw argument_error("taped_revolve: steps = " + std::to_string(steps) +
                             " with units = " + std::to_string(units) + " needs a table of " + std::to_string(entries) +
                             " entries, more than the limit of " + std::to_string(max_table_entries));
    const detail::taped_table table(steps, rows, tape_units);
    auto actions = std::make_shared<std::vector<action>>();
    plan_writer writer(table, tape_units, *actions, steps);
    writer.write(steps, rows);
    cost_ = writer.cost_;
    cost_.steps = steps;
    cost_.reverse_steps = static_cast<std::uint64_t>(steps);
    cost_.levels = {level_cost{cost_.stores, cost_.restores, cost_.peak_slots}};
    evaluations_ = cost_.forward_steps + static_cast<std::uint64_t>(steps) - cost_.taped_steps;
    cost_.predicted_cost =
        forward_cost * static_cast<double>(evaluations_) + backward_cost * static_cast<double>(steps);
    peak_units_ = writer.peak_units_;
    actions->shrink_to_fit();
    actions_ = std::move(actions);
}

} // namespace remat
