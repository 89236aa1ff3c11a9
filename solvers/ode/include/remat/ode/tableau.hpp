// remat/ode/tableau.hpp — explicit Runge–Kutta methods as Butcher tableaus.
//
// A method with s stages advances y' = f(t, y) by one step of size h:
//     K_i = f(t + c_i h, Y_i),   Y_i = y + h sum_{j<i} a_ij K_j,   y_new = y + h sum_i b_i K_i,
// and, where it has an embedded pair, estimates the local error as err = h sum_i e_i K_i (e = b - b_hat).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace remat::ode {

/// An explicit Runge–Kutta method. `a` is the strictly lower triangle, row by row (a[i][j], j < i).
///
///     const remat::ode::tableau& m = remat::ode::rk4();
///     m.stages;   // 4
struct tableau {
    std::string name{};
    int stages = 0;
    int order = 0;                        // of y_new
    std::vector<std::vector<double>> a{}; // a[i] has i entries
    std::vector<double> b{};
    std::vector<double> c{};
    std::vector<double> e{}; // b - b_hat for the error estimate; empty without an embedded pair
    int error_order = 0;     // the order of b_hat (the controller's exponent is 1 / (error_order + 1))

    [[nodiscard]] bool embedded() const noexcept { return !e.empty(); }
    /// Whether stage i contributes to y_new (b_i != 0, or a later contributing stage uses it). A stage
    /// that does not (Dormand–Prince's 7th, used only for the error estimate) is skipped by fixed-step
    /// solvers and by every adjoint.
    [[nodiscard]] bool contributes(int stage) const;
};

/// Forward Euler: one stage, order 1.
[[nodiscard]] const tableau& euler();
/// The classical fourth-order method (Kutta 1901): four stages.
[[nodiscard]] const tableau& rk4();
/// Dormand & Prince (1980), RK5(4)7M: seven stages, order 5, embedded order 4, first same as last.
[[nodiscard]] const tableau& dopri5();

/// The method called `name` ("euler", "rk4", "dopri5"); remat::argument_error naming it and the choices
/// otherwise.
[[nodiscard]] const tableau& method(std::string_view name);

} // namespace remat::ode
