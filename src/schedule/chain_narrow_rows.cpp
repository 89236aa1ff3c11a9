// Rows (s, 2 ..) of a chain table of at most 16 entries (U + 1 <= narrow_row_entries) and no kept blocks; the
// recurrence is at the top of chain_plan.hpp.
//
// Every split j of (s, l) gives a candidate f_j + E(s+j, l-j, M - u_s) + E(s, j, M) (the right part reversed where it
// stands for j = l - 1), taken from its least M on (x_s's snapshot and the advance). The rows are a few entries and
// the pairs (j, l) many (T^3 / 6: 34,000 on bench/chain_plan's measured chain of 60 steps), so a pair must cost a few
// instructions: build_short_rows' loop over M per pair, with its stores and its remainder, cost more than the sums
// (the measured chain at 12 units: 0.083 ms per plan; 0.055 ms here). Each row is reduced over its splits in vectors
// of 8 entries of M held in registers, from U down: most splits start in the top vector, and a lower vector needs only
// the splits that start in it or below. Rows go in groups of 4 that share their first splits, so that each left part
// is loaded once for 4 rows. Each left part is copied once, infinite below its split's least M, so that the condition
// costs nothing in the loop (an infinite part gives an infinite sum: no part is ever -inf or NaN). The sums and their
// order are list_candidates', and the minimum keeps the earlier on a tie, so the values are the same bit for bit.
#include "chain_plan.hpp"
#include "kernel_clones.hpp"

#include <algorithm>
#include <cstring>
#include <limits>

namespace remat::detail {
namespace {

constexpr float infinite = std::numeric_limits<float>::infinity();
constexpr std::uint64_t lanes = 8; // one vector

using eight = float __attribute__((vector_size(32)));
using lanes_int = std::int32_t __attribute__((vector_size(32)));
constexpr lanes_int lane = {0, 1, 2, 3, 4, 5, 6, 7};

/// The rows of one start s, for reduce_rows.
struct narrow_rows_job {
    float* cost = nullptr;
    std::uint64_t row = 0;    ///< chain_plan::row()
    std::uint64_t top = 0;    ///< U
    std::uint64_t us = 0;     ///< u_s
    std::uint64_t first = 0;  ///< the row of (s, 1)
    std::uint64_t stride = 0; ///< the entries of a left part's copy (U + 1 and a vector's past it)
    step_t length = 0;        ///< rows (s, 1 .. length)
    step_t splits = 0;        ///< splits j <= splits have their least M <= U (it grows with j)
    narrow_row_scratch* by = nullptr;
    std::uint64_t* finite = nullptr; ///< chain_plan::finite
    std::uint64_t* flat = nullptr;
};

/// An unaligned load (returned through a reference: a vector return value's ABI depends on the clone's ISA).
[[gnu::always_inline]] inline void load(eight& v, const float* p) noexcept
{
    std::memcpy(&v, p, sizeof v);
}

/// best = min(best, candidate), keeping best on a tie as std::min(best, candidate) does.
[[gnu::always_inline]] inline void lower(eight& best, const eight& candidate) noexcept
{
    best = candidate < best ? candidate : best;
}

/// Copies row (s, j) for the rows that split at j: from its least M on (`from`), infinite elsewhere (from M = -8).
void copy_left(const float* values, std::uint64_t from, std::uint64_t top, std::uint64_t stride, float* out) noexcept
{
    std::fill(out - lanes, out - lanes + stride, infinite);
    if (from <= top)
        std::copy(values + from, values + top + 1, out + from);
}

/// Rows (s, l0 .. l0 + G - 1) over the splits j = 1 .. count that they all have, in one pass: each left part is
/// loaded once for the G rows, whose right parts (s + j, l0 - j ..) are adjacent rows (`rights[j]` the first, from
/// the vector's M - u_s; `offset[g]` row g's).
template <int G>
[[gnu::always_inline]] inline void shared_splits(eight (&best)[G], const float* const* rights,
                                                 const std::uint64_t (&offset)[G], const float* left,
                                                 const float* forward, std::size_t count, std::uint64_t stride) noexcept
{
    for (std::size_t j = 1; j <= count; ++j) {
        const float f = forward[j];
        eight l0;
        load(l0, left);
        const float* right = rights[j];
        for (int g = 0; g < G; ++g) {
            eight r0;
            load(r0, right + offset[g]);
            lower(best[g], (f + r0) + l0);
        }
        left += stride;
    }
}

/// The sum of the lanes. (By reference: a 32-byte vector passed by value makes GCC note an ABI change.)
[[gnu::always_inline]] inline std::int32_t sum(const lanes_int& of) noexcept
{
    lanes_int v = of;
    v += __builtin_shuffle(v, lanes_int{4, 5, 6, 7, 0, 1, 2, 3});
    v += __builtin_shuffle(v, lanes_int{2, 3, 0, 1, 6, 7, 4, 5});
    v += __builtin_shuffle(v, lanes_int{1, 0, 3, 2, 5, 4, 7, 6});
    return v[0];
}

/// Writes row (s, l)'s vector of M from c (`best`; `own`: its lanes in [0, U], all of them when `whole`), and, where
/// the row is a left part of longer rows over this vector (`left_part`), its copies from its least M on.
[[gnu::always_inline]] inline void store_row(const narrow_rows_job& job, const eight& best, std::size_t l,
                                             std::int64_t c, const lanes_int& own, bool whole, bool left_part) noexcept
{
    narrow_row_scratch& by = *job.by;
    const std::uint64_t top = job.top;
    const std::uint64_t row = job.row;
    const std::uint64_t stride = job.stride;
    const auto at = static_cast<std::int32_t>(c);
    const std::uint64_t* least = by.least.data();
    float* lefts = by.left.data() + lanes; // entry -8 is the first
    float* lefts_reversed = by.left_reversed.data() + lanes;
    // Lanes below 0 or past U belong to other rows (done, and maybe read here): written back as they are.
    float* values = job.cost + static_cast<std::int64_t>((job.first + l - 1) * row) + c;
    if (whole) {
        std::memcpy(values, &best, sizeof best);
    } else {
        eight old;
        load(old, values);
        const eight kept = own ? best : old;
        std::memcpy(values, &kept, sizeof kept);
    }
    if (!whole || best[0] == infinite) // a whole vector finite at its least M is finite all along
        by.infinite_entries[l] += static_cast<std::uint64_t>(-sum((best == infinite) & own));
    if (left_part) { // row (s, l) is a left part here: copied from its least M on
        const auto copy = [&](std::uint64_t from, float* out) {
            const auto first = static_cast<std::int32_t>(std::min(from, top + 1));
            const eight part = (own & (at + lane >= first)) ? best : infinite - eight{};
            std::memcpy(out + c, &part, sizeof part);
        };
        copy(least[l], lefts + l * stride);
        copy(by.least_reversed[l], lefts_reversed + l * stride);
    }
}

/// Each row's finite and flat bounds. A row never grows with M (every part's does not, and sums and minima keep
/// that), so its infinite entries are the first ones.
void set_bounds(const narrow_rows_job& job) noexcept
{
    const std::uint64_t top = job.top;
    for (std::size_t l = 2; l <= static_cast<std::size_t>(job.length); ++l) {
        const std::uint64_t infinite_entries = job.by->infinite_entries[l];
        if (infinite_entries <= top) {
            job.finite[job.first + l - 1] = infinite_entries;
            job.flat[job.first + l - 1] = top;
        }
    }
}

/// Rows (s, 2 .. length), vector by vector of M from U down: [U - 7, U], [U - 15, U - 8], .. (the lowest may start
/// below 0; tables of 8 units or fewer have one vector from 0). Most splits need only the top vector (their least M
/// is in it), the lower vectors fewer and fewer of them. In each vector, rows in order of l (each row's left parts
/// are shorter rows of s), in groups of `group` rows that share their first splits.
REMAT_KERNEL_CLONES void reduce_rows(const narrow_rows_job& job) noexcept
{
    constexpr int group = 4; // 4 to 8 cost about the same (bench/chain_plan's measured chain); 12 more
    narrow_row_scratch& by = *job.by;
    const std::uint64_t top = job.top;
    const auto top_int = static_cast<std::int64_t>(top);
    const std::uint64_t row = job.row;
    const std::uint64_t stride = job.stride;
    const auto us = static_cast<std::int64_t>(job.us);
    const float* forward = by.forward.data();
    const std::uint64_t* least = by.least.data();
    float* lefts = by.left.data() + lanes; // entry -8 is the first
    float* lefts_reversed = by.left_reversed.data() + lanes;
    const auto splits = static_cast<std::size_t>(job.splits);
    const auto length = static_cast<std::size_t>(job.length);
    const auto width = static_cast<std::int64_t>(lanes);
    const float** rights = by.rights.data(); // by split, for a group of rows
    for (std::int64_t c = std::max<std::int64_t>(0, top_int + 1 - width); c + width > 0; c -= width) {
        const auto at = static_cast<std::int32_t>(c);
        const lanes_int own = (at + lane >= 0) & (at + lane <= static_cast<std::int32_t>(top_int));
        const bool whole = c >= 0 && c + width <= top_int + 1;
        const auto end = static_cast<std::uint64_t>(c + width);
        const std::uint64_t owned = std::min(end, top + 1) - static_cast<std::uint64_t>(std::max<std::int64_t>(c, 0));
        std::size_t usable = 0; // splits with their least M below the vector's end: the others are infinite over it
        while (usable < splits && least[usable + 1] < end)
            ++usable;
        if (usable == 0) { // no split starts here (nor its reversed right part, which starts no lower)
            for (std::size_t l = 2; l <= length; ++l)
                by.infinite_entries[l] += owned;
            continue;
        }
        for (std::size_t l0 = 2; l0 <= length; l0 += group) {
            const std::size_t g = std::min<std::size_t>(group, length + 1 - l0);
            eight best[group];
            std::uint64_t offset[group]; // rows past the last of the group read the last's
            for (std::size_t i = 0; i < group; ++i) {
                best[i] = infinite - eight{};
                offset[i] = std::min(i, g - 1) * row;
            }
            const std::size_t shared = std::min(l0 - 2, usable); // splits every row of the group has
            // (s + j, l0 - j) from the vector's M - u_s; below a row's start, the rows before it (three at least: the
            // rows of start 0 come first, and these have l0 - j >= 2), read in lanes whose left part is infinite.
            for (std::size_t j = 1; j <= shared; ++j)
                rights[j] = job.cost + static_cast<std::int64_t>((by.right_first[j] + l0 - j - 1) * row) + c - us;
            shared_splits<group>(best, rights, offset, lefts + stride + c, forward, shared, stride);
            for (std::size_t i = 0; i < g; ++i) { // each row's own splits, then the row
                const std::size_t l = l0 + i;
                const std::size_t own_splits = std::min(l - 2, usable);
                const bool reversed = l - 1 <= splits && by.least_reversed[l - 1] < end; // its right part in place
                if (own_splits == 0 && !reversed) { // infinite over the vector, as the table starts
                    by.infinite_entries[l] += owned;
                    if (l <= usable) { // read as a left part here
                        std::fill_n(lefts + l * stride + c, lanes, infinite);
                        std::fill_n(lefts_reversed + l * stride + c, lanes, infinite);
                    }
                    continue;
                }
                for (std::size_t j = shared + 1; j <= own_splits; ++j) {
                    const float* right =
                        job.cost + static_cast<std::int64_t>((by.right_first[j] + l - j - 1) * row) + c - us;
                    eight r0, l1;
                    load(r0, right);
                    load(l1, lefts + j * stride + c);
                    lower(best[i], (forward[j] + r0) + l1);
                }
                if (reversed) {
                    eight l1;
                    load(l1, lefts_reversed + (l - 1) * stride + c);
                    lower(best[i], by.reversed[l - 1] + l1);
                }
                store_row(job, best[i], l, c, own, whole, l <= usable);
            }
        }
    }
    set_bounds(job);
}

} // namespace

void build_narrow_rows(chain_plan& p, step_t s, narrow_row_scratch& by)
{
    const auto si = static_cast<std::size_t>(s);
    const std::uint64_t top = p.units;
    const std::uint64_t us = p.u[si];
    narrow_rows_job job;
    job.cost = p.cost.data();
    job.row = p.row();
    job.top = top;
    job.us = us;
    job.stride = (top + 3 * lanes) / lanes * lanes; // U + 1 and a vector below 0 and past U
    job.length = std::min(p.horizon, p.steps - s);
    job.by = &by;
    job.first = p.row_of(s, 1);
    job.finite = p.finite.data();
    job.flat = p.flat.data();
    const auto n = static_cast<std::size_t>(job.length) + 1;
    if (by.forward.size() < n) { // sized once for the longest rows (K), not grown start by start
        const auto most = static_cast<std::size_t>(p.horizon) + 1;
        by.forward.resize(most);
        by.reversed.resize(most);
        by.least.resize(most);
        by.least_reversed.resize(most);
        by.right_first.resize(most);
        by.rights.resize(most);
        by.left.resize(most * job.stride);
        by.left_reversed.resize(most * job.stride);
        by.infinite_entries.resize(most);
    }
    std::fill_n(by.infinite_entries.begin(), n, 0);
    std::uint64_t running = 0; // max(p_s .. p_{s+j-1})
    for (step_t j = 1; j < job.length; ++j) {
        const auto ji = static_cast<std::size_t>(s + j);
        const auto at = static_cast<std::size_t>(j);
        running = std::max(running, p.wide[ji - 1]);
        const std::uint64_t lo = us + running; // x_s's snapshot and the advance
        if (lo > top)
            break; // later splits advance further and need even more
        job.splits = j;
        by.forward[at] = static_cast<float>(p.prefix[ji] - p.prefix[si]);
        by.reversed[at] = by.forward[at] + static_cast<float>(p.model.steps[ji].adjoint);
        by.least[at] = lo;
        by.least_reversed[at] = std::max(lo, us + p.r[ji]); // r units on top of x_s's snapshot
        by.right_first[at] = p.row_of(s + j, 1);
    }
    if (job.splits >= 1) {
        const float* one = &p.cost[p.at(s, 1)];
        copy_left(one, by.least[1], top, job.stride, by.left.data() + lanes + job.stride);
        copy_left(one, by.least_reversed[1], top, job.stride, by.left_reversed.data() + lanes + job.stride);
    }
    reduce_rows(job);
}

} // namespace remat::detail
