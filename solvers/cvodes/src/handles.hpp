// Internal: RAII owners for the SUNDIALS objects remat::cvodes creates, and the one place a return code
// becomes an exception. SUNDIALS's headers stay inside solvers/cvodes/src.
#pragma once

#include <cvodes/cvodes.h>
#include <nvector/nvector_serial.h>
#include <sundials/sundials_context.h>
#include <sundials/sundials_linearsolver.h>
#include <sundials/sundials_matrix.h>
#include <sundials/sundials_nonlinearsolver.h>

#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <span>
#include <string>

namespace remat::cvodes::detail {

/// Where a call happens, for the message: the window (-1 in set-up) and the time.
struct call_site {
    std::int64_t window = -1;
    double time = 0;
};

/// Throws remat::cvodes::solver_error naming `call`, `code` (and its CVODES name), the window and time,
/// with `user_error` (the exception a user callable threw, if any) nested. Never returns.
/// `detail` is CVODES's own message for the failure, if it gave one.
[[noreturn]] void fail(const char* call, int code, call_site where, std::exception_ptr user_error = nullptr,
                       const std::string& detail = {});

/// A time or tolerance as text, exactly (%.17g).
std::string format(double value);

/// Negative codes are failures; zero and positive (CV_TSTOP_RETURN, CV_WARNING) are not.
inline void check(int code, const char* call, call_site where, const std::exception_ptr& user_error = nullptr,
                  const std::string& detail = {})
{
    if (code < 0)
        fail(call, code, where, user_error, detail);
}

/// Throws remat::cvodes::solver_error: the SUNDIALS constructor `call` returned no object.
[[noreturn]] void fail_null(const char* call);

template <class T>
T* check_created(T* object, const char* call)
{
    if (object == nullptr)
        fail_null(call);
    return object;
}

class context {
public:
    context();
    ~context() { SUNContext_Free(&ctx_); }
    context(const context&) = delete;
    context& operator=(const context&) = delete;
    [[nodiscard]] SUNContext get() const noexcept { return ctx_; }

private:
    SUNContext ctx_ = nullptr;
};

struct vector_deleter {
    void operator()(_generic_N_Vector* v) const noexcept { N_VDestroy(v); }
};
struct matrix_deleter {
    void operator()(_generic_SUNMatrix* m) const noexcept { SUNMatDestroy(m); }
};
struct linear_solver_deleter {
    void operator()(_generic_SUNLinearSolver* s) const noexcept { SUNLinSolFree(s); }
};
struct nonlinear_solver_deleter {
    void operator()(_generic_SUNNonlinearSolver* s) const noexcept { SUNNonlinSolFree(s); }
};
using vector_ptr = std::unique_ptr<_generic_N_Vector, vector_deleter>;
using matrix_ptr = std::unique_ptr<_generic_SUNMatrix, matrix_deleter>;
using linear_solver_ptr = std::unique_ptr<_generic_SUNLinearSolver, linear_solver_deleter>;
using nonlinear_solver_ptr = std::unique_ptr<_generic_SUNNonlinearSolver, nonlinear_solver_deleter>;

/// CVODES memory (CVodeCreate); CVodeFree also frees its adjoint module and backward problems.
class cvode_memory {
public:
    cvode_memory(int lmm, SUNContext ctx);
    ~cvode_memory() { CVodeFree(&mem_); }
    cvode_memory(const cvode_memory&) = delete;
    cvode_memory& operator=(const cvode_memory&) = delete;
    [[nodiscard]] void* get() const noexcept { return mem_; }

private:
    void* mem_ = nullptr;
};

/// A serial N_Vector of `size` doubles (zeros).
vector_ptr new_vector(std::size_t size, SUNContext ctx);
/// Its elements.
std::span<double> elements(N_Vector v) noexcept;

} // namespace remat::cvodes::detail
