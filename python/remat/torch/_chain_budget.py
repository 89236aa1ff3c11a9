"""The taped-chain plan auto_checkpoint follows: the cheapest that remat.chain_taped finds within the budget in
true bytes, and the model's price of any plan (its peak bytes and cost).

remat.chain_taped is exact at its memory unit (its granularity), which it chooses from the budget (about 4096
units of it): every size is rounded up to whole units and the budget down, so that its plan always fits.
Where a schedule fills the budget exactly, the rounding makes it miss: at a budget equal to
checkpoint_sequential's measured peak (which the chain model prices exactly, to the byte), the 24-block
transformer stack of bench/python/stack_bench.py needs 4,105 units of 680 bytes for the segments' own schedule
at 2 segments against the budget's 4,090, so the plan found re-ran one block more than the segments (13 against
12; so at 3, 4, 6, 8 and 12 segments). Hence a second plan: every size rounded DOWN to units of the finest
granularity the planner's table allows. Any schedule within the budget in true bytes fits those units too (a
sum of sizes rounded down is at most the budget's units), so that plan costs at most the true optimum; where its
peak in true bytes is within the budget, it is the true optimum itself. The cheaper of the two plans that fit
the budget in true bytes is kept (the rounded-up one on a tie).
"""

from __future__ import annotations

from typing import Iterable, List, Sequence, Tuple

from .. import _remat
from .._errors import ArgumentError, CapacityError
from .._plans import TapedChainPlan, chain_taped

#: remat::plan_taped_chain's limit on its table's entries (src/schedule/chain_taped.cpp, max_entries).
_MAX_TABLE_ENTRIES = 1 << 23
#: The most units asked for: finer still would only slow the plan of a short chain.
_MOST_UNITS = 1 << 15

Step = Tuple[float, float, int, int]  # (f_k, b_k, m_k, a_k) as remat.chain_taped takes them


def price(steps: Sequence[Step], final_state_bytes: int, actions: Iterable) -> Tuple[int, float]:
    """(peak bytes, cost) of a taped-chain plan's actions under the chain model with taped advances, in true
    bytes: remat::price_taped_chain, the pricing remat::plan_taped_chain reports for its own plans
    (docs/heterogeneous.md, "Pricing a plan"). remat.ArgumentError names an action that breaks the model's
    rules."""
    peak, cost, _, _ = _remat.price_taped_chain(list(steps), final_state_bytes, actions)
    return peak, cost


def _finest_granularity(steps: Sequence[Step], bytes_: int) -> int:
    """The least unit at which a table of this chain up to `bytes_` stays within the planner's limit."""
    rows = len(steps) * (len(steps) + 1) // 2
    units = max(1, min(_MOST_UNITS, _MAX_TABLE_ENTRIES // rows - 1))
    return max(1, -(-bytes_ // units))


def _rounded_down(steps: Sequence[Step], final_state_bytes: int, g: int):
    """The chain with every size rounded down to whole units of g (a state, which may not be 0, at least one)."""
    def down(b: int, least: int) -> int:
        return max(least, b // g * g)

    return [(f, b, down(m, g), down(a, 0)) for f, b, m, a in steps], down(final_state_bytes, g)


def plan_taped_within(steps: List[Step], final_state_bytes: int, budget_bytes: int) -> TapedChainPlan:
    """The cheapest plan of remat.chain_taped's at the budget (sizes rounded up, its default unit) and at the
    finest unit with every size rounded down, among those whose peak in true bytes is within the budget (the
    first always is). Raises remat.CapacityError (or ArgumentError) where remat.chain_taped refuses the budget."""
    up = chain_taped(steps, budget_bytes, final_state_bytes=final_state_bytes)
    if all(size % up.granularity_bytes == 0 for s in steps for size in s[2:]) and \
            final_state_bytes % up.granularity_bytes == 0:
        return up  # every size whole units: nothing was rounded
    g = _finest_granularity(steps, min(budget_bytes, up.all_taped_bytes))
    low_steps, low_final = _rounded_down(steps, final_state_bytes, g)
    try:
        down = chain_taped(low_steps, budget_bytes, final_state_bytes=low_final, granularity=g)
    except (ArgumentError, CapacityError):
        return up
    peak, _ = price(steps, final_state_bytes, down.actions)
    if peak > budget_bytes or not down.predicted_cost < up.predicted_cost:
        return up
    report = up.as_dict()
    report.update(predicted_cost=down.predicted_cost, peak_bytes=peak, granularity_bytes=g,
                  forward_steps=down.forward_steps, taped_steps=down.taped_steps)
    return TapedChainPlan(down.actions, report)
