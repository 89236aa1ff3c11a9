#include "syscall_faults.hpp"

#include <atomic>
#include <csignal>
#include <cstddef>
#include <cstdio> // declares renameat2, defined below

#include <fcntl.h> // declares fallocate, defined below
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

namespace remat::test::faults {
namespace {

std::atomic<long> counted{0};
std::atomic<long> kill_at{0};
std::atomic<bool> part_way{false};

bool is_regular_file(int fd)
{
    struct stat st{};
    return fd > 2 && ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
}

// Counts a call on `fd`; at the armed one, writes the first part of `data` (when asked) and dies.
void checkpoint(int fd, const void* data, std::size_t size, off_t offset, bool positioned)
{
    if (fd >= 0 && !is_regular_file(fd))
        return;
    const long n = ++counted;
    if (n != kill_at.load())
        return;
    if (part_way.load() && data != nullptr && positioned) {
        // Torn at the 512-byte sector boundary nearest the middle: disks write whole sectors, and the
        // kernel stops a killed writer only between pages, so no real death tears a sector. (O_DIRECT
        // writes are whole 4 KiB blocks, so the tear is on a block boundary for them.)
        const std::size_t sector = (::fcntl(fd, F_GETFL) & O_DIRECT) != 0 ? 4096 : 512;
        const auto start = static_cast<std::size_t>(offset);
        const std::size_t cut = (start + size / 2) / sector * sector;
        if (cut > start)
            (void)::syscall(SYS_pwrite64, fd, data, cut - start, offset);
    }
    ::kill(::getpid(), SIGKILL);
    for (;;)
        ::pause();
}

} // namespace

void arm(long at, death how) noexcept
{
    counted = 0;
    part_way = how == death::part_way;
    kill_at = at;
}

void disarm() noexcept
{
    kill_at = 0;
    counted = 0;
}

long calls() noexcept
{
    return counted.load();
}

} // namespace remat::test::faults

using remat::test::faults::checkpoint;

// The definitions the dynamic linker prefers to the C library's (the executable comes first).
extern "C" {

ssize_t pwrite(int fd, const void* data, size_t size, off_t offset)
{
    checkpoint(fd, data, size, offset, true);
    return ::syscall(SYS_pwrite64, fd, data, size, offset);
}

ssize_t pwrite64(int fd, const void* data, size_t size, off_t offset)
{
    checkpoint(fd, data, size, offset, true);
    return ::syscall(SYS_pwrite64, fd, data, size, offset);
}

ssize_t write(int fd, const void* data, size_t size)
{
    checkpoint(fd, data, size, 0, false);
    return ::syscall(SYS_write, fd, data, size);
}

int ftruncate(int fd, off_t length)
{
    checkpoint(fd, nullptr, 0, 0, false);
    return static_cast<int>(::syscall(SYS_ftruncate, fd, length));
}

int fallocate(int fd, int mode, off_t offset, off_t length)
{
    checkpoint(fd, nullptr, 0, 0, false);
    return static_cast<int>(::syscall(SYS_fallocate, fd, mode, offset, length));
}

int rename(const char* from, const char* to)
{
    checkpoint(-1, nullptr, 0, 0, false);
    return static_cast<int>(::syscall(SYS_rename, from, to));
}

// A new file is put in place without replacing anything (levels/hdf5/src/creation_guard.cpp).
int renameat2(int from_dir, const char* from, int to_dir, const char* to, unsigned int flags)
{
    checkpoint(-1, nullptr, 0, 0, false);
    return static_cast<int>(::syscall(SYS_renameat2, from_dir, from, to_dir, to, flags));
}

int link(const char* from, const char* to)
{
    checkpoint(-1, nullptr, 0, 0, false);
    return static_cast<int>(::syscall(SYS_link, from, to));
}

} // extern "C"
