// CVODES's own adjoint over the whole horizon (the baseline): one CVodeF, then CVodeB per backward problem.
#include "remat/cvodes/in_ram.hpp"

#include "handles.hpp"
#include "setup.hpp"

#include "remat/error.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>

namespace remat::cvodes {
namespace {

// One forward run and one backward problem; `first` also fills the forward results.
void run_one(const forward_problem& forward, const backward_problem* backward, double tf, long nd, in_ram_solution& out)
{
    std::exception_ptr user_error;
    std::string message;
    auto check = [&](int code, const char* call, detail::call_site where) {
        detail::check(code, call, where, std::exchange(user_error, nullptr), std::exchange(message, {}));
    };
    detail::context ctx;
    detail::forward_callbacks callbacks{&forward, &user_error, &message};
    detail::vector_ptr y = detail::new_vector(forward.y0.size(), ctx.get());
    std::ranges::copy(forward.y0, detail::elements(y.get()).begin());
    detail::vector_ptr q;
    if (!forward.q0.empty()) {
        q = detail::new_vector(forward.q0.size(), ctx.get());
        std::ranges::copy(forward.q0, detail::elements(q.get()).begin());
    }
    detail::backward_callbacks bcallbacks{backward, &user_error};
    detail::vector_ptr lambda;
    detail::vector_ptr qB;
    detail::system_objects objects;
    detail::system_objects bobjects;
    // Last, so CVodeFree runs before the vectors and solvers it points to are freed.
    detail::cvode_memory mem(forward.settings.lmm == method::bdf ? CV_BDF : CV_ADAMS, ctx.get());
    detail::configure_forward(mem.get(), callbacks, y.get(), q.get(), ctx.get(), objects);
    check(CVodeAdjInit(mem.get(), nd, CV_HERMITE), "CVodeAdjInit", {});
    check(CVodeSetStopTime(mem.get(), tf), "CVodeSetStopTime", {});
    double t = forward.t0;
    int ncheck = 0;
    check(CVodeF(mem.get(), tf, y.get(), &t, CV_NORMAL, &ncheck), "CVodeF", {0, forward.t0});
    if (out.final_state.empty()) {
        out.final_state.push_back(t);
        const auto ys = detail::elements(y.get());
        out.final_state.insert(out.final_state.end(), ys.begin(), ys.end());
        if (q) {
            double tq = t;
            check(CVodeGetQuad(mem.get(), &tq, q.get()), "CVodeGetQuad", {0, t});
            const auto qs = detail::elements(q.get());
            out.final_state.insert(out.final_state.end(), qs.begin(), qs.end());
        }
        long steps = 0;
        long evaluations = 0;
        check(CVodeGetNumSteps(mem.get(), &steps), "CVodeGetNumSteps", {0, t});
        check(CVodeGetNumRhsEvals(mem.get(), &evaluations), "CVodeGetNumRhsEvals", {0, t});
        out.forward_steps = steps;
        out.forward_rhs_evaluations = evaluations;
        out.checkpoints = ncheck;
    }
    if (backward == nullptr)
        return;
    lambda = detail::new_vector(forward.y0.size(), ctx.get());
    if (!backward->lambda_start.empty())
        std::ranges::copy(backward->lambda_start, detail::elements(lambda.get()).begin());
    if (backward->quadratures > 0)
        qB = detail::new_vector(backward->quadratures, ctx.get());
    const int which = detail::create_backward(mem.get(), bcallbacks, backward->t_start, lambda.get(), qB.get(),
                                              ctx.get(), bobjects, {0, backward->t_start});
    check(CVodeB(mem.get(), forward.t0, CV_NORMAL), "CVodeB", {0, backward->t_start});
    void* backward_mem = CVodeGetAdjCVodeBmem(mem.get(), which);
    long backward_steps = 0;
    long backward_evaluations = 0;
    check(CVodeGetNumSteps(backward_mem, &backward_steps), "CVodeGetNumSteps (backward)", {0, forward.t0});
    check(CVodeGetNumRhsEvals(backward_mem, &backward_evaluations), "CVodeGetNumRhsEvals (backward)", {0, forward.t0});
    out.backward_steps += backward_steps;
    out.backward_rhs_evaluations += backward_evaluations;
    backward_state s;
    s.t_start = backward->t_start;
    check(CVodeGetB(mem.get(), which, &s.t, lambda.get()), "CVodeGetB", {0, forward.t0});
    const auto l = detail::elements(lambda.get());
    s.lambda.assign(l.begin(), l.end());
    if (qB) {
        check(CVodeGetQuadB(mem.get(), which, &s.t, qB.get()), "CVodeGetQuadB", {0, forward.t0});
        const auto qs = detail::elements(qB.get());
        s.quadratures.assign(qs.begin(), qs.end());
    }
    out.backward.push_back(std::move(s));
}

} // namespace

in_ram_solution solve_in_ram(const forward_problem& forward, const std::vector<backward_problem>& backward, double tf,
                             long steps_per_checkpoint)
{
    detail::validate(forward);
    for (std::size_t b = 0; b < backward.size(); ++b) {
        detail::validate(backward[b], b, forward);
        if (backward[b].t_start > tf)
            throw argument_error("remat::cvodes::solve_in_ram: backward problem " + std::to_string(b) +
                                 " starts at t = " + detail::format(backward[b].t_start) +
                                 ", after tf = " + detail::format(tf));
    }
    if (!(std::isfinite(tf) && tf > forward.t0))
        throw argument_error("remat::cvodes::solve_in_ram: tf = " + detail::format(tf) +
                             " is not a finite time after t0 = " + detail::format(forward.t0));
    if (steps_per_checkpoint <= 0)
        throw argument_error("remat::cvodes::solve_in_ram: steps_per_checkpoint " +
                             std::to_string(steps_per_checkpoint) + " is not positive");
    in_ram_solution out;
    if (backward.empty())
        run_one(forward, nullptr, tf, steps_per_checkpoint, out);
    for (const backward_problem& b : backward)
        run_one(forward, &b, tf, steps_per_checkpoint, out);
    return out;
}

} // namespace remat::cvodes
