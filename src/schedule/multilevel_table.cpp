// The exact dynamic program of multi-level checkpointing; the recurrence is in the header.
//
// Lengths go outermost: G(l, ., .) needs only shorter lengths, F(l, ., .) needs G(l, ., .) of other
// rows (moves), and Q(l, .) needs F(l, ., .). The inner minimum over the split m is a min-plus
// convolution of P(m) = U*m + F(m, f, L) with Q(l-m, f); a plain loop over it is bound by memory
// bandwidth (two loads per addition). So lengths are taken in batches of 16: for l = l0 + b, the terms
// with 16 <= m < l0 involve only lengths below l0, and one pass over m computes them for all 16 lengths
// at once (each P(m) loaded once, Q read through a sliding window that stays in L1), keeping a running
// minimum and its first m per length in vector registers. The few remaining terms (m < 16 and
// m >= l0) are added one length at a time, in increasing m, so ties resolve to the smallest m exactly
// as a plain loop would, with bit-identical sums.
#include "remat/detail/multilevel_table.hpp"

#include "remat/error.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <limits>
#include <string>
#include <unordered_map>
#include <utility>

namespace remat::detail {
namespace {

constexpr double infinity = std::numeric_limits<double>::infinity();

std::uint64_t saturated_mul(std::uint64_t a, std::uint64_t b) noexcept
{
    std::uint64_t product = 0;
    return __builtin_mul_overflow(a, b, &product) ? std::numeric_limits<std::uint64_t>::max() : product;
}

// Rows of the table: the product over finite levels of (free limit + 1).
std::uint64_t row_count(const std::vector<std::uint64_t>& free_limit) noexcept
{
    std::uint64_t rows = 1;
    for (const std::uint64_t limit : free_limit)
        if (limit != level_spec::unlimited)
            rows = saturated_mul(rows, limit + 1);
    return rows;
}

constexpr std::int64_t batch = 16;

using lanes_d = double __attribute__((vector_size(32)));
using lanes_i = std::int64_t __attribute__((vector_size(32)));

// x86-64 builds also get an AVX2 version of the kernel, picked at load time.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define REMAT_KERNEL_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define REMAT_KERNEL_CLONES
#endif

// For b in [0, 16): best[b] = min over m in [lo, hi) of p[m] + q[l0 + b - m], arg[b] the first such m.
// The caller guarantees lo >= 16, so every q index is below l0.
REMAT_KERNEL_CLONES void batch_min_plus(const double* __restrict p, const double* __restrict q, std::int64_t l0,
                                        std::int64_t lo, std::int64_t hi, double* __restrict best,
                                        std::int64_t* __restrict arg) noexcept
{
    const lanes_d none = {infinity, infinity, infinity, infinity};
    lanes_d b0 = none, b1 = none, b2 = none, b3 = none;
    lanes_i a0{}, a1{}, a2{}, a3{};
    lanes_i mv = {lo, lo, lo, lo};
    const lanes_i one = {1, 1, 1, 1};
    for (std::int64_t m = lo; m < hi; ++m) {
        const lanes_d pm = {p[m], p[m], p[m], p[m]};
        lanes_d q0, q1, q2, q3; // unaligned loads of the window q[l0-m .. l0-m+15]
        std::memcpy(&q0, q + (l0 - m), sizeof q0);
        std::memcpy(&q1, q + (l0 - m) + 4, sizeof q1);
        std::memcpy(&q2, q + (l0 - m) + 8, sizeof q2);
        std::memcpy(&q3, q + (l0 - m) + 12, sizeof q3);
        const lanes_d v0 = pm + q0, v1 = pm + q1, v2 = pm + q2, v3 = pm + q3;
        const lanes_i c0 = v0 < b0, c1 = v1 < b1, c2 = v2 < b2, c3 = v3 < b3;
        b0 = c0 ? v0 : b0;
        b1 = c1 ? v1 : b1;
        b2 = c2 ? v2 : b2;
        b3 = c3 ? v3 : b3;
        a0 = c0 ? mv : a0;
        a1 = c1 ? mv : a1;
        a2 = c2 ? mv : a2;
        a3 = c3 ? mv : a3;
        mv += one;
    }
    std::memcpy(best, &b0, sizeof b0);
    std::memcpy(best + 4, &b1, sizeof b1);
    std::memcpy(best + 8, &b2, sizeof b2);
    std::memcpy(best + 12, &b3, sizeof b3);
    std::memcpy(arg, &a0, sizeof a0);
    std::memcpy(arg + 4, &a1, sizeof a1);
    std::memcpy(arg + 8, &a2, sizeof a2);
    std::memcpy(arg + 12, &a3, sizeof a3);
}

} // namespace

std::uint64_t multilevel_table::entries(std::size_t levels, const std::vector<std::uint64_t>& free_limit,
                                        step_t horizon) noexcept
{
    return saturated_mul(saturated_mul(row_count(free_limit), levels), static_cast<std::uint64_t>(horizon) + 1);
}

std::uint64_t multilevel_table::work(std::size_t levels, const std::vector<std::uint64_t>& free_limit,
                                     step_t horizon) noexcept
{
    const auto t = static_cast<std::uint64_t>(horizon);
    return saturated_mul(saturated_mul(row_count(free_limit), levels), saturated_mul(t, t) / 2);
}

multilevel_table::multilevel_table(const cost_model& model, const std::vector<std::uint64_t>& free_limit,
                                   step_t horizon, std::uint64_t max_entries)
    : horizon_(horizon), levels_(model.levels.size()), step_cost_(model.step_cost)
{
    if (free_limit.size() != levels_ || levels_ == 0 || levels_ > max_levels)
        throw argument_error("the multi-level table needs one free-slot limit per level (1 to " +
                             std::to_string(max_levels) + " levels), got " + std::to_string(free_limit.size()) +
                             " limits for " + std::to_string(levels_) + " levels");
    if (horizon < 1)
        throw argument_error("the multi-level table needs a horizon of at least 1 step, got " +
                             std::to_string(horizon));
    const std::uint64_t needed = entries(levels_, free_limit, horizon);
    if (needed > max_entries)
        throw capacity_error("an exact multi-level table for " + std::to_string(horizon) + " steps needs " +
                             std::to_string(needed) + " entries, more than the limit of " +
                             std::to_string(max_entries));
    for (std::size_t i = 0; i < levels_; ++i) {
        write_.push_back(model.levels[i].write_cost);
        read_.push_back(model.levels[i].read_cost);
        const bool unlimited = free_limit[i] == level_spec::unlimited;
        unlimited_.push_back(unlimited);
        dims_.push_back(unlimited ? 1 : free_limit[i] + 1);
        stride_.push_back(rows_);
        rows_ *= dims_.back();
    }
    build(model);
}

void multilevel_table::build(const cost_model& model)
{
    const std::uint64_t stride = stride_length();
    const auto n = static_cast<level_t>(levels_);
    const std::uint64_t cells = static_cast<std::uint64_t>(levels_) * rows_ * stride;
    p_.assign(cells, 0.0);
    split_.assign(cells, 0);
    move_.assign(cells, -1);
    q_.assign(rows_ * stride, infinity);
    q_level_.assign(rows_ * stride, -1);
    std::vector<double> g(levels_ * rows_);
    std::vector<double> bulk_value(levels_ * rows_ * batch);
    std::vector<std::int64_t> bulk_m(levels_ * rows_ * batch);
    const double u = model.step_cost;
    const auto horizon = static_cast<std::int64_t>(horizon_);

    for (std::int64_t l0 = 1; l0 <= horizon; l0 += batch) {
        const bool bulk = l0 > batch; // the batched terms 16 <= m < l0 exist
        if (bulk)
            for (level_t L = 0; L < n; ++L)
                for (std::uint64_t row = 0; row < rows_; ++row) {
                    const std::size_t at = (static_cast<std::size_t>(L) * rows_ + row) * batch;
                    batch_min_plus(&p_[index(0, row, L)], &q_[row * stride], l0, batch, l0, &bulk_value[at],
                                   &bulk_m[at]);
                }
        for (std::int64_t l = l0; l < l0 + batch && l <= horizon; ++l) {
            const auto length = static_cast<step_t>(l);
            const auto b = static_cast<std::size_t>(l - l0);
            // G(l, row, L): split, or (l = 1) reverse where it stands.
            for (level_t L = 0; L < n; ++L)
                for (std::uint64_t row = 0; row < rows_; ++row) {
                    const double* p = &p_[index(0, row, L)];
                    const double* q = &q_[row * stride];
                    double best = infinity;
                    std::int64_t m = 0;
                    auto consider = [&](std::int64_t from, std::int64_t to) {
                        for (std::int64_t j = from; j < to; ++j) {
                            const double v = p[j] + q[l - j];
                            if (v < best) {
                                best = v;
                                m = j;
                            }
                        }
                    };
                    consider(1, std::min(batch, l));
                    if (bulk) {
                        const std::size_t at = (static_cast<std::size_t>(L) * rows_ + row) * batch + b;
                        if (bulk_value[at] < best) {
                            best = bulk_value[at];
                            m = bulk_m[at];
                        }
                    }
                    consider(std::max(batch, l0), l);
                    g[static_cast<std::size_t>(L) * rows_ + row] =
                        l >= 2 ? read_[static_cast<std::size_t>(L)] + best : 0;
                    split_[index(length, row, L)] = static_cast<std::uint32_t>(m);
                }
            // F(l, row, L): G, or a move of x_a to another level first (only when strictly cheaper, so
            // that zero-cost levels never produce pointless store-and-free pairs).
            for (level_t L = 0; L < n; ++L)
                for (std::uint64_t row = 0; row < rows_; ++row) {
                    double best = g[static_cast<std::size_t>(L) * rows_ + row];
                    std::int8_t target = -1;
                    const double margin = 1e-12 * std::max(1.0, best);
                    for (level_t to = 0; to < n; ++to) {
                        if (to == L || !has_free(row, to))
                            continue;
                        const std::uint64_t moved = given_back(taken(row, to), L);
                        const double c =
                            write_[static_cast<std::size_t>(to)] + g[static_cast<std::size_t>(to) * rows_ + moved];
                        if (c < best - margin) {
                            best = c;
                            target = static_cast<std::int8_t>(to);
                        }
                    }
                    p_[index(length, row, L)] = best + u * static_cast<double>(l);
                    move_[index(length, row, L)] = target;
                }
            // Q(l, row): where a right part of l steps keeps its start (nothing to keep for l = 1).
            for (std::uint64_t row = 0; row < rows_; ++row) {
                double best = l == 1 ? 0.0 : infinity;
                std::int8_t level = -1;
                if (l >= 2)
                    for (level_t to = 0; to < n; ++to) {
                        if (!has_free(row, to))
                            continue;
                        const double c = write_[static_cast<std::size_t>(to)] + value(length, taken(row, to), to);
                        if (c < best) {
                            best = c;
                            level = static_cast<std::int8_t>(to);
                        }
                    }
                q_[row * stride + static_cast<std::uint64_t>(l)] = best;
                q_level_[row * stride + static_cast<std::uint64_t>(l)] = level;
            }
        }
    }
}

multilevel_table::placement multilevel_table::place_start(step_t length, std::uint64_t row,
                                                          unsigned allowed) const noexcept
{
    placement best{-1, infinity};
    for (level_t L = 0; L < static_cast<level_t>(levels_); ++L) {
        if ((allowed & (1u << static_cast<unsigned>(L))) == 0 || !has_free(row, L))
            continue;
        const double c = write_[static_cast<std::size_t>(L)] + value(length, taken(row, L), L);
        if (c < best.cost)
            best = {L, c};
    }
    return best;
}

multilevel_counts multilevel_table::counts(step_t length, std::uint64_t row, level_t level) const
{
    // Memoised over G nodes (l, row, L), visited depth-first with an explicit stack: a right spine on an
    // unlimited level may be thousands of nodes deep.
    struct f_node {
        std::uint64_t g_key;
        level_t from;  // x_a's level before a move
        level_t moved; // -1 when F does not move
    };
    auto f_of = [&](step_t l, std::uint64_t r, level_t L) {
        const level_t to = move(l, r, L);
        if (to < 0)
            return f_node{index(l, r, L), L, -1};
        return f_node{index(l, given_back(taken(r, to), L), to), L, to};
    };
    auto decode = [&](std::uint64_t key, step_t& l, std::uint64_t& r, level_t& L) {
        l = static_cast<step_t>(key % stride_length());
        r = (key / stride_length()) % rows_;
        L = static_cast<level_t>(key / stride_length() / rows_);
    };
    std::unordered_map<std::uint64_t, multilevel_counts> memo;
    auto f_counts = [&](const f_node& f) {
        multilevel_counts c = memo.at(f.g_key);
        if (f.moved >= 0) {
            ++c.stores[static_cast<std::size_t>(f.moved)];
            // Just after the move's store both copies are held.
            c.peak[static_cast<std::size_t>(f.moved)] =
                std::max<std::uint64_t>(c.peak[static_cast<std::size_t>(f.moved)], f.moved == f.from ? 2 : 1);
            c.peak[static_cast<std::size_t>(f.from)] =
                std::max<std::uint64_t>(c.peak[static_cast<std::size_t>(f.from)], 1);
            c.peak_slots = std::max<std::uint64_t>(c.peak_slots, 2);
        }
        return c;
    };

    const f_node root = f_of(length, row, level);
    std::vector<std::uint64_t> stack{root.g_key};
    while (!stack.empty()) {
        const std::uint64_t key = stack.back();
        if (memo.contains(key)) {
            stack.pop_back();
            continue;
        }
        step_t l = 0;
        std::uint64_t r = 0;
        level_t L = 0;
        decode(key, l, r, L);
        multilevel_counts c;
        const auto Li = static_cast<std::size_t>(L);
        if (l == 1) {
            c.peak[Li] = 1;
            c.peak_slots = 1;
            memo.emplace(key, c);
            stack.pop_back();
            continue;
        }
        const step_t m = split(l, r, L);
        const step_t k = l - m;
        const f_node left = f_of(m, r, L);
        f_node right{0, 0, -1};
        level_t right_level = -1;
        if (k >= 2) {
            right_level = store_level(r, k);
            right = f_of(k, taken(r, right_level), right_level);
        }
        bool ready = true;
        if (!memo.contains(left.g_key)) {
            stack.push_back(left.g_key);
            ready = false;
        }
        if (k >= 2 && !memo.contains(right.g_key)) {
            stack.push_back(right.g_key);
            ready = false;
        }
        if (!ready)
            continue;
        const multilevel_counts a = f_counts(left);
        c = a;
        ++c.restores[Li];
        c.forward_steps = static_cast<std::uint64_t>(m) + a.forward_steps;
        c.repetition = 1 + a.repetition;
        c.peak_slots = std::max<std::uint64_t>(a.peak_slots, 1);
        c.peak[Li] = std::max<std::uint64_t>(c.peak[Li], 1);
        if (k >= 2) {
            const multilevel_counts b = f_counts(right);
            const auto Ri = static_cast<std::size_t>(right_level);
            c.forward_steps += b.forward_steps;
            c.repetition = std::max(c.repetition, b.repetition);
            c.peak_slots = std::max(c.peak_slots, 1 + b.peak_slots);
            ++c.stores[Ri];
            for (std::size_t i = 0; i < levels_; ++i) {
                c.stores[i] += b.stores[i];
                c.restores[i] += b.restores[i];
                c.peak[i] = std::max(c.peak[i], b.peak[i] + (i == Li ? 1 : 0));
            }
        }
        memo.emplace(key, c);
        stack.pop_back();
    }
    return f_counts(root);
}

} // namespace remat::detail
