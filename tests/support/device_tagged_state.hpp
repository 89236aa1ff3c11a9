// A state whose parts say they live in device memory while they are host memory, and a copier that logs
// what it copies through its context: host_copy refuses such parts, so a run that succeeds proves every
// copy went through the copier the store was given (for tests of remat::byte_copier on machines without
// a GPU).
#pragma once

#include "multipart_problems.hpp"

#include "remat/store/snapshot_traits.hpp"
#include "remat/store/snapshot_view.hpp"

#include <array>
#include <cstdint>
#include <cstring>

namespace remat::test {

/// An lstm_cell whose two parts are tagged memory_space::device.
struct device_tagged_cell {
    lstm_cell cell;
};

/// What a logging copier copied: its context.
struct copy_log {
    std::uint64_t copies = 0;
    std::uint64_t bytes = 0;
};

inline void logged_copy(void* context, void* dst, memory_space, const void* src, memory_space, std::size_t size)
{
    auto& log = *static_cast<copy_log*>(context);
    ++log.copies;
    log.bytes += size;
    if (size != 0)
        std::memcpy(dst, src, size);
}

/// A copier that logs into `log`.
inline byte_copier logging_copier(copy_log& log) noexcept
{
    return {&logged_copy, &log};
}

/// lstm_problem on the tagged cell.
struct device_tagged_problem {
    lstm_problem inner;
    [[nodiscard]] device_tagged_cell initial() const { return {inner.initial()}; }
    void step(step_t k, device_tagged_cell& x) const { inner.step(k, x.cell); }
};

/// lstm_adjoint on the tagged cell.
struct device_tagged_adjoint {
    lstm_adjoint inner;
    void seed(const device_tagged_cell& xT) { inner.seed(xT.cell); }
    void step(step_t k, const device_tagged_cell& x) { inner.step(k, x.cell); }
    [[nodiscard]] std::vector<double> gradient() const { return inner.gradient(); }
};

} // namespace remat::test

template <>
struct remat::snapshot_traits<remat::test::device_tagged_cell> {
    using cell = remat::snapshot_traits<remat::test::lstm_cell>;
    static std::array<remat::const_bytes, 2> parts(const remat::test::device_tagged_cell& s) noexcept
    {
        std::array<remat::const_bytes, 2> p = cell::parts(s.cell);
        for (remat::const_bytes& b : p)
            b.space = remat::memory_space::device;
        return p;
    }
    static std::array<remat::mutable_bytes, 2> parts(remat::test::device_tagged_cell& s) noexcept
    {
        std::array<remat::mutable_bytes, 2> p = cell::parts(s.cell);
        for (remat::mutable_bytes& b : p)
            b.space = remat::memory_space::device;
        return p;
    }
};
