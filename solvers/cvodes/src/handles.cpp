// The SUNDIALS owners' constructors and the return-code-to-exception conversion.
#include "handles.hpp"

#include "serial_kernels.hpp"

#include "remat/cvodes/error.hpp"

#include <cstdio>
#include <cstdlib>
#include <string>

namespace remat::cvodes::detail {

void fail(const char* call, int code, call_site where, std::exception_ptr user_error, const std::string& detail)
{
    // CVodeGetReturnFlagName returns a malloc'd string.
    const std::unique_ptr<char, decltype(&std::free)> flag(CVodeGetReturnFlagName(code), &std::free);
    const std::string name = flag ? flag.get() : "unknown";
    std::string what = std::string("CVODES: ") + call + " returned " + std::to_string(code) + " (" + name + ")";
    if (where.window >= 0)
        what += " in window " + std::to_string(where.window) + " at t = " + format(where.time);
    else
        what += " during set-up";
    if (!detail.empty())
        what += " (CVODES: " + detail + ")";
    if (user_error) {
        try {
            std::rethrow_exception(user_error);
        } catch (const std::exception& e) {
            what += ": a user callable threw: ";
            what += e.what();
        } catch (...) {
            what += ": a user callable threw a non-standard exception";
        }
        try {
            std::rethrow_exception(user_error);
        } catch (...) {
            std::throw_with_nested(solver_error(call, code, where.window, where.time, what));
        }
    }
    throw solver_error(call, code, where.window, where.time, what);
}

std::string format(double value)
{
    char text[64];
    std::snprintf(text, sizeof text, "%.17g", value);
    return text;
}

void fail_null(const char* call)
{
    throw solver_error(call, 0, -1, 0.0, std::string("CVODES: ") + call + " returned no object (out of memory?)");
}

context::context()
{
    check(SUNContext_Create(nullptr, &ctx_), "SUNContext_Create", {});
}

cvode_memory::cvode_memory(int lmm, SUNContext ctx) : mem_(CVodeCreate(lmm, ctx))
{
    if (mem_ == nullptr)
        fail_null("CVodeCreate");
}

vector_ptr new_vector(std::size_t size, SUNContext ctx)
{
    vector_ptr v(check_created(N_VNew_Serial(static_cast<sunindextype>(size), ctx), "N_VNew_Serial"));
    use_compiled_kernels(v.get());
    N_VConst(0.0, v.get());
    return v;
}

std::span<double> elements(N_Vector v) noexcept
{
    return {N_VGetArrayPointer(v), static_cast<std::size_t>(N_VGetLength(v))};
}

} // namespace remat::cvodes::detail
