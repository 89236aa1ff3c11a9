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
#include "multilevel_table.hpp"
#include "remat/detail/checked_math.hpp"

#include "kernel_clones.hpp"

#include "remat/error.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <unordered_map>
#include <utility>

namespace remat::detail {
namespace {

constexpr double infinity = std::numeric_limits<double>::infinity();

// Rows of the table: the product over finite levels of (free limit + 1).
std::uint64_t row_count(const std::vector<std::uint64_t>& free_limit) noexcept
{
    std::uint64_t rows = 1;
    for (const std::uint64_t limit : free_limit)
        if (limit != unlimited_free)
            rows = mul_saturated(rows, limit + 1);
    return rows;
}

constexpr std::int64_t batch = 16;

using lanes_d = double __attribute__((vector_size(32)));
using lanes_i = std::int64_t __attribute__((vector_size(32)));

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
    return mul_saturated(mul_saturated(row_count(free_limit), levels), static_cast<std::uint64_t>(horizon) + 1);
}

std::uint64_t multilevel_table::work(std::size_t levels, const std::vector<std::uint64_t>& free_limit,
                                     step_t horizon) noexcept
{
    // The batched minimum (T^2/2 per row and level), and per length the terms outside the batches, the moves
    // and the placements (which dominate short tables with many rows).
    const auto t = static_cast<std::uint64_t>(horizon);
    const std::uint64_t per_row = mul_saturated(t, t) / 2 + mul_saturated(t, 32 + 2 * levels);
    return mul_saturated(mul_saturated(row_count(free_limit), levels), per_row);
}

multilevel_table::multilevel_table(const cost_model& model, const std::vector<std::uint64_t>& free_limit,
                                   step_t horizon, std::uint64_t max_entries, const multilevel_grid& grid)
    : horizon_(horizon), levels_(model.levels.size()), step_cost_(model.step_cost), grid_(grid)
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
    // A layered table computes its outer level only.
    const std::uint64_t cost = work(grid.outer >= 0 ? 1 : levels_, free_limit, horizon);
    if (cost > table_work_cap() - std::min(table_work_cap(), table_work_meter()))
        throw table_work_exhausted("a multi-level table for " + std::to_string(horizon) + " steps needs " +
                                   std::to_string(cost) + " iterations, more than the " +
                                   std::to_string(table_work_cap() - std::min(table_work_cap(), table_work_meter())) +
                                   " left of the work limit");
    table_work_meter() += cost;
    for (std::size_t i = 0; i < levels_; ++i) {
        write_.push_back(model.levels[i].write_cost);
        read_.push_back(model.levels[i].read_cost);
        const bool unlimited = free_limit[i] == unlimited_free;
        unlimited_.push_back(unlimited);
        dims_.push_back(unlimited ? 1 : free_limit[i] + 1);
        stride_.push_back(rows_);
        rows_ *= dims_.back();
    }
    if (grid_.fine != nullptr) {
        const multilevel_table& fine = *grid_.fine;
        const multilevel_table* left = grid_.left;
        // The fine table covers one unit in steps, or is a layered table's grid inner table over the same
        // units.
        const bool same_units = fine.grid_.fine != nullptr;
        bool fits = fine.levels_ == levels_ &&
                    (same_units ? grid_.outer >= 0 && fine.grid_.steps == grid_.steps && fine.grid_.last == grid_.last
                                : fine.horizon_ >= std::max(grid_.steps, grid_.last)) &&
                    (left == nullptr || (left->rows_ == rows_ && left->horizon_ >= horizon_ &&
                                         left->unit_steps() == grid_.steps && left->grid_.outer == grid_.outer));
        if (grid_.outer < 0) {
            fits = fits && fine.rows_ == rows_;
        } else {
            // Layered: this table holds only the outer level, the inner one only the leaf's start there.
            const auto o = static_cast<std::size_t>(grid_.outer);
            fits = fits && o < levels_ && !fine.unlimited_[o] && fine.dims_[o] == 1;
            for (std::size_t i = 0; i < levels_; ++i)
                fits = fits && (i == o || (!unlimited_[i] && dims_[i] == 1));
        }
        if (!fits || grid_.steps < 1 || grid_.last < 1)
            throw argument_error(
                "a grid or layered table needs fine and left tables with matching free-slot limits and lengths");
        step_cost_ = model.step_cost * static_cast<double>(grid_.steps);
    }
    build();
}

void multilevel_table::build()
{
    const std::uint64_t stride = stride_length();
    // A layered table computes F only for a start on its outer level; the others are never reached.
    const bool layered = grid_.outer >= 0;
    const std::uint64_t cells = static_cast<std::uint64_t>(levels_) * rows_ * stride;
    p_.assign(cells, layered ? infinity : 0.0);
    split_.assign(cells, 0);
    move_.assign(cells, -1);
    q_.assign(rows_ * stride, infinity);
    q_level_.assign(rows_ * stride, -1);
    build_scratch scratch;
    scratch.g.resize(levels_ * rows_);
    scratch.bulk_value.resize(levels_ * rows_ * batch);
    scratch.bulk_m.resize(levels_ * rows_ * batch);
    const auto horizon = static_cast<std::int64_t>(horizon_);
    for (std::int64_t l0 = 1; l0 <= horizon; l0 += batch) {
        const bool bulk = l0 > batch; // the batched terms 16 <= m < l0 exist
        if (bulk)
            build_bulk(l0, scratch);
        for (std::int64_t l = l0; l < l0 + batch && l <= horizon; ++l) {
            build_split(l, l0, bulk, scratch);
            build_move(l, scratch);
            build_place(l);
        }
    }
}

bool multilevel_table::leaf_at(std::int64_t l) const noexcept
{
    // A grid hands one unit to its fine table, a layered table any leaf that fits its inner one (split 0).
    return grid_.fine != nullptr && (l == 1 || grid_.outer >= 0) &&
           fine_length(static_cast<step_t>(l)) <= grid_.fine->horizon_;
}

void multilevel_table::build_bulk(std::int64_t l0, build_scratch& scratch) const
{
    const std::uint64_t stride = stride_length();
    const bool layered = grid_.outer >= 0;
    const level_t first = layered ? grid_.outer : 0;
    const level_t end = layered ? grid_.outer + 1 : static_cast<level_t>(levels_);
    const multilevel_table& left = *left_table(); // P of left parts: this table, or a grid's interior one
    for (level_t L = first; L < end; ++L)
        for (std::uint64_t row = 0; row < rows_; ++row) {
            const std::size_t at = (static_cast<std::size_t>(L) * rows_ + row) * batch;
            batch_min_plus(&left.p_[left.index(0, row, L)], &q_[row * stride], l0, batch, l0, &scratch.bulk_value[at],
                           &scratch.bulk_m[at]);
        }
}

void multilevel_table::build_split(std::int64_t l, std::int64_t l0, bool bulk, build_scratch& scratch)
{
    const std::uint64_t stride = stride_length();
    const bool layered = grid_.outer >= 0;
    const level_t first = layered ? grid_.outer : 0;
    const level_t end = layered ? grid_.outer + 1 : static_cast<level_t>(levels_);
    const multilevel_table& left = *left_table(); // P of left parts: this table, or a grid's interior one
    const multilevel_table* fine = grid_.fine;
    const auto length = static_cast<step_t>(l);
    const auto b = static_cast<std::size_t>(l - l0);
    const bool leaf = leaf_at(l);
    // Raw pointers: the stores to split_ must not make the compiler reload the scratch vectors' data.
    double* g = scratch.g.data();
    const double* bulk_value = scratch.bulk_value.data();
    const std::int64_t* bulk_m = scratch.bulk_m.data();
    // G(l, row, L): split, or (l = 1) reverse where it stands; or a leaf.
    for (level_t L = first; L < end; ++L)
        for (std::uint64_t row = 0; row < rows_; ++row) {
            const double* p = &left.p_[left.index(0, row, L)];
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
            double cost = l >= 2 ? read_[static_cast<std::size_t>(L)] + best : 0;
            if (leaf) {
                // On a tie the leaf: it stores nothing more on the outer level.
                const double whole = fine->value(fine_length(length), fine_row(row), L);
                if (l == 1 || whole <= cost) {
                    cost = whole;
                    m = 0;
                }
            }
            g[static_cast<std::size_t>(L) * rows_ + row] = cost;
            split_[index(length, row, L)] = static_cast<std::uint32_t>(m);
        }
}

void multilevel_table::build_move(std::int64_t l, const build_scratch& scratch)
{
    const bool layered = grid_.outer >= 0;
    const level_t first = layered ? grid_.outer : 0;
    const auto n = static_cast<level_t>(levels_);
    const level_t end = layered ? grid_.outer + 1 : n;
    const auto length = static_cast<step_t>(l);
    const double* g = scratch.g.data(); // not reloaded after each store to move_ (a char type)
    // F(l, row, L): G, or a move of x_a to another level first (only when strictly cheaper, so that zero-cost
    // levels never produce pointless store-and-free pairs).
    for (level_t L = first; L < end; ++L)
        for (std::uint64_t row = 0; row < rows_; ++row) {
            double best = g[static_cast<std::size_t>(L) * rows_ + row];
            std::int8_t target = -1;
            const double margin = 1e-12 * std::max(1.0, best);
            for (level_t to = 0; to < n; ++to) {
                if (to == L || !has_free(row, to))
                    continue;
                const std::uint64_t moved = given_back(taken(row, to), L);
                const double c = write_[static_cast<std::size_t>(to)] + g[static_cast<std::size_t>(to) * rows_ + moved];
                if (c < best - margin) {
                    best = c;
                    target = static_cast<std::int8_t>(to);
                }
            }
            p_[index(length, row, L)] = best + step_cost_ * static_cast<double>(l);
            move_[index(length, row, L)] = target;
        }
}

void multilevel_table::build_place(std::int64_t l)
{
    const std::uint64_t stride = stride_length();
    const bool layered = grid_.outer >= 0;
    const multilevel_table* fine = grid_.fine;
    const auto length = static_cast<step_t>(l);
    const bool leaf = leaf_at(l);
    // Q(l, row): where a right part of l units keeps its start. On a level with room; one step is reversed where
    // it stands; a grid's super-step and a layered table's leaf go to the fine table from an unheld start (on a tie
    // the leaf: nothing stored on the outer level for it).
    for (std::uint64_t row = 0; row < rows_; ++row) {
        placement best{-1, infinity};
        if (l >= 2 || layered)
            best = place_start(length, row); // layered: only the outer level has room
        else if (fine == nullptr)
            best.cost = 0;
        if (leaf) {
            const double c = fine->placed_cost(fine_length(length), fine_row(row));
            if (c <= best.cost)
                best = {-1, c};
        }
        q_[row * stride + static_cast<std::uint64_t>(l)] = best.cost;
        q_level_[row * stride + static_cast<std::uint64_t>(l)] = static_cast<std::int8_t>(best.level);
    }
}

multilevel_table::placement multilevel_table::place_start(step_t length, std::uint64_t row) const noexcept
{
    // The cheapest level; on a tie, one whose subtree does not move the start away at once (a free store
    // on level 0 followed by a move to level 1 costs what a store on level 1 costs, in two more actions).
    placement best{-1, infinity};
    bool best_moves = false;
    for (level_t L = 0; L < static_cast<level_t>(levels_); ++L) {
        if (!has_free(row, L))
            continue;
        const double c = write_[static_cast<std::size_t>(L)] + value(length, taken(row, L), L);
        const bool moves = move(length, taken(row, L), L) >= 0;
        const double margin = 1e-12 * std::max(1.0, std::abs(c));
        if (c < best.cost - margin || (c <= best.cost + margin && best_moves && !moves)) {
            best = {L, c};
            best_moves = moves;
        }
    }
    return best;
}

double multilevel_table::placed_cost(step_t length, std::uint64_t row) const noexcept
{
    return q_[row * stride_length() + static_cast<std::uint64_t>(length)];
}

multilevel_counts multilevel_table::placed_counts(step_t length, std::uint64_t row,
                                                  multilevel_counts_cache& cache) const
{
    const level_t level = store_level(row, length);
    if (level < 0) {
        if (grid_.fine != nullptr && std::isfinite(placed_cost(length, row)))
            return grid_.fine->placed_counts(fine_length(length), fine_row(row), cache);
        return {}; // one step reversed where it stands; or no level has room, and no plan places such a start
    }
    multilevel_counts c = counts(length, taken(row, level), level, cache);
    ++c.stores[static_cast<std::size_t>(level)];
    return c;
}

multilevel_counts multilevel_table::counts(step_t length, std::uint64_t row, level_t level,
                                           multilevel_counts_cache& cache) const
{
    // Memoised over F nodes (l, row, L) of this table, visited depth-first with an explicit stack (a right
    // spine on an unlimited level may be thousands of nodes deep). Nodes of other tables (a grid's fine
    // table, its interior table) are asked for directly: tables form a chain, never a cycle.
    std::unordered_map<std::uint64_t, multilevel_counts>& memo = cache[this];
    const multilevel_table& left_of = *left_table();
    auto add = [&](multilevel_counts& c, const multilevel_counts& d) {
        c.forward_steps += d.forward_steps;
        for (std::size_t i = 0; i < levels_; ++i) {
            c.stores[i] += d.stores[i];
            c.restores[i] += d.restores[i];
        }
    };
    std::vector<std::uint64_t> stack{index(length, row, level)};
    while (!stack.empty()) {
        const std::uint64_t key = stack.back();
        if (memo.contains(key)) {
            stack.pop_back();
            continue;
        }
        const auto l = static_cast<step_t>(key % stride_length());
        const std::uint64_t r0 = (key / stride_length()) % rows_;
        const auto L0 = static_cast<level_t>(key / stride_length() / rows_);
        // A move first, then G at the moved row and level.
        const level_t to = move(l, r0, L0);
        const std::uint64_t r = to >= 0 ? given_back(taken(r0, to), L0) : r0;
        const level_t L = to >= 0 ? to : L0;
        const auto Li = static_cast<std::size_t>(L);
        multilevel_counts c;
        if (handed_over(l, r, L)) {
            c = grid_.fine->counts(fine_length(l), fine_row(r), L, cache);
        } else if (l == 1) {
            c.peak[Li] = 1;
            c.peak_slots = 1;
        } else {
            const step_t m = split(l, r, L);
            const step_t k = l - m;
            const level_t right_level = store_level(r, k);
            // Dependencies in this table first.
            bool ready = true;
            const std::uint64_t right_key = right_level >= 0 ? index(k, taken(r, right_level), right_level) : 0;
            if (right_level >= 0 && !memo.contains(right_key)) {
                stack.push_back(right_key);
                ready = false;
            }
            if (&left_of == this && !memo.contains(index(m, r, L))) {
                stack.push_back(index(m, r, L));
                ready = false;
            }
            if (!ready)
                continue;
            const multilevel_counts a = &left_of == this ? memo.at(index(m, r, L)) : left_of.counts(m, r, L, cache);
            multilevel_counts b;
            if (right_level >= 0) {
                b = memo.at(right_key);
                ++b.stores[static_cast<std::size_t>(right_level)];
            } else {
                b = placed_counts(k, r, cache); // a single step, or handed to the fine table
            }
            c.forward_steps = static_cast<std::uint64_t>(m) * static_cast<std::uint64_t>(unit_steps());
            add(c, a);
            add(c, b);
            ++c.restores[Li];
            c.repetition = std::max(1 + a.repetition, b.repetition);
            // The right part runs while x_a is held; the left part holds x_a itself.
            c.peak_slots = std::max(a.peak_slots, 1 + b.peak_slots);
            for (std::size_t i = 0; i < levels_; ++i)
                c.peak[i] = std::max(a.peak[i], b.peak[i] + (i == Li ? 1 : 0));
        }
        if (to >= 0) {
            // Just after the move's store both copies are held.
            ++c.stores[Li];
            c.peak[static_cast<std::size_t>(L0)] = std::max<slot_t>(c.peak[static_cast<std::size_t>(L0)], 1);
            c.peak_slots = std::max<slot_t>(c.peak_slots, 2);
        }
        memo.emplace(key, c);
        stack.pop_back();
    }
    return memo.at(index(length, row, level));
}

} // namespace remat::detail
