// remat/error.hpp — the one exception hierarchy of remat.
//
// Every error the library raises derives from remat::error, and its message names the bad value and
// what was expected. The library never prints and never exits the process.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace remat {

/// Root of every exception thrown by remat.
///
///     try { remat::revolve plan(0, 3); } catch (const remat::error& e) { std::puts(e.what()); }
class error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// A caller passed a value outside what the function accepts (zero steps, zero slots, ...).
class argument_error : public error {
public:
    using error::error;
};

/// A count or size does not fit the 64-bit type that must hold it; remat never wraps silently.
class overflow_error : public error {
public:
    using error::error;
};

/// An action stream broke the schedule contract (a read of an empty slot, a reverse out of order, ...).
class schedule_error : public error {
public:
    using error::error;
};

/// A storage level ran out of room (slots or bytes).
class capacity_error : public error {
public:
    using error::error;
};

/// An operating-system or library I/O call failed (disk full, missing file, permission, ...).
class io_error : public error {
public:
    using error::error;
};

/// A stored snapshot failed its integrity checks (checksum, size, step index, foreign file, ...).
class integrity_error : public error {
public:
    using error::error;
};

/// Which of the user's callables failed (final_state: the terminal callable given x_T, remat::final_state).
enum class step_phase { forward, adjoint, save, load, predicate, final_state };

/// A user callable threw. The original exception is nested (std::rethrow_if_nested retrieves it)
/// and step() names the step whose callable failed.
///
///     try { remat::run(plan, store, x, remat::forward_step(f), remat::adjoint_step(g)); }
///     catch (const remat::step_error& e) { std::printf("failed at step %lld\n", (long long)e.step()); }
class step_error : public error {
public:
    step_error(std::int64_t step, step_phase phase, const std::string& what) : error(what), step_(step), phase_(phase)
    {
    }
    /// The index k of the failing step (for the forward phase, the step x_k -> x_{k+1}).
    [[nodiscard]] std::int64_t step() const noexcept { return step_; }
    [[nodiscard]] step_phase phase() const noexcept { return phase_; }

private:
    std::int64_t step_;
    step_phase phase_;
};

} // namespace remat
