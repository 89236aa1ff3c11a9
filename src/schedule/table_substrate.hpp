// What the planners' dynamic programs share (internal to src/schedule): memory for large tables, and the meter and
// cap of the work their tables take. The chain tables (chain_plan.hpp) live in table_allocator's memory; the
// multi-level tables (multilevel_table.hpp) are refused beyond the work cap before they are allocated, and they and
// the taped table (taped_table.hpp) add their work to the meter. (The multi-level and taped tables stay in
// operator new's memory: planning_memory_test counts a plan's peak heap through it.)
#pragma once

#include "remat/error.hpp"

#include <cstddef>
#include <cstdint>

namespace remat::detail {

// ---- memory (table_substrate.cpp)

void* allocate_table(std::size_t bytes);
void free_table(void* p, std::size_t bytes) noexcept;

/// Memory for a large table: in huge pages where the system gives them on request (Linux's transparent huge pages
/// in "madvise" mode), which spares a page fault per 4 KiB written and a TLB miss per page read far from the last.
template <class T>
struct table_allocator {
    using value_type = T;
    table_allocator() = default;
    template <class U>
    explicit table_allocator(const table_allocator<U>&) noexcept
    {
    }
    T* allocate(std::size_t n) { return static_cast<T*>(allocate_table(n * sizeof(T))); }
    void deallocate(T* p, std::size_t n) noexcept { free_table(p, n * sizeof(T)); }
    friend bool operator==(const table_allocator&, const table_allocator&) noexcept { return true; }
};

// ---- work

/// Inner-loop iterations of the tables this thread has built (each table adds its work when built): a planner
/// reads it before and after a plan to count the work the plan took.
[[nodiscard]] std::uint64_t& table_work_meter() noexcept;
/// The most the meter may reach: a table whose work would take it further is refused before anything is
/// allocated (table_work_exhausted). The planner sets it for the plan being made (work_cap).
[[nodiscard]] std::uint64_t& table_work_cap() noexcept;

/// A table refused by the work cap (a structure that does not fit what is left of the work limit).
struct table_work_exhausted : capacity_error {
    using capacity_error::capacity_error;
};

/// Sets the cap to `limit` more than the meter now, for its lifetime.
class work_cap {
public:
    explicit work_cap(std::uint64_t limit) noexcept : saved_(table_work_cap())
    {
        const std::uint64_t now = table_work_meter();
        table_work_cap() = limit > ~std::uint64_t{0} - now ? ~std::uint64_t{0} : now + limit;
    }
    ~work_cap() { table_work_cap() = saved_; }
    work_cap(const work_cap&) = delete;
    work_cap& operator=(const work_cap&) = delete;
    /// What is left under the cap.
    [[nodiscard]] static std::uint64_t left() noexcept
    {
        const std::uint64_t now = table_work_meter(), cap = table_work_cap();
        return cap > now ? cap - now : 0;
    }

private:
    std::uint64_t saved_;
};

} // namespace remat::detail
