// remat/schedule/chain_taped_least.hpp — the least budget of a taped chain in true bytes, and a plan within it:
// the least peak of any plan of remat::plan_taped_chain's model (chain_taped.hpp; docs/heterogeneous.md, "Taped
// advances"), exactly the least budget plan_taped_chain plans at a granularity of one byte, for chains whose
// table at that unit would be far too large (its memory axis runs to the all-taped peak in bytes).
//
// The planner's recurrence with its costs left out is a recurrence over peaks, exact in bytes, with no memory
// axis: a part's peak is its own and what is held around it. With r_s = max(m_s, m_{s+1}) + a_s (step s running)
// and t_s its tape (chain_model::tape_bytes):
//
//     H(s, 1) = r_s                                  E(s, 1) = max(2 m_s, r_s)
//     P(s, l) = max(r_s, t_s + H(s+1, l-1))          (tape step s)
//     E(s, l) = min(max(2 m_s, P(s, l)),             (free x_s's snapshot: the tape holds x_s)
//                   min over 1 <= j < l of max(m_s + max(p_s .. p_{s+j-1}), m_s + H(s+j, l-j), E(s, j)))
//     H(s, l) = min(P(s, l), E(s, l))
//
// (H: x_s current; E: x_s current and stored; p_k = max(m_k, m_{k+1})), so that plan_taped_chain at a granularity
// of one byte plans a budget B if and only if H(0, T) <= B.
#pragma once

#include "remat/schedule/chain_model.hpp"
#include "remat/schedule/chain_taped.hpp"

namespace remat {

/// The least peak in true bytes of any plan of the taped chain model (of the recurrence's plans: every plan's
/// where every t_k >= a_k, as docs/heterogeneous.md says of plan_taped_chain), and a plan at that peak: `peak_bytes`
/// and `least_budget_bytes` are that least, H(0, T) above; `actions` a plan whose peak under remat::price_taped_chain
/// is exactly it, emitted as remat::plan_taped_chain emits its plans (the same options and ties: the least split,
/// in E a split before the taped advance, in H the taped advance before E); `cost`, `forward_steps` and
/// `taped_steps` that plan's, priced by remat::price_taped_chain; `granularity` 1; `work` the split points priced.
/// The plan is one of the least peak, not the cheapest within it (plan_taped_chain(chain, least, 1) is, where
/// its table fits). Exact integers: remat::validate bounds every state and tape, the largest state and the largest
/// a_k together by 2^64-1, and every sum the recurrence takes is within that (a tape on top of a part's peak is
/// also saturated at 2^64-1, a guard that fits no budget). O(T^3) time, O(T^2)
/// memory (about 6.5 T^2 bytes). Throws remat::argument_error for an invalid chain (remat::validate, as
/// plan_taped_chain).
///
///     remat::chain_model m = remat::chain_model::uniform(100, 1.0, 2.0, 1 << 20, 1 << 20);
///     remat::taped_chain_plan least = remat::plan_taped_chain_least(m);
///     // least.peak_bytes: no plan of m fits a smaller budget; the cheapest plan within it:
///     remat::taped_chain_plan best = remat::plan_taped_chain(m, least.peak_bytes, 1 << 20);
[[nodiscard]] taped_chain_plan plan_taped_chain_least(const chain_model& chain);

} // namespace remat
