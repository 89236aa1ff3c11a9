// The actions of a multi-level schedule: an outer walk (the whole loop, the spine, or a revolve over
// segments) that hands segments to a table walk (which, on a grid, hands super-steps to the fine table).
//
// The table walk keeps the segment being worked on and a stack of left parts waiting for their right
// parts, each with the level and slot of its start, so every action costs O(1). Slots are numbered per
// level from free lists, so a level never uses an index at or beyond its peak occupancy, except on
// the spine's unlimited level, whose indices 0..N-2 belong to the outer checkpoints.
#include "action_rewrite.hpp"
#include "multilevel_plan.hpp"

#include <cassert>
#include <variant>
#include <vector>

namespace remat {

namespace detail {

struct multilevel_walker {
    struct node {
        step_t start = 0;
        step_t length = 0; // in units of the table
        std::uint64_t row = 0;
        level_t level = 0;
        slot_t slot = 0;
        bool current = false; // x_start is the current state (no restore needed)
        const multilevel_table* table = nullptr;
    };
    struct level_slots {
        std::vector<slot_t> free;
        slot_t next = 0;
        slot_t reserved = 0; // indices below belong to the outer walk and are never handed out
    };

    std::shared_ptr<const multilevel_plan> plan;
    std::vector<level_slots> slots;
    bool in_run = false;
    node segment;
    std::vector<node> pending;
    int phase = 0;
    step_t next_segment = 0;
    revolve::cursor_type outer;
    action lookahead{};
    bool has_lookahead = false;

    explicit multilevel_walker(std::shared_ptr<const multilevel_plan> p)
        : plan(std::move(p)), slots(plan->model.levels.size())
    {
        if (plan->shape == multilevel_shape::spine) {
            auto& s = slots[static_cast<std::size_t>(plan->slow)];
            s.reserved = plan->segments - 1;
            s.next = s.reserved;
        } else if (plan->shape == multilevel_shape::nested) {
            outer = revolve(plan->segments, plan->outer_slots).cursor();
            slots[static_cast<std::size_t>(plan->slow)].next = plan->outer_slots;
        }
    }

    slot_t take(level_t level)
    {
        level_slots& s = slots[static_cast<std::size_t>(level)];
        if (!s.free.empty()) {
            const slot_t slot = s.free.back();
            s.free.pop_back();
            return slot;
        }
        return s.next++;
    }

    void give(level_t level, slot_t slot)
    {
        level_slots& s = slots[static_cast<std::size_t>(level)];
        if (slot >= s.reserved)
            s.free.push_back(slot);
    }

    // Back to the newest waiting left part, or out of the table walk.
    void resume()
    {
        if (pending.empty()) {
            in_run = false;
            // Nested: a run may hand the outer slot of its start back and reuse it; the outer walk owns
            // it again.
            if (plan->shape == multilevel_shape::nested)
                slots[static_cast<std::size_t>(plan->slow)].free.clear();
            return;
        }
        segment = pending.back();
        pending.pop_back();
        in_run = true;
    }

    // A segment of `length` units of `table` whose start is current and unheld: stored where Q chose, or
    // handed to the fine table (a grid's super-step, a layered table's leaf), or a single step reversed.
    void place(action_queue<8>& q, const multilevel_table* table, step_t start, step_t length, std::uint64_t row)
    {
        level_t level = -1;
        while ((level = table->store_level(row, length)) < 0) {
            if (table->fine() == nullptr) {
                assert(length == 1 && "a plan never places a start where no level has room");
                q.push(reverse{start});
                resume();
                return;
            }
            row = table->fine_row(row);
            length = table->fine_length(length);
            table = table->fine();
        }
        const slot_t slot = take(level);
        q.push(store{level, slot, start});
        segment = node{start, length, table->taken(row, level), level, slot, true, table};
        in_run = true;
    }

    void start_held(step_t start, step_t length, slot_t slot)
    {
        segment = node{start, length, plan->run_row, plan->slow, slot, true, plan->table.get()};
        in_run = true;
    }

    // One node of the table walk: at most 5 actions.
    void run_step(action_queue<8>& q)
    {
        node& t = segment;
        const multilevel_table& table = *t.table;
        if (!t.current) {
            q.push(restore{t.level, t.slot, t.start});
            t.current = true;
        }
        const level_t to = table.move(t.length, t.row, t.level);
        if (to >= 0) {
            const slot_t slot = take(to);
            q.push(store{to, slot, t.start});
            q.push(free_slot{t.level, t.slot});
            give(t.level, t.slot);
            t.row = table.given_back(table.taken(t.row, to), t.level);
            t.level = to;
            t.slot = slot;
        }
        if (table.handed_over(t.length, t.row, t.level)) { // a grid's super-step, a layered table's leaf
            t = node{t.start, table.fine_length(t.length), table.fine_row(t.row), t.level, t.slot, true, table.fine()};
            return;
        }
        if (t.length == 1) {
            q.push(reverse{t.start});
            q.push(free_slot{t.level, t.slot});
            give(t.level, t.slot);
            resume();
            return;
        }
        const step_t m = table.split(t.length, t.row, t.level);
        const step_t right = t.length - m;
        const step_t at = t.start + m * table.unit_steps();
        q.push(advance{t.start, at});
        node left = t;
        left.length = m;
        left.current = false;
        left.table = table.left_table();
        if (const level_t level = table.store_level(t.row, right); level >= 0) {
            const slot_t slot = take(level);
            q.push(store{level, slot, at});
            pending.push_back(left);
            t = node{at, right, table.taken(t.row, level), level, slot, true, &table};
        } else if (table.fine() != nullptr) { // handed to the fine table from an unheld start
            pending.push_back(left);
            place(q, &table, at, right, t.row);
        } else {
            q.push(reverse{at});
            t = left;
        }
    }

    // The outer walk; false once it is over. It may push nothing (a free the table walk already did).
    bool outer_step(action_queue<8>& q)
    {
        const multilevel_plan& p = *plan;
        switch (p.shape) {
        case multilevel_shape::exact:
        case multilevel_shape::grid:
        case multilevel_shape::layered:
            if (phase++ > 0)
                return false;
            place(q, p.table.get(), 0, p.tail, p.top_row);
            return true;
        case multilevel_shape::spine: {
            const step_t k = p.period;
            const step_t full = p.segments - 1;
            if (phase == 0) {
                if (next_segment < full) {
                    q.push(store{p.slow, next_segment, next_segment * k});
                    q.push(advance{next_segment * k, (next_segment + 1) * k});
                    ++next_segment;
                    return true;
                }
                phase = 1;
                place(q, p.table.get(), full * k, p.tail, p.top_row);
                next_segment = full - 1;
                return true;
            }
            if (next_segment < 0)
                return false;
            q.push(restore{p.slow, next_segment, next_segment * k});
            start_held(next_segment * k, k, next_segment);
            --next_segment;
            return true;
        }
        case multilevel_shape::nested:
            return nested_step(q);
        case multilevel_shape::binomial:
        case multilevel_shape::stacked:
            break;
        }
        return false;
    }

    bool nested_step(action_queue<8>& q)
    {
        const multilevel_plan& p = *plan;
        const step_t k = p.period;
        action a;
        if (has_lookahead) {
            a = lookahead;
            has_lookahead = false;
        } else if (!outer.next(a)) {
            return false;
        }
        const auto* r = std::get_if<reverse>(&a);
        if (r == nullptr) { // a segment's action: on the slowest level, in steps
            q.push(on_levels(scaled(a, k), [&](level_t) { return p.slow; }));
            return true;
        }
        const step_t length = r->step == p.segments - 1 ? p.tail : k;
        // Revolve frees a stored start right after reversing it: then the start is held, in that slot, and the
        // table walk frees it.
        action after;
        if (outer.next(after)) {
            if (const auto* f = std::get_if<free_slot>(&after)) {
                start_held(r->step * k, length, f->slot);
                return true;
            }
            lookahead = after;
            has_lookahead = true;
        }
        place(q, p.table.get(), r->step * k, length, p.top_row);
        return true;
    }

    // Fills the queue with at least one action; false when the schedule is over.
    bool refill(action_queue<8>& q)
    {
        while (q.empty()) {
            if (in_run)
                run_step(q);
            else if (!outer_step(q))
                return false;
        }
        return true;
    }
};

} // namespace detail

multilevel::cursor_type::cursor_type() = default;
multilevel::cursor_type::~cursor_type() = default;
multilevel::cursor_type::cursor_type(cursor_type&&) noexcept = default;
multilevel::cursor_type& multilevel::cursor_type::operator=(cursor_type&&) noexcept = default;

void multilevel::cursor_type::refill()
{
    if (walker_ == nullptr) { // the binomial and stacked shapes: revolve's actions, a queue at a time
        action a;
        while (!queue_.full() && binomial_.next(a)) {
            if (layout_ != nullptr) // stacked: depth d is a slot of level layout.level_at(d)
                a = detail::relabelled(
                    a, [&](level_t, slot_t d) { return std::pair{layout_->level_at(d), layout_->slot_at(d)}; });
            queue_.push(a);
        }
        done_ = queue_.empty();
    } else if (!walker_->refill(queue_)) {
        done_ = true;
    }
    if (levels_ != nullptr) { // a plan over fewer levels: its level j is the store's level (*levels_)[j]
        detail::action_queue<8> moved;
        action a;
        while (queue_.pop(a)) {
            moved.push(detail::on_levels(a, [&](level_t j) { return (*levels_)[static_cast<std::size_t>(j)]; }));
        }
        queue_ = moved;
    }
}

multilevel::cursor_type multilevel::cursor() const
{
    cursor_type c;
    c.done_ = false;
    const detail::multilevel_plan& core = plan_->core();
    c.plan_ = plan_;
    if (plan_->sub)
        c.levels_ = &plan_->sub_levels;
    if (core.shape == detail::multilevel_shape::binomial || core.shape == detail::multilevel_shape::stacked) {
        c.binomial_ = detail::binomial_schedule(core).cursor();
        if (core.shape == detail::multilevel_shape::stacked)
            c.layout_ = &core.layout;
    } else {
        c.walker_ = std::make_unique<detail::multilevel_walker>(plan_->sub ? plan_->sub : plan_);
    }
    return c;
}

} // namespace remat
