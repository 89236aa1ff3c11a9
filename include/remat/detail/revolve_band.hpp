// remat/detail/revolve_band.hpp — the split rule of the binomial schedule on its cached binomials (internal).
//
// remat::revolve's cursor splits a part of l steps with s slots at the m that src/schedule/revolve.cpp's
// header comment derives. The rule needs a few binomials beta(a, b) = C(a+b, a) around (s, r); a part keeps
// three of them, and its children get theirs from the parent's by Pascal's rule, so a split costs one 64-bit
// division (two when a child's repetition number drops further) and no loop over r. It is inline because the
// cursor's next() runs it once per reversed step.
#pragma once

#include "remat/detail/checked_math.hpp"

#include <algorithm>
#include <cstdint>

namespace remat::detail {

/// What a part's split needs besides its length and slots s (beta(a, b) = C(a+b, a)): its repetition
/// number r and p = beta(s, r-1) < length, q = beta(s-1, r-1), v = beta(s-1, r) (v exact below 2^63, else
/// some value >= 2^63: it is only compared with lengths). The children's are the parent's by Pascal's rule
/// beta(a, b) = beta(a-1, b) + beta(a, b-1), so a split costs one division, two when a child's r drops by
/// two or a right part's by one.
struct revolve_band {
    std::uint64_t r = 0;
    std::uint64_t p = 0;
    std::uint64_t q = 0;
    std::uint64_t v = 0;
};

constexpr std::uint64_t revolve_v_exact_below = std::uint64_t{1} << 63;

/// The binomials of a part of any length with s slots and repetition number r >= 1, from p = beta(s, r-1).
inline revolve_band revolve_band_of(std::uint64_t s, std::uint64_t r, std::uint64_t p) noexcept
{
    const std::uint64_t q = mul_div_exact(p, s, s + r - 1);
    return {r, p, q, mul_div_saturated(q, s + r - 1, r)};
}

/// The split of a part of l >= 2 steps with s >= 2 slots (the header comment's rule): returns m, the steps
/// advanced before the right part's start, and writes the bands of the left part (m steps, s slots) and of
/// the right part (l-m steps, s-1 slots). `right` may be `b` itself. The fields are written one by one from
/// registers: a band built in a temporary and copied would be reloaded 16 bytes at a time from 8-byte
/// stores, which the CPU cannot forward (a stall on every split).
inline std::uint64_t split_revolve_band(std::uint64_t l, std::uint64_t s, const revolve_band& b, revolve_band& left,
                                        revolve_band& right) noexcept
{
    const std::uint64_t r = b.r;
    const std::uint64_t p = b.p; // beta(s, r-1)
    const std::uint64_t q = b.q; // beta(s-1, r-1)
    const std::uint64_t v = b.v; // beta(s-1, r)
    if (r == 1) {
        // l <= s+1: store everything. The right part of l-1 steps has r = 1 unless it is one step.
        const bool more = l - 1 > 1;
        left = {};
        right = {more ? 1U : 0U, more ? 1U : 0U, more ? 1U : 0U, more ? s - 1 : 0};
        return 1;
    }
    const std::uint64_t beta_s_r2 = p - q;                               // beta(s, r-2)
    const std::uint64_t beta_s2_r1 = mul_div_exact(q, s - 1, s + r - 2); // beta(s-2, r-1)
    const std::uint64_t beta_s1_r2 = q - beta_s2_r1;                     // beta(s-1, r-2)
    std::uint64_t lo = beta_s_r2;                                        // >= 1
    if (v < l)
        lo = std::max(lo, l - v);
    const std::uint64_t hi = std::min(p, l - q);
    const std::uint64_t plateau = q + beta_s2_r1;
    const std::uint64_t m = l > plateau ? std::clamp(l - plateau, lo, hi) : lo;

    const bool left_drops_two = m <= beta_s_r2;
    const bool right_drops = l - m <= q;
    // beta(s-2, r-2), needed only when a child's r drops that far (s+r-3 >= 1 here).
    const std::uint64_t beta_s2_r2 = left_drops_two || right_drops ? mul_div_exact(beta_s2_r1, r - 1, s + r - 3) : 0;
    // A left part whose r drops to 0 is one step (m <= beta(s, 0) = 1): its band is all zero.
    const bool left_leaf = left_drops_two && r == 2;
    left.r = left_drops_two ? r - 2 : r - 1;
    left.p = left_leaf ? 0 : left_drops_two ? beta_s_r2 - beta_s1_r2 : beta_s_r2;
    left.q = left_leaf ? 0 : left_drops_two ? beta_s1_r2 - beta_s2_r2 : beta_s1_r2;
    left.v = left_leaf ? 0 : left_drops_two ? beta_s1_r2 : q;
    if (!right_drops) {
        // beta(s-2, r) = beta(s-1, r) - beta(s-1, r-1), unless v is beyond exactness: then from beta(s-2, r-1).
        right.v = v < revolve_v_exact_below ? v - q : mul_div_saturated(beta_s2_r1, s - 2 + r, r);
        right.r = r;
        right.p = q;
        right.q = beta_s2_r1;
    } else {
        right.r = r - 1;
        right.p = beta_s1_r2;
        right.q = beta_s2_r2;
        right.v = beta_s2_r1;
    }
    return m;
}

} // namespace remat::detail
