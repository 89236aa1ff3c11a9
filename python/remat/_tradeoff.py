"""remat.tradeoff: what each schedule costs over a grid of slot counts, as `remat tradeoff --format json`
reports it (src/cli/tradeoff.cpp). Every cost comes from the C++ planners; this module only picks the grid."""

from __future__ import annotations

import dataclasses
import math
from typing import List, Optional, Sequence, Tuple

from . import _remat
from ._bytes import parse_bytes
from ._errors import CountOverflowError, Error
from ._plans import Level, _level_tuple, multilevel, revolve, store_all, uniform


@dataclasses.dataclass(frozen=True)
class TradeoffRow:
    """One schedule with one slot count: its counts, forward steps over store-all's (recompute_ratio) and
    predicted time over store-all's (overhead)."""

    schedule: str
    slots: int
    peak_slots: int
    forward_steps: int
    recompute_ratio: float
    overhead: float
    every: Optional[int] = None
    snapshot_bytes: Optional[int] = None


@dataclasses.dataclass(frozen=True)
class OmittedRow:
    schedule: str
    slots: int
    reason: str


@dataclasses.dataclass(frozen=True)
class Tradeoff:
    """The memory-recomputation trade-off of a loop of `steps` steps (docs/tradeoff.md)."""

    steps: int
    reverse_cost: float
    state_bytes: Optional[int]
    store_all_slots: int
    store_all_forward_steps: int
    sqrt_rule: TradeoffRow
    one_extra_sweep_slots: int
    rows: Tuple[TradeoffRow, ...]
    omitted_rows: Tuple[OmittedRow, ...] = ()


def _round(x: float) -> int:
    """C's llround: halves away from zero (Python's round() goes to even)."""
    return int(math.floor(x + 0.5))


def tradeoff(steps: int, *, reverse_cost: float = 0.0, state_bytes=None,
             levels: Sequence = ()) -> Tradeoff:
    """Revolve, online revolve, uniform (the best spacing for each count), the sqrt(T) rule and store-all
    (and multilevel with `levels`, the first level taking each row's slot count) over about four slot counts
    per decade, priced as `remat tradeoff --steps T` prices them.

        >>> t = remat.tradeoff(1000)
        >>> [(r.slots, r.overhead) for r in t.rows if r.schedule == "revolve"][:2]
        [(1, 500.0), (2, 28.84884884884885)]
    """
    state = parse_bytes(state_bytes, "state_bytes") if state_bytes is not None else None
    level_list = [_level_tuple(l) for l in levels]
    all_slots = max(steps - 1, 1)
    base_forward = max(steps - 1, 0)
    baseline = store_all(steps, slots=all_slots, reverse_cost=reverse_cost).predicted_cost

    def make_row(name: str, slots: int, plan, every=None) -> TradeoffRow:
        return TradeoffRow(
            schedule=name, slots=slots, peak_slots=plan.peak_slots, forward_steps=plan.forward_steps,
            recompute_ratio=1.0 if base_forward == 0 else float(plan.forward_steps) / float(base_forward),
            overhead=plan.predicted_cost / baseline if baseline > 0 else 1.0, every=every,
            snapshot_bytes=None if state is None else plan.peak_slots * state)

    sqrt_every = max(1, _round(math.sqrt(steps)))
    sqrt_plan = uniform(steps, every=sqrt_every, reverse_cost=reverse_cost)
    sqrt_row = make_row("sqrt-rule", max(sqrt_plan.peak_slots, 1), sqrt_plan, sqrt_every)

    # The fewest slots with which revolve runs at most one extra forward sweep (bisection: monotone).
    lo, hi = 1, all_slots
    while lo < hi:
        mid = lo + (hi - lo) // 2
        try:
            within = _remat.min_forward_steps(steps, mid) <= 2 * base_forward
        except CountOverflowError:
            within = False
        if within:
            hi = mid
        else:
            lo = mid + 1
    one_extra = lo

    uniform_least = _remat.uniform_min_slots(steps)
    grid = set()
    k = 0
    while True:
        s = _round(10.0 ** (k / 4.0))
        if s > all_slots:
            break
        grid.add(s)
        k += 1
    grid |= {all_slots, min(max(_round(math.sqrt(steps)), 1), all_slots), min(sqrt_row.slots, all_slots), one_extra,
             min(max(uniform_least, 1), all_slots)}

    def row(name: str, s: int) -> Optional[TradeoffRow]:
        if name == "revolve":
            return make_row(name, s, revolve(steps, s, reverse_cost=reverse_cost))
        if name == "online":
            return make_row(name, s, revolve(steps, s, online=True, reverse_cost=reverse_cost))
        if name == "uniform":
            if s < uniform_least:
                return None
            plan = uniform(steps, slots=s, reverse_cost=reverse_cost)
            return make_row(name, s, plan, plan.every)
        if name == "store-all":
            return make_row(name, s, store_all(steps, slots=s, reverse_cost=reverse_cost)) if s == all_slots else None
        first = Level(level_list[0][0], s, level_list[0][2], level_list[0][3])
        plan = multilevel(steps, [first] + [Level(*l) for l in level_list[1:]], reverse_cost=reverse_cost)
        return make_row(name, s, plan)

    if level_list:  # a bad level combination fails here, once, as the tool's does
        row("multilevel", 1)
    rows: List[TradeoffRow] = []
    omitted: List[OmittedRow] = []
    names = ["revolve", "online", "uniform", "sqrt-rule", "store-all"] + (["multilevel"] if level_list else [])
    for name in names:
        if name == "sqrt-rule":
            rows.append(sqrt_row)
            continue
        for s in sorted(grid):
            try:
                r = row(name, s)
            except Error as e:
                omitted.append(OmittedRow(name, s, str(e)))
                continue
            if r is not None:
                rows.append(r)
    return Tradeoff(steps=steps, reverse_cost=reverse_cost, state_bytes=state, store_all_slots=all_slots,
                    store_all_forward_steps=base_forward, sqrt_rule=sqrt_row, one_extra_sweep_slots=one_extra,
                    rows=tuple(rows), omitted_rows=tuple(omitted))
