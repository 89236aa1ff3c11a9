// The tables of a heterogeneous-chain plan (internal): shared, immutable, by a remat::chain and its cursors.
//
// Blocks: a chain whose table cannot reach far enough (chain::options::block_steps) is planned as a chain of blocks of
// `block` steps. A block's forward cost is its steps' sum; its adjoint runs its steps storing each state, then reverses
// them (adjoint = its forward costs but the last, plus its adjoints; a = what that holds at its peak beyond the block's
// ends); the cursor expands each block's actions into the steps' own.
//
// Units: every size is rounded up to whole units of `granularity` bytes. u[k] = units of x_k (k <= T),
// p[k] = max(u[k], u[k+1]) (step k running; a block's advance holds its widest state, `wide`), r[k] = max(u[k],
// u[k+1]) + units of a_k (its adjoint running).
//
// Inner table, for x_s current and held in a slot and M free units (its own snapshot included):
//     E(s, 1, M) = b_s                                    if M >= max(2 u_s, r_s)
//     E(s, l, M) = min over 1 <= j < l with M >= u_s + max(p_s..p_{s+j-1}) of
//                  F(s, s+j) + H(s+j, l-j, M - u_s) + E(s, j, M)
// where H is the same segment with its start current but not held: H(s, 1, M) = b_s if M >= r_s (reversed
// where it stands), else H = E (store x_s first). Outer table, for the loop's tail [s, T) when T - s > K:
//     G(s, M) = min over 1 <= j <= K of F(s, s+j) + G(s+j, M - u_s) + E(s, j, M)   (same condition on M)
// and G(s, M) = H(s, T-s, M) when T - s <= K. The plan is H(0, T, M) (G(0, M)) for the largest M <= U
// whose plan fits the true budget (sizes are rounded up, so M = budget_units always does; see chain::build).
// E keeps its values only: the cursor finds a split again as the first j (then keep option) whose sum gives the
// value (chain_inner.cpp, inner_split); G keeps its splits.
//
// Keeping a block (blocks only; one step is nothing to keep): x_s current and held, advance the block storing a
// chosen set of its inner states (option o), reverse the right part with those held, then for each stored state
// from the last: restore it, re-run the steps up to the next stored one storing each state, and reverse them:
//     E(s, l, M) = min(..., F(s, s+1) + H(s+1, l-1, M - held_o) + B_o)     if M >= need_o
//     G(s, M)    = min(..., F(s, s+1) + G(s+1, M - held_o) + B_o)          likewise
// with B_o the block's adjoints plus the forward of the steps re-run. Every state stored is rotor's "forward with
// all activations" (no re-run); the options are the cheapest for their memory (chain_keep.cpp).
#pragma once

#include "table_substrate.hpp"

#include "remat/schedule/chain.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace remat::detail {

struct chain_plan {
    chain_model fine;         ///< the user's chain
    chain_model model;        ///< the chain the tables plan: `fine`, or its blocks of `block` steps
    step_t block = 1;         ///< fine steps per step of `model` (the last block may be shorter)
    std::uint64_t budget = 0; ///< the true budget, in bytes
    std::uint64_t granularity = 1;
    std::uint64_t units = 0;        ///< U: the tables' memory units (budget_units, plus room for the rounding's slack)
    std::uint64_t budget_units = 0; ///< the budget in units (rounded down)
    std::uint64_t start_units = 0;  ///< M the plan is walked from: the most units whose plan fits the true budget
    step_t steps = 0;               ///< T
    step_t horizon = 0;             ///< K
    bool lossless = false;
    std::vector<std::uint64_t> u;         ///< units of x_k, k <= T
    std::vector<std::uint64_t> r;         ///< units while the adjoint of step k runs
    std::vector<std::uint64_t> wide;      ///< units while step k runs forward: p[k], or a block's widest state
    std::vector<std::uint64_t> first_row; ///< E's row of (s, 1); (s, l) is row first_row[s] + l - 1
    std::vector<float, table_allocator<float>> cost; ///< E(s, l, M) at row(s, l) * (U+1) + M, then
                                                     ///< narrow_row_overread entries (infinite)
    std::vector<std::uint64_t> finite;               ///< by row: the least M where E(s, l, M) is finite (U + 1: none)
    std::vector<std::uint64_t> flat;                 ///< by row: E(s, l, M) is the same for every M from here to U
    std::vector<double> prefix;                      ///< F(a, b) = prefix[b] - prefix[a], as the tables add it
    std::vector<double> outer_cost;                  ///< G(s, M) at s*(U+1) + M, for T - s > K
    std::vector<std::uint16_t> outer_split;
    // Chains planned in blocks: keeping block s (split keep + o: its option o) advances it storing some of its
    // inner states, so that its adjoint restores them and re-runs only the steps between them.
    struct keep_option {
        std::uint64_t held = 0;  ///< units held while the right part runs: x_a and the stored inner states
        std::uint64_t need = 0;  ///< the least M (x_s's snapshot included)
        double adjoint = 0;      ///< the block's adjoints + the forward of the steps re-run between stored states
        std::uint32_t flags = 0; ///< keep_flags[flags + i] != 0: x_{a+1+i} stored on the way
    };
    std::vector<std::uint32_t> keep_first; ///< block s's options: keep_options[keep_first[s] .. keep_first[s+1])
    std::vector<keep_option> keep_options;
    std::vector<std::uint8_t> keep_flags;
    static constexpr std::uint16_t keep = 0xFF00; ///< splits from here name a keep option (step counts stay below)
    static constexpr std::size_t max_keep_options = 64;
    std::shared_ptr<const std::vector<action>> listed; ///< the greedy ranking's actions where they cost less,
                                                       ///< or the non-persistent recurrence's (listed_method)
    const char* listed_method = "";
    std::uint64_t least_units = 0;
    std::uint64_t peak_bytes = 0;
    schedule_cost counts;

    [[nodiscard]] std::uint64_t row() const noexcept { return units + 1; }
    [[nodiscard]] std::uint64_t row_of(step_t s, step_t l) const noexcept
    {
        return first_row[static_cast<std::size_t>(s)] + static_cast<std::uint64_t>(l - 1);
    }
    [[nodiscard]] std::uint64_t at(step_t s, step_t l) const noexcept { return row_of(s, l) * row(); }
    /// Whether G(s, .) is the outer table's (T - s > K) rather than H(s, T - s, .).
    [[nodiscard]] bool outer(step_t s) const noexcept { return steps - s > horizon; }
    /// Whether blocks may be kept (a chain planned in blocks).
    [[nodiscard]] bool keeps() const noexcept { return !keep_first.empty(); }
    /// Block s's keep option o.
    [[nodiscard]] const keep_option& option_of(step_t s, int o) const noexcept
    {
        return keep_options[keep_first[static_cast<std::size_t>(s)] + static_cast<std::uint32_t>(o)];
    }
};

/// Rows of at most this many entries (U + 1) are built by build_narrow_rows, in vector registers.
constexpr std::uint64_t narrow_row_entries = 16;
/// The entries build_narrow_rows may read past the table's last row (their values unused).
constexpr std::uint64_t narrow_row_overread = 16;

/// What build_narrow_rows keeps per split j of the rows of one start s (reused from one start to the next).
struct narrow_row_scratch {
    std::vector<float> forward;                  ///< F(s, s+j), as the tables add it
    std::vector<float> reversed;                 ///< F(s, s+j) + b_{s+j}: the right part reversed where it stands
    std::vector<std::uint64_t> right_first;      ///< the row of (s+j, 1)
    std::vector<std::uint64_t> least;            ///< the least M of x_s's snapshot and the advance to s+j
    std::vector<std::uint64_t> least_reversed;   ///< ... and of reversing step s+j there
    std::vector<float> left;                     ///< row (s, j), infinite below least[j]
    std::vector<float> left_reversed;            ///< row (s, j), infinite below least_reversed[j]
    std::vector<std::uint64_t> infinite_entries; ///< by l: the infinite entries of (s, l)
    std::vector<const float*> rights;            ///< by j: the first right part of a group of rows
};

/// Rows (s, 2 .. min(K, T - s)) of the inner table, with their finite and flat bounds, where U + 1 <=
/// narrow_row_entries and no block is kept (chain_narrow_rows.cpp); the rows of later starts and (s, 1) are done.
void build_narrow_rows(chain_plan& p, step_t s, narrow_row_scratch& scratch);

} // namespace remat::detail
