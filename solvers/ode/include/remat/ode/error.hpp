// remat/ode/error.hpp — the ODE solvers' own failure: the numbers went wrong.
#pragma once

#include "remat/error.hpp"

namespace remat::ode {

/// A solve cannot go on: a non-finite state, derivative, error estimate or parameter, or an adaptive
/// step size that underflowed. The message names what, the step or time, and the value.
///
///     catch (const remat::ode::numerical_error& e) { std::fprintf(stderr, "%s\n", e.what()); }
class numerical_error : public error {
public:
    using error::error;
};

} // namespace remat::ode
