// Memory for the planners' large tables (table_allocator): huge pages where the system gives them
// on request. A table of tens of megabytes is written once and then read far and wide; in 4 KiB pages the writing
// costs a page fault per page and the reading a TLB miss per jump (bench/chain_plan, T = 100: a fifth of the time).
#include "table_substrate.hpp"

#include <cstdlib>
#include <new>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace remat::detail {
namespace {

constexpr std::size_t huge_page = std::size_t{2} << 20;

bool in_huge_pages(std::size_t bytes) noexcept
{
    return bytes >= huge_page;
}

} // namespace

void* allocate_table(std::size_t bytes)
{
    if (!in_huge_pages(bytes))
        return ::operator new(bytes);
    const std::size_t rounded = (bytes + huge_page - 1) / huge_page * huge_page;
    void* p = std::aligned_alloc(huge_page, rounded);
    if (p == nullptr)
        throw std::bad_alloc();
#if defined(MADV_HUGEPAGE)
    ::madvise(p, rounded, MADV_HUGEPAGE); // advice only: without huge pages the table works the same
#endif
    return p;
}

void free_table(void* p, std::size_t bytes) noexcept
{
    if (!in_huge_pages(bytes))
        ::operator delete(p);
    else
        std::free(p); // NOLINT(cppcoreguidelines-no-malloc): aligned_alloc's
}

std::uint64_t& table_work_meter() noexcept
{
    thread_local std::uint64_t work = 0;
    return work;
}

std::uint64_t& table_work_cap() noexcept
{
    thread_local std::uint64_t cap = ~std::uint64_t{0};
    return cap;
}

} // namespace remat::detail
