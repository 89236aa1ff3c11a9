// remat/store/detail/part_layout.hpp — the part sizes of the snapshot a slot holds, kept by every level
// so that a restore checks each part (and a state can be resized part by part before it).
#pragma once

#include "remat/store/snapshot_view.hpp"
#include "remat/types.hpp"

#include <array>
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace remat::detail {

/// Sizes of a snapshot's parts, in order (one entry for a single view). Up to `inline_parts` parts are
/// kept without allocating; more reuse one vector, so a slot written again and again allocates at most
/// once.
class part_layout {
public:
    static constexpr std::size_t inline_parts = 4;

    void assign(const_parts parts)
    {
        count_ = parts.size();
        std::size_t* out = storage(count_);
        for (std::size_t i = 0; i < count_; ++i)
            out[i] = parts[i].size;
    }
    void assign(std::span<const std::size_t> sizes)
    {
        count_ = sizes.size();
        std::size_t* out = storage(count_);
        for (std::size_t i = 0; i < count_; ++i)
            out[i] = sizes[i];
    }
    void assign_single(std::size_t size)
    {
        count_ = 1;
        inline_[0] = size;
    }
    void clear() noexcept { count_ = 0; }
    /// Whether the snapshot is one part of `size` bytes.
    [[nodiscard]] bool is_single(std::size_t size) const noexcept { return count_ == 1 && inline_[0] == size; }
    [[nodiscard]] std::span<const std::size_t> sizes() const noexcept
    {
        return {count_ <= inline_parts ? inline_.data() : overflow_.data(), count_};
    }

private:
    std::size_t* storage(std::size_t n)
    {
        if (n <= inline_parts)
            return inline_.data();
        if (overflow_.size() < n)
            overflow_.resize(n);
        return overflow_.data();
    }

    std::array<std::size_t, inline_parts> inline_{};
    std::vector<std::size_t> overflow_;
    std::size_t count_ = 0;
};

/// "2 parts (800, 16 bytes)".
[[nodiscard]] inline std::string describe_parts(std::span<const std::size_t> sizes)
{
    std::string s = std::to_string(sizes.size()) + (sizes.size() == 1 ? " part (" : " parts (");
    for (std::size_t i = 0; i < sizes.size(); ++i)
        s += (i == 0 ? "" : ", ") + std::to_string(sizes[i]);
    return s + " bytes)";
}

/// Whether a snapshot of parts `held` restores into `dst`; if not, the rest of a message that begins
/// with where it is held ("host slot 3 holds "): for single views "800 bytes of x_17, but the state has
/// 24", else which part differs and both sizes.
[[nodiscard]] inline std::optional<std::string> part_mismatch(std::span<const std::size_t> held, mutable_parts dst,
                                                              step_t step)
{
    if (held.size() == 1 && dst.size() == 1) [[likely]] {
        if (held[0] == dst[0].size) [[likely]]
            return std::nullopt;
        return std::to_string(held[0]) + " bytes of x_" + std::to_string(step) + ", but the state has " +
               std::to_string(dst[0].size);
    }
    const std::string x = "x_" + std::to_string(step); // (only for messages: the loop below may match)
    if (held.size() != dst.size()) {
        std::vector<std::size_t> want(dst.size());
        for (std::size_t i = 0; i < dst.size(); ++i)
            want[i] = dst[i].size;
        return x + " in " + describe_parts(held) + ", but the state has " + describe_parts(want);
    }
    for (std::size_t i = 0; i < held.size(); ++i)
        if (held[i] != dst[i].size)
            return x + " in " + describe_parts(held) + ", but part " + std::to_string(i) + " of the state has " +
                   std::to_string(dst[i].size) + " bytes where the snapshot's has " + std::to_string(held[i]);
    return std::nullopt;
}

} // namespace remat::detail
