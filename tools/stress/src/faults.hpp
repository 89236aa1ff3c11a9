// The faults a long disk-offloading run meets, each made to happen for real during a stress round, and
// what must hold afterwards: a clear error or a correct gradient, every snapshot committed before still
// verifying in the file (remat inspect --verify), no temporary file left, and a correct gradient from the
// next run on the same file (a resumed one after a kill during the forward sweep).
#pragma once

#include "capped_memory.hpp"
#include "stress_run.hpp"

#include <array>
#include <cstdint>
#include <random>
#include <string>

namespace remat::stress {

enum class fault_kind {
    disk_full,        ///< RLIMIT_FSIZE in a child process: the file may not grow past a limit mid-run
    corrupt_snapshot, ///< a committed snapshot's bytes flipped on disk between its write and its read
    read_eio,         ///< a snapshot read fails with EIO
    kill_forward,     ///< SIGKILL to a child process during the forward sweep; the parent resumes the run
    kill_reverse,     ///< SIGKILL to a child process during the reverse sweep; the parent runs again
    user_exception,   ///< the adjoint step throws in the middle of the reverse sweep
    out_of_memory,    ///< the host level cannot get memory for a slot
};
inline constexpr std::array<fault_kind, 7> all_faults{
    fault_kind::disk_full,    fault_kind::corrupt_snapshot, fault_kind::read_eio,     fault_kind::kill_forward,
    fault_kind::kill_reverse, fault_kind::user_exception,   fault_kind::out_of_memory};

/// "disk_full", "corrupt_snapshot", ...
const char* to_string(fault_kind k) noexcept;

/// What one fault round showed.
struct fault_result {
    fault_kind kind{};
    bool injected = false; ///< the fault happened (a limit was hit, a byte flipped, a process killed, ...)
    bool survived = false; ///< everything that must hold afterwards held
    std::string outcome;   ///< how the faulty run ended: the error's message, or "correct gradient"
    std::string problem;   ///< why it did not survive; "" when it did
    std::uint64_t forward_steps_saved = 0; ///< kill_forward: what resuming saved
    step_t resumed_from = -1;              ///< kill_forward: the x_k the resumed run continued from
    std::uint64_t transfers = 0;           ///< transfers of the runs that completed in this process
    std::uint64_t state_bytes = 0;         ///< the round's state size
    double seconds = 0;
};

/// Runs one round of `setup` with fault `kind` and checks what must hold; `reference` is the hash of the
/// correct gradient for `setup`. The parent process must have no other threads (kills fork a child).
fault_result run_fault(fault_kind kind, const round_setup& setup, capped_memory& memory, std::uint64_t reference,
                       std::mt19937_64& random);

} // namespace remat::stress
