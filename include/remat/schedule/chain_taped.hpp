// remat/schedule/chain_taped.hpp — the cheapest schedule for a heterogeneous chain within a byte budget when
// a step may also be advanced keeping its tape, so that its adjoint needs no re-run (rotor's "forward
// keeping all"; docs/heterogeneous.md, "Taped advances").
//
// The model is chain_model.hpp's, plus: `advance k k+1 tape` runs step k from x_k (cost f_k; max(m_k,
// m_{k+1}) + a_k while it runs) and then holds step k's tape, t_k bytes (chain_step::tape_bytes where given,
// else m_k + a_k: its input and what its adjoint needs besides), until `reverse k`, which then costs max(0, b_k - f_k)
// (b_k includes the re-run) and needs no current state. With room for every tape, the plan is plain autograd's: every
// step taped, cost sum b_k, no step run twice; remat::chain's plans (states only) re-run every step but the last.
#pragma once

#include "remat/schedule/action.hpp"
#include "remat/schedule/chain_model.hpp"

#include <cstdint>
#include <vector>

namespace remat {

/// A plan of remat::plan_taped_chain: its actions and what they cost under the model above.
struct taped_chain_plan {
    std::vector<action> actions;
    double cost = 0;                      ///< f_k of every advanced step + b_k or max(0, b_k - f_k) per reverse
    std::uint64_t peak_bytes = 0;         ///< in true bytes, <= the budget
    std::uint64_t granularity = 1;        ///< bytes per memory unit of the dynamic program
    std::uint64_t least_budget_bytes = 0; ///< the least budget any plan fits at this granularity
    std::uint64_t forward_steps = 0;      ///< steps run by advances (taped or not)
    std::uint64_t taped_steps = 0;        ///< steps advanced keeping their tape
    std::uint64_t stores = 0;             ///< store actions (one level: level 0)
    std::uint64_t restores = 0;           ///< restore actions
    slot_t peak_slots = 0;                ///< most snapshot slots in use at once
    std::uint64_t repetition = 0;         ///< the most times one step is run by advances
    std::uint64_t work = 0;               ///< split points (and ranges of them) the dynamic program priced
};

/// The exact optimum, at memory units of `granularity` bytes (0: the greatest common divisor of every size
/// where the budget is at most 4096 of it, else the budget over 4096, fewer where T (T + 1) / 2 rows of
/// units + 1 entries would pass 2^23), over the persistent schedules of the model above (every x_j held,
/// in a snapshot or in step j's tape, until step j is reversed). Sizes are rounded up and the budget down,
/// so the plan fits the true budget. Throws remat::argument_error for an invalid chain and
/// remat::capacity_error when no plan fits, naming the least budget that does (at the granularity of a table
/// that reaches the all-taped plan; for chains too long for one, from about 250 steps, the least of any plan
/// in true bytes, remat::plan_taped_chain_least, which the rounding may pass), or for a chain of more than
/// 2,364 steps, whose table holds no plan at any granularity.
///
///     remat::taped_chain_plan p = remat::plan_taped_chain(m, 8ull << 30);
///     p.cost;  p.peak_bytes;  for (const remat::action& a : p.actions) ...
[[nodiscard]] taped_chain_plan plan_taped_chain(const chain_model& chain, std::uint64_t budget_bytes,
                                                std::uint64_t granularity = 0);

/// Sets a plan's cost, peak_bytes and counts (forward and taped steps, stores, restores, peak slots, repetition)
/// from its actions, as remat::price_taped_chain (chain_taped_price.hpp) prices them: plan_taped_chain and
/// plan_taped_chain_least report their own plans' so, and a plan of the model made elsewhere is reported alike.
/// Throws remat::argument_error as price_taped_chain does.
void set_price(const chain_model& chain, taped_chain_plan& plan);

/// The bytes of plain autograd under this model: every step advanced keeping its tape (the peak of the
/// all-taped plan). A budget of at least this gives the plan cost sum b_k.
[[nodiscard]] std::uint64_t all_taped_bytes(const chain_model& chain);

} // namespace remat
