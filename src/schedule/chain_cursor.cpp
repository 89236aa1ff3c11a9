// The walk of a chain plan's decisions that yields its actions (chain::cursor_type), blocks expanded into their
// steps' own.
#include "action_rewrite.hpp"
#include "chain_plan.hpp"
#include "chain_stages.hpp"

#include <algorithm>
#include <cassert>
#include <variant>
#include <vector>

namespace remat {

using detail::chain_plan;

chain::cursor_type chain::cursor() const
{
    cursor_type c;
    c.plan_ = plan_;
    c.phase_ = cursor_type::phase::outer;
    c.current_ = {0, plan_->steps, plan_->start_units, 0};
    c.block_ = plan_->block;
    c.fine_steps_ = plan_->fine.size();
    c.done_ = false;
    c.listed_ = plan_->listed.get();
    return c;
}

namespace {

/// Appends advance{k, k + 1}, joined to an advance that ends at k.
void append_advance(std::vector<action>& out, step_t k)
{
    if (!out.empty())
        if (auto* v = std::get_if<advance>(&out.back()); v != nullptr && v->to == k) {
            v->to = k + 1;
            return;
        }
    out.emplace_back(advance{k, k + 1});
}

/// Reverses [from, to) from x_from current and held in `slot` (or not held: slot < 0): store x_k (but x_from when
/// held) and advance for k < to - 1 into the slots from `above` on, reverse the last step, then restore, free and
/// reverse each stored state (one step held: free and reverse).
void append_rerun(std::vector<action>& out, step_t from, step_t to, slot_t slot, slot_t above)
{
    const auto slot_of = [&](step_t k) {
        return k == from && slot >= 0 ? slot : static_cast<slot_t>(above + (k - from));
    };
    for (step_t k = from; k + 1 < to; ++k) {
        if (k > from || slot < 0)
            out.emplace_back(store{0, slot_of(k), k});
        append_advance(out, k);
    }
    if (to - 1 > from || slot < 0)
        out.emplace_back(reverse{to - 1});
    for (step_t k = to - 2; k >= from; --k) {
        out.emplace_back(restore{0, slot_of(k), k});
        out.emplace_back(free_slot{0, slot_of(k)});
        out.emplace_back(reverse{k});
    }
    if (to - 1 == from && slot >= 0) { // one step, x_from current and held: its last use
        out.emplace_back(free_slot{0, slot});
        out.emplace_back(reverse{from});
    }
}

} // namespace

void chain::cursor_type::widen(action& a)
{
    const auto* r = std::get_if<reverse>(&a);
    if (r == nullptr) {
        a = detail::scaled(a, block_, fine_steps_);
        return;
    }
    // x_a is current, slots 0 .. depth_ - 1 are in use: the block's own go above them
    const step_t from = r->step * block_;
    expanded_.clear();
    append_rerun(expanded_, from, std::min(from + block_, fine_steps_), -1, depth_);
    a = expanded_.front();
    expanded_at_ = 1;
}

void chain::cursor_type::pop()
{
    if (pending_.empty()) {
        done_ = true;
        return;
    }
    current_ = pending_.back();
    pending_.pop_back();
    if (current_.option >= 0) { // a kept block: its states are restored in the next decision
        phase_ = phase::kept;
        return;
    }
    queue_.push(restore{0, current_.slot, current_.start});
    phase_ = phase::held;
}

void chain::cursor_type::step()
{
    switch (phase_) {
    case phase::outer:
        step_outer();
        return;
    case phase::unheld:
        step_unheld();
        return;
    case phase::held:
        step_held();
        return;
    case phase::keep:
        step_keep();
        return;
    case phase::kept:
        step_kept();
        return;
    }
}

/// The outermost chain of checkpoints: store x_s and advance a left part, or keep a block.
void chain::cursor_type::step_outer()
{
    const chain_plan& p = *plan_;
    const step_t s = current_.start;
    if (!p.outer(s)) {
        current_.length = p.steps - s;
        phase_ = phase::unheld;
        return;
    }
    const step_t j = p.outer_split[static_cast<std::size_t>(s) * p.row() + current_.units];
    assert(j > 0);
    queue_.push(store{0, depth_, s});
    if (j >= chain_plan::keep) {
        pending_.push_back({s, 1, current_.units, depth_, static_cast<int>(j - chain_plan::keep)});
        ++depth_;
        after_keep_ = phase::outer;
        phase_ = phase::keep;
        return;
    }
    pending_.push_back({s, j, current_.units, depth_});
    ++depth_;
    queue_.push(advance{s, s + j});
    current_ = {s + j, 0, current_.units - p.u[static_cast<std::size_t>(s)], 0};
}

/// x_s current, not held: reverse a single step where it stands, else store it.
void chain::cursor_type::step_unheld()
{
    const step_t s = current_.start;
    if (current_.length == 1) {
        queue_.push(reverse{s});
        pop();
        return;
    }
    queue_.push(store{0, depth_, s});
    current_.slot = depth_++;
    phase_ = phase::held;
}

/// x_s current and held: reverse its last step, or advance the left part of its split.
void chain::cursor_type::step_held()
{
    const chain_plan& p = *plan_;
    const step_t s = current_.start;
    if (current_.length == 1) {
        assert(current_.slot == depth_ - 1);
        queue_.push(free_slot{0, current_.slot});
        --depth_;
        queue_.push(reverse{s});
        pop();
        return;
    }
    const step_t j = detail::inner_split(p, s, current_.length, current_.units);
    if (j >= chain_plan::keep) {
        assert(current_.slot == depth_ - 1);
        pending_.push_back({s, 1, current_.units, current_.slot, static_cast<int>(j - chain_plan::keep)});
        after_keep_ = phase::unheld;
        phase_ = phase::keep;
        return;
    }
    assert(j > 0 && j < current_.length);
    queue_.push(advance{s, s + j});
    pending_.push_back({s, j, current_.units, current_.slot});
    current_ = {s + j, current_.length - j, current_.units - p.u[static_cast<std::size_t>(s)], 0};
    phase_ = phase::unheld;
}

/// A kept block's forward, the queue empty: advance the block storing its option's states above x_s's slot.
void chain::cursor_type::step_keep()
{
    const chain_plan& p = *plan_;
    const step_t s = current_.start;
    const auto fine = [&](step_t block) { return std::min(block * block_, fine_steps_); };
    const task& kept = pending_.back();
    const chain_plan::keep_option& o = p.option_of(s, kept.option);
    const step_t a = fine(s);
    const step_t b = fine(s + 1);
    expanded_.clear();
    expanded_at_ = 0;
    depth_ = kept.slot + 1;
    for (step_t k = a; k < b; ++k) {
        if (k > a && p.keep_flags[o.flags + static_cast<std::size_t>(k - a - 1)] != 0)
            expanded_.emplace_back(store{0, depth_++, k});
        append_advance(expanded_, k);
    }
    current_ = {s + 1, current_.length - 1, current_.units - o.held, 0};
    phase_ = after_keep_;
}

/// A kept block's adjoint, the queue empty: from its last stored state, restore each and reverse up to the next.
void chain::cursor_type::step_kept()
{
    const chain_plan& p = *plan_;
    const step_t s = current_.start;
    const auto fine = [&](step_t block) { return std::min(block * block_, fine_steps_); };
    const chain_plan::keep_option& o = p.option_of(s, current_.option);
    const step_t a = fine(s);
    const step_t b = fine(s + 1);
    std::vector<step_t> held{a}; // the block's stored states, in their slots' order
    for (step_t k = a + 1; k < b; ++k)
        if (p.keep_flags[o.flags + static_cast<std::size_t>(k - a - 1)] != 0)
            held.push_back(k);
    expanded_.clear();
    expanded_at_ = 0;
    step_t q = b;
    for (std::size_t i = held.size(); i-- > 0;) {
        const auto slot = static_cast<slot_t>(current_.slot + static_cast<slot_t>(i));
        expanded_.emplace_back(restore{0, slot, held[i]});
        append_rerun(expanded_, held[i], q, slot, slot + 1);
        q = held[i];
    }
    depth_ = current_.slot;
    pop();
}

} // namespace remat
