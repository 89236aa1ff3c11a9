// The windowed adjoint. Every integration of a window, in either sweep, gets a CVODES memory of its own,
// created, configured and initialised at the window's start exactly alike and freed at its end: nothing
// a previous window left in CVODES (step-size history, stale Nordsieck columns, Jacobian age, adjoint
// checkpoints) can reach the next one, so a recomputation repeats the first integration bit for bit.
// (CVodeReInit is not enough: it leaves fields that CVodeCreate zeroes — the step-size history tau, the
// convergence rate, gamma — as the last integration left them.) Its vectors' arrays come from a pool
// (vector_pool.hpp), so the fresh memory costs no allocation or page faults after the first windows.
#include "remat/cvodes/adjoint_solver.hpp"

#include "handles.hpp"
#include "setup.hpp"
#include "vector_pool.hpp"

#include "remat/detail/checked_math.hpp"
#include "remat/error.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <string>

namespace remat::cvodes {
namespace {

// One backward problem's vectors (its callbacks point into the solver's problem list).
struct backward_slot {
    detail::backward_callbacks callbacks;
    detail::vector_ptr lambda;
    detail::vector_ptr quadratures;
};

// One window's CVODES: the memory (declared last, so CVodeFree runs before the solvers it points to are
// freed) and the solvers of the forward and backward systems.
struct window_memory {
    detail::system_objects forward_objects;
    std::vector<detail::system_objects> backward_objects;
    std::vector<int> which;
    detail::cvode_memory mem;
    window_memory(int lmm, SUNContext ctx, std::size_t backward)
        : backward_objects(backward), which(backward, -1), mem(lmm, ctx)
    {
    }
};

// What window_working_bytes() reports, saturated at 2^64 - 1 (the constructor refuses that).
std::uint64_t working_bytes(std::uint64_t n, std::uint64_t nq, std::uint64_t nd, const integrator_settings& s) noexcept
{
    using remat::detail::add_saturated;
    using remat::detail::mul_saturated;
    const std::uint64_t order = s.max_order > 0        ? static_cast<std::uint64_t>(s.max_order)
                                : s.lmm == method::bdf ? 5
                                                       : 12;
    // Hermite data: y and y' per stored step; one in-window checkpoint: the Nordsieck array of y and q.
    const std::uint64_t elements = add_saturated(mul_saturated(add_saturated(nd, 1), mul_saturated(2, n)),
                                                 mul_saturated(order + 2, add_saturated(n, nq)));
    return mul_saturated(elements, sizeof(double));
}

} // namespace

struct adjoint_solver::impl {
    forward_problem problem;
    std::vector<backward_problem> backward_problems;
    solver_options options;
    std::size_t n = 0;
    std::size_t nq = 0;

    std::exception_ptr user_error; // where the trampolines park a thrown exception
    std::string message;           // CVODES's last error message
    detail::context ctx;
    detail::vector_pool pool; // before every vector: they give their arrays back to it
    detail::forward_callbacks callbacks;
    detail::vector_ptr y;
    detail::vector_ptr q;
    std::vector<backward_slot> slots;
    std::vector<backward_state> states;
    std::vector<double> start_copy; // the window's start state, for the observer

    impl(forward_problem f, std::vector<backward_problem> bp, solver_options o)
        : problem(std::move(f)), backward_problems(std::move(bp)), options(std::move(o)), n(problem.y0.size()),
          nq(problem.q0.size())
    {
        callbacks = {&problem, &user_error, &message};
        y = pool.new_vector(n, ctx.get());
        std::ranges::copy(problem.y0, detail::elements(y.get()).begin());
        if (nq > 0) {
            q = pool.new_vector(nq, ctx.get());
            std::ranges::copy(problem.q0, detail::elements(q.get()).begin());
        }
        slots.resize(backward_problems.size());
        for (std::size_t b = 0; b < slots.size(); ++b) {
            slots[b].callbacks = {&backward_problems[b], &user_error};
            slots[b].lambda = pool.new_vector(n, ctx.get());
            if (backward_problems[b].quadratures > 0)
                slots[b].quadratures = pool.new_vector(backward_problems[b].quadratures, ctx.get());
        }
        reset();
    }

    [[nodiscard]] int lmm() const noexcept { return problem.settings.lmm == method::bdf ? CV_BDF : CV_ADAMS; }

    // A new CVODES memory at the start of window k, with the forward system and the adjoint module.
    std::unique_ptr<window_memory> open_window()
    {
        pool.restart(); // this integration's vectors get the arrays the same requests got before
        auto w = std::make_unique<window_memory>(lmm(), ctx.get(), slots.size());
        detail::configure_forward(w->mem.get(), callbacks, y.get(), q.get(), ctx.get(), w->forward_objects);
        // Hermite interpolation: CVODES's default, and the one that cannot fail in a recomputation.
        check(CVodeAdjInit(w->mem.get(), options.steps_per_checkpoint, CV_HERMITE), "CVodeAdjInit", {});
        return w;
    }

    void reset()
    {
        states.assign(backward_problems.size(), {});
        for (std::size_t b = 0; b < states.size(); ++b) {
            const backward_problem& p = backward_problems[b];
            states[b].t_start = states[b].t = p.t_start;
            states[b].lambda = p.lambda_start.empty() ? std::vector<double>(n, 0.0) : p.lambda_start;
            states[b].quadratures.assign(p.quadratures, 0.0);
        }
    }

    void check(int code, const char* call, detail::call_site where)
    {
        if (code < 0) {
            std::exception_ptr e = std::exchange(user_error, nullptr);
            detail::fail(call, code, where, e, std::exchange(message, {}));
        }
        user_error = nullptr; // a recoverable failure CVODES got past
        message.clear();
    }

    void check_state(step_t k, std::span<const double> state) const
    {
        if (state.size() != 1 + n + nq)
            throw argument_error("remat::cvodes: window " + std::to_string(k) + "'s state has " +
                                 std::to_string(state.size()) + " values, expected " + std::to_string(1 + n + nq) +
                                 " (t, " + std::to_string(n) + " unknowns, " + std::to_string(nq) + " quadratures)");
    }

    // Re-initialises CVODES at the window's start, exactly alike in both sweeps; runs the window forward
    // (recorded for the adjoint module) and leaves its end in `state`. Returns what it did (reported
    // here in the forward sweep; the reverse step reports after its backward integration).
    window_event integrate(window_memory& w, sweep which, step_t k, std::span<double> state, window_end end)
    {
        void* mem = w.mem.get();
        check_state(k, state);
        const double t_start = state[0];
        detail::call_site where{k, t_start};
        if (!(end.t_end > t_start))
            throw argument_error("remat::cvodes: window " + std::to_string(k) + " ends at t = " +
                                 detail::format(end.t_end) + ", not after its start t = " + detail::format(t_start));
        if (end.steps <= 0)
            throw argument_error("remat::cvodes: window " + std::to_string(k) + " has " + std::to_string(end.steps) +
                                 " steps");
        if (options.on_window)
            start_copy.assign(state.begin(), state.end());
        std::copy_n(state.begin() + 1, n, detail::elements(y.get()).begin());
        check(CVodeReInit(mem, t_start, y.get()), "CVodeReInit", where);
        if (nq > 0) {
            std::copy_n(state.begin() + 1 + static_cast<std::ptrdiff_t>(n), nq, detail::elements(q.get()).begin());
            check(CVodeQuadReInit(mem, q.get()), "CVodeQuadReInit", where);
        }
        check(CVodeSetStopTime(mem, end.t_end), "CVodeSetStopTime", where);
        double t = t_start;
        int ncheck = 0;
        const bool by_steps = end.steps != std::numeric_limits<std::int64_t>::max();
        const int task = by_steps ? CV_ONE_STEP : CV_NORMAL;
        for (std::int64_t s = 0; s < (by_steps ? end.steps : 1) && t != end.t_end; ++s) {
            where.time = t;
            check(CVodeF(mem, end.t_end, y.get(), &t, task, &ncheck), "CVodeF", where);
        }
        where.time = t;
        state[0] = t;
        std::ranges::copy(detail::elements(y.get()), state.begin() + 1);
        if (nq > 0) {
            double tq = t;
            check(CVodeGetQuad(mem, &tq, q.get()), "CVodeGetQuad", where);
            std::ranges::copy(detail::elements(q.get()), state.begin() + 1 + static_cast<std::ptrdiff_t>(n));
        }
        long steps = 0;
        long evaluations = 0;
        check(CVodeGetNumSteps(mem, &steps), "CVodeGetNumSteps", where);
        check(CVodeGetNumRhsEvals(mem, &evaluations), "CVodeGetNumRhsEvals", where);
        window_event event{.window = k,
                           .sweep = which,
                           .start_state = start_copy,
                           .end_state = state,
                           .steps = steps,
                           .rhs_evaluations = evaluations};
        if (options.on_window && which == sweep::forward)
            options.on_window(event);
        return event;
    }

    void reverse(step_t k, std::span<double> state, window_end end)
    {
        const double t_start = state.empty() ? 0.0 : state[0];
        std::unique_ptr<window_memory> w = open_window();
        window_event event = integrate(*w, sweep::reverse, k, state, end);
        void* mem = w->mem.get();
        const double t_end = state[0];
        detail::call_site where{k, t_end};
        bool any = false;
        for (std::size_t b = 0; b < slots.size(); ++b) {
            backward_state& s = states[b];
            backward_slot& slot = slots[b];
            if (s.t_start <= t_start)
                continue; // starts in an earlier window (or at this one's start)
            if (s.t_start < t_end)
                throw argument_error("remat::cvodes: backward problem " + std::to_string(b) +
                                     " starts at t = " + detail::format(s.t_start) + ", inside window " +
                                     std::to_string(k) + " [" + detail::format(t_start) + ", " + detail::format(t_end) +
                                     "]: make its start a window boundary");
            if (s.t != t_end)
                throw argument_error("remat::cvodes: backward problem " + std::to_string(b) +
                                     " stands at t = " + detail::format(s.t) + ", not at window " + std::to_string(k) +
                                     "'s end t = " + detail::format(t_end) + ": the reverse steps must come in order");
            std::ranges::copy(s.lambda, detail::elements(slot.lambda.get()).begin());
            if (slot.quadratures)
                std::ranges::copy(s.quadratures, detail::elements(slot.quadratures.get()).begin());
            w->which[b] = detail::create_backward(mem, slot.callbacks, t_end, slot.lambda.get(), slot.quadratures.get(),
                                                  ctx.get(), w->backward_objects[b], where);
            any = true;
        }
        if (any) {
            where.time = t_start;
            check(CVodeB(mem, t_start, CV_NORMAL), "CVodeB", where);
            collect_backward(*w, k, t_start, event);
        }
        if (options.on_window)
            options.on_window(event);
    }

    // The backward problems' lambda and quadratures at the window's start, carried to the next reverse
    // step, and their work for the report.
    void collect_backward(window_memory& w, step_t k, double t_start, window_event& event)
    {
        void* mem = w.mem.get();
        const detail::call_site where{k, t_start};
        for (std::size_t b = 0; b < slots.size(); ++b) {
            backward_slot& slot = slots[b];
            if (w.which[b] < 0)
                continue;
            void* backward_mem = CVodeGetAdjCVodeBmem(mem, w.which[b]);
            long steps = 0;
            long evaluations = 0;
            check(CVodeGetNumSteps(backward_mem, &steps), "CVodeGetNumSteps (backward)", where);
            check(CVodeGetNumRhsEvals(backward_mem, &evaluations), "CVodeGetNumRhsEvals (backward)", where);
            event.backward_steps += steps;
            event.backward_rhs_evaluations += evaluations;
            double t = t_start;
            check(CVodeGetB(mem, w.which[b], &t, slot.lambda.get()), "CVodeGetB", where);
            std::ranges::copy(detail::elements(slot.lambda.get()), states[b].lambda.begin());
            if (slot.quadratures) {
                check(CVodeGetQuadB(mem, w.which[b], &t, slot.quadratures.get()), "CVodeGetQuadB", where);
                std::ranges::copy(detail::elements(slot.quadratures.get()), states[b].quadratures.begin());
            }
            states[b].t = t;
        }
    }
};

adjoint_solver::adjoint_solver(forward_problem forward, std::vector<backward_problem> backward, solver_options options)
{
    detail::validate(forward);
    for (std::size_t b = 0; b < backward.size(); ++b)
        detail::validate(backward[b], b, forward);
    if (options.steps_per_checkpoint <= 0)
        throw argument_error("remat::cvodes: steps_per_checkpoint " + std::to_string(options.steps_per_checkpoint) +
                             " is not positive");
    // CVodeAdjInit allocates the interpolation data of steps_per_checkpoint + 1 steps up front: a count past 64
    // bits of bytes wrapped inside SUNDIALS (a small allocation, then a solve that never ended).
    if (working_bytes(forward.y0.size(), forward.q0.size(), static_cast<std::uint64_t>(options.steps_per_checkpoint),
                      forward.settings) == remat::detail::uint64_max)
        throw argument_error("remat::cvodes: steps_per_checkpoint " + std::to_string(options.steps_per_checkpoint) +
                             " needs more than 2^64 bytes of interpolation data for " +
                             std::to_string(forward.y0.size()) + " unknowns");
    impl_ = std::make_unique<impl>(std::move(forward), std::move(backward), std::move(options));
}

adjoint_solver::~adjoint_solver() = default;
adjoint_solver::adjoint_solver(adjoint_solver&&) noexcept = default;
adjoint_solver& adjoint_solver::operator=(adjoint_solver&&) noexcept = default;

std::size_t adjoint_solver::state_size() const noexcept
{
    return 1 + impl_->n + impl_->nq;
}

std::vector<double> adjoint_solver::initial_state() const
{
    std::vector<double> x;
    x.reserve(state_size());
    x.push_back(impl_->problem.t0);
    x.insert(x.end(), impl_->problem.y0.begin(), impl_->problem.y0.end());
    x.insert(x.end(), impl_->problem.q0.begin(), impl_->problem.q0.end());
    return x;
}

void adjoint_solver::forward(step_t k, std::span<double> state, window_end end)
{
    const std::unique_ptr<window_memory> w = impl_->open_window();
    impl_->integrate(*w, sweep::forward, k, state, end);
}

void adjoint_solver::reverse(step_t k, std::span<double> state, window_end end)
{
    impl_->reverse(k, state, end);
}

void adjoint_solver::reset_backward()
{
    impl_->reset();
}

const std::vector<backward_state>& adjoint_solver::backward() const noexcept
{
    return impl_->states;
}

const std::vector<backward_problem>& adjoint_solver::backward_problems() const noexcept
{
    return impl_->backward_problems;
}

const forward_problem& adjoint_solver::problem() const noexcept
{
    return impl_->problem;
}

std::uint64_t adjoint_solver::window_working_bytes() const noexcept
{
    return working_bytes(impl_->n, impl_->nq, static_cast<std::uint64_t>(impl_->options.steps_per_checkpoint),
                         impl_->problem.settings);
}

} // namespace remat::cvodes
