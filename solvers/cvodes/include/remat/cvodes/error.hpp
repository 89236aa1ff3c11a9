// remat/cvodes/error.hpp — a CVODES call that failed, with where and when.
#pragma once

#include "remat/error.hpp"

#include <cstdint>
#include <string>

namespace remat::cvodes {

/// A SUNDIALS/CVODES call returned a failure code (or a null object). The message names the call, its
/// return code and the code's name, the window (-1 outside any window) and the solver's time; a user
/// callable's own exception, where one caused the failure, is nested (std::rethrow_if_nested).
///
///     try { remat::cvodes::solve(solver, windows, remat::revolve(windows.count(), 4), store); }
///     catch (const remat::cvodes::solver_error& e) { std::fprintf(stderr, "%s\n", e.what()); }
class solver_error : public remat::error {
public:
    solver_error(std::string call, int code, std::int64_t window, double time, const std::string& what)
        : error(what), call_(std::move(call)), code_(code), window_(window), time_(time)
    {
    }
    /// The SUNDIALS function that failed, e.g. "CVodeF".
    [[nodiscard]] const std::string& call() const noexcept { return call_; }
    /// Its return code (CV_TOO_MUCH_WORK, CV_RHSFUNC_FAIL, ...).
    [[nodiscard]] int code() const noexcept { return code_; }
    /// The window being integrated, or -1 during set-up.
    [[nodiscard]] std::int64_t window() const noexcept { return window_; }
    /// The time the solver had reached (or was asked for) when the call failed.
    [[nodiscard]] double time() const noexcept { return time_; }

private:
    std::string call_;
    int code_;
    std::int64_t window_;
    double time_;
};

} // namespace remat::cvodes
