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
the budget in true bytes is kept (the rounded-up one on a tie). Where the rounded-up plan refuses the budget
(up to a unit a state above the least in true bytes), a plan of the least peak (least_plan: the least budget
in true bytes, remat::plan_taped_chain_least) is one more choice, and a budget below that least is refused naming it.
"""

from __future__ import annotations

from typing import Iterable, List, Optional, Sequence, Tuple

from .. import _remat
from .._errors import ArgumentError, CapacityError
from .._plans import TapedChainPlan, _chain_step, chain_taped

#: remat::plan_taped_chain's limit on its table's entries (src/schedule/chain_taped.cpp, max_entries).
_MAX_TABLE_ENTRIES = 1 << 23
#: The most units asked for: finer still would only slow the plan of a short chain.
_MOST_UNITS = 1 << 15

Step = Tuple[float, float, int, int, int]  # (f_k, b_k, m_k, a_k, t_k or 0) as remat.chain_taped takes them


def price(steps: Sequence[Step], final_state_bytes: int, actions: Iterable) -> Tuple[int, float]:
    """(peak bytes, cost) of a taped-chain plan's actions under the chain model with taped advances, in true
    bytes: remat::price_taped_chain, the pricing remat::plan_taped_chain reports for its own plans
    (docs/heterogeneous.md, "Pricing a plan"). remat.ArgumentError names an action that breaks the model's
    rules."""
    peak, cost, _, _ = _remat.price_taped_chain(_five(steps), final_state_bytes, actions)
    return peak, cost


def priced_plan(steps: Sequence[Step], final_state_bytes: int, actions: list, budget_bytes: int) -> TapedChainPlan:
    """A plan given as its actions, checked and priced under the chain model with taped advances (true bytes):
    remat.ArgumentError names an action that breaks its rules."""
    return _priced(list(steps), final_state_bytes, budget_bytes, actions, 1)


def least_plan(steps: Sequence[Step], final_state_bytes: int) -> TapedChainPlan:
    """The least budget of the chain in true bytes and a plan at it: remat::plan_taped_chain_least, the least
    peak of any plan of the model (the least budget remat.chain_taped plans at a granularity of 1 byte, found
    without its table, which at that unit would be far too large). Its budget_bytes, peak_bytes and
    least_budget_bytes are that least."""
    actions, report = _remat.chain_taped_least(_five(steps), final_state_bytes)
    return TapedChainPlan(actions, report)


def _five(steps: Sequence) -> List[Step]:
    """The steps as the binding takes them, (f_k, b_k, m_k, a_k, t_k): a four-field step's tape the default, 0."""
    return [_chain_step(k, s) for k, s in enumerate(steps)]


def _finest_granularity(steps: Sequence[Step], bytes_: int) -> int:
    """The least unit at which a table of this chain up to `bytes_` stays within the planner's limit."""
    rows = len(steps) * (len(steps) + 1) // 2
    units = max(1, min(_MOST_UNITS, _MAX_TABLE_ENTRIES // rows - 1))
    return max(1, -(-bytes_ // units))


def _rounded_down(steps: Sequence[Step], final_state_bytes: int, g: int):
    """The chain with every size rounded down to whole units of g (a state, which may not be 0, at least one; a
    given tape likewise, as 0 would stand for the default m_k + a_k)."""
    def down(b: int, least: int) -> int:
        return max(least, b // g * g)

    return ([(f, b, down(m, g), down(a, 0), down(t, g) if t else 0) for f, b, m, a, t in steps],
            down(final_state_bytes, g))


def plan_taped_within(steps: List[Step], final_state_bytes: int, budget_bytes: int) -> TapedChainPlan:
    """The cheapest plan within the budget in true bytes among remat.chain_taped's at the budget (sizes rounded
    up, its default unit: it fits wherever it plans), its plan at the finest unit with every size rounded down
    (where its peak in true bytes fits) and, where the first refuses the budget, a plan of the least peak
    (least_plan), which fits every budget from the least in true bytes up (the rounded-up plan misses
    budgets up to a unit a state above it). Raises remat.CapacityError naming that least budget below it."""
    steps = _five(steps)
    try:
        up: Optional[TapedChainPlan] = chain_taped(steps, budget_bytes, final_state_bytes=final_state_bytes)
    except CapacityError:
        up = None
    if up is not None and all(size % up.granularity_bytes == 0 for s in steps for size in s[2:]) and \
            final_state_bytes % up.granularity_bytes == 0:
        return up  # every size whole units: nothing was rounded, the plan is the true optimum
    least = None if up is not None else least_plan(steps, final_state_bytes)
    if least is not None and budget_bytes < least.least_budget_bytes:
        raise CapacityError(f"no schedule of this chain fits a budget of {budget_bytes} bytes; it needs at least "
                            f"{least.least_budget_bytes} bytes")
    plans = [] if up is None else [up]
    down = _rounded_down_plan(steps, final_state_bytes, budget_bytes,
                              min(budget_bytes, up.all_taped_bytes) if up is not None else budget_bytes)
    if down is not None:
        plans.append(down)
    if least is not None:
        report = least.as_dict()
        report.update(budget_bytes=budget_bytes)
        plans.append(TapedChainPlan(least.actions, report))
    best = min(plans, key=lambda p: p.predicted_cost)  # the first of the cheapest: the rounded-up one on a tie
    if best is not up:
        # the least budget: in true bytes where it was found, else the rounded-up plan's (at its unit)
        report = best.as_dict()
        report.update(least_budget_bytes=least.least_budget_bytes if least is not None else up.least_budget_bytes)
        best = TapedChainPlan(best.actions, report)
    return best


def _rounded_down_plan(steps: List[Step], final_state_bytes: int, budget_bytes: int,
                       table_bytes: int) -> Optional[TapedChainPlan]:
    """remat.chain_taped's plan at the finest unit with every size rounded down, where its peak in true bytes is
    within the budget (None where it is not, or none is made)."""
    g = _finest_granularity(steps, table_bytes)
    low_steps, low_final = _rounded_down(steps, final_state_bytes, g)
    try:
        down = chain_taped(low_steps, budget_bytes, final_state_bytes=low_final, granularity=g)
    except (ArgumentError, CapacityError):
        return None
    plan = _priced(steps, final_state_bytes, budget_bytes, down.actions, g)
    return plan if plan.peak_bytes <= budget_bytes else None


def _priced(steps: List[Step], final_state_bytes: int, budget_bytes: int, actions: list, g: int) -> TapedChainPlan:
    """A plan of these actions with the report remat.chain_taped gives, its figures priced in true bytes."""
    return TapedChainPlan(*_remat.chain_taped_priced(_five(steps), final_state_bytes, actions, budget_bytes, g))
