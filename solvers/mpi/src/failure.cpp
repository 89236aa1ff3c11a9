#include "remat/mpi/failure.hpp"

#include "remat/mpi/communicator.hpp"

#include <cxxabi.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <typeinfo>

namespace remat::mpi {

namespace {

const char* phase_name(step_phase p)
{
    switch (p) {
    case step_phase::forward:
        return "forward";
    case step_phase::adjoint:
        return "adjoint";
    case step_phase::save:
        return "save";
    case step_phase::load:
        return "load";
    case step_phase::predicate:
        return "predicate";
    case step_phase::final_state:
        return "final_state";
    }
    return "unknown";
}

// The exception's type as written in code ("remat::io_error"; std::throw_with_nested's wrapper by what it
// wraps).
std::string type_name(const std::exception& e)
{
    int status = 0;
    std::unique_ptr<char, void (*)(void*)> text(abi::__cxa_demangle(typeid(e).name(), nullptr, nullptr, &status),
                                                std::free);
    std::string s = status == 0 && text ? std::string(text.get()) : std::string(typeid(e).name());
    const std::string nested = "std::_Nested_exception<";
    if (s.starts_with(nested) && s.ends_with(">"))
        s = s.substr(nested.size(), s.size() - nested.size() - 1);
    return s;
}

// "remat::io_error: <what>", following nested exceptions to the original cause.
std::string cause_of(const std::exception& e)
{
    std::string s = type_name(e) + ": " + e.what();
    try {
        std::rethrow_if_nested(e);
    } catch (const std::exception& inner) {
        s += " (caused by " + cause_of(inner) + ")";
    } catch (...) {
        s += " (caused by an exception that is not a std::exception)";
    }
    return s;
}

} // namespace

std::string failure_message(MPI_Comm comm, std::exception_ptr failure, const step_progress& last)
{
    int me = -1;
    int ranks = 0;
    // Not through rank()/size(): this runs while failing and must not throw.
    if (MPI_Comm_rank(comm, &me) != MPI_SUCCESS)
        me = -1;
    if (MPI_Comm_size(comm, &ranks) != MPI_SUCCESS)
        ranks = 0;
    char host[256] = {};
    if (gethostname(host, sizeof host - 1) != 0)
        std::strcpy(host, "?");
    std::string where = "remat::mpi: rank " + std::to_string(me) + " of " + std::to_string(ranks) + " (" + host +
                        ", pid " + std::to_string(getpid()) + ") failed";
    std::string cause = "an unknown exception";
    try {
        std::rethrow_exception(failure);
    } catch (const step_error& e) {
        // Its message repeats the step; the cause is what it nests.
        where += " in step " + std::to_string(e.step()) + " (" + phase_name(e.phase()) + ")";
        cause = e.what();
        try {
            std::rethrow_if_nested(e);
        } catch (const std::exception& inner) {
            cause = cause_of(inner);
        } catch (...) {
            cause = "an exception that is not a std::exception";
        }
    } catch (const std::exception& e) {
        if (last.step >= 0)
            where += " after step " + std::to_string(last.step) + " (" + phase_name(last.phase) + ")";
        cause = cause_of(e);
    } catch (...) {
        if (last.step >= 0)
            where += " after step " + std::to_string(last.step) + " (" + phase_name(last.phase) + ")";
    }
    return where + ": " + cause;
}

void abort_job(MPI_Comm comm, std::exception_ptr failure, const step_progress& last, int exit_code) noexcept
{
    std::string line;
    try {
        line = failure_message(comm, failure, last) + "; ending the job (MPI_Abort)\n";
    } catch (...) {
        line = "remat::mpi: a rank failed (and so did building the message); ending the job (MPI_Abort)\n";
    }
    // One write, so that the lines of several failing ranks do not interleave.
    [[maybe_unused]] const ssize_t written = ::write(STDERR_FILENO, line.data(), line.size());
    MPI_Abort(comm, exit_code);
    std::_Exit(exit_code); // MPI_Abort does not return; this is for an MPI that does
}

} // namespace remat::mpi
