// remat/schedule/chain_taped_price.hpp — what a list of actions costs under the taped chain model of
// chain_taped.hpp (peak bytes and cost), each action checked against that model's rules: the pricing
// remat::plan_taped_chain reports for its own plans, for any plan (a hand-written schedule, another planner's).
#pragma once

#include "remat/schedule/action.hpp"
#include "remat/schedule/chain_model.hpp"

#include <cstdint>
#include <vector>

namespace remat {

/// A taped chain plan's price under the model of chain_taped.hpp.
struct taped_chain_price {
    double cost = 0;                 ///< f_k of every advanced step + b_k or max(0, b_k - f_k) per reverse
    std::uint64_t peak_bytes = 0;    ///< in true bytes
    std::uint64_t forward_steps = 0; ///< steps run by advances (taped or not)
    std::uint64_t taped_steps = 0;   ///< steps advanced keeping their tape
    std::uint64_t stores = 0;        ///< store actions
    std::uint64_t restores = 0;      ///< restore actions
    slot_t peak_slots = 0;           ///< most slots in use at once
    std::uint64_t repetition = 0;    ///< the most times one step is run by advances
};

/// The peak bytes and cost of `actions` on `chain`: snapshots from their store to their free; the current
/// state (m_j between steps, max(m_k, m_{k+1}) while step k runs, none after a reverse); a_k while step k
/// runs taped or inside an untaped reverse (its re-run); a taped advance's tape, t_k (chain_model::tape_bytes), from
/// its advance to `reverse k`. The actions must be a whole plan of the model (the rules of tests/support's replay): one
/// slot level (0); `advance A B` from the current x_A, not past x_k, k the next step to reverse (`tape`: one
/// step, whose tape is not held already, which may be step k); `store 0 S K` of the current x_K (K < T) into
/// a free slot; `restore 0 S K` of the x_K its slot holds, K <= k; `free 0 S` of a slot in use; `reverse k`
/// for k = T-1 down to 0 in turn, each from its kept tape (x_{k+1} or no state current) or the current x_k;
/// every step reversed and every slot freed at the end. Throws
/// remat::argument_error naming the first action that breaks these rules (its index and text form), and for
/// an invalid chain (remat::validate).
///
///     remat::taped_chain_price p = remat::price_taped_chain(m, remat::plan_taped_chain(m, 8ull << 30).actions);
///     p.peak_bytes;  p.cost;
[[nodiscard]] taped_chain_price price_taped_chain(const chain_model& chain, const std::vector<action>& actions);

} // namespace remat
