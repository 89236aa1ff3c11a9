// The actions of a multi-level schedule: an outer walk (the whole loop, the spine, or a revolve over
// segments) that hands segments to a table walk.
//
// The table walk keeps the segment being worked on and a stack of left parts waiting for their right
// parts, each with the level and slot of its start, so every action costs O(1). Slots are numbered per
// level from free lists, so a level never uses an index at or beyond its peak occupancy, except on
// the spine's unlimited level, whose indices 0..N-2 belong to the outer checkpoints.
#include "multilevel_plan.hpp"

#include <variant>
#include <vector>

namespace remat {

namespace detail {

struct multilevel_walker {
    struct node {
        step_t start = 0;
        step_t length = 0;
        std::uint64_t row = 0;
        level_t level = 0;
        slot_t slot = 0;
        bool current = false; // x_start is the current state (no restore needed)
    };
    struct level_slots {
        std::vector<slot_t> free;
        slot_t next = 0;
        slot_t reserved = 0; // indices below belong to the outer walk and are never handed out
    };

    std::shared_ptr<const multilevel_plan> plan;
    const multilevel_table* table = nullptr;
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
        : plan(std::move(p)), table(plan->table.get()), slots(plan->model.levels.size())
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

    // A segment whose start x_start is current and unheld: the table places it (one step needs nothing).
    void start_placed(action_queue<8>& q, step_t start, step_t length)
    {
        if (length == 1) {
            q.push(reverse{start});
            return;
        }
        const auto all = (1u << static_cast<unsigned>(table->levels())) - 1;
        const multilevel_table::placement p = table->place_start(length, plan->top_row, all);
        const slot_t slot = take(p.level);
        q.push(store{p.level, slot, start});
        segment = node{start, length, table->taken(plan->top_row, p.level), p.level, slot, true};
        in_run = true;
    }

    void start_held(step_t start, step_t length, slot_t slot)
    {
        segment = node{start, length, plan->run_row, plan->slow, slot, true};
        in_run = true;
    }

    void end_run()
    {
        in_run = false;
        // Nested: a run may hand the outer slot of its start back and reuse it; the outer walk owns it again.
        if (plan->shape == multilevel_shape::nested)
            slots[static_cast<std::size_t>(plan->slow)].free.clear();
    }

    // One node of the table walk: at most 5 actions.
    void run_step(action_queue<8>& q)
    {
        node& t = segment;
        if (!t.current) {
            q.push(restore{t.level, t.slot, t.start});
            t.current = true;
        }
        const level_t to = table->move(t.length, t.row, t.level);
        if (to >= 0) {
            const slot_t slot = take(to);
            q.push(store{to, slot, t.start});
            q.push(free_slot{t.level, t.slot});
            give(t.level, t.slot);
            t.row = table->given_back(table->taken(t.row, to), t.level);
            t.level = to;
            t.slot = slot;
        }
        if (t.length == 1) {
            q.push(reverse{t.start});
            q.push(free_slot{t.level, t.slot});
            give(t.level, t.slot);
            if (pending.empty()) {
                end_run();
            } else {
                t = pending.back();
                pending.pop_back();
            }
            return;
        }
        const step_t m = table->split(t.length, t.row, t.level);
        const step_t right = t.length - m;
        q.push(advance{t.start, t.start + m});
        if (right >= 2) {
            const level_t level = table->store_level(t.row, right);
            const slot_t slot = take(level);
            q.push(store{level, slot, t.start + m});
            node left = t;
            left.length = m;
            left.current = false;
            pending.push_back(left);
            t = node{t.start + m, right, table->taken(t.row, level), level, slot, true};
        } else {
            q.push(reverse{t.start + m});
            t.length = m;
            t.current = false;
        }
    }

    // The outer walk; false once it is over. It may push nothing (a free the table walk already did).
    bool outer_step(action_queue<8>& q)
    {
        const multilevel_plan& p = *plan;
        switch (p.shape) {
        case multilevel_shape::exact:
            if (phase++ > 0)
                return false;
            start_placed(q, 0, p.steps);
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
                start_placed(q, full * k, p.tail);
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
        std::visit(overloaded{
                       [&](const store& s) {
                           q.push(store{p.slow, s.slot, s.step * k});
                       },
                       [&](const advance& s) {
                           q.push(advance{s.from * k, s.to * k});
                       },
                       [&](const restore& s) {
                           q.push(restore{p.slow, s.slot, s.step * k});
                       },
                       [&](const free_slot& s) {
                           q.push(free_slot{p.slow, s.slot});
                       },
                       [&](const reverse& s) {
                           const step_t length = s.step == p.segments - 1 ? p.tail : k;
                           // Revolve frees a stored start right after reversing it: then the start is
                           // held, in that slot, and the table walk frees it.
                           action after;
                           if (outer.next(after)) {
                               if (const auto* f = std::get_if<free_slot>(&after)) {
                                   start_held(s.step * k, length, f->slot);
                                   return;
                               }
                               lookahead = after;
                               has_lookahead = true;
                           }
                           start_placed(q, s.step * k, length);
                       },
                   },
                   a);
        return true;
    }

    bool refill(action_queue<8>& q)
    {
        for (;;) {
            if (in_run) {
                run_step(q);
                return true;
            }
            if (!outer_step(q))
                return false;
            if (!q.empty())
                return true;
        }
    }
};

} // namespace detail

multilevel::cursor_type::cursor_type() = default;
multilevel::cursor_type::~cursor_type() = default;
multilevel::cursor_type::cursor_type(cursor_type&&) noexcept = default;
multilevel::cursor_type& multilevel::cursor_type::operator=(cursor_type&&) noexcept = default;

void multilevel::cursor_type::refill()
{
    if (use_binomial_) {
        action a;
        if (binomial_.next(a))
            queue_.push(a);
        else
            done_ = true;
        return;
    }
    if (!walker_->refill(queue_))
        done_ = true;
}

multilevel::cursor_type multilevel::cursor() const
{
    cursor_type c;
    c.done_ = false;
    if (plan_->shape == detail::multilevel_shape::binomial) {
        c.use_binomial_ = true;
        const auto slots = static_cast<slot_t>(
            std::min<std::uint64_t>(plan_->model.levels[0].slots, static_cast<std::uint64_t>(plan_->steps)));
        c.binomial_ = revolve(plan_->steps, std::max<slot_t>(slots, 1)).cursor();
    } else {
        c.walker_ = std::make_unique<detail::multilevel_walker>(plan_);
    }
    return c;
}

} // namespace remat
