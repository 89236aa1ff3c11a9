// Fault injection for the crash tests: a process that dies (SIGKILL) at a chosen file-changing system
// call.
//
// The test executable defines its own pwrite, write, ftruncate, fallocate, rename, renameat2 and link
// (syscall_faults.cpp).
// The dynamic linker binds HDF5's calls, and remat's, to these definitions, which count every call on a
// regular file and, when armed, kill the process just before the chosen one, or after writing only the
// sectors of its first half (a kill, or a power cut, that lands inside a write). Disarmed, they only count. So a test
// can first count the calls of a scenario, then replay it once per call, dying at each in turn.
#pragma once

namespace remat::test::faults {

/// How a process dies at the chosen call.
enum class death { before_call, part_way };

/// Arms the counter: the process dies at call number `at` (1-based) in the manner given.
void arm(long at, death how) noexcept;
/// Disarms and resets the count to zero.
void disarm() noexcept;
/// File-changing calls counted since the last arm/disarm.
long calls() noexcept;

} // namespace remat::test::faults
