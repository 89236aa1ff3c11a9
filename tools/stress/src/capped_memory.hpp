// Host memory for snapshot slots, within a limit: the stress run's RAM cap for slots, and the machine
// running short of memory for a slot (the limit lowered mid-run) as a fault.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory_resource>
#include <new>
#include <utility>

namespace remat::stress {

/// Allocates from new/delete while the bytes it holds stay within `limit`; beyond it, std::bad_alloc,
/// as an allocator does when the machine has no memory left. Freed blocks are kept for the next
/// allocation of the same size (each round makes new stores: without this, every slot's first write
/// would fault its pages in again, which a long run with one store never does); they count against the
/// limit and are given back when an allocation needs their room. Not thread-safe (the host level
/// allocates on the calling thread only).
class capped_memory final : public std::pmr::memory_resource {
public:
    explicit capped_memory(std::uint64_t limit) : limit_(limit) {}
    ~capped_memory() override { trim(); }
    capped_memory(const capped_memory&) = delete;
    capped_memory& operator=(const capped_memory&) = delete;

    /// Gives every kept block back.
    void trim() noexcept
    {
        for (const auto& [key, p] : kept_) {
            std::pmr::new_delete_resource()->deallocate(p, key.first, key.second);
            held_ -= key.first;
        }
        kept_.clear();
    }

    void set_limit(std::uint64_t limit) noexcept { limit_ = limit; }
    [[nodiscard]] std::uint64_t in_use() const noexcept { return in_use_; }
    [[nodiscard]] std::uint64_t peak() const noexcept { return peak_; }
    [[nodiscard]] std::uint64_t refusals() const noexcept { return refusals_; }

private:
    void* do_allocate(std::size_t bytes, std::size_t alignment) override
    {
        void* p = nullptr;
        if (const auto it = kept_.find({bytes, alignment}); it != kept_.end()) {
            p = it->second;
            kept_.erase(it);
        } else {
            if (held_ + bytes > limit_)
                trim();
            if (held_ + bytes > limit_) {
                ++refusals_;
                throw std::bad_alloc();
            }
            p = std::pmr::new_delete_resource()->allocate(bytes, alignment);
            held_ += bytes;
        }
        in_use_ += bytes;
        peak_ = in_use_ > peak_ ? in_use_ : peak_;
        return p;
    }
    void do_deallocate(void* p, std::size_t bytes, std::size_t alignment) override
    {
        kept_.emplace(std::make_pair(bytes, alignment), p);
        in_use_ -= bytes;
    }
    [[nodiscard]] bool do_is_equal(const std::pmr::memory_resource& other) const noexcept override
    {
        return this == &other;
    }

    std::uint64_t limit_;
    std::uint64_t held_ = 0;   // handed out or kept
    std::uint64_t in_use_ = 0; // handed out
    std::multimap<std::pair<std::size_t, std::size_t>, void*> kept_;
    std::uint64_t peak_ = 0;
    std::uint64_t refusals_ = 0;
};

} // namespace remat::stress
