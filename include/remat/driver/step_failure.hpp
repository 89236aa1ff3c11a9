// remat/driver/step_failure.hpp — a throwing user callable becomes remat::step_error naming the step.
#pragma once

#include "remat/error.hpp"
#include "remat/types.hpp"

#include <exception>
#include <string>

namespace remat::detail {

/// The message of the exception being handled, for wrapping it.
inline std::string current_exception_message()
{
    try {
        throw;
    } catch (const std::exception& e) {
        return e.what();
    } catch (...) {
        return "an exception not derived from std::exception";
    }
}

/// Called in a catch block: throws remat::step_error for `step` and `phase`, the exception being handled
/// nested inside it.
[[noreturn]] inline void rethrow_as_step_error(step_t step, step_phase phase)
{
    static constexpr const char* what[] = {"forward step ",       "adjoint step ",          "snapshot save of x_",
                                           "snapshot load of x_", "termination test at x_", "final-state call at x_"};
    std::throw_with_nested(step_error(
        step, phase, what[static_cast<int>(phase)] + std::to_string(step) + " failed: " + current_exception_message()));
}

} // namespace remat::detail
