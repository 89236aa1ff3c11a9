// remat/store/detail/level_interface.hpp — one storage level behind a virtual interface, so that the
// asynchronous engine is compiled once instead of once per level type.
#pragma once

#include "remat/error.hpp"
#include "remat/store/snapshot_view.hpp"
#include "remat/store/storage_level.hpp"
#include "remat/store/store_stats.hpp"
#include "remat/types.hpp"

#include <cstddef>
#include <span>
#include <string>

namespace remat::detail {

class level_interface {
public:
    virtual ~level_interface() = default;
    virtual void write(slot_t slot, step_t step, const_bytes src) = 0;
    virtual void read(slot_t slot, step_t step, mutable_bytes dst) = 0;
    /// A snapshot of several parts, gathered into the slot and scattered back (see remat::gathering_level).
    virtual void write(slot_t slot, step_t step, const_parts src) = 0;
    virtual void read(slot_t slot, step_t step, mutable_parts dst) = 0;
    [[nodiscard]] virtual std::span<const std::size_t> part_sizes(slot_t slot) const = 0;
    virtual void release(slot_t slot) = 0;
    virtual void release_all() noexcept = 0;
    [[nodiscard]] virtual std::size_t snapshot_bytes(slot_t slot) const = 0;
    [[nodiscard]] virtual level_capacity capacity() const = 0;
    [[nodiscard]] virtual level_stats stats() const = 0;
    /// Read-ahead of x_step from `slot`; nothing for a synchronous level.
    virtual void prefetch(slot_t /*slot*/, step_t /*step*/) {}
    /// Waits for transfers still in flight; nothing for a synchronous level.
    virtual void flush() {}
    /// The level already holds x_step (size bytes) in `slot`, written before this object existed (a resumed
    /// run); nothing for a synchronous level, which knows its own contents.
    virtual void adopt(slot_t /*slot*/, step_t /*step*/, std::size_t /*size*/) {}
    /// The peaks count from what the level holds now (see remat::level_accounting::restart_peaks).
    virtual void restart_peaks() noexcept {}
    /// Waits for the user's work the level's copies are ordered after (see remat::storage_level).
    virtual void wait_for_user() {}
};

/// A storage level behind the interface (its own prefetch and flush, when it has them).
template <storage_level Level>
class level_adapter final : public level_interface {
public:
    explicit level_adapter(Level& level) : level_(level) {}
    void write(slot_t slot, step_t step, const_bytes src) override { level_.write(slot, step, src); }
    void read(slot_t slot, step_t step, mutable_bytes dst) override { level_.read(slot, step, dst); }
    // A level that does not gather takes single-part snapshots only (tiered_store offers parts only when
    // every level gathers, so the driver never gets here with more).
    void write(slot_t slot, step_t step, const_parts src) override
    {
        if constexpr (gathering_level<Level>)
            level_.write(slot, step, src);
        else if (src.size() == 1)
            level_.write(slot, step, src[0]);
        else
            throw argument_error("level " + std::string(level_stats(level_.stats()).name) +
                                 " takes snapshots of one part, not " + std::to_string(src.size()));
    }
    void read(slot_t slot, step_t step, mutable_parts dst) override
    {
        if constexpr (gathering_level<Level>)
            level_.read(slot, step, dst);
        else if (dst.size() == 1)
            level_.read(slot, step, dst[0]);
        else
            throw argument_error("level " + std::string(level_stats(level_.stats()).name) +
                                 " takes snapshots of one part, not " + std::to_string(dst.size()));
    }
    [[nodiscard]] std::span<const std::size_t> part_sizes(slot_t slot) const override
    {
        if constexpr (gathering_level<Level>)
            return level_.part_sizes(slot);
        else
            return {};
    }
    void release(slot_t slot) override { level_.release(slot); }
    void release_all() noexcept override { level_.release_all(); }
    [[nodiscard]] std::size_t snapshot_bytes(slot_t slot) const override { return level_.snapshot_bytes(slot); }
    [[nodiscard]] level_capacity capacity() const override { return level_.capacity(); }
    [[nodiscard]] level_stats stats() const override { return level_.stats(); }
    void prefetch(slot_t slot, step_t step) override
    {
        if constexpr (requires { level_.prefetch(slot, step); })
            level_.prefetch(slot, step);
    }
    void flush() override
    {
        if constexpr (requires { level_.flush(); })
            level_.flush();
    }
    void restart_peaks() noexcept override
    {
        if constexpr (requires { level_.restart_peaks(); })
            level_.restart_peaks();
    }
    void wait_for_user() override
    {
        if constexpr (requires { level_.wait_for_user(); })
            level_.wait_for_user();
    }

private:
    Level& level_;
};

} // namespace remat::detail
