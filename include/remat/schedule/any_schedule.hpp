// remat/schedule/any_schedule.hpp — a schedule chosen at run time (type erasure).
//
// Costs one indirect call per action; prefer the concrete schedule type where it is known at compile
// time.
#pragma once

#include "remat/schedule/range.hpp"

#include <memory>
#include <utility>

namespace remat {

/// Holds any remat::schedule.
///
///     remat::any_schedule plan = use_revolve ? remat::any_schedule(remat::revolve(T, s))
///                                            : remat::any_schedule(remat::uniform::fit(T, s));
///     plan.cost();   for (const remat::action& a : plan) { ... }
class any_schedule : public action_range<any_schedule> {
    struct cursor_base {
        virtual ~cursor_base() = default;
        virtual bool next(action& out) = 0;
    };
    struct schedule_base {
        virtual ~schedule_base() = default;
        [[nodiscard]] virtual step_t steps() const = 0;
        [[nodiscard]] virtual schedule_cost cost() const = 0;
        [[nodiscard]] virtual std::unique_ptr<cursor_base> cursor() const = 0;
    };
    template <schedule S>
    struct holder final : schedule_base {
        struct cursor_holder final : cursor_base {
            explicit cursor_holder(decltype(std::declval<const S&>().cursor()) c) : cursor(std::move(c)) {}
            bool next(action& out) override { return cursor.next(out); }
            decltype(std::declval<const S&>().cursor()) cursor;
        };
        explicit holder(S s) : plan(std::move(s)) {}
        [[nodiscard]] step_t steps() const override { return plan.steps(); }
        [[nodiscard]] schedule_cost cost() const override { return plan.cost(); }
        [[nodiscard]] std::unique_ptr<cursor_base> cursor() const override
        {
            return std::make_unique<cursor_holder>(plan.cursor());
        }
        S plan;
    };

public:
    template <schedule S>
        requires(!std::same_as<std::remove_cvref_t<S>, any_schedule>)
    any_schedule(S plan) : impl_(std::make_shared<holder<S>>(std::move(plan)))
    {
    }

    [[nodiscard]] step_t steps() const { return impl_->steps(); }
    [[nodiscard]] schedule_cost cost() const { return impl_->cost(); }

    class cursor_type {
    public:
        cursor_type() = default;
        explicit cursor_type(std::unique_ptr<cursor_base> c) : impl_(std::move(c)) {}
        bool next(action& out) { return impl_ && impl_->next(out); }

    private:
        std::unique_ptr<cursor_base> impl_;
    };

    [[nodiscard]] cursor_type cursor() const { return cursor_type(impl_->cursor()); }

private:
    std::shared_ptr<const schedule_base> impl_; // immutable, so copies may share it
};

} // namespace remat
