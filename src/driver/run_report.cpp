#include "remat/driver/run_report.hpp"

#include <cstdio>
#include <string>

namespace remat {
namespace {

std::string line(const char* format, auto... args)
{
    char buffer[256];
    const int n = std::snprintf(buffer, sizeof buffer, format, args...);
    return std::string(buffer, static_cast<std::size_t>(n > 0 ? std::min<int>(n, sizeof buffer - 1) : 0));
}

unsigned long long u(std::uint64_t v)
{
    return static_cast<unsigned long long>(v);
}

} // namespace

std::string to_string(const run_report& r)
{
    std::string s;
    s += line("steps            %lld (forward steps %llu, reverse steps %llu)\n", static_cast<long long>(r.steps),
              u(r.forward_steps), u(r.reverse_steps));
    s += line("snapshots        %llu stores, %llu restores; peak %lld slots, %llu bytes\n", u(r.stores), u(r.restores),
              static_cast<long long>(r.peak_slots), u(r.peak_snapshot_bytes));
    if (r.taped_steps > 0 || r.tape_reverses > 0)
        s += line("tapes            %llu taped steps, %llu reverses from a tape; peak %llu tapes\n", u(r.taped_steps),
                  u(r.tape_reverses), u(r.peak_tapes));
    for (const level_report& l : r.levels)
        s += line("  level %-8s %llu stores, %llu restores, %llu bytes written, %llu read, peak %lld slots\n",
                  l.name.c_str(), u(l.stores), u(l.restores), u(l.bytes_written), u(l.bytes_read),
                  static_cast<long long>(l.peak_slots));
    if (r.final_calls > 0)
        s += line("final state      x_T given to the terminal callable (%llu extra forward step)\n",
                  u(r.final_forward_steps));
    if (!r.user_timed)
        s += line("time             %.6f s (the user's calls not timed: run_options::time_user_code)\n", r.seconds);
    else if (r.test_seconds > 0) // an online loop's termination test
        s += line(
            "time             %.6f s: user %.6f s (forward %.6f, adjoint %.6f, final %.6f, test %.6f), remat %.6f s\n",
            r.seconds, r.user_seconds(), r.forward_seconds, r.adjoint_seconds, r.final_seconds, r.test_seconds,
            r.remat_seconds());
    else
        s +=
            line("time             %.6f s: user %.6f s (forward %.6f, adjoint %.6f, final %.6f), remat %.6f s\n",
                 r.seconds, r.user_seconds(), r.forward_seconds, r.adjoint_seconds, r.final_seconds, r.remat_seconds());
    if (r.wait_seconds > 0 || r.overlapped_seconds > 0)
        s += line("transfers        waited %.6f s, overlapped %.6f s\n", r.wait_seconds, r.overlapped_seconds);
    return s;
}

} // namespace remat
