// remat::plan_taped_chain_least (remat/schedule/chain_taped_least.hpp): the recurrence over peaks of the header,
// filled start by start from the right, each start's parts by length, and the plan read off its options.
//
// Why it stays within 64 bits: every H and E is at most the store-all peak of its part (E's split j = 1 at every
// length), at most m_s + ... + m_{s+l-1} + (largest state) + (largest a_k); m_s on top of a later part's peak, and
// 2 m_s, are within remat::validate's bound of the chain's bytes, and so is P's tape on top of a part's peak (the
// bound counts every tape); that sum saturates at 2^64-1 all the same, a guard: no part's peak reaches it.
#include "remat/schedule/chain_taped_least.hpp"

#include "chain_taped_emit.hpp"
#include "chain_taped_table.hpp"
#include "kernel_clones.hpp"
#include "remat/detail/checked_math.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <utility>
#include <vector>

namespace remat {
namespace {

using detail::add_saturated;
using detail::uint64_max;

constexpr std::uint32_t e_taped = 0; // E's option: free x_s's snapshot and tape step s (else the split j >= 1)

// E's least split at a start and length: its peak and the split j (the first of that peak: the planner's tie).
struct split_choice {
    std::uint64_t peak;
    std::size_t j;
};

// Peaks as the kernel compares them: x - 2^63 as a signed integer, so that the vector units compare them signed, as
// they do natively (x86 has no unsigned 64-bit compare before AVX-512), in the same order; x + ms is then the biased
// value plus ms, with no signed overflow where x + ms fits 64 bits (the bound at the top of this file).
constexpr std::uint64_t bias = std::uint64_t{1} << 63;
using biased = std::int64_t;

biased to_biased(std::uint64_t x)
{
    return static_cast<biased>(x ^ bias);
}

std::uint64_t from_biased(biased x)
{
    return static_cast<std::uint64_t>(x) ^ bias;
}

using lanes = biased __attribute__((vector_size(32)));

// The least over i < count of max(ms + max(widest[i], h[i]), e[i]) (biased) and its first i, plus one: split j = i + 1
// (the advance from x_s, the part after it with x_s held, the part before it). The hot loop, T^3 / 6 split points in
// all: two accumulators of four lanes, each lane keeping its first least (strictly less replaces it), then the least
// of the lanes, the least index on a tie; the rest one by one.
REMAT_KERNEL_CLONES split_choice least_split(std::uint64_t ms, const biased* __restrict widest,
                                             const biased* __restrict h, const biased* __restrict e,
                                             std::size_t count) noexcept
{
    constexpr biased width = 4;
    const auto held = static_cast<biased>(ms); // below 2^63: a state is at most half the chain's bytes
    biased best = std::numeric_limits<biased>::max();
    biased at = 0;
    std::size_t i = 0;
    if (count >= 2 * width) {
        const lanes add = {held, held, held, held};
        const lanes next = {2 * width, 2 * width, 2 * width, 2 * width};
        lanes b0 = {best, best, best, best}, b1 = b0;
        lanes i0 = {0, 1, 2, 3}, i1 = {4, 5, 6, 7}, a0 = i0, a1 = i1;
        for (; i + 2 * width <= count; i += 2 * width) {
            lanes w0, w1, h0, h1, e0, e1; // unaligned loads
            std::memcpy(&w0, widest + i, sizeof w0);
            std::memcpy(&w1, widest + i + width, sizeof w1);
            std::memcpy(&h0, h + i, sizeof h0);
            std::memcpy(&h1, h + i + width, sizeof h1);
            std::memcpy(&e0, e + i, sizeof e0);
            std::memcpy(&e1, e + i + width, sizeof e1);
            const lanes x0 = add + (w0 > h0 ? w0 : h0), x1 = add + (w1 > h1 ? w1 : h1);
            const lanes v0 = x0 > e0 ? x0 : e0, v1 = x1 > e1 ? x1 : e1;
            const auto c0 = v0 < b0, c1 = v1 < b1;
            b0 = c0 ? v0 : b0;
            b1 = c1 ? v1 : b1;
            a0 = c0 ? i0 : a0;
            a1 = c1 ? i1 : a1;
            i0 += next;
            i1 += next;
        }
        for (std::size_t k = 0; k < 4; ++k)
            for (const auto& [v, a] : {std::pair{b0[k], a0[k]}, std::pair{b1[k], a1[k]}})
                if (v < best || (v == best && a < at)) {
                    best = v;
                    at = a;
                }
    }
    for (; i < count; ++i) {
        const biased v = std::max(held + std::max(widest[i], h[i]), e[i]);
        if (v < best) {
            best = v;
            at = static_cast<biased>(i);
        }
    }
    return {from_biased(best), static_cast<std::size_t>(at) + 1};
}

class least_peaks {
public:
    explicit least_peaks(const chain_model& c);
    [[nodiscard]] std::uint64_t whole() const { return from_biased(h_[h_index(n_, 0)]); }
    [[nodiscard]] std::uint64_t work() const { return work_; }
    // The plan at the least peak: its options do not depend on memory (the emitter's m, the part's share of the
    // whole peak, goes unread).
    void emit(std::vector<action>& out) const;

private:
    // H(x, e - x) by its end e (1..T), then its start x < e: the parts E's splits read, which end where the part
    // being filled ends, lie side by side.
    [[nodiscard]] static std::size_t h_index(std::size_t end, std::size_t start) { return end * (end - 1) / 2 + start; }
    // The options of part (s, l) by its start, then its length.
    [[nodiscard]] std::size_t row(std::size_t s, std::size_t l) const { return offset_[s] + l - 1; }

    std::size_t n_;
    detail::taped_unit_chain bytes_; // the planner's sizes at one byte a unit
    std::vector<biased> h_;          // biased
    std::vector<std::size_t> offset_;
    std::vector<std::uint32_t> e_option_; // rows: the split j (below T: 32 bits hold it), or e_taped
    std::vector<std::uint8_t> h_taped_;   // rows: H took the taped advance
    std::uint64_t work_ = 0;
};

least_peaks::least_peaks(const chain_model& c) : n_(c.steps.size()), bytes_(c, 1)
{
    const std::size_t n = n_;
    // m_k, p_k = max(m_k, m_{k+1}), r_k = p_k + a_k, t_k (chain_model::tape_bytes)
    const std::vector<std::uint64_t>&m = bytes_.u, &p = bytes_.p, &r = bytes_.r, &t = bytes_.t;
    const std::size_t rows = n * (n + 1) / 2;
    h_.resize(rows);
    e_option_.resize(rows);
    h_taped_.resize(rows);
    offset_.resize(n);
    for (std::size_t s = 0, at = 0; s < n; at += n - s, ++s)
        offset_[s] = at;
    std::vector<biased> e(n + 1);  // E(s, l) at [l] for the start being filled (no other start reads it), biased
    std::vector<biased> widest(n); // max(p_s .. p_{s+j-1}) at [j - 1]: an advance of j steps from x_s, biased
    for (std::size_t s = n; s-- > 0;) {
        const std::uint64_t ms = m[s];
        widest[0] = to_biased(p[s]);
        for (std::size_t j = 1; s + j < n; ++j)
            widest[j] = std::max(widest[j - 1], to_biased(p[s + j]));
        h_[h_index(s + 1, s)] = to_biased(r[s]);
        e[1] = to_biased(std::max(2 * ms, r[s]));
        for (std::size_t l = 2; s + l <= n; ++l) {
            const std::size_t end = s + l;
            const std::uint64_t taped = std::max(r[s], add_saturated(t[s], from_biased(h_[h_index(end, s + 1)])));
            const biased* h = &h_[h_index(end, s + 1)]; // H(s+j, l-j) at [j - 1]
            const split_choice split = least_split(ms, widest.data(), h, e.data() + 1, l - 1);
            const std::uint64_t e_taped_peak = std::max(2 * ms, taped);
            const bool use_taped = e_taped_peak < split.peak; // a split before the taped advance on a tie
            const std::uint64_t e_peak = use_taped ? e_taped_peak : split.peak;
            e[l] = to_biased(e_peak);
            e_option_[row(s, l)] = use_taped ? e_taped : static_cast<std::uint32_t>(split.j);
            h_taped_[row(s, l)] = taped <= e_peak ? 1 : 0; // the taped advance before E on a tie
            h_[h_index(end, s)] = to_biased(std::min(taped, e_peak));
            work_ += l - 1;
        }
    }
}

void least_peaks::emit(std::vector<action>& out) const
{
    detail::emit_taped_chain(
        bytes_, whole(),
        [this](std::size_t s, std::size_t l, std::uint64_t) {
            const std::uint32_t option = e_option_[row(s, l)];
            return detail::taped_part_options{.h_taped = h_taped_[row(s, l)] != 0,
                                              .e_split = option == e_taped ? detail::e_tapes : option};
        },
        out);
}

} // namespace

taped_chain_plan plan_taped_chain_least(const chain_model& chain)
{
    validate(chain);
    const least_peaks peaks(chain);
    taped_chain_plan plan;
    plan.granularity = 1;
    plan.least_budget_bytes = peaks.whole();
    plan.work = peaks.work();
    peaks.emit(plan.actions);
    set_price(chain, plan);
    return plan;
}

} // namespace remat
