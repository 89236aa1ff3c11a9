// remat/detail/tick_clock.hpp — a clock cheap enough to read around every action.
//
// steady_clock costs ~20 ns a read; the time-stamp counter ~7 ns. Ticks become seconds with a rate
// measured over the run itself against steady_clock.
#pragma once

#include <chrono>
#include <cstdint>

namespace remat::detail {

struct tick_clock {
    [[nodiscard]] static std::uint64_t now() noexcept
    {
#if defined(__x86_64__) || defined(__i386__)
        // The compiler's builtin, not <x86intrin.h>'s __rdtsc(): that header is about 46k preprocessed lines
        // in every translation unit that includes the driver, for this one instruction.
        return __builtin_ia32_rdtsc();
#else
        return static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
#endif
    }
};

/// Measures the tick rate between construction and seconds_per_tick().
class tick_calibration {
public:
    tick_calibration() noexcept : wall_start_(std::chrono::steady_clock::now()), tick_start_(tick_clock::now()) {}

    /// Wall seconds since construction.
    [[nodiscard]] double elapsed_seconds() const noexcept
    {
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start_).count();
    }
    [[nodiscard]] double seconds_per_tick() const noexcept
    {
        const std::uint64_t ticks = tick_clock::now() - tick_start_;
        return ticks == 0 ? 0.0 : elapsed_seconds() / static_cast<double>(ticks);
    }

private:
    std::chrono::steady_clock::time_point wall_start_;
    std::uint64_t tick_start_;
};

} // namespace remat::detail
