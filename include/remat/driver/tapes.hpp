// remat/driver/tapes.hpp — the tapes of a run with taped advances: the user's two tape callables, the
// factory that makes a tape, and the tapes themselves with the table of which step holds which.
//
// A plan of remat::taped_revolve runs some steps with `advance K K+1 tape`: the taped step fills one of
// these tapes with what step K's adjoint needs, and `reverse K` back-propagates through it instead of
// re-running step K (docs/tapes.md). The drivers make cost().peak_tapes tapes before step 0, so a run
// allocates no tape per step; a tape is reused once its reverse has consumed it.
//
//     struct tape { std::vector<double> x, y; };        // x_k and what step k computed from it
//     remat::run(plan, store, x, remat::forward_step(f), remat::adjoint_step(g),
//                remat::with_tapes(remat::taped_step([&](remat::step_t k, State& s, tape& t) { record(k, s, t); }),
//                                  remat::tape_adjoint([&](remat::step_t k, tape& t) { backward(k, t); }),
//                                  [&] { return tape{std::vector<double>(n), std::vector<double>(n)}; }));
#pragma once

#include "remat/driver/callables.hpp"
#include "remat/error.hpp"
#include "remat/types.hpp"

#include <algorithm>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace remat {

namespace detail {
/// A run without tapes (the executor's default): taped advances are refused.
struct no_tapes {};
} // namespace detail

/// The tapes of a run (made by remat::with_tapes). Holds the taped step, the adjoint from a tape, the
/// factory `make()` that returns a new tape, and the tapes made so far. Each tape is free or held by
/// the one step whose taped advance filled it, until that step's reverse consumes it.
template <class Taped, class TapeAdjoint, class Make>
    requires std::invocable<Make&>
class tape_set {
public:
    using tape_type = std::remove_cvref_t<std::invoke_result_t<Make&>>;
    static_assert(tape_adjoint_function<TapeAdjoint, tape_type>,
                  "remat::tape_adjoint(g) needs g(k, tape) callable with the tape the factory makes");

    tape_set(taped_step_fn<Taped> step, tape_adjoint_fn<TapeAdjoint> adjoint, Make make)
        : step_(std::move(step)), adjoint_(std::move(adjoint)), make_(std::forward<Make>(make))
    {
    }

    /// Makes tapes until `count` exist and sizes the step table for `steps` steps: the drivers call it
    /// before step 0 with the plan's peak_tapes, so the run itself makes none.
    void reserve(std::uint64_t count, step_t steps)
    {
        if (steps > 0 && table_.size() < static_cast<std::size_t>(steps))
            table_.resize(static_cast<std::size_t>(steps), none);
        tapes_.reserve(static_cast<std::size_t>(count));
        owner_.reserve(static_cast<std::size_t>(count));
        free_.reserve(static_cast<std::size_t>(count));
        while (tapes_.size() < count)
            add_tape();
    }

    /// Whether step k's tape is held.
    [[nodiscard]] bool holds(step_t k) const noexcept
    {
        return k >= 0 && static_cast<std::size_t>(k) < table_.size() && table_[static_cast<std::size_t>(k)] != none;
    }
    [[nodiscard]] std::uint64_t made() const noexcept { return tapes_.size(); }
    [[nodiscard]] std::uint64_t held() const noexcept { return held_; }
    [[nodiscard]] std::uint64_t peak() const noexcept { return peak_; }

    /// Runs the taped step k from x == x_k into a free tape, which step k then holds. Makes a tape only
    /// when none is free (never in a run that reserved the plan's peak). When the step throws, the tape
    /// stays free.
    template <class State>
    void record(step_t k, State& x)
    {
        static_assert(taped_function<Taped, State, tape_type>,
                      "remat::taped_step(f) needs f(k, x, tape) callable with the state and the factory's tape");
        if (static_cast<std::size_t>(k) >= table_.size())
            table_.resize(static_cast<std::size_t>(k) + 1, none);
        if (free_.empty())
            add_tape();
        const std::size_t t = free_.back();
        std::invoke(step_.fn, k, x, tapes_[t]);
        free_.pop_back();
        table_[static_cast<std::size_t>(k)] = t;
        owner_[t] = k;
        ++held_;
        peak_ = std::max(peak_, held_);
    }

    /// Back-propagates step k through its tape (held: see holds) and frees the tape, also when the
    /// adjoint throws.
    void reverse(step_t k)
    {
        const std::size_t t = table_[static_cast<std::size_t>(k)];
        try {
            std::invoke(adjoint_.fn, k, tapes_[t]);
        } catch (...) {
            release(t);
            throw;
        }
        release(t);
    }

    /// Frees every tape (after a failure). Never throws.
    void release_all() noexcept
    {
        for (std::size_t t = 0; t < tapes_.size(); ++t)
            if (owner_[t] >= 0)
                release(t);
    }

private:
    static constexpr std::size_t none = static_cast<std::size_t>(-1);

    void add_tape()
    {
        tapes_.push_back(std::invoke(make_));
        owner_.push_back(-1);
        if (free_.capacity() < tapes_.size()) // release() never allocates
            free_.reserve(2 * tapes_.size());
        free_.push_back(tapes_.size() - 1);
    }

    void release(std::size_t t) noexcept
    {
        table_[static_cast<std::size_t>(owner_[t])] = none;
        owner_[t] = -1;
        free_.push_back(t);
        --held_;
    }

    taped_step_fn<Taped> step_;
    tape_adjoint_fn<TapeAdjoint> adjoint_;
    Make make_;
    std::vector<tape_type> tapes_;
    std::vector<step_t> owner_;      // the step holding each tape, -1 when free
    std::vector<std::size_t> free_;  // indices of the free tapes
    std::vector<std::size_t> table_; // step -> its tape, `none` when it holds none
    std::uint64_t held_ = 0;
    std::uint64_t peak_ = 0;
};

/// Bundles the tape callables of a run with the factory of its tapes, for remat::run and
/// remat::executor: `make()` returns a new tape (called cost().peak_tapes times, before step 0). An
/// lvalue factory is held by reference, an rvalue moved in.
///
///     auto tapes = remat::with_tapes(remat::taped_step(record_and_step), remat::tape_adjoint(backward),
///                                    [] { return gru_tape(batch, hidden); });
template <class Taped, class TapeAdjoint, class Make>
    requires std::invocable<Make&>
[[nodiscard]] tape_set<Taped, TapeAdjoint, Make> with_tapes(taped_step_fn<Taped> step,
                                                            tape_adjoint_fn<TapeAdjoint> adjoint, Make&& make)
{
    return {std::move(step), std::move(adjoint), std::forward<Make>(make)};
}

/// Bare tape callables (or the two given in the wrong order) are refused with a message.
template <class Step, class Adjoint, class Make>
    requires(!detail::is_tagged<std::remove_cvref_t<Step>, taped_step_fn> ||
             !detail::is_tagged<std::remove_cvref_t<Adjoint>, tape_adjoint_fn>)
detail::no_tapes with_tapes(Step&&, Adjoint&&, Make&&)
{
    static_assert(detail::always_false<Step>,
                  "remat::with_tapes takes remat::taped_step(f), then remat::tape_adjoint(g), then the tape "
                  "factory: wrap each callable so that the two cannot be swapped");
    return {};
}

} // namespace remat
