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
// whose plan fits the true budget (sizes are rounded up, so M = budget_units always does; see chain.cpp).
//
// Keeping a block (blocks only; one step is nothing to keep): x_s current and held, advance the block storing each
// inner state, reverse the right part with those held, then restore, free and reverse each state of the block:
//     E(s, l, M) = min(..., F(s, s+1) + H(s+1, l-1, M - kept_s) + B_s)     if M >= keep_need_s
//     G(s, M)    = min(..., F(s, s+1) + G(s+1, M - kept_s) + B_s)          likewise
// (rotor's "forward with all activations"), with B_s the adjoints of its steps alone: no re-run.
#pragma once

#include "remat/schedule/chain.hpp"

#include <cstdint>
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
    std::vector<std::uint64_t> u;      ///< units of x_k, k <= T
    std::vector<std::uint64_t> r;      ///< units while the adjoint of step k runs
    std::vector<std::uint64_t> wide;   ///< units while step k runs forward: p[k], or a block's widest state
    std::vector<std::uint64_t> offset; ///< E's first entry for start s
    std::vector<float> cost;           ///< E(s, l, M) at offset[s] + (l-1)*(U+1) + M
    std::vector<std::uint16_t> split;  ///< its j
    std::vector<double> outer_cost;    ///< G(s, M) at s*(U+1) + M, for T - s > K
    std::vector<std::uint16_t> outer_split;
    // Chains planned in blocks: keeping block s (split `keep`) advances it storing its inner states, so that its
    // adjoint restores them instead of re-running the block.
    std::vector<std::uint64_t> kept;              ///< units held while the right part runs: x_a .. x_{b-1}
    std::vector<std::uint64_t> keep_need;         ///< the least M (x_s's snapshot included) for keeping block s
    std::vector<double> keep_adjoint;             ///< the kept block's adjoint: the b_k of its steps
    static constexpr std::uint16_t keep = 0xFFFF; ///< the split that keeps a block (never a step count: K < 2^16 - 1)
    std::uint64_t least_units = 0;
    std::uint64_t peak_bytes = 0;
    schedule_cost counts;

    [[nodiscard]] std::uint64_t row() const noexcept { return units + 1; }
    [[nodiscard]] std::uint64_t at(step_t s, step_t l) const noexcept
    {
        return offset[static_cast<std::size_t>(s)] + static_cast<std::uint64_t>(l - 1) * row();
    }
    /// Whether G(s, .) is the outer table's (T - s > K) rather than H(s, T - s, .).
    [[nodiscard]] bool outer(step_t s) const noexcept { return steps - s > horizon; }
    /// Whether blocks may be kept (a chain planned in blocks).
    [[nodiscard]] bool keeps() const noexcept { return !kept.empty(); }
};

} // namespace remat::detail
