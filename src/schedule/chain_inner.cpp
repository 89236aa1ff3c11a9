// The inner table E(s, l, M) of a chain plan (the recurrence is at the top of chain_plan.hpp): its candidates,
// the row builders (sampled long rows, short rows by split; narrow rows are chain_narrow_rows.cpp's), and the
// split the cursor finds again from a value.
#include "chain_stages.hpp"
#include "kernel_clones.hpp"

#include <algorithm>
#include <cassert>
#include <limits>

namespace remat::detail {
namespace {

constexpr float infinite = std::numeric_limits<float>::infinity();

/// One way to reverse the segment (s, l) from x_s current and held (chain_plan.hpp): a split j (tag j) or a kept
/// block's option i (tag keep + i). For M in [from, U] it costs add + right[M - shift] + left[M], the terms
/// summed in that order (absent rows: null); below `from` it is infinite (a part does not fit, or the advance).
/// From `flat` on it no longer changes: its rows are flat there and its conditions met (see build_inner).
struct candidate {
    std::uint16_t tag = 0;
    float add = 0;
    const float* right = nullptr;
    std::uint64_t right_row = 0; ///< the right part's row (chain_plan::row_of)
    std::uint64_t shift = 0;
    const float* left = nullptr;
    std::uint64_t from = 0;
    std::uint64_t flat = 0;

    [[nodiscard]] float at(std::uint64_t m) const noexcept
    {
        return right != nullptr ? with_right(right[m - shift], m) : with_right(0, m);
    }
    /// The cost at m given the right part's value there.
    [[nodiscard]] float with_right(float r, std::uint64_t m) const noexcept
    {
        float c = add;
        if (right != nullptr)
            c = c + r;
        if (left != nullptr)
            c = c + left[m];
        return c;
    }
};

/// Every way to reverse (s, l), l >= 2, that is finite somewhere in [0, U], in the order whose first cheapest is the
/// plan's choice (splits by j, then keep options). Needs the rows of (s, j < l) and of the right parts (finite, flat).
/// (Written in place: a candidate copied in whole right after its fields were written stalls on the copy.)
void list_candidates(const chain_plan& p, step_t s, step_t l, std::vector<candidate>& out)
{
    out.clear();
    const auto si = static_cast<std::size_t>(s);
    const std::uint64_t top = p.units;
    const std::uint64_t us = p.u[si];
    const auto row_finite = [&](step_t a, step_t n) { return p.finite[p.row_of(a, n)]; };
    const auto row_flat = [&](step_t a, step_t n) { return p.flat[p.row_of(a, n)]; };
    std::uint64_t running = 0; // max(p_s .. p_{s+j-1})
    for (step_t j = 1; j < l; ++j) {
        const auto ji = static_cast<std::size_t>(s + j);
        running = std::max(running, p.wide[ji - 1]);
        const std::uint64_t lo = us + running; // x_s's snapshot and the advance
        if (lo > top)
            break; // later splits advance further and need even more
        candidate& c = out.emplace_back();
        c.tag = static_cast<std::uint16_t>(j);
        const auto f = static_cast<float>(p.prefix[ji] - p.prefix[si]);
        c.left = &p.cost[p.at(s, j)];
        if (l - j == 1) { // reversed where it stands: r units on top of x_s's snapshot
            c.add = f + static_cast<float>(p.model.steps[ji].adjoint);
            c.from = std::max({lo, us + p.r[ji], row_finite(s, j)});
            c.flat = std::max({lo, us + p.r[ji], row_flat(s, j)});
        } else {
            c.add = f;
            c.right_row = p.row_of(s + j, l - j);
            c.right = &p.cost[c.right_row * p.row()];
            c.shift = us;
            c.from = std::max({lo, row_finite(s, j), us + row_finite(s + j, l - j)});
            c.flat = std::max({lo, row_flat(s, j), us + row_flat(s + j, l - j)});
        }
        if (c.from > top)
            out.pop_back();
    }
    if (!p.keeps())
        return;
    for (std::uint32_t i = p.keep_first[si]; i < p.keep_first[si + 1]; ++i) {
        const chain_plan::keep_option& o = p.keep_options[i];
        candidate& c = out.emplace_back();
        c.tag = static_cast<std::uint16_t>(chain_plan::keep + (i - p.keep_first[si]));
        c.add = static_cast<float>(p.model.steps[si].forward + o.adjoint);
        if (l == 2) { // the right part is one block, reversed where it stands
            c.add = c.add + static_cast<float>(p.model.steps[si + 1].adjoint);
            c.from = c.flat = std::max(o.need, o.held + p.r[si + 1]);
        } else {
            c.right_row = p.row_of(s + 1, l - 1);
            c.right = &p.cost[c.right_row * p.row()];
            c.shift = o.held;
            c.from = std::max(o.need, o.held + row_finite(s + 1, l - 1));
            c.flat = std::max(o.need, o.held + row_flat(s + 1, l - 1));
        }
        if (c.from > top)
            out.pop_back();
    }
}

/// best[i] = min(best[i], c's cost at M = from + i) for i < n: the inner loop of the tables, branch-free so that it
/// runs on vectors.
void lower_to(float* __restrict best, const candidate& c, std::uint64_t from, std::uint64_t n)
{
    const float add = c.add;
    if (c.right != nullptr && c.left != nullptr) {
        const float* __restrict right = c.right + (from - c.shift);
        const float* __restrict left = c.left + from;
        for (std::uint64_t i = 0; i < n; ++i)
            best[i] = std::min(best[i], add + right[i] + left[i]);
    } else if (c.left != nullptr) {
        const float* __restrict left = c.left + from;
        for (std::uint64_t i = 0; i < n; ++i)
            best[i] = std::min(best[i], add + left[i]);
    } else if (c.right != nullptr) {
        const float* __restrict right = c.right + (from - c.shift);
        for (std::uint64_t i = 0; i < n; ++i)
            best[i] = std::min(best[i], add + right[i]);
    } else {
        for (std::uint64_t i = 0; i < n; ++i)
            best[i] = std::min(best[i], add);
    }
}

/// Units between a long row's sample points (fill_sampled), and between the entries of every row that build_inner
/// copies aside (its sample table, small enough to stay in cache where the table does not).
constexpr std::uint64_t stride = 128;

/// best[m] for m in [finite, flat] (a row's span, infinite before): the least cost of the candidates, found without
/// running most of them over most of the span. Each candidate's cost, and so the row, never grows with M. Sample the
/// span (`marks`: finite, flat, and every M in between whose right parts' M - u_s is a multiple of `stride`, read
/// from the sample table) and take the least cost at each sample exactly. Between two samples a < M < b, the row
/// lies in [best[b], best[a]]; a candidate whose cost at b is not below best[a] costs at least best[a] >= best[M] all
/// along, so best[M] is best[a] (given at M by the candidate that gives it at a, whose cost never grows) or the cost
/// of a candidate cheaper than best[a] at M, and so at b. So best[M] = min(best[a], the candidates cheaper than
/// best[a] at b) exactly. On bench/chain_plan's drawn chain of 100 steps about one candidate in ten passes it.
void fill_sampled(float* best, const std::vector<candidate>& candidates, std::uint64_t finite, std::uint64_t flat,
                  std::uint64_t us, const std::vector<float>& samples, std::uint64_t per_row,
                  const std::vector<std::uint64_t>& flats, const std::vector<float>& floors,
                  std::vector<std::uint64_t>& marks, std::vector<float>& marked)
{
    marks.clear();
    marks.push_back(finite);
    for (std::uint64_t m = us + ((finite - us) / stride + 1) * stride; m < flat; m += stride)
        marks.push_back(m);
    marks.push_back(flat);
    const std::size_t n = marks.size();
    marked.resize(candidates.size() * n);
    for (std::size_t i = 0; i < n; ++i)
        best[marks[i]] = infinite;
    // The ends first: reads far apart in the table, asked for all at once so that they overlap; at flat from the
    // right part's own flat value where the right part is flat there.
    for (const candidate& x : candidates)
        if (x.right != nullptr && finite >= x.from) {
            __builtin_prefetch(x.right + (finite - x.shift));
            __builtin_prefetch(x.right + std::min(flat - x.shift, flats[x.right_row]));
        }
    for (std::size_t c = 0; c < candidates.size(); ++c) {
        const candidate& x = candidates[c];
        float* at = &marked[c * n];
        at[0] = finite < x.from ? infinite : x.at(finite);
        if (x.right != nullptr && flat - x.shift >= flats[x.right_row])
            at[n - 1] = x.with_right(floors[x.right_row], flat);
        else
            at[n - 1] = x.at(flat);
    }
    for (std::size_t c = 0; c < candidates.size(); ++c) {
        const candidate& x = candidates[c];
        float* at = &marked[c * n];
        const bool sampled = x.right != nullptr && x.shift == us;
        for (std::size_t i = 1; i + 1 < n; ++i) {
            const std::uint64_t m = marks[i];
            if (m < x.from)
                at[i] = infinite;
            else if (sampled)
                at[i] = x.with_right(samples[x.right_row * per_row + (m - us) / stride], m);
            else
                at[i] = x.at(m);
        }
        for (std::size_t i = 0; i < n; ++i)
            best[marks[i]] = std::min(best[marks[i]], at[i]);
    }
    for (std::size_t i = 0; i + 1 < n; ++i) {
        const std::uint64_t a = marks[i];
        const std::uint64_t b = marks[i + 1];
        if (b - a < 2)
            continue;
        const float ceiling = best[a];
        std::fill(best + a + 1, best + b, ceiling);
        for (std::size_t c = 0; c < candidates.size(); ++c) {
            if (!(marked[c * n + i + 1] < ceiling))
                continue;
            const std::uint64_t from = std::max(a + 1, candidates[c].from);
            if (from < b)
                lower_to(best + from, candidates[c], from, b - from);
        }
    }
}

/// best[i] = min(best[i], f + right[i] + left[i]) for i < n (distinct rows).
[[gnu::always_inline]] inline void sum_into(float* __restrict best, const float* __restrict right,
                                            const float* __restrict left, float f, std::uint64_t n)
{
    for (std::uint64_t i = 0; i < n; ++i)
        best[i] = std::min(best[i], f + right[i] + left[i]);
}

/// Rows (s, 2 ..) of a table with few units (every row shorter than two strides) and no kept blocks: by split j over
/// every l at once, so that each (j, l) costs a few additions and a short loop over M (the bookkeeping of a
/// candidate would cost more than its loop). A split's cost is computed from its least M on (x_s's snapshot and the
/// advance), where an infinite part gives an infinite sum; the same sums as list_candidates', so the same values.
/// Each row is taken as flat from U only, and finite from its first finite entry. In AVX2 where the CPU has it
/// (bench/chain_plan's measured chain of 60 steps at 25 to 62 units: 12% to 26% less time per plan).
REMAT_KERNEL_CLONES void build_short_rows(chain_plan& p, step_t s)
{
    const auto si = static_cast<std::size_t>(s);
    const std::uint64_t row = p.row();
    const std::uint64_t top = p.units;
    const std::uint64_t us = p.u[si];
    const step_t length = std::min(p.horizon, p.steps - s);
    std::uint64_t running = 0; // max(p_s .. p_{s+j-1})
    for (step_t j = 1; j + 1 <= length; ++j) {
        const auto ji = static_cast<std::size_t>(s + j);
        running = std::max(running, p.wide[ji - 1]);
        const std::uint64_t lo = us + running;
        if (lo > top)
            break; // later splits advance further and need even more
        const auto f = static_cast<float>(p.prefix[ji] - p.prefix[si]);
        const float* left = &p.cost[p.at(s, j)];
        { // l = j + 1: the right part is step s + j, reversed where it stands
            const float add = f + static_cast<float>(p.model.steps[ji].adjoint);
            float* best = &p.cost[p.at(s, j + 1)];
            for (std::uint64_t m = std::max(lo, us + p.r[ji]); m <= top; ++m)
                best[m] = std::min(best[m], add + left[m]);
        }
        const float* right = &p.cost[p.at(s + j, 1)] + (lo - us);
        float* best = &p.cost[p.at(s, j + 1)] + lo;
        for (step_t l = j + 2; l <= length; ++l) {
            right += row; // (s + j, l - j) from M = lo
            best += row;  // (s, l)
            sum_into(best, right, left + lo, f, top - lo + 1);
        }
    }
    for (step_t l = 2; l <= length; ++l) {
        const float* values = &p.cost[p.at(s, l)];
        std::uint64_t m = 0;
        while (m <= top && values[m] == infinite)
            ++m;
        if (m <= top) {
            p.finite[p.row_of(s, l)] = m;
            p.flat[p.row_of(s, l)] = top;
        }
    }
}

/// Sizes the inner table (every row infinite, finite and flat bounds past U) and the forward costs' prefix sums;
/// returns its rows.
std::uint64_t allocate_inner(chain_plan& p)
{
    const step_t t = p.steps;
    const step_t k = p.horizon;
    const std::uint64_t top = p.units;
    p.first_row.resize(static_cast<std::size_t>(t));
    std::uint64_t rows = 0;
    for (step_t s = 0; s < t; ++s) {
        p.first_row[static_cast<std::size_t>(s)] = rows;
        rows += static_cast<std::uint64_t>(std::min(k, t - s));
    }
    p.cost.assign(rows * p.row() + narrow_row_overread, infinite);
    p.finite.assign(rows, top + 1);
    p.flat.assign(rows, top + 1);
    p.prefix.assign(static_cast<std::size_t>(t) + 1, 0.0);
    for (step_t s = 0; s < t; ++s)
        p.prefix[static_cast<std::size_t>(s) + 1] =
            p.prefix[static_cast<std::size_t>(s)] + p.model.steps[static_cast<std::size_t>(s)].forward;
    return rows;
}

/// Row (s, 1): b_s wherever x_s's snapshot and the adjoint of step s fit, flat from there. Whether it is finite
/// anywhere.
bool fill_one_step_row(chain_plan& p, step_t s)
{
    const auto si = static_cast<std::size_t>(s);
    const std::uint64_t top = p.units;
    const std::uint64_t from = std::max(2 * p.u[si], p.r[si]);
    if (from > top)
        return false;
    float* one = &p.cost[p.at(s, 1)];
    std::fill(one + from, one + top + 1, static_cast<float>(p.model.steps[si].adjoint));
    p.finite[p.row_of(s, 1)] = p.flat[p.row_of(s, 1)] = from;
    return true;
}

} // namespace

/// E(s, l, .) for every s and l <= min(K, T - s), s from the end of the loop back to 0 (right parts first).
///
/// Only the values are kept; the cursor finds the split again (inner_split). Two bounds, per row, skip work that
/// cannot change a value:
/// - finite: the least M where the row is finite. Every row is infinite below some M and finite from there on (it
///   never grows with M), so a candidate is finite exactly from the largest of its parts' and conditions' least M
///   (`from`), and the row from the least of its candidates'.
/// - flat: from here to U the row is constant. A candidate's cost is a sum of its parts' rows at M and M - shift and
///   constants, its conditions thresholds on M, so from the largest of its parts' flat points and thresholds
///   (`flat`) it is constant; the row, their minimum, is constant from the largest of its candidates' flat points.
///   Row (s, 1) is flat where it becomes finite. The row is computed up to that point and copied on to U.
/// Both are exact, so every entry is what the minimum over every candidate at every M gives: the plan is the same.
void build_inner(chain_plan& p)
{
    const step_t t = p.steps;
    const step_t k = p.horizon;
    const std::uint64_t row = p.row();
    const std::uint64_t top = p.units;
    const std::uint64_t rows = allocate_inner(p);

    std::vector<candidate> candidates;
    detail::narrow_row_scratch narrow_rows;
    std::vector<std::uint64_t> marks; // a long row's sample points
    std::vector<float> marked;        // each candidate's cost at each of them
    const std::uint64_t per_row = top / stride + 1;
    const bool short_rows = top < 2 * stride && !p.keeps();                // built by split, without samples
    std::vector<float> samples(short_rows ? 0 : rows * per_row, infinite); // E(row, i * stride), i < per_row
    std::vector<float> floors(short_rows ? 0 : rows, infinite);            // E(row, flat)
    const auto sample = [&](std::uint64_t r) {
        if (short_rows)
            return;
        const float* values = &p.cost[r * row];
        for (std::uint64_t i = 0; i < per_row; ++i)
            samples[r * per_row + i] = values[i * stride];
        floors[r] = values[p.flat[r]];
    };
    for (step_t s = t - 1; s >= 0; --s) {
        const auto si = static_cast<std::size_t>(s);
        if (fill_one_step_row(p, s))
            sample(p.row_of(s, 1));
        if (short_rows && top + 1 <= detail::narrow_row_entries) {
            detail::build_narrow_rows(p, s, narrow_rows);
            continue;
        }
        if (short_rows) {
            build_short_rows(p, s);
            continue;
        }
        const step_t length = std::min(k, t - s);
        for (step_t l = 2; l <= length; ++l) {
            list_candidates(p, s, l, candidates);
            std::uint64_t finite = top + 1;
            std::uint64_t flat = 0;
            for (const candidate& c : candidates) {
                finite = std::min(finite, c.from);
                flat = std::max(flat, c.flat);
            }
            if (finite > top)
                continue; // infinite everywhere
            flat = std::min(flat, top);
            float* best = &p.cost[p.at(s, l)];
            if (flat - finite < 2 * stride) {
                for (const candidate& c : candidates)
                    if (c.from <= flat)
                        lower_to(best + c.from, c, c.from, flat - c.from + 1);
            } else {
                fill_sampled(best, candidates, finite, flat, p.u[si], samples, per_row, p.flat, floors, marks, marked);
            }
            std::fill(best + flat + 1, best + top + 1, best[flat]);
            p.finite[p.row_of(s, l)] = finite;
            p.flat[p.row_of(s, l)] = flat;
            sample(p.row_of(s, l));
        }
    }
}

/// The first candidate, in list_candidates' order, that gives the
/// table's value (the value is the same sum in the same order, so it matches exactly).
std::uint16_t inner_split(const chain_plan& p, step_t s, step_t l, std::uint64_t m)
{
    const float value = p.cost[p.at(s, l) + m];
    thread_local std::vector<candidate> candidates; // a cursor asks at every split: no allocation each time
    list_candidates(p, s, l, candidates);
    for (const candidate& c : candidates)
        if (m >= c.from && c.at(m) == value)
            return c.tag;
    assert(false && "a finite entry is some candidate's cost");
    return 0;
}

} // namespace remat::detail
