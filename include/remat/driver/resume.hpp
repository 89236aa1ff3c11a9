// remat/driver/resume.hpp — continuing a run that was killed during its forward sweep.
//
// A run whose snapshots live on a level that outlives the process (an hdf5_store) leaves them in its file
// when it is killed. Started again on the same file with the same schedule, it need not go back to x_0:
// it continues from the most advanced snapshot of the first forward sweep at which every snapshot the
// schedule still holds is in the file. The file records the run's identity (the schedule and the state
// type, run_identity below), so that a run never continues another run's snapshots.
//
//     const std::string id = remat::run_identity(plan, x);            // before step 0
//     remat::hdf5_store disk(file, remat::level_capacity{}, {.run_identity = id});
//     remat::run(plan, disk, x, remat::forward_step(f), remat::adjoint_step(g));   // ... killed
//
//     remat::hdf5_store again(file, remat::level_capacity{},
//                             {.mode = remat::hdf5_store::open_mode::resume, .run_identity = id});
//     auto point = remat::find_resume_point(plan, [&](remat::level_t, remat::slot_t s) {
//         return again.snapshot_step(s); });
//     if (point) {
//         remat::release_except(again, 64, *point);                    // slots the schedule no longer holds
//         remat::run_report r = remat::run_resumed(plan, *point, again, x, remat::forward_step(f),
//                                                  remat::adjoint_step(g));
//     }   // point->forward_steps_saved forward steps were not run again
//
// The resumed gradient is bit-identical to an uninterrupted run's: the schedule's remaining actions are
// carried out exactly as they would have been, from the same x_k (read back checksum-verified).
#pragma once

#include "remat/detail/xxh64.hpp"
#include "remat/driver/executor.hpp"
#include "remat/driver/run.hpp"
#include "remat/driver/run_options.hpp"
#include "remat/driver/run_report.hpp"
#include "remat/driver/step_callables.hpp"
#include "remat/error.hpp"
#include "remat/schedule/action.hpp"
#include "remat/schedule/range.hpp"
#include "remat/store/snapshot_store.hpp"
#include "remat/store/snapshot_traits.hpp"
#include "remat/store/storage_level.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <vector>

#if __has_include(<cxxabi.h>)
#include <cxxabi.h>
#endif

namespace remat {

namespace detail {

/// A type's readable name ("remat::multilevel"), where the compiler can demangle it.
inline std::string type_name(const std::type_info& t)
{
#if __has_include(<cxxabi.h>)
    int status = 0;
    const std::unique_ptr<char, void (*)(void*)> name(abi::__cxa_demangle(t.name(), nullptr, nullptr, &status),
                                                      std::free);
    if (status == 0 && name)
        return name.get();
#endif
    return t.name();
}

template <snapshot_state State>
std::size_t state_bytes(const State& x)
{
    if constexpr (contiguous_state<State>)
        return snapshot_traits<State>::bytes(x).size;
    else
        return snapshot_traits<State>::size_bytes(x);
}

} // namespace detail

/// Which schedule and which state type a run is: the schedule's type, its step count and a hash of the
/// actions of its first forward sweep (what a resumed run relies on), and the state's type and snapshot
/// size. At most 255 bytes (longer type names are cut), as hdf5_store::options::run_identity takes it.
///
///     remat::run_identity(remat::revolve(1000, 10), x);
///     // "remat::revolve T=1000 sweep=0x1c3f...; state std::vector<double> 8388608 bytes"
template <schedule Schedule, snapshot_state State>
std::string run_identity(const Schedule& plan, const State& state)
{
    detail::xxh64_state h;
    auto cursor = plan.cursor();
    action a;
    while (cursor.next(a) && !std::holds_alternative<reverse>(a)) {
        const std::string text = to_string(a);
        h.update(text.data(), text.size());
        h.update("\n", 1);
    }
    char sweep[32];
    std::snprintf(sweep, sizeof sweep, "%016llx", static_cast<unsigned long long>(h.digest()));
    auto cut = [](std::string s, std::size_t n) { return s.size() <= n ? s : s.substr(0, n); };
    std::string state_type = detail::type_name(typeid(State));
    // std::vector<double, std::allocator<double> > reads better as std::vector<double>.
    if (const auto p = state_type.find(", std::allocator<"); p != std::string::npos)
        state_type = state_type.substr(0, p) + ">";
    return cut(detail::type_name(typeid(Schedule)), 80) + " T=" + std::to_string(plan.steps()) + " sweep=0x" + sweep +
           "; state " + cut(state_type, 100) + " " + std::to_string(detail::state_bytes(state)) + " bytes";
}

/// Where a killed run continues (find_resume_point).
struct resume_point {
    std::uint64_t actions = 0; ///< actions of the schedule already carried out, the store of x_step included
    step_t step = 0;           ///< the run continues from x_step ...
    level_t level = 0;         ///< ... read from this level
    slot_t slot = 0;           ///< ... and slot
    std::vector<store> held;   ///< every snapshot the schedule holds at that point (x_step's included)
    std::uint64_t forward_steps_saved = 0; ///< forward steps the schedule ran before that point
};

/// The most advanced point of `plan`'s first forward sweep (up to its first reverse) that a run killed
/// during that sweep can continue from: a store of x_K such that every snapshot the schedule holds there
/// is still held, as `held(level, slot)` tells (the step it holds, or -1). Nothing when there is none
/// (the run then starts again from x_0).
template <schedule Schedule, class Held>
std::optional<resume_point> find_resume_point(const Schedule& plan, Held&& held)
{
    std::map<std::pair<level_t, slot_t>, step_t> live; // what the schedule holds after each action
    std::optional<resume_point> best;
    std::uint64_t forward = 0;
    std::uint64_t index = 0;
    auto cursor = plan.cursor();
    action a;
    while (cursor.next(a)) {
        ++index;
        if (std::holds_alternative<reverse>(a))
            break;
        if (const auto* adv = std::get_if<advance>(&a)) {
            if (adv->taped) // a crash loses the tapes, which no store holds
                throw schedule_error("advance " + std::to_string(adv->from) + " " + std::to_string(adv->to) +
                                     " tape: tapes are not persisted, so a run of a plan with taped advances "
                                     "cannot resume (run it again from x_0)");
            forward += static_cast<std::uint64_t>(adv->to - adv->from);
        } else if (const auto* f = std::get_if<free_slot>(&a)) {
            live.erase({f->level, f->slot});
        } else if (const auto* s = std::get_if<store>(&a)) {
            live[{s->level, s->slot}] = s->step;
            bool all_held = true;
            for (const auto& [where, step] : live)
                all_held = all_held && held(where.first, where.second) == step;
            if (all_held) {
                resume_point p{index, s->step, s->level, s->slot, {}, forward};
                for (const auto& [where, step] : live)
                    p.held.push_back(store{where.first, where.second, step});
                best = std::move(p);
            }
        }
    }
    return best;
}

/// Releases, in the storage level `level`, every slot below `slots` that holds a snapshot the resume
/// point does not hold (left by the killed run after that point), so that the schedule may write them
/// again. `plan_level` is that level's number in the schedule (a level that becomes level 1 of a tiered
/// store: 1).
template <storage_level Level>
void release_except(Level& level, slot_t slots, const resume_point& point, level_t plan_level = 0)
{
    for (slot_t s = 0; s < slots; ++s) {
        if (level.snapshot_bytes(s) == 0)
            continue;
        bool kept = false;
        for (const auto& h : point.held)
            kept = kept || (h.level == plan_level && h.slot == s);
        if (!kept)
            level.release(s);
    }
}

namespace detail {

/// run_resumed's body: adopts the held snapshots, restores x_step, skips the actions already done and
/// applies the rest; on any failure the store's slots are released before the exception leaves.
template <class Store, class Executor, class Schedule>
run_report resume_plan(Executor& ex, const Schedule& plan, const resume_point& point, const run_options& options)
{
    try {
        for (const auto& h : point.held)
            ex.adopt(h);
        ex.apply(restore{point.level, point.slot, point.step});
        auto cursor = plan.cursor();
        action skipped;
        for (std::uint64_t i = 0; i < point.actions; ++i)
            if (!cursor.next(skipped))
                throw argument_error("the resume point lies after the schedule's end (action " +
                                     std::to_string(point.actions) + ")");
        apply_all<Store>(ex, cursor, options);
        return ex.finish();
    } catch (...) {
        ex.abort();
        throw;
    }
}

} // namespace detail

/// Carries out the rest of `plan` from `point`: reads x_step into `state` (checksum-verified), counts the
/// snapshots held there as the run's own, and applies every action after the point. The store must hold
/// exactly point.held (find_resume_point, release_except). The callables and options as remat::run's;
/// errors as remat::run; the report counts only the work done here (point.forward_steps_saved is what the
/// resume saved). A resume point lies in the first forward sweep, before x_T was reached, so the terminal
/// callable (optional, as in remat::run) is called here, once, exactly as in an uninterrupted run.
///
///     remat::run_resumed(plan, *point, again, x, remat::forward_step(f), remat::adjoint_step(g),
///                        remat::final_state(h));
template <schedule Schedule, store_for_run Store, snapshot_state State, class Forward, class Adjoint, class... Extras>
run_report run_resumed(const Schedule& plan, const resume_point& point, Store& store, State& state, Forward&& forward,
                       Adjoint&& adjoint, Extras&&... extras)
{
    if constexpr (detail::untagged_steps<Forward, Adjoint>) {
        static_assert(detail::always_false<Forward>,
                      "remat::run_resumed takes remat::forward_step(f), then remat::adjoint_step(g): wrap each "
                      "callable so that the two cannot be swapped");
        return {};
    } else {
        static_assert(detail::valid_extras<false, false, std::remove_cvref_t<Extras>...>,
                      "remat::run_resumed takes, after the two steps, at most one remat::final_state(h), one "
                      "remat::with_tapes(...) and one remat::run_options, in any order");
        const run_options options = detail::pick_value<detail::arg_role::options>(run_options{}, extras...);
        executor ex(store, state,
                    detail::bundle(std::forward<Forward>(forward), std::forward<Adjoint>(adjoint),
                                   std::forward<Extras>(extras)...),
                    plan.steps());
        ex.time_user_code(options.time_user_code);
        return detail::resume_plan<Store>(ex, plan, point, options);
    }
}

} // namespace remat
