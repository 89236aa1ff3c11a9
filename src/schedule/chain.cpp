// The heterogeneous-chain dynamic program (the recurrences are at the top of chain_plan.hpp) and the walk
// of its decisions that yields the actions.
#include "remat/schedule/chain.hpp"

#include "chain_plan.hpp"
#include "chain_ranking.hpp"
#include "chain_refetch.hpp"
#include "kernel_clones.hpp"

#include "remat/error.hpp"
#include "remat/schedule/any_schedule.hpp"
#include "remat/schedule/chain_greedy.hpp"

#include <algorithm>
#include <cassert>
#include <exception>
#include <limits>
#include <numeric>
#include <string>

namespace remat {
namespace {

using detail::chain_plan;

constexpr float infinite = std::numeric_limits<float>::infinity();
constexpr std::uint64_t max_horizon = chain_plan::keep - 1; // splits are step counts below the keep marker

std::uint64_t units_of(std::uint64_t bytes, std::uint64_t granularity)
{
    return bytes / granularity + (bytes % granularity != 0 ? 1 : 0);
}

std::uint64_t common_divisor(const chain_model& m)
{
    std::uint64_t d = m.final_state_bytes;
    for (const chain_step& s : m.steps) {
        d = std::gcd(d, s.state_bytes);
        d = std::gcd(d, s.adjoint_bytes);
    }
    return d;
}

void choose_granularity(chain_plan& p, const chain::options& opts)
{
    const std::uint64_t divisor = common_divisor(p.fine); // blocks keep their inner states
    bool automatic = false;
    if (opts.granularity != 0) {
        p.granularity = opts.granularity;
    } else {
        if (opts.units_target == 0)
            throw argument_error("units_target must be at least 1, got 0");
        // Units enough for a table of horizon min(T, 8), at least units_target, at most max_units: on long
        // chains finer units matter more than longer left parts (bench/chain_plan, T = 1000: 4096 units at a
        // horizon of 8 cost 9% less than 256 units at a horizon of 131). A chain of blocks has few of them, and
        // its blocks' states are counted in units too: it takes all the units the table allows (bench/chain_plan,
        // T = 10000 in blocks of 80 at 50%: 29795 units cost 2.8% less than 4096). An eighth of them is kept above
        // the budget for the rounding's slack (below).
        // Memory past what storing every state needs is never used (that plan is the cheapest of all), so it
        // must not coarsen the units. Blocks keep the budget: their kept states may hold more than that.
        const std::uint64_t useful = p.block == 1 ? std::min(p.budget, p.fine.store_all_bytes()) : p.budget;
        const auto t = static_cast<std::uint64_t>(p.model.size());
        const std::uint64_t allowed = opts.max_table_entries / (t * std::min<std::uint64_t>(t, 8) + 1);
        const std::uint64_t most = p.block > 1 ? std::max(opts.max_units, allowed) : opts.max_units;
        const bool fits = useful / divisor <= most;
        const std::uint64_t table =
            std::clamp<std::uint64_t>(allowed, opts.units_target, std::max(opts.units_target, most));
        automatic = !fits;
        p.granularity = fits ? divisor : std::max<std::uint64_t>(1, units_of(useful, table - table / 9));
    }
    p.lossless = divisor % p.granularity == 0;
    p.budget_units = p.budget / p.granularity;
    p.units = p.budget_units;
    // Rounding every size up wastes up to a unit per size held at once, so plans made for a few more units
    // than the budget often still fit it in true bytes: the tables reach that far and the plan is walked
    // from the most units whose plan fits (an automatic granularity only; a given one keeps its table).
    if (automatic && !p.lossless && opts.use_rounding_slack) {
        const auto items = static_cast<std::uint64_t>(p.model.size()) + 3;
        p.units += std::min(items, p.budget_units / 8);
    }
}

/// The chain of blocks of `block` steps (see chain_plan.hpp).
chain_model blocked(const chain_model& fine, step_t block)
{
    chain_model out;
    const step_t t = fine.size();
    for (step_t a = 0; a < t; a += block) {
        const step_t b = std::min(t, a + block);
        chain_step s{};
        s.state_bytes = fine.state_bytes(a);
        const std::uint64_t ends = std::max(fine.state_bytes(a), fine.state_bytes(b));
        for (step_t k = a; k < b; ++k) {
            s.forward += fine.steps[static_cast<std::size_t>(k)].forward;
            s.adjoint += fine.steps[static_cast<std::size_t>(k)].adjoint;
            if (k + 1 < b)
                s.adjoint += fine.steps[static_cast<std::size_t>(k)].forward;
        }
        // The block's adjoint as the cursor runs it, in the same accounting as remat::evaluate: store x_k and
        // advance for k < b - 1, reverse b - 1, then restore, free and reverse each stored state.
        std::uint64_t held = 0;
        std::uint64_t peak = 0;
        for (step_t k = a; k + 1 < b; ++k) {
            held += fine.state_bytes(k);
            peak = std::max(
                {peak, held + fine.state_bytes(k), held + std::max(fine.state_bytes(k), fine.state_bytes(k + 1))});
        }
        peak = std::max(peak, held + fine.adjoint_need(b - 1));
        for (step_t k = b - 2; k >= a; --k) {
            peak = std::max(peak, held + fine.state_bytes(k));
            held -= fine.state_bytes(k);
            peak = std::max(peak, held + fine.adjoint_need(k));
        }
        s.adjoint_bytes = peak > ends ? peak - ends : 0;
        out.steps.push_back(s);
    }
    out.final_state_bytes = fine.final_state_bytes;
    return out;
}

void choose_horizon(chain_plan& p, const chain::options& opts)
{
    const auto t = static_cast<std::uint64_t>(p.steps);
    const std::uint64_t rows = opts.max_table_entries / p.row(); // rows of U + 1 entries that fit
    if (rows < t)
        throw capacity_error("a chain of " + std::to_string(t) + " steps at " + std::to_string(p.units) +
                             " memory units (granularity " + std::to_string(p.granularity) +
                             " bytes) needs more than max_table_entries = " + std::to_string(opts.max_table_entries) +
                             " table entries; use a coarser granularity");
    // A horizon of K has min(K, T - s) rows for each start s: K T - K (K - 1) / 2 in all, growing with K.
    const auto rows_for = [&](std::uint64_t h) { return h * t - h * (h - 1) / 2; };
    std::uint64_t fitting = 1; // rows_for(1) = T fits
    for (std::uint64_t high = std::min(t, max_horizon); fitting < high;) {
        const std::uint64_t mid = fitting + (high - fitting + 1) / 2;
        if (rows_for(mid) <= rows)
            fitting = mid;
        else
            high = mid - 1;
    }
    if (opts.horizon < 0)
        throw argument_error("horizon must be >= 0, got " + std::to_string(opts.horizon));
    if (opts.horizon > 0 && static_cast<std::uint64_t>(opts.horizon) > fitting && fitting < t)
        throw capacity_error("a horizon of " + std::to_string(opts.horizon) + " steps needs more than " +
                             std::to_string(opts.max_table_entries) + " table entries; at most " +
                             std::to_string(fitting) + " fit");
    p.horizon = static_cast<step_t>(
        opts.horizon > 0 ? std::min<std::uint64_t>(static_cast<std::uint64_t>(opts.horizon), fitting) : fitting);
}

/// Prices keeping block [a, b) with the inner states `flags` marks, in the tables' units, counted as
/// remat::evaluate counts the actions the cursor gives (keep_actions, kept_actions): x_a held; store each marked
/// state on the way; after the right part, from the last stored state: restore it, re-run to the next one storing
/// each state, reverse those steps, restore, free and reverse it.
chain_plan::keep_option price_keep(const chain_plan& p, step_t a, step_t b, const std::uint8_t* flags)
{
    const chain_model& fine = p.fine;
    const auto units = [&](step_t k) { return units_of(fine.state_bytes(k), p.granularity); };
    const auto running = [&](step_t k) { return std::max(units(k), units(k + 1)); };
    const auto reversing = [&](step_t k) {
        return running(k) + units_of(fine.steps[static_cast<std::size_t>(k)].adjoint_bytes, p.granularity);
    };
    const auto stored = [&](step_t k) { return k == a || flags[k - a - 1] != 0; };
    chain_plan::keep_option o;
    std::uint64_t held = units(a);
    std::uint64_t need = 0;
    for (step_t k = a; k < b; ++k) {
        if (k > a && stored(k)) {
            held += units(k);
            need = std::max(need, held + units(k));
        }
        need = std::max(need, held + running(k));
    }
    o.held = held;
    step_t q = b;
    for (step_t pos = b - 1; pos >= a; --pos) {
        if (!stored(pos))
            continue;
        need = std::max(need, held + units(pos)); // restore x_pos
        std::uint64_t extra = 0;                  // the states of the re-run, stored above
        for (step_t k = pos; k + 1 < q; ++k) {
            if (k > pos) {
                extra += units(k);
                need = std::max(need, held + extra + units(k));
            }
            need = std::max(need, held + extra + running(k));
            o.adjoint += fine.steps[static_cast<std::size_t>(k)].forward;
        }
        if (q - 1 > pos) {
            need = std::max(need, held + extra + reversing(q - 1));
            o.adjoint += fine.steps[static_cast<std::size_t>(q - 1)].adjoint;
            for (step_t k = q - 2; k > pos; --k) {
                need = std::max(need, held + extra + units(k));
                extra -= units(k);
                need = std::max(need, held + extra + reversing(k));
                o.adjoint += fine.steps[static_cast<std::size_t>(k)].adjoint;
            }
            need = std::max(need, held + units(pos)); // restore x_pos again
        }
        held -= units(pos);
        need = std::max(need, held + reversing(pos));
        o.adjoint += fine.steps[static_cast<std::size_t>(pos)].adjoint;
        q = pos;
    }
    o.need = need;
    return o;
}

/// Each block's keep options: every set of its inner states (up to 10 of them; else the nested sets that drop the
/// most units per forward cost first), of which those no other beats in both held units and cost, thinned to
/// max_keep_options.
void keeping(chain_plan& p)
{
    const chain_model& fine = p.fine;
    const auto t = static_cast<std::size_t>(p.steps);
    p.keep_first.assign(t + 1, 0);
    p.keep_options.clear();
    p.keep_flags.clear();
    std::vector<std::pair<chain_plan::keep_option, std::vector<std::uint8_t>>> found;
    for (std::size_t s = 0; s < t; ++s) {
        const step_t a = static_cast<step_t>(s) * p.block;
        const step_t b = std::min(fine.size(), a + p.block);
        const auto inner = static_cast<std::size_t>(b - a - 1);
        found.clear();
        std::vector<std::uint8_t> flags(inner, 0);
        if (inner <= 10) {
            for (std::uint32_t mask = 0; mask < (1U << inner); ++mask) {
                for (std::size_t i = 0; i < inner; ++i)
                    flags[i] = static_cast<std::uint8_t>((mask >> i) & 1U);
                found.emplace_back(price_keep(p, a, b, flags.data()), flags);
            }
        } else {
            const std::vector<step_t> order = detail::states_by_bytes_per_forward_cost(fine, a, b);
            std::fill(flags.begin(), flags.end(), std::uint8_t{1});
            found.emplace_back(price_keep(p, a, b, flags.data()), flags);
            for (const step_t k : order) {
                flags[static_cast<std::size_t>(k - a - 1)] = 0;
                found.emplace_back(price_keep(p, a, b, flags.data()), flags);
            }
        }
        std::sort(found.begin(), found.end(), [](const auto& x, const auto& y) {
            return x.first.held != y.first.held         ? x.first.held < y.first.held
                   : x.first.adjoint != y.first.adjoint ? x.first.adjoint < y.first.adjoint
                                                        : x.first.need < y.first.need;
        });
        std::vector<std::size_t> front; // cheaper than every option that holds no more
        double cheapest = std::numeric_limits<double>::infinity();
        for (std::size_t i = 0; i < found.size(); ++i)
            if (found[i].first.adjoint < cheapest) {
                cheapest = found[i].first.adjoint;
                front.push_back(i);
            }
        const std::size_t n = std::min(front.size(), chain_plan::max_keep_options);
        for (std::size_t i = 0; i < n; ++i) { // evenly along the front, both ends included
            const std::size_t pick = n == 1 ? front.back() : front[i * (front.size() - 1) / (n - 1)];
            chain_plan::keep_option o = found[pick].first;
            o.flags = static_cast<std::uint32_t>(p.keep_flags.size());
            p.keep_flags.insert(p.keep_flags.end(), found[pick].second.begin(), found[pick].second.end());
            p.keep_options.push_back(o);
        }
        p.keep_first[s + 1] = static_cast<std::uint32_t>(p.keep_options.size());
    }
}

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
    p.first_row.resize(static_cast<std::size_t>(t));
    std::uint64_t rows = 0;
    for (step_t s = 0; s < t; ++s) {
        p.first_row[static_cast<std::size_t>(s)] = rows;
        rows += static_cast<std::uint64_t>(std::min(k, t - s));
    }
    p.cost.assign(rows * row + detail::narrow_row_overread, infinite);
    p.finite.assign(rows, top + 1);
    p.flat.assign(rows, top + 1);
    p.prefix.assign(static_cast<std::size_t>(t) + 1, 0.0);
    for (step_t s = 0; s < t; ++s)
        p.prefix[static_cast<std::size_t>(s) + 1] =
            p.prefix[static_cast<std::size_t>(s)] + p.model.steps[static_cast<std::size_t>(s)].forward;

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
        {
            const std::uint64_t from = std::max(2 * p.u[si], p.r[si]);
            if (from <= top) {
                float* one = &p.cost[p.at(s, 1)];
                std::fill(one + from, one + top + 1, static_cast<float>(p.model.steps[si].adjoint));
                p.finite[p.row_of(s, 1)] = p.flat[p.row_of(s, 1)] = from;
                sample(p.row_of(s, 1));
            }
        }
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

/// The plan's choice at E(s, l, M), l >= 2: the first candidate, in list_candidates' order, that gives the
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

/// G(s, .) for T - s > K (the outermost chain of checkpoints, with left parts of at most K steps).
void build_outer(chain_plan& p)
{
    const step_t t = p.steps;
    const step_t k = p.horizon;
    if (t <= k)
        return;
    const std::uint64_t row = p.row();
    const std::uint64_t top = p.units;
    p.outer_cost.assign(static_cast<std::size_t>(t) * row, std::numeric_limits<double>::infinity());
    p.outer_split.assign(static_cast<std::size_t>(t) * row, 0);
    auto g = [&](step_t s, std::uint64_t m) -> double {
        if (p.outer(s))
            return p.outer_cost[static_cast<std::size_t>(s) * row + m];
        const float h = p.cost[p.at(s, t - s) + m];
        if (t - s == 1) // reversed where it stands
            return m >= p.r[static_cast<std::size_t>(s)] ? p.model.steps[static_cast<std::size_t>(s)].adjoint
                                                         : std::numeric_limits<double>::infinity();
        return static_cast<double>(h);
    };
    for (step_t s = t - k - 1; s >= 0; --s) {
        const auto si = static_cast<std::size_t>(s);
        const std::uint64_t us = p.u[si];
        double* best = &p.outer_cost[si * row];
        std::uint16_t* chosen = &p.outer_split[si * row];
        std::uint64_t running = 0;
        double f = 0;
        for (step_t j = 1; j <= k; ++j) {
            const auto ji = static_cast<std::size_t>(s + j - 1);
            running = std::max(running, p.wide[ji]);
            f += p.model.steps[ji].forward;
            const std::uint64_t lo = us + running;
            if (lo > top)
                break;
            const float* left = &p.cost[p.at(s, j)];
            for (std::uint64_t m = lo; m <= top; ++m) {
                const double c = f + g(s + j, m - us) + static_cast<double>(left[m]);
                if (c < best[m]) {
                    best[m] = c;
                    chosen[m] = static_cast<std::uint16_t>(j);
                }
            }
        }
        if (p.keeps()) { // keep block s (chain_plan.hpp)
            for (std::uint32_t i = p.keep_first[si]; i < p.keep_first[si + 1]; ++i) {
                const chain_plan::keep_option& o = p.keep_options[i];
                const double own = p.model.steps[si].forward + o.adjoint;
                for (std::uint64_t m = std::max(o.need, o.held); m <= top; ++m) {
                    const double c = own + g(s + 1, m - o.held);
                    if (c < best[m]) {
                        best[m] = c;
                        chosen[m] = static_cast<std::uint16_t>(chain_plan::keep + (i - p.keep_first[si]));
                    }
                }
            }
        }
    }
}

/// The cost of the whole loop with M units: G(0, M).
double root_cost(const chain_plan& p, std::uint64_t m)
{
    if (p.outer(0))
        return p.outer_cost[m];
    if (p.steps == 1)
        return m >= p.r[0] ? p.model.steps[0].adjoint : std::numeric_limits<double>::infinity();
    return static_cast<double>(p.cost[p.at(0, p.steps) + m]);
}

/// The least M with a finite G(0, M) (units + 1 when none).
std::uint64_t least_units(const chain_plan& p)
{
    std::uint64_t least = 0;
    while (least <= p.units && root_cost(p, least) == std::numeric_limits<double>::infinity())
        ++least;
    return least;
}

/// The units of storing every state (chain_model::store_all_bytes in rounded sizes): always enough.
std::uint64_t store_all_units(const chain_plan& p)
{
    std::uint64_t held = 0;
    std::uint64_t peak = 0;
    const auto t = static_cast<std::size_t>(p.steps);
    for (std::size_t k = 0; k + 1 < t; ++k) {
        held += p.u[k];
        peak = std::max(peak, held + std::max(p.u[k], p.u[k + 1]));
    }
    peak = std::max(peak, held + p.r[t - 1]);
    for (std::size_t k = t - 1; k-- > 0;) {
        held -= p.u[k];
        peak = std::max(peak, held + p.r[k]);
    }
    return peak;
}

} // namespace

chain::chain(chain_model model, std::uint64_t budget_bytes, const options& opts)
{
    validate(model);
    auto p = std::make_shared<chain_plan>();
    p->fine = std::move(model);
    p->budget = budget_bytes;
    for (step_t k = 0; k < p->fine.size(); ++k)
        if (p->fine.adjoint_need(k) > budget_bytes)
            throw argument_error("a budget of " + std::to_string(budget_bytes) + " bytes is below what step " +
                                 std::to_string(k) + " alone needs while its adjoint runs (max(m_k, m_k+1) + a_k = " +
                                 std::to_string(p->fine.adjoint_need(k)) + " bytes)");
    if (opts.block_steps < 0)
        throw argument_error("block_steps must be >= 0, got " + std::to_string(opts.block_steps));
    const step_t t = p->fine.size();
    if (opts.block_steps > 0) {
        bool limited = false;
        p->block = std::min(opts.block_steps, t);
        build(p, opts, limited);
        return;
    }
    // Automatic: the chain itself; where its table's horizon is too short for any plan to fit (long chains),
    // blocks.
    std::exception_ptr unblocked;
    {
        bool limited = false;
        try {
            build(std::make_shared<chain_plan>(*p), opts, limited);
            return;
        } catch (const capacity_error&) {
            if (!limited)
                throw; // a full horizon found nothing: the budget is too small, and blocks need more
            unblocked = std::current_exception();
        }
    }
    // Blocks that leave about a thousand to plan (a full-length table of fine units at a horizon of 8), and
    // twice as long while none fits: blocks of 2 on a 10000-step chain left units so coarse that the plan cost
    // 9% more than blocks of 10.
    for (step_t block = std::max<step_t>(2, (t + 999) / 1000); block < t; block *= 2) {
        auto tried = std::make_shared<chain_plan>(*p);
        tried->block = block;
        bool limited = false;
        try {
            build(tried, opts, limited);
            return;
        } catch (const capacity_error&) { // NOLINT(bugprone-empty-catch): larger blocks next
        }
    }
    std::rethrow_exception(unblocked);
}

void chain::build(const std::shared_ptr<detail::chain_plan>& p, const options& opts, bool& limited)
{
    const std::uint64_t budget_bytes = p->budget;
    p->model = p->block > 1 ? blocked(p->fine, p->block) : p->fine;
    p->steps = p->model.size();
    const chain_model& m = p->model;
    choose_granularity(*p, opts);
    p->u.resize(static_cast<std::size_t>(p->steps) + 1);
    p->r.resize(static_cast<std::size_t>(p->steps));
    for (step_t k = 0; k <= p->steps; ++k)
        p->u[static_cast<std::size_t>(k)] = units_of(m.state_bytes(k), p->granularity);
    for (step_t k = 0; k < p->steps; ++k) {
        const auto ki = static_cast<std::size_t>(k);
        p->r[ki] = std::max(p->u[ki], p->u[ki + 1]) + units_of(m.steps[ki].adjoint_bytes, p->granularity);
    }
    if (p->block == 1) { // every entry is the same from the units of storing everything on: a longer row only
                         // costs table (and horizon); blocks' kept states may hold more, so they keep theirs
        const std::uint64_t all = store_all_units(*p);
        p->units = std::min(p->units, all);
        p->budget_units = std::min(p->budget_units, all);
    }
    limited = true; // until the horizon is known
    choose_horizon(*p, opts);
    limited = p->horizon < p->steps;
    // An advance through a block holds its widest state, which may be an inner one.
    p->wide.assign(static_cast<std::size_t>(p->steps), 0);
    for (step_t k = 0; k < p->fine.size(); ++k) {
        const std::uint64_t running =
            units_of(std::max(p->fine.state_bytes(k), p->fine.state_bytes(k + 1)), p->granularity);
        std::uint64_t& w = p->wide[static_cast<std::size_t>(k / p->block)];
        w = std::max(w, running);
    }
    if (p->block > 1)
        keeping(*p);
    build_inner(*p);
    build_outer(*p);
    p->least_units = least_units(*p);
    if (p->least_units > p->budget_units) {
        std::string least;
        try { // the same granularity with room for storing everything, which always fits
            chain_plan roomy = *p;
            roomy.units = roomy.budget_units = store_all_units(roomy);
            choose_horizon(roomy, opts);
            build_inner(roomy);
            build_outer(roomy);
            least = "; it needs at least " + std::to_string(least_units(roomy) * p->granularity) + " bytes";
        } catch (const capacity_error&) {
            least = "; it needs more (every snapshot it must keep, and a step running on top)";
        }
        throw capacity_error(
            "no schedule of this chain fits a budget of " + std::to_string(budget_bytes) +
            " bytes at a granularity of " + std::to_string(p->granularity) + " bytes" +
            (p->horizon < p->steps ? " and a horizon of " + std::to_string(p->horizon) + " steps" : "") +
            (p->block > 1 ? " in blocks of " + std::to_string(p->block) + " steps" : "") + least);
    }
    // Walked from budget_units the plan fits (every size rounded up); from more units it may still fit in true
    // bytes, and costs no more (G(0, M) does not grow with M). Bisect for the most units that fit.
    const auto walk = [&](std::uint64_t from) {
        p->start_units = from;
        plan_ = p;
        return evaluate(p->fine, *this);
    };
    chain_evaluation e = walk(p->budget_units);
    std::uint64_t best = p->budget_units; // the most units walked whose plan fits
    std::uint64_t low = best;             // the search: a plan from `low` fits or costs no less than best's
    std::uint64_t high = p->units + 1;    // ... and none from `high` on was found to fit
    while (high - low > 1) {
        const std::uint64_t mid = low + (high - low) / 2;
        if (!(root_cost(*p, mid) < root_cost(*p, best))) { // no cheaper there: nothing to walk
            low = mid;
            continue;
        }
        const chain_evaluation tried = walk(mid);
        if (tried.peak_bytes <= budget_bytes && tried.cost <= e.cost) {
            low = best = mid;
            e = tried;
        } else {
            high = mid;
        }
    }
    p->start_units = best;
    plan_ = p;
    p->counts = e.counts;
    p->peak_bytes = e.peak_bytes;
    // Not optimal (blocks, or a short horizon): where the greedy ranking's plan costs less, it is the plan.
    if (opts.greedy_fallback && (p->block > 1 || p->horizon < p->steps)) {
        const listed_plan greedy = greedy_ranking(p->fine, budget_bytes);
        if (!greedy.empty() && greedy.peak_bytes() <= budget_bytes && greedy.cost().predicted_cost < e.cost) {
            p->listed = greedy.actions();
            p->listed_method = "greedy ranking";
            p->counts = greedy.cost();
            p->peak_bytes = greedy.peak_bytes();
        }
    }
    // Opt-in: the extended recurrence (a checkpoint may be dropped at its last restore and its step reversed
    // from the enclosing one; chain_refetch.hpp), on exact plans small enough for its plain tables. Taken only
    // where it fits the budget in true bytes and costs less, so the plan never gets dearer.
    if (opts.non_persistent && p->block == 1 && p->horizon >= p->steps) {
        constexpr std::uint64_t max_entries = std::uint64_t{1} << 22; // 32 MiB a table
        constexpr std::uint64_t max_work = 100'000'000;               // splits priced: under a second
        if (auto actions = detail::plan_refetch(p->fine, p->granularity, p->budget_units, max_entries, max_work)) {
            auto shared = std::make_shared<const std::vector<action>>(std::move(*actions));
            const chain_evaluation r = evaluate(p->fine, listed_plan(p->steps, shared, {}));
            if (r.peak_bytes <= budget_bytes && r.cost < e.cost) {
                p->listed = std::move(shared);
                p->listed_method = "dynamic program, non-persistent";
                p->counts = r.counts;
                p->peak_bytes = r.peak_bytes;
            }
        }
    }
}

step_t chain::steps() const noexcept
{
    return plan_->fine.size();
}
const chain_model& chain::model() const noexcept
{
    return plan_->fine;
}
step_t chain::block_steps() const noexcept
{
    return plan_->block;
}
std::uint64_t chain::budget_bytes() const noexcept
{
    return plan_->budget;
}
std::uint64_t chain::granularity() const noexcept
{
    return plan_->granularity;
}
std::uint64_t chain::units() const noexcept
{
    return plan_->budget_units;
}
std::uint64_t chain::planned_units() const noexcept
{
    return plan_->start_units;
}
step_t chain::horizon() const noexcept
{
    return plan_->horizon;
}
bool chain::exact() const noexcept
{
    return plan_->block == 1 && plan_->horizon >= plan_->steps;
}
bool chain::lossless() const noexcept
{
    return plan_->lossless;
}
std::uint64_t chain::discretisation_gap_bytes() const noexcept
{
    if (plan_->lossless)
        return 0;
    const auto items = static_cast<std::uint64_t>(plan_->steps) + 3;
    std::uint64_t gap = 0;
    return __builtin_mul_overflow(items, plan_->granularity, &gap) ? std::numeric_limits<std::uint64_t>::max() : gap;
}
const char* chain::method() const noexcept
{
    return plan_->listed != nullptr ? plan_->listed_method : "dynamic program";
}
std::uint64_t chain::peak_bytes() const noexcept
{
    return plan_->peak_bytes;
}
std::uint64_t chain::table_bytes() const noexcept
{
    const chain_plan& p = *plan_;
    return p.cost.size() * sizeof(float) + (p.finite.size() + p.flat.size()) * sizeof(std::uint64_t) +
           p.outer_cost.size() * sizeof(double) + p.outer_split.size() * sizeof(std::uint16_t) +
           (p.first_row.size() + p.prefix.size()) * 8 + p.keep_first.size() * sizeof(std::uint32_t) +
           p.keep_options.size() * sizeof(chain_plan::keep_option) + p.keep_flags.size();
}
std::uint64_t chain::least_budget_bytes() const noexcept
{
    return plan_->least_units * plan_->granularity;
}
schedule_cost chain::cost() const
{
    return plan_->counts;
}

chain_evaluation evaluate(const chain_model& m, const any_schedule& plan)
{
    if (plan.steps() != m.size())
        throw argument_error("a schedule of " + std::to_string(plan.steps()) + " steps on a chain of " +
                             std::to_string(m.size()));
    chain_evaluation e;
    schedule_cost& c = e.counts;
    c.steps = m.size();
    std::vector<std::uint32_t> advanced(static_cast<std::size_t>(m.size()), 0);
    std::vector<std::int64_t> slot_step; // what each slot of level 0 holds, -1 when free
    std::uint64_t held = 0;
    slot_t slots = 0;
    const auto bad = [](const action& a, const char* why) {
        throw schedule_error("evaluate: " + to_string(a) + " " + why);
    };
    for (const action& a : plan) {
        if (const auto* v = std::get_if<advance>(&a)) {
            for (step_t k = v->from; k < v->to; ++k) {
                e.peak_bytes = std::max(e.peak_bytes, held + std::max(m.state_bytes(k), m.state_bytes(k + 1)));
                e.cost += m.steps[static_cast<std::size_t>(k)].forward;
                ++advanced[static_cast<std::size_t>(k)];
            }
            c.forward_steps += static_cast<std::uint64_t>(v->to - v->from);
        } else if (const auto* s = std::get_if<store>(&a)) {
            if (s->level != 0 || s->slot < 0)
                bad(a, "is not a slot of level 0");
            if (slot_step.size() <= static_cast<std::size_t>(s->slot))
                slot_step.resize(static_cast<std::size_t>(s->slot) + 1, -1);
            if (slot_step[static_cast<std::size_t>(s->slot)] >= 0)
                bad(a, "stores into a slot in use");
            slot_step[static_cast<std::size_t>(s->slot)] = s->step;
            held += m.state_bytes(s->step);
            e.peak_bytes = std::max(e.peak_bytes, held + m.state_bytes(s->step));
            ++c.stores;
            c.peak_slots = std::max(c.peak_slots, ++slots);
        } else if (const auto* r = std::get_if<restore>(&a)) {
            e.peak_bytes = std::max(e.peak_bytes, held + m.state_bytes(r->step));
            ++c.restores;
        } else if (const auto* f = std::get_if<free_slot>(&a)) {
            if (f->level != 0 || f->slot < 0 || static_cast<std::size_t>(f->slot) >= slot_step.size() ||
                slot_step[static_cast<std::size_t>(f->slot)] < 0)
                bad(a, "frees a slot not in use");
            held -= m.state_bytes(slot_step[static_cast<std::size_t>(f->slot)]);
            slot_step[static_cast<std::size_t>(f->slot)] = -1;
            --slots;
        } else {
            const step_t k = std::get<reverse>(a).step;
            e.peak_bytes = std::max(e.peak_bytes, held + m.adjoint_need(k));
            e.cost += m.steps[static_cast<std::size_t>(k)].adjoint;
            ++c.reverse_steps;
        }
    }
    c.repetition = advanced.empty() ? 0 : *std::max_element(advanced.begin(), advanced.end());
    finish_single_level(c);
    c.predicted_cost = e.cost;
    return e;
}

chain::cursor_type chain::cursor() const
{
    cursor_type c;
    c.plan_ = plan_;
    c.phase_ = cursor_type::phase::outer;
    c.current_ = {0, plan_->steps, plan_->start_units, 0};
    c.block_ = plan_->block;
    c.fine_steps_ = plan_->fine.size();
    c.done_ = false;
    c.listed_ = plan_->listed.get();
    return c;
}

namespace {

/// Appends advance{k, k + 1}, joined to an advance that ends at k.
void append_advance(std::vector<action>& out, step_t k)
{
    if (!out.empty())
        if (auto* v = std::get_if<advance>(&out.back()); v != nullptr && v->to == k) {
            v->to = k + 1;
            return;
        }
    out.emplace_back(advance{k, k + 1});
}

/// Reverses [from, to) from x_from current and held in `slot` (or not held: slot < 0): store x_k (but x_from when
/// held) and advance for k < to - 1 into the slots from `above` on, reverse the last step, then restore, free and
/// reverse each stored state (one step held: free and reverse).
void append_rerun(std::vector<action>& out, step_t from, step_t to, slot_t slot, slot_t above)
{
    const auto slot_of = [&](step_t k) {
        return k == from && slot >= 0 ? slot : static_cast<slot_t>(above + (k - from));
    };
    for (step_t k = from; k + 1 < to; ++k) {
        if (k > from || slot < 0)
            out.emplace_back(store{0, slot_of(k), k});
        append_advance(out, k);
    }
    if (to - 1 > from || slot < 0)
        out.emplace_back(reverse{to - 1});
    for (step_t k = to - 2; k >= from; --k) {
        out.emplace_back(restore{0, slot_of(k), k});
        out.emplace_back(free_slot{0, slot_of(k)});
        out.emplace_back(reverse{k});
    }
    if (to - 1 == from && slot >= 0) { // one step, x_from current and held: its last use
        out.emplace_back(free_slot{0, slot});
        out.emplace_back(reverse{from});
    }
}

} // namespace

void chain::cursor_type::widen(action& a)
{
    const step_t c = block_;
    std::visit(overloaded{[&](advance& v) { v = {v.from * c, std::min(v.to * c, fine_steps_)}; },
                          [&](store& v) { v.step *= c; }, [&](restore& v) { v.step *= c; }, [](free_slot&) {},
                          [&](reverse& v) {
                              // x_a is current, slots 0 .. depth_ - 1 are in use: the block's own go above them
                              const step_t from = v.step * c;
                              expanded_.clear();
                              append_rerun(expanded_, from, std::min(from + c, fine_steps_), -1, depth_);
                              a = expanded_.front();
                              expanded_at_ = 1;
                          }},
               a);
}

void chain::cursor_type::pop()
{
    if (pending_.empty()) {
        done_ = true;
        return;
    }
    current_ = pending_.back();
    pending_.pop_back();
    if (current_.option >= 0) { // a kept block: its states are restored in the next decision
        phase_ = phase::kept;
        return;
    }
    queue_.push(restore{0, current_.slot, current_.start});
    phase_ = phase::held;
}

void chain::cursor_type::step()
{
    const chain_plan& p = *plan_;
    const step_t s = current_.start;
    const auto fine = [&](step_t block) { return std::min(block * block_, fine_steps_); };
    const auto option = [&](int o) -> const chain_plan::keep_option& {
        return p.keep_options[p.keep_first[static_cast<std::size_t>(s)] + static_cast<std::uint32_t>(o)];
    };
    switch (phase_) {
    case phase::outer: {
        if (!p.outer(s)) {
            current_.length = p.steps - s;
            phase_ = phase::unheld;
            return;
        }
        const step_t j = p.outer_split[static_cast<std::size_t>(s) * p.row() + current_.units];
        assert(j > 0);
        queue_.push(store{0, depth_, s});
        if (j >= chain_plan::keep) {
            pending_.push_back({s, 1, current_.units, depth_, static_cast<int>(j - chain_plan::keep)});
            ++depth_;
            after_keep_ = phase::outer;
            phase_ = phase::keep;
            return;
        }
        pending_.push_back({s, j, current_.units, depth_});
        ++depth_;
        queue_.push(advance{s, s + j});
        current_ = {s + j, 0, current_.units - p.u[static_cast<std::size_t>(s)], 0};
        return;
    }
    case phase::unheld:
        if (current_.length == 1) {
            queue_.push(reverse{s});
            pop();
            return;
        }
        queue_.push(store{0, depth_, s});
        current_.slot = depth_++;
        phase_ = phase::held;
        return;
    case phase::held: {
        if (current_.length == 1) {
            assert(current_.slot == depth_ - 1);
            queue_.push(free_slot{0, current_.slot});
            --depth_;
            queue_.push(reverse{s});
            pop();
            return;
        }
        const step_t j = inner_split(p, s, current_.length, current_.units);
        if (j >= chain_plan::keep) {
            assert(current_.slot == depth_ - 1);
            pending_.push_back({s, 1, current_.units, current_.slot, static_cast<int>(j - chain_plan::keep)});
            after_keep_ = phase::unheld;
            phase_ = phase::keep;
            return;
        }
        assert(j > 0 && j < current_.length);
        queue_.push(advance{s, s + j});
        pending_.push_back({s, j, current_.units, current_.slot});
        current_ = {s + j, current_.length - j, current_.units - p.u[static_cast<std::size_t>(s)], 0};
        phase_ = phase::unheld;
        return;
    }
    case phase::keep: { // the queue is empty: the block's forward, storing the option's states above x_s's slot
        const task& kept = pending_.back();
        const chain_plan::keep_option& o = option(kept.option);
        const step_t a = fine(s);
        const step_t b = fine(s + 1);
        expanded_.clear();
        expanded_at_ = 0;
        depth_ = kept.slot + 1;
        for (step_t k = a; k < b; ++k) {
            if (k > a && p.keep_flags[o.flags + static_cast<std::size_t>(k - a - 1)] != 0)
                expanded_.emplace_back(store{0, depth_++, k});
            append_advance(expanded_, k);
        }
        current_ = {s + 1, current_.length - 1, current_.units - o.held, 0};
        phase_ = after_keep_;
        return;
    }
    case phase::kept: { // the queue is empty: from the last stored state, restore it and reverse up to the next
        const chain_plan::keep_option& o = option(current_.option);
        const step_t a = fine(s);
        const step_t b = fine(s + 1);
        std::vector<step_t> held{a}; // the block's stored states, in their slots' order
        for (step_t k = a + 1; k < b; ++k)
            if (p.keep_flags[o.flags + static_cast<std::size_t>(k - a - 1)] != 0)
                held.push_back(k);
        expanded_.clear();
        expanded_at_ = 0;
        step_t q = b;
        for (std::size_t i = held.size(); i-- > 0;) {
            const auto slot = static_cast<slot_t>(current_.slot + static_cast<slot_t>(i));
            expanded_.emplace_back(restore{0, slot, held[i]});
            append_rerun(expanded_, held[i], q, slot, slot + 1);
            q = held[i];
        }
        depth_ = current_.slot;
        pop();
        return;
    }
    }
}

} // namespace remat
