// remat/schedule/range.hpp — how a schedule hands out its actions: cursors and lazy ranges.
//
// A *cursor* yields the actions of one pass over a schedule:
//
//     | expression     | type | meaning                                                   |
//     |----------------|------|-----------------------------------------------------------|
//     | c.next(a)      | bool | writes the next action into `a`; false once all are given |
//
// A *schedule* S (concept remat::schedule) is a cheap description that makes fresh cursors:
//
//     | expression   | type             | meaning                                   |
//     |--------------|------------------|-------------------------------------------|
//     | s.steps()    | step_t           | T, the number of steps it reverses        |
//     | s.cost()     | schedule_cost    | closed-form counts, without enumerating   |
//     | s.cursor()   | a cursor         | a new pass from the first action          |
//     | s.begin()    | input iterator   | `for (const remat::action& a : s)` works  |
#pragma once

#include "remat/schedule/action.hpp"
#include "remat/schedule/cost.hpp"

#include <array>
#include <concepts>
#include <cstddef>
#include <iterator>

namespace remat {

template <class C>
concept action_cursor = std::movable<C> && requires(C& c, action& a) {
    { c.next(a) } -> std::same_as<bool>;
};

template <class S>
concept schedule = requires(const S& s) {
    { s.steps() } -> std::convertible_to<step_t>;
    { s.cost() } -> std::same_as<schedule_cost>;
    { s.cursor() } -> action_cursor;
};

/// Input iterator over a cursor's actions; compares equal to std::default_sentinel when done.
template <action_cursor Cursor>
class action_iterator {
public:
    using value_type = action;
    using difference_type = std::ptrdiff_t;

    action_iterator() = default;
    explicit action_iterator(Cursor cursor) : cursor_(std::move(cursor)) { done_ = !cursor_.next(current_); }

    const action& operator*() const noexcept { return current_; }
    const action* operator->() const noexcept { return &current_; }
    action_iterator& operator++()
    {
        done_ = !cursor_.next(current_);
        return *this;
    }
    void operator++(int) { ++*this; }
    friend bool operator==(const action_iterator& it, std::default_sentinel_t) noexcept { return it.done_; }

private:
    Cursor cursor_{};
    action current_{};
    bool done_ = true;
};

/// Gives a schedule class begin()/end() from its cursor() (CRTP).
template <class Derived>
class action_range {
public:
    [[nodiscard]] auto begin() const { return action_iterator(static_cast<const Derived&>(*this).cursor()); }
    [[nodiscard]] std::default_sentinel_t end() const noexcept { return {}; }
};

namespace detail {

/// A tiny FIFO of actions that a cursor fills a few at a time (never more than `Capacity`).
template <std::size_t Capacity = 4>
class action_queue {
public:
    void push(const action& a) noexcept { items_[size_++] = a; }
    [[nodiscard]] bool empty() const noexcept { return head_ == size_; }
    [[nodiscard]] bool full() const noexcept { return size_ == Capacity; }
    bool pop(action& out) noexcept
    {
        if (head_ == size_)
            return false;
        out = items_[head_++];
        if (head_ == size_)
            head_ = size_ = 0;
        return true;
    }

private:
    std::array<action, Capacity> items_{};
    std::size_t head_ = 0;
    std::size_t size_ = 0;
};

} // namespace detail
} // namespace remat
