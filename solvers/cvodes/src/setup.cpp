// The trampolines (user data -> C++ callables) and the set-up of a CVODES system from its settings.
#include "setup.hpp"

#include "remat/error.hpp"

#include <cvodes/cvodes_ls.h>
#include <sunlinsol/sunlinsol_band.h>
#include <sunlinsol/sunlinsol_dense.h>
#include <sunlinsol/sunlinsol_spgmr.h>
#include <sunmatrix/sunmatrix_band.h>
#include <sunmatrix/sunmatrix_dense.h>
#include <sunnonlinsol/sunnonlinsol_fixedpoint.h>

#include <cmath>
#include <string>
#include <variant>

namespace remat::cvodes::detail {
namespace {

std::span<const double> in(N_Vector v) noexcept
{
    return elements(v);
}

dense_matrix_view dense(SUNMatrix m) noexcept
{
    return {SUNDenseMatrix_Data(m), static_cast<std::size_t>(SUNDenseMatrix_Rows(m)),
            static_cast<std::size_t>(SUNDenseMatrix_Columns(m))};
}

// Each trampoline: a user exception is parked in *error and CVODES is told "unrecoverable" (-1).
template <class Callbacks, class Call>
int guarded(void* data, Call&& call) noexcept
{
    auto* c = static_cast<Callbacks*>(data);
    try {
        return call(*c->problem);
    } catch (...) {
        *c->error = std::current_exception();
        return -1;
    }
}

int forward_rhs(sunrealtype t, N_Vector y, N_Vector ydot, void* data)
{
    return guarded<forward_callbacks>(data, [&](const forward_problem& p) { return p.rhs(t, in(y), elements(ydot)); });
}

int forward_quadrature(sunrealtype t, N_Vector y, N_Vector qdot, void* data)
{
    return guarded<forward_callbacks>(data,
                                      [&](const forward_problem& p) { return p.quadrature(t, in(y), elements(qdot)); });
}

int forward_jacobian(sunrealtype t, N_Vector y, N_Vector, SUNMatrix J, void* data, N_Vector, N_Vector, N_Vector)
{
    return guarded<forward_callbacks>(data, [&](const forward_problem& p) { return p.jacobian(t, in(y), dense(J)); });
}

int backward_rhs(sunrealtype t, N_Vector y, N_Vector yB, N_Vector yBdot, void* data)
{
    return guarded<backward_callbacks>(
        data, [&](const backward_problem& p) { return p.rhs(t, in(y), in(yB), elements(yBdot)); });
}

int backward_quadrature(sunrealtype t, N_Vector y, N_Vector yB, N_Vector qBdot, void* data)
{
    return guarded<backward_callbacks>(
        data, [&](const backward_problem& p) { return p.quadrature(t, in(y), in(yB), elements(qBdot)); });
}

int backward_jacobian(sunrealtype t, N_Vector y, N_Vector yB, N_Vector, SUNMatrix J, void* data, N_Vector, N_Vector,
                      N_Vector)
{
    return guarded<backward_callbacks>(
        data, [&](const backward_problem& p) { return p.jacobian(t, in(y), in(yB), dense(J)); });
}

// CVODES's messages go into the exception instead of stderr (the library never prints). Backward
// problems created later inherit the handler.
void keep_message(int, const char* module, const char* function, char* message, void* data)
{
    auto* c = static_cast<forward_callbacks*>(data);
    if (c->message != nullptr)
        *c->message = std::string(module) + " " + function + ": " + message;
}

int lmm_of(method m)
{
    return m == method::bdf ? CV_BDF : CV_ADAMS;
}

// The linear or nonlinear solver for one system; `attach` gets (LS, matrix) or the nonlinear solver.
template <class AttachLinear, class AttachNonlinear>
void make_solvers(const iteration& it, N_Vector y, SUNContext ctx, system_objects& objects,
                  AttachLinear&& attach_linear, AttachNonlinear&& attach_nonlinear)
{
    const auto n = N_VGetLength(y);
    std::visit(
        [&](const auto& choice) {
            using T = std::decay_t<decltype(choice)>;
            if constexpr (std::is_same_v<T, newton_dense>) {
                objects.matrix.reset(check_created(SUNDenseMatrix(n, n, ctx), "SUNDenseMatrix"));
                objects.linear.reset(check_created(SUNLinSol_Dense(y, objects.matrix.get(), ctx), "SUNLinSol_Dense"));
                attach_linear(objects.linear.get(), objects.matrix.get());
            } else if constexpr (std::is_same_v<T, newton_band>) {
                objects.matrix.reset(check_created(SUNBandMatrix(n, choice.upper, choice.lower, ctx), "SUNBandMatrix"));
                objects.linear.reset(check_created(SUNLinSol_Band(y, objects.matrix.get(), ctx), "SUNLinSol_Band"));
                attach_linear(objects.linear.get(), objects.matrix.get());
            } else if constexpr (std::is_same_v<T, newton_gmres>) {
                objects.linear.reset(
                    check_created(SUNLinSol_SPGMR(y, SUN_PREC_NONE, choice.krylov_dimension, ctx), "SUNLinSol_SPGMR"));
                attach_linear(objects.linear.get(), nullptr);
            } else {
                objects.nonlinear.reset(
                    check_created(SUNNonlinSol_FixedPoint(y, choice.anderson_depth, ctx), "SUNNonlinSol_FixedPoint"));
                attach_nonlinear(objects.nonlinear.get());
            }
        },
        it);
}

void check_settings(const integrator_settings& s, std::size_t size, bool quadratures, const std::string& who)
{
    auto bad = [&](const std::string& what) { throw argument_error(who + ": " + what); };
    auto positive = [](double v) { return std::isfinite(v) && v >= 0; };
    if (!(std::isfinite(s.relative_tolerance) && s.relative_tolerance >= 0))
        bad("relative_tolerance " + format(s.relative_tolerance) + " is not a finite value >= 0");
    if (s.absolute_tolerances.empty() ? !positive(s.absolute_tolerance) : false)
        bad("absolute_tolerance " + format(s.absolute_tolerance) + " is not a finite value >= 0");
    if (!s.absolute_tolerances.empty() && s.absolute_tolerances.size() != size)
        bad(std::to_string(s.absolute_tolerances.size()) + " absolute_tolerances for " + std::to_string(size) +
            " unknowns");
    for (std::size_t i = 0; i < s.absolute_tolerances.size(); ++i)
        if (!positive(s.absolute_tolerances[i]))
            bad("absolute_tolerances[" + std::to_string(i) + "] = " + format(s.absolute_tolerances[i]) +
                " is not a finite value >= 0");
    // CVODES weighs the error of component i by 1 / (rtol |y_i| + atol_i): with both zero it refuses the
    // first step (a backward problem's only after the whole forward sweep).
    if (s.relative_tolerance == 0) {
        if (s.absolute_tolerances.empty() && s.absolute_tolerance == 0)
            bad("relative_tolerance 0 with absolute_tolerance 0 (no error weight: set either above 0)");
        for (std::size_t i = 0; i < s.absolute_tolerances.size(); ++i)
            if (s.absolute_tolerances[i] == 0)
                bad("relative_tolerance 0 with absolute_tolerances[" + std::to_string(i) +
                    "] = 0 (no error weight: set either above 0)");
    }
    // Handed to CVODES whenever there are quadratures, in or out of the error control (CVODES itself lets a
    // NaN through).
    if (quadratures && !positive(s.quadrature_relative_tolerance))
        bad("quadrature_relative_tolerance " + format(s.quadrature_relative_tolerance) + " is not a finite value >= 0");
    if (quadratures && !positive(s.quadrature_absolute_tolerance))
        bad("quadrature_absolute_tolerance " + format(s.quadrature_absolute_tolerance) + " is not a finite value >= 0");
    if (quadratures && s.quadrature_error_control && s.quadrature_relative_tolerance == 0 &&
        s.quadrature_absolute_tolerance == 0)
        bad("quadrature_relative_tolerance 0 with quadrature_absolute_tolerance 0 under quadrature_error_control "
            "(no error weight: set either above 0)");
    if (s.max_steps <= 0)
        bad("max_steps " + std::to_string(s.max_steps) + " is not positive");
    if (s.max_order < 0 || s.max_order > (s.lmm == method::bdf ? 5 : 12))
        bad("max_order " + std::to_string(s.max_order) + " is outside 0 (default) .. " +
            (s.lmm == method::bdf ? "5 for BDF" : "12 for Adams"));
    if (!positive(s.max_step))
        bad("max_step " + format(s.max_step) + " is not a finite value >= 0");
    if (!positive(s.nonlinear_convergence_coefficient))
        bad("nonlinear_convergence_coefficient " + format(s.nonlinear_convergence_coefficient) +
            " is not a finite value >= 0");
    // SUNNonlinSol_FixedPoint crashed on a negative depth (a segmentation fault in the first window); SPGMR
    // took a negative dimension as its default.
    if (const auto* fp = std::get_if<fixed_point>(&s.iteration); fp && fp->anderson_depth < 0)
        bad("fixed_point anderson_depth " + std::to_string(fp->anderson_depth) + " is negative (0: no acceleration)");
    if (const auto* gmres = std::get_if<newton_gmres>(&s.iteration); gmres && gmres->krylov_dimension < 0)
        bad("newton_gmres krylov_dimension " + std::to_string(gmres->krylov_dimension) +
            " is negative (0: SUNDIALS's default)");
    if (const auto* band = std::get_if<newton_band>(&s.iteration)) {
        const auto n = static_cast<std::int64_t>(size);
        if (band->upper < 0 || band->lower < 0 || band->upper >= n || band->lower >= n)
            bad("band widths upper " + std::to_string(band->upper) + ", lower " + std::to_string(band->lower) +
                " do not fit " + std::to_string(size) + " unknowns");
    }
}

// A NaN or an infinity in a starting value is refused here, naming the component: CVODES would take it
// and fail later with a misleading convergence error, or only after the whole forward sweep.
void check_finite(const std::vector<double>& values, const std::string& who, const char* name)
{
    for (std::size_t i = 0; i < values.size(); ++i)
        if (!std::isfinite(values[i]))
            throw argument_error(who + ": " + name + "[" + std::to_string(i) + "] = " + format(values[i]) +
                                 " is not finite");
}

} // namespace

void configure_forward(void* mem, forward_callbacks& callbacks, N_Vector y, N_Vector q, SUNContext ctx,
                       system_objects& objects)
{
    const forward_problem& p = *callbacks.problem;
    const integrator_settings& s = p.settings;
    const call_site setup{};
    check(CVodeSetErrHandlerFn(mem, keep_message, &callbacks), "CVodeSetErrHandlerFn", setup);
    check(CVodeInit(mem, forward_rhs, p.t0, y), "CVodeInit", setup);
    check(CVodeSetUserData(mem, &callbacks), "CVodeSetUserData", setup);
    if (s.absolute_tolerances.empty()) {
        check(CVodeSStolerances(mem, s.relative_tolerance, s.absolute_tolerance), "CVodeSStolerances", setup);
    } else {
        vector_ptr atol = new_vector(s.absolute_tolerances.size(), ctx);
        std::ranges::copy(s.absolute_tolerances, elements(atol.get()).begin());
        check(CVodeSVtolerances(mem, s.relative_tolerance, atol.get()), "CVodeSVtolerances", setup);
    }
    make_solvers(
        s.iteration, y, ctx, objects,
        [&](SUNLinearSolver ls, SUNMatrix m) {
            check(CVodeSetLinearSolver(mem, ls, m), "CVodeSetLinearSolver", setup);
            if (p.jacobian && std::holds_alternative<newton_dense>(s.iteration))
                check(CVodeSetJacFn(mem, forward_jacobian), "CVodeSetJacFn", setup);
        },
        [&](SUNNonlinearSolver nls) { check(CVodeSetNonlinearSolver(mem, nls), "CVodeSetNonlinearSolver", setup); });
    check(CVodeSetMaxNumSteps(mem, s.max_steps), "CVodeSetMaxNumSteps", setup);
    if (s.max_order > 0)
        check(CVodeSetMaxOrd(mem, s.max_order), "CVodeSetMaxOrd", setup);
    if (s.max_step > 0)
        check(CVodeSetMaxStep(mem, s.max_step), "CVodeSetMaxStep", setup);
    if (s.nonlinear_convergence_coefficient > 0)
        check(CVodeSetNonlinConvCoef(mem, s.nonlinear_convergence_coefficient), "CVodeSetNonlinConvCoef", setup);
    if (q != nullptr) {
        check(CVodeQuadInit(mem, forward_quadrature, q), "CVodeQuadInit", setup);
        check(CVodeSetQuadErrCon(mem, s.quadrature_error_control ? SUNTRUE : SUNFALSE), "CVodeSetQuadErrCon", setup);
        check(CVodeQuadSStolerances(mem, s.quadrature_relative_tolerance, s.quadrature_absolute_tolerance),
              "CVodeQuadSStolerances", setup);
    }
}

int create_backward(void* mem, backward_callbacks& callbacks, double tB0, N_Vector yB, N_Vector qB, SUNContext ctx,
                    system_objects& objects, call_site where)
{
    const backward_problem& p = *callbacks.problem;
    const integrator_settings& s = p.settings;
    int which = -1;
    check(CVodeCreateB(mem, lmm_of(s.lmm), &which), "CVodeCreateB", where);
    check(CVodeInitB(mem, which, backward_rhs, tB0, yB), "CVodeInitB", where);
    check(CVodeSetUserDataB(mem, which, &callbacks), "CVodeSetUserDataB", where);
    if (s.absolute_tolerances.empty()) {
        check(CVodeSStolerancesB(mem, which, s.relative_tolerance, s.absolute_tolerance), "CVodeSStolerancesB", where);
    } else {
        vector_ptr atol = new_vector(s.absolute_tolerances.size(), ctx);
        std::ranges::copy(s.absolute_tolerances, elements(atol.get()).begin());
        check(CVodeSVtolerancesB(mem, which, s.relative_tolerance, atol.get()), "CVodeSVtolerancesB", where);
    }
    make_solvers(
        s.iteration, yB, ctx, objects,
        [&](SUNLinearSolver ls, SUNMatrix m) {
            check(CVodeSetLinearSolverB(mem, which, ls, m), "CVodeSetLinearSolverB", where);
            if (p.jacobian && std::holds_alternative<newton_dense>(s.iteration))
                check(CVodeSetJacFnB(mem, which, backward_jacobian), "CVodeSetJacFnB", where);
        },
        [&](SUNNonlinearSolver nls) {
            check(CVodeSetNonlinearSolverB(mem, which, nls), "CVodeSetNonlinearSolverB", where);
        });
    check(CVodeSetMaxNumStepsB(mem, which, s.max_steps), "CVodeSetMaxNumStepsB", where);
    if (s.max_order > 0)
        check(CVodeSetMaxOrdB(mem, which, s.max_order), "CVodeSetMaxOrdB", where);
    if (s.max_step > 0)
        check(CVodeSetMaxStepB(mem, which, s.max_step), "CVodeSetMaxStepB", where);
    // CVODES has no ...B form of this one: the backward problem's own CVODES memory takes it.
    if (s.nonlinear_convergence_coefficient > 0)
        check(CVodeSetNonlinConvCoef(CVodeGetAdjCVodeBmem(mem, which), s.nonlinear_convergence_coefficient),
              "CVodeSetNonlinConvCoef (backward)", where);
    if (qB != nullptr) {
        check(CVodeQuadInitB(mem, which, backward_quadrature, qB), "CVodeQuadInitB", where);
        check(CVodeSetQuadErrConB(mem, which, s.quadrature_error_control ? SUNTRUE : SUNFALSE), "CVodeSetQuadErrConB",
              where);
        check(CVodeQuadSStolerancesB(mem, which, s.quadrature_relative_tolerance, s.quadrature_absolute_tolerance),
              "CVodeQuadSStolerancesB", where);
    }
    return which;
}

void validate(const forward_problem& p)
{
    if (p.y0.empty())
        throw argument_error("remat::cvodes: the forward problem has no unknowns (y0 is empty)");
    if (!std::isfinite(p.t0))
        throw argument_error("remat::cvodes: t0 = " + format(p.t0) + " is not finite");
    if (!p.rhs)
        throw argument_error("remat::cvodes: the forward problem has no right-hand side (rhs)");
    if (!p.q0.empty() && !p.quadrature)
        throw argument_error("remat::cvodes: " + std::to_string(p.q0.size()) +
                             " forward quadratures (q0) but no quadrature callable");
    if (p.q0.empty() && p.quadrature)
        throw argument_error("remat::cvodes: a forward quadrature callable but no initial values (q0 is empty)");
    check_finite(p.y0, "remat::cvodes: the forward problem", "y0");
    check_finite(p.q0, "remat::cvodes: the forward problem", "q0");
    check_settings(p.settings, p.y0.size(), !p.q0.empty(), "remat::cvodes: the forward problem's settings");
}

void validate(const backward_problem& b, std::size_t index, const forward_problem& p)
{
    const std::string who = "remat::cvodes: backward problem " + std::to_string(index);
    if (!b.rhs)
        throw argument_error(who + " has no right-hand side (rhs)");
    if (!b.lambda_start.empty() && b.lambda_start.size() != p.y0.size())
        throw argument_error(who + ": lambda_start has " + std::to_string(b.lambda_start.size()) + " values for " +
                             std::to_string(p.y0.size()) + " unknowns");
    check_finite(b.lambda_start, who, "lambda_start");
    if (b.quadratures > 0 && !b.quadrature)
        throw argument_error(who + ": " + std::to_string(b.quadratures) + " quadratures but no quadrature callable");
    if (b.quadratures == 0 && b.quadrature)
        throw argument_error(who + ": a quadrature callable but quadratures = 0");
    if (!std::isfinite(b.t_start) || b.t_start <= p.t0)
        throw argument_error(who + ": t_start = " + format(b.t_start) +
                             " is not a finite time after t0 = " + format(p.t0));
    check_settings(b.settings, p.y0.size(), b.quadratures > 0, who + "'s settings");
}

} // namespace remat::cvodes::detail
