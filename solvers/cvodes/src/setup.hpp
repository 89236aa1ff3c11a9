// Internal: the C trampolines that call the user's C++ callables, and the set-up of one CVODES system
// (forward or backward) from its integrator_settings. Shared by the windowed solver and the all-in-RAM
// reference.
#pragma once

#include "handles.hpp"
#include "remat/cvodes/problem.hpp"

#include <cstddef>
#include <exception>
#include <string>

namespace remat::cvodes::detail {

/// What the trampolines get as user data: the problem, the sizes, and where a thrown exception waits
/// until the CVODES call returns (exceptions never cross SUNDIALS's C frames).
struct forward_callbacks {
    const forward_problem* problem = nullptr;
    std::exception_ptr* error = nullptr;
    std::string* message = nullptr; ///< CVODES's last error message (it never prints: see configure_forward)
};
struct backward_callbacks {
    const backward_problem* problem = nullptr;
    std::exception_ptr* error = nullptr;
};

/// The objects one system owns besides the CVODES memory.
struct system_objects {
    matrix_ptr matrix;
    linear_solver_ptr linear;
    nonlinear_solver_ptr nonlinear;
};

/// CVodeInit (at t0 with y) and every setting of `problem.settings`, the Jacobian and the quadratures
/// (q may be null when there are none).
void configure_forward(void* mem, forward_callbacks& callbacks, N_Vector y, N_Vector q, SUNContext ctx,
                       system_objects& objects);

/// CVodeCreateB + CVodeInitB at tB0 and every setting of `problem.settings`; returns the index.
int create_backward(void* mem, backward_callbacks& callbacks, double tB0, N_Vector yB, N_Vector qB, SUNContext ctx,
                    system_objects& objects, call_site where);

/// Checks a problem's sizes, callables and tolerances; throws remat::argument_error naming the bad value.
void validate(const forward_problem& forward);
void validate(const backward_problem& backward, std::size_t index, const forward_problem& forward);

} // namespace remat::cvodes::detail
