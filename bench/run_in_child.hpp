// Runs a benchmark body in a forked child: its peak RSS and CPU time are then its own, not the
// accumulated high-water mark of every earlier run in the parent (ru_maxrss never goes down).
#pragma once

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

namespace remat::bench {

template <class T>
struct child_result {
    T value;                   // what the body returned
    double cpu_seconds = 0;    // user + system time of the whole child
    double system_seconds = 0; // of which system time (page faults, I/O)
    long long peak_rss_bytes = 0;
};

/// Calls `body()` (returning a trivially copyable T) in a child process and sends T back through a
/// pipe. A child that throws prints the message to stderr; a failing or killed child (out of memory,
/// a signal) makes this throw std::runtime_error naming `what`.
template <class Body>
auto run_in_child(const std::string& what, Body&& body) -> child_result<std::invoke_result_t<Body&>>
{
    using T = std::invoke_result_t<Body&>;
    static_assert(std::is_trivially_copyable_v<T>, "the child's result travels as raw bytes");
    int fds[2];
    if (::pipe(fds) != 0)
        throw std::runtime_error(what + ": pipe failed");
    std::fflush(nullptr); // buffered output would otherwise be printed by both processes
    const pid_t child = ::fork();
    if (child < 0)
        throw std::runtime_error(what + ": fork failed");
    if (child == 0) {
        ::close(fds[0]);
        try {
            const T value = body();
            const bool sent = ::write(fds[1], &value, sizeof value) == static_cast<ssize_t>(sizeof value);
            std::fflush(nullptr);
            ::_exit(sent ? 0 : 1);
        } catch (const std::exception& ex) {
            std::fprintf(stderr, "%s: %s\n", what.c_str(), ex.what());
        }
        std::fflush(nullptr);
        ::_exit(1);
    }
    ::close(fds[1]);
    child_result<T> result{};
    const bool got = ::read(fds[0], &result.value, sizeof(T)) == static_cast<ssize_t>(sizeof(T));
    ::close(fds[0]);
    int status = 0;
    rusage usage{};
    if (::wait4(child, &status, 0, &usage) < 0)
        throw std::runtime_error(what + ": wait4 failed");
    if (!got || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        throw std::runtime_error(
            what + (WIFSIGNALED(status)
                        ? ": the child was killed by signal " + std::to_string(WTERMSIG(status)) + " (out of memory?)"
                        : ": the child failed"));
    auto seconds = [](const timeval& t) {
        return static_cast<double>(t.tv_sec) + 1e-6 * static_cast<double>(t.tv_usec);
    };
    result.cpu_seconds = seconds(usage.ru_utime) + seconds(usage.ru_stime);
    result.system_seconds = seconds(usage.ru_stime);
    result.peak_rss_bytes = static_cast<long long>(usage.ru_maxrss) * 1024; // kilobytes on Linux
    return result;
}

} // namespace remat::bench
