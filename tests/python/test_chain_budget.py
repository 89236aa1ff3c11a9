"""The plan auto_checkpoint follows with taped advances (remat.torch._chain_budget.plan_taped_within) on random
chains whose sizes are not multiples of the planner's default memory unit, against the exact optimum in bytes
(remat.chain_taped at a granularity of 1 byte, which schedule_chain_taped_test checks against a brute force):
never cheaper than it, never dearer than remat.chain_taped's own plan at its default unit, within the budget in
true bytes; the least budget auto_checkpoint names is the exact optimum's least, every budget from it up is
planned and one byte less refused naming it; the plan of the least peak it takes there (least_plan,
remat::plan_taped_chain_least) peaks at remat.chain_taped's least at 1 byte; and the model's price of a plan
(price, remat::price_taped_chain) against remat.chain_taped's own, refusing a plan that breaks the model's rules."""

import random

import pytest

pytest.importorskip("torch")
import remat  # noqa: E402
from remat.torch._auto import _least_budget, _plan_within  # noqa: E402
from remat.torch._chain_budget import least_plan, plan_taped_within, price  # noqa: E402


def random_chain(rng, n):
    steps = [(rng.randint(1, 8) / 4, rng.randint(2, 20) / 4, rng.randint(900, 4000), rng.randint(0, 9000))
             for _ in range(n)]
    return [(f, max(f, b), m, a) for f, b, m, a in steps], rng.randint(900, 4000)


def random_chain_with_tapes(rng, n):
    """A random chain whose steps have tapes of their own size on two in three (tape_bytes, from a_k to past
    m_k + a_k: mostly below it, as auto_checkpoint's profile gives them), the others the default (0)."""
    steps, final = random_chain(rng, n)
    return [(f, b, m, a, rng.randint(max(1, a), m + a + 500) if rng.random() < 2 / 3 else 0)
            for f, b, m, a in steps], final


def counts(actions):
    """The counts of a plan's actions, counted here: stores, restores, the most slots in use, the most runs of one
    step by advances, reverses, forward steps and taped steps."""
    c = dict(stores=0, restores=0, peak_slots=0, repetition=0, reverse_steps=0, forward_steps=0, taped_steps=0)
    runs, used = {}, set()
    for a in actions:
        if isinstance(a, remat.Advance):
            for k in range(a.start, a.stop):
                runs[k] = runs.get(k, 0) + 1
            c["forward_steps"] += a.stop - a.start
            c["taped_steps"] += a.taped
        elif isinstance(a, remat.Store):
            c["stores"] += 1
            used.add(a.slot)
            c["peak_slots"] = max(c["peak_slots"], len(used))
        elif isinstance(a, remat.Restore):
            c["restores"] += 1
        elif isinstance(a, remat.Free):
            used.discard(a.slot)
        else:
            c["reverse_steps"] += 1
    c["repetition"] = max(runs.values(), default=0)
    return c


def same_fields(plan, reference):
    """`plan` (of plan_taped_within or least_plan) reports every field remat.chain_taped's `reference` does, its
    counts those of its own actions."""
    assert set(plan.as_dict()) == set(reference.as_dict())
    assert {k: plan.as_dict()[k] for k in counts([])} == counts(plan.actions)
    assert plan.overhead == pytest.approx(plan.predicted_cost / plan.store_all_cost)


@pytest.mark.parametrize("make", [random_chain, random_chain_with_tapes])
def test_never_dearer_than_the_default_unit_and_the_exact_optimum_where_the_rounded_down_plan_fits(make):
    rng = random.Random(38)
    reached, improved, cases = 0, 0, 0
    for _ in range(40):
        steps, final = make(rng, rng.randint(3, 7))
        top = remat.chain_taped(steps, 1 << 40, final_state_bytes=final).all_taped_bytes
        least = remat.chain_taped(steps, top, final_state_bytes=final).least_budget_bytes
        drawn = [rng.randint(least, top) for _ in range(3)]
        # and budgets that a schedule fills exactly (as checkpoint_sequential's measured peak), which the
        # default unit's rounding up misses
        filled = [remat.chain_taped(steps, b, final_state_bytes=final, granularity=1).peak_bytes for b in drawn]
        for budget in sorted(set(drawn + filled)):
            exact = remat.chain_taped(steps, budget, final_state_bytes=final, granularity=1)
            try:
                default = remat.chain_taped(steps, budget, final_state_bytes=final)
            except remat.CapacityError:  # below the least budget at the default unit: planned all the same
                plan = plan_taped_within(steps, final, budget)
                assert price(steps, final, plan.actions)[0] == plan.peak_bytes <= budget
                assert plan.predicted_cost >= exact.predicted_cost - 1e-9
                same_fields(plan, exact)
                continue
            cases += 1
            plan = plan_taped_within(steps, final, budget)
            same_fields(plan, exact)
            peak, cost = price(steps, final, plan.actions)
            assert peak == plan.peak_bytes <= budget
            assert cost == pytest.approx(plan.predicted_cost)
            assert exact.predicted_cost <= plan.predicted_cost + 1e-9 <= default.predicted_cost + 2e-9
            reached += plan.predicted_cost <= exact.predicted_cost + 1e-9
            improved += plan.predicted_cost < default.predicted_cost - 1e-9
    # the default unit (about a 4096th of the budget) rounds these sizes up; the finer rounded-down plan
    # fits the true budget in most cases, and it is then the exact optimum
    assert improved > 0
    assert reached > 0.9 * cases


@pytest.mark.parametrize("make", [random_chain, random_chain_with_tapes])
def test_price_is_the_planners_own(make):
    rng = random.Random(7)
    for _ in range(30):
        steps, final = make(rng, rng.randint(1, 9))
        top = remat.chain_taped(steps, 1 << 40, final_state_bytes=final).all_taped_bytes
        for budget in (top, top * 2 // 3):
            try:
                plan = remat.chain_taped(steps, budget, final_state_bytes=final)
            except remat.CapacityError:
                continue
            peak, cost = price(steps, final, plan.actions)
            assert peak == plan.peak_bytes
            assert cost == pytest.approx(plan.predicted_cost)


@pytest.mark.parametrize("make", [random_chain, random_chain_with_tapes])
def test_the_least_budget_is_the_exact_optimums_and_every_budget_from_it_is_planned(make):
    rng = random.Random(5)
    above_the_default_units = 0
    for _ in range(60):
        steps, final = make(rng, rng.randint(1, 7))
        top = remat.chain_taped(steps, 1 << 40, final_state_bytes=final).all_taped_bytes
        exact = remat.chain_taped(steps, top, final_state_bytes=final, granularity=1).least_budget_bytes
        least = _least_budget(steps, final, True)
        assert least == exact
        plan = _plan_within(steps, final, least, True)
        assert price(steps, final, plan.actions)[0] == plan.peak_bytes <= least
        with pytest.raises(remat.CapacityError, match=f"the least budget that fits is {least} bytes"):
            _plan_within(steps, final, least - 1, True)
        # the rounded-up plan's own least (at its unit there) is above it where rounding costs room
        above_the_default_units += remat.chain_taped(steps, 1 << 40, final_state_bytes=final).least_budget_bytes > least
    assert above_the_default_units > 10


@pytest.mark.parametrize("make", [random_chain, random_chain_with_tapes])
def test_least_plan_peaks_at_the_planners_least_in_bytes(make):
    """least_plan (remat._remat.chain_taped_least, remat::plan_taped_chain_least): its least is remat.chain_taped's
    at a granularity of 1 byte, and its plan, priced by the model, peaks exactly there."""
    rng = random.Random(11)
    for _ in range(40):
        steps, final = make(rng, rng.randint(1, 9))
        top = remat.chain_taped(steps, 1 << 40, final_state_bytes=final).all_taped_bytes
        exact = remat.chain_taped(steps, top, final_state_bytes=final, granularity=1)
        plan = least_plan(steps, final)
        assert plan.least_budget_bytes == plan.peak_bytes == plan.budget_bytes == exact.least_budget_bytes
        peak, cost = price(steps, final, plan.actions)
        assert peak == plan.peak_bytes
        assert cost == pytest.approx(plan.predicted_cost)
        assert plan.granularity_bytes == 1 and plan.all_taped_bytes == top and plan.steps == len(steps)
        same_fields(plan, exact)
        assert not plan.exact  # the least peak's plan, not the cheapest there


def test_least_plan_refuses_a_bad_chain_as_the_planner_does():
    with pytest.raises(remat.ArgumentError, match="step 1: state_bytes must be at least 1"):
        least_plan([(1.0, 2.0, 100, 10), (1.0, 2.0, 0, 10)], 100)
    with pytest.raises(remat.ArgumentError, match="at least one step"):
        least_plan([], 100)


def test_price_refuses_a_plan_that_breaks_the_models_rules():
    steps = [(1.0, 2.0, 100, 10)] * 3
    plan = remat.chain_taped(steps, 1 << 20, final_state_bytes=100)
    with pytest.raises(remat.ArgumentError, match=r"action 0 \(reverse 1\) is out of order"):
        price(steps, 100, [remat.Reverse(1)] + plan.actions)
    with pytest.raises(remat.ArgumentError, match="action 1 is a str, not a remat action"):
        price(steps, 100, [plan.actions[0], "reverse 2"])
