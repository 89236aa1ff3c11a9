// remat/cvodes/problem.hpp — what the user writes: the ODE, its quadratures and the adjoint problems, as
// C++ callables, and how CVODES integrates them.
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace remat::cvodes {

/// A user callable. It may return nothing (success) or an int in CVODES's convention: 0 success, > 0 a
/// recoverable failure (CVODES retries with a smaller step), < 0 an unrecoverable one. An exception
/// thrown by it ends the solve; it comes back nested in remat::cvodes::solver_error.
///
///     remat::cvodes::rhs_fn f = [](double, std::span<const double> y, std::span<double> dy) { dy[0] = -y[0]; };
///     remat::cvodes::rhs_fn g = [](double t, auto, std::span<double>) { return t > 1 ? -1 : 0; };
template <class... Args>
class callback {
public:
    callback() = default;
    template <class F>
        requires(!std::same_as<std::remove_cvref_t<F>, callback> && std::invocable<F&, Args...>)
    callback(F f) // NOLINT(google-explicit-constructor): lambdas convert as std::function does
    {
        if constexpr (std::is_void_v<std::invoke_result_t<F&, Args...>>)
            f_ = [g = std::move(f)](Args... args) mutable {
                std::invoke(g, args...);
                return 0;
            };
        else
            f_ = [g = std::move(f)](Args... args) mutable { return static_cast<int>(std::invoke(g, args...)); };
    }
    int operator()(Args... args) const { return f_(args...); }
    explicit operator bool() const noexcept { return static_cast<bool>(f_); }

private:
    std::function<int(Args...)> f_;
};

/// A dense, column-major matrix owned by CVODES (its Jacobian), addressed as J(row, column).
///
///     [](double, std::span<const double> y, remat::cvodes::dense_matrix_view J) { J(0, 1) = 2 * y[1]; }
class dense_matrix_view {
public:
    dense_matrix_view(double* data, std::size_t rows, std::size_t columns) noexcept
        : data_(data), rows_(rows), columns_(columns)
    {
    }
    double& operator()(std::size_t row, std::size_t column) const noexcept { return data_[column * rows_ + row]; }
    [[nodiscard]] std::size_t rows() const noexcept { return rows_; }
    [[nodiscard]] std::size_t columns() const noexcept { return columns_; }

private:
    double* data_;
    std::size_t rows_;
    std::size_t columns_;
};

/// f(t, y) -> ydot, and the forward quadratures' integrand (t, y) -> qdot.
using rhs_fn = callback<double, std::span<const double>, std::span<double>>;
/// df/dy(t, y) written into J (dense Newton only; without it CVODES uses difference quotients).
using jacobian_fn = callback<double, std::span<const double>, dense_matrix_view>;
/// The adjoint's right-hand side (t, y, lambda) -> lambda_dot, and its quadratures' integrand
/// (t, y, lambda) -> qB_dot, in CVODES's convention (integrated from t_start back to t0).
using backward_rhs_fn = callback<double, std::span<const double>, std::span<const double>, std::span<double>>;
/// d(lambda_dot)/d(lambda)(t, y, lambda) written into J (dense Newton only).
using backward_jacobian_fn = callback<double, std::span<const double>, std::span<const double>, dense_matrix_view>;

/// The linear multistep family (CVodeCreate's lmm).
enum class method { bdf, adams };

/// Newton iteration with a dense direct solver (SUNLinSol_Dense); uses the Jacobian callable if given.
struct newton_dense {};
/// Newton iteration with a banded direct solver (SUNLinSol_Band), difference-quotient Jacobian.
struct newton_band {
    std::int64_t upper = 0; ///< upper half-bandwidth
    std::int64_t lower = 0; ///< lower half-bandwidth
};
/// Newton iteration with matrix-free GMRES (SUNLinSol_SPGMR, no preconditioner): large stiff systems.
struct newton_gmres {
    int krylov_dimension = 0; ///< 0: SUNDIALS's default (5); not negative
};
/// Fixed-point (functional) iteration (SUNNonlinSol_FixedPoint), no linear solver: non-stiff problems.
struct fixed_point {
    int anderson_depth = 0; ///< Anderson acceleration vectors (0: plain fixed point); not negative
};
using iteration = std::variant<newton_dense, newton_band, newton_gmres, fixed_point>;

/// How CVODES integrates one system (forward, or one backward problem).
///
///     remat::cvodes::integrator_settings s{.relative_tolerance = 1e-6, .absolute_tolerances = {1e-8, 1e-14, 1e-6}};
struct integrator_settings {
    method lmm = method::bdf;
    remat::cvodes::iteration iteration = newton_dense{};
    double relative_tolerance = 1e-6;
    double absolute_tolerance = 1e-8;        ///< used when absolute_tolerances is empty
    std::vector<double> absolute_tolerances; ///< one per component (CVodeSVtolerances), or empty
    bool quadrature_error_control = true;    ///< quadratures take part in step-size control
    double quadrature_relative_tolerance = 1e-6;
    double quadrature_absolute_tolerance = 1e-6;
    long max_steps = 500; ///< CVodeSetMaxNumSteps: internal steps per window before CV_TOO_MUCH_WORK
    int max_order = 0;    ///< 0: CVODES's default (5 for BDF, 12 for Adams)
    double max_step = 0;  ///< 0: unbounded
    /// CVodeSetNonlinConvCoef: the nonlinear iteration stops when its correction, weighted as the local error
    /// test weighs it, is below this (0: CVODES's default, 0.1). With fixed-point iteration a step whose
    /// error estimate lies between it and 1 takes a second iteration (one more right-hand side
    /// evaluation); CVODES's step-size controller aims at an estimate of 1/6 after every change of step,
    /// so with the default a run settles, depending on where its last change fell, at one or two
    /// evaluations a step, and a run restarted at window boundaries mostly at two. 0.2 puts that target
    /// under the threshold (docs/cvodes.md).
    double nonlinear_convergence_coefficient = 0;
};

/// The forward problem y' = f(t, y), y(t0) = y0, with optional quadratures q' = quadrature(t, y), q(t0) = q0.
///
///     remat::cvodes::forward_problem p{.t0 = 0, .y0 = {1, 0, 0}, .rhs = roberts, .jacobian = roberts_jacobian,
///                                      .q0 = {0}, .quadrature = [](double, auto y, auto q) { q[0] = y[2]; }};
struct forward_problem {
    double t0 = 0;
    std::vector<double> y0;
    rhs_fn rhs;
    jacobian_fn jacobian;   ///< optional
    std::vector<double> q0; ///< initial quadratures (empty: none)
    rhs_fn quadrature;      ///< required when q0 is not empty
    integrator_settings settings;
};

/// One adjoint problem, integrated backwards from t_start (CVODES's tB0) to t0 with lambda(t_start) =
/// lambda_start (empty: zeros) and its quadratures starting at zero. Several may share one forward run.
///
///     remat::cvodes::backward_problem b{.t_start = 4e7, .rhs = adjoint_rhs, .quadratures = 3,
///                                       .quadrature = gradient_integrand};
struct backward_problem {
    double t_start = 0;
    std::vector<double> lambda_start;
    backward_rhs_fn rhs;
    backward_jacobian_fn jacobian; ///< optional
    std::size_t quadratures = 0;
    backward_rhs_fn quadrature; ///< required when quadratures > 0
    integrator_settings settings;
};

/// What a backward problem reached: lambda and its quadratures at time t (t0 after a full reverse sweep).
struct backward_state {
    double t_start = 0;
    double t = 0;
    std::vector<double> lambda;
    std::vector<double> quadratures;
};

} // namespace remat::cvodes
