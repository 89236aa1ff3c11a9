"""remat.tradeoff: what each schedule costs over a grid of slot counts, and the inverse questions (the fewest
slots under an overhead, what a budget reaches), as `remat tradeoff --format json` reports them
(tools/cli/src/tradeoff.cpp). Every cost comes from the C++ planners; this module only picks the slot counts."""

from __future__ import annotations

import dataclasses
import math
from fractions import Fraction
from typing import Dict, List, Optional, Sequence, Tuple

from . import _remat
from ._bytes import Bytes, parse_bytes
from ._args import count, real
from ._errors import ArgumentError, CapacityError, CountOverflowError, Error
from ._plans import Level, _level_tuple, multilevel, revolve, store_all, uniform


@dataclasses.dataclass(frozen=True)
class TradeoffRow:
    """One schedule with one slot count: its counts, forward steps over store-all's (recompute_ratio) and
    predicted time over store-all's (overhead); with state_bytes, snapshot_bytes (peak_slots * state_bytes), or,
    where that passes 64 bits, snapshot_bytes_beyond_64_bits=True and snapshot_bytes None, as the tool reports it."""

    schedule: str
    slots: int
    peak_slots: int
    forward_steps: int
    recompute_ratio: float
    overhead: float
    every: Optional[int] = None
    snapshot_bytes: Optional[int] = None
    snapshot_bytes_beyond_64_bits: Optional[bool] = None


@dataclasses.dataclass(frozen=True)
class OmittedRow:
    """A row or answer that could not be computed (a planner's work limit), and why."""

    schedule: str
    slots: int
    reason: str


def _round(x: float) -> int:
    """C's llround for x >= 0: halves away from zero (Python's round() goes to even). Not floor(x + 0.5): past
    2^52 that sum rounds itself, and 10^15.75 came out one above the tool's."""
    whole = math.floor(x)
    return int(whole) + (1 if x - whole >= 0.5 else 0)


class Tradeoff:
    """The memory-recomputation trade-off of a loop of `steps` steps (docs/tradeoff.md): `rows` over the
    grid (`omitted_rows` those a planner's work limit left out), `least` (with max_overhead) and `within_budget`
    (with budget, in `budget_slots` slots) answers per schedule, None where none does (`least_omitted` and
    `within_omitted` those not answered); row(), least_slots() and within() answer single questions."""

    def __init__(self, steps: int, reverse_cost: float, state_bytes: Optional[int],
                 levels: Sequence[tuple]) -> None:
        self.steps = steps
        self.reverse_cost = reverse_cost
        self.state_bytes = state_bytes
        self._levels = list(levels)
        self.store_all_slots = max(steps - 1, 1)
        self.store_all_forward_steps = max(steps - 1, 0)
        #: (schedule, slots) -> the row's predicted cost, exactly (_exact_cost), for least_slots' comparisons
        self._exact_costs: Dict[Tuple[str, int], Fraction] = {}
        baseline = store_all(steps, slots=self.store_all_slots, reverse_cost=reverse_cost)
        self._baseline = baseline.predicted_cost
        self._exact_baseline = _exact_cost(baseline)
        self._uniform_least = _remat.uniform_min_slots(steps)
        every = max(1, _round(math.sqrt(steps)))
        plan = uniform(steps, every=every, reverse_cost=reverse_cost)
        self.sqrt_rule = self._make_row("sqrt-rule", max(plan.peak_slots, 1), plan, every)
        self.one_extra_sweep_slots = self._one_extra_sweep()
        # What online counts may still spend, rows and answers together (the tool's online_work_budget): past
        # level one each replays its forward sweep, seconds to minutes at large T; the rows beyond are omitted.
        self.online_work_left = _remat.online_cost_work_limit
        if self._levels:  # a bad level combination fails here, once, as the tool's does
            self.row("multilevel", 1)
        self.rows: Tuple[TradeoffRow, ...] = ()
        self.omitted_rows: Tuple[OmittedRow, ...] = ()
        self.max_overhead: Optional[float] = None
        self.least: Dict[str, Optional[TradeoffRow]] = {}
        self.least_omitted: Tuple[OmittedRow, ...] = ()
        self.budget_bytes: Optional[int] = None
        self.budget_slots: Optional[int] = None
        self.within_budget: Dict[str, Optional[TradeoffRow]] = {}
        self.within_omitted: Tuple[OmittedRow, ...] = ()

    def _make_row(self, name: str, slots: int, plan, every=None) -> TradeoffRow:
        base = self.store_all_forward_steps
        # A row's counts stand where its bytes pass 64 bits (T near 2^63 has rows of every size): it says so.
        nbytes = None if self.state_bytes is None else plan.peak_slots * self.state_bytes
        beyond = nbytes is not None and nbytes >= 2**64
        self._exact_costs[(name, slots)] = _exact_cost(plan)
        return TradeoffRow(
            schedule=name, slots=slots, peak_slots=plan.peak_slots, forward_steps=plan.forward_steps,
            recompute_ratio=1.0 if base == 0 else float(plan.forward_steps) / float(base),
            overhead=plan.predicted_cost / self._baseline if self._baseline > 0 else 1.0, every=every,
            snapshot_bytes=None if beyond else nbytes, snapshot_bytes_beyond_64_bits=True if beyond else None)

    def _one_extra_sweep(self) -> int:
        # Revolve's forward steps do not grow with more slots: the least count by bisection.
        lo, hi = 1, self.store_all_slots
        while lo < hi:
            mid = lo + (hi - lo) // 2
            try:
                within = _remat.min_forward_steps(self.steps, mid) <= 2 * self.store_all_forward_steps
            except CountOverflowError:  # beyond 64 bits: certainly more than two sweeps
                within = False
            if within:
                hi = mid
            else:
                lo = mid + 1
        return lo

    def schedules(self) -> List[str]:
        """The schedules compared, in the report's order."""
        return ["revolve", "online", "uniform", "sqrt-rule", "store-all"] + (["multilevel"] if self._levels else [])

    def _known(self, name: object) -> str:
        """`name` where it is one of schedules(), else remat.ArgumentError naming them (an unknown name fell
        through to the multilevel row: an IndexError from inside the package)."""
        if name in self.schedules():
            return name
        why = " (multilevel needs tradeoff's levels=)" if name == "multilevel" else ""
        raise ArgumentError(f"schedule: expected one of {', '.join(self.schedules())}, got {name!r}{why}")

    def grid(self) -> List[int]:
        """About four slot counts per decade up to store-all's, with sqrt(T), the sqrt(T) rule's count, the
        one-extra-sweep count and uniform's fewest added."""
        top = self.store_all_slots
        grid = set()
        k = 0
        while (s := _round(10.0 ** (k / 4.0))) <= top:
            grid.add(s)
            k += 1
        grid |= {top, min(max(_round(math.sqrt(self.steps)), 1), top), min(self.sqrt_rule.slots, top),
                 self.one_extra_sweep_slots, min(max(self._uniform_least, 1), top)}
        return sorted(grid)

    def row(self, name: str, slots: int) -> Optional[TradeoffRow]:
        """`name` with `slots` slots; None where it does not apply (uniform below its fewest slots, the sqrt
        rule and store-all at any count but their own). remat.Error where a planner refuses the count."""
        name, slots = self._known(name), count(slots, "slots")
        steps, rc = self.steps, self.reverse_cost
        if name == "revolve":
            return self._make_row(name, slots, revolve(steps, slots, reverse_cost=rc))
        if name == "online":
            return self._online_row(slots, _remat.online_cost_work(steps, slots))
        if name == "uniform":
            if slots < self._uniform_least:
                return None
            plan = uniform(steps, slots=slots, reverse_cost=rc)
            return self._make_row(name, slots, plan, plan.every)
        if name == "sqrt-rule":
            return self.sqrt_rule if slots == self.sqrt_rule.slots else None
        if name == "store-all":
            if slots != self.store_all_slots:
                return None
            return self._make_row(name, slots, store_all(steps, slots=slots, reverse_cost=rc))
        first = self._levels[0]
        levels = [Level(first[0], slots, first[2], first[3])] + [Level(*l) for l in self._levels[1:]]
        return self._make_row(name, slots, multilevel(steps, levels, reverse_cost=rc))

    def _online_row(self, slots: int, work: int) -> TradeoffRow:
        """The online row, whose count takes `work` units (online_cost_work), charged to online_work_left."""
        if work > self.online_work_left:
            raise ArgumentError(
                f"counting online revolve with {slots} slots replays its forward sweep: about {work} units of "
                f"work (25 to 55 ns each), more than the {self.online_work_left} left of the "
                f"{_remat.online_cost_work_limit} this report spends on online counts (0.2 to 0.5 s)")
        self.online_work_left -= work
        return self._make_row("online", slots,
                              revolve(self.steps, slots, online=True, reverse_cost=self.reverse_cost))

    def least_slots(self, name: str, max_overhead: float) -> Optional[TradeoffRow]:
        """The row of schedule `name` with the fewest slots whose overhead is at most `max_overhead`; None when
        none is."""
        name, max_overhead = self._known(name), _max_overhead(max_overhead)
        top = self.store_all_slots
        limit = _exact_limit(max_overhead)

        # Each count tried is priced once and its row kept for the answer: an online row priced again would
        # charge online_work_left again (as the tool's least_slots).
        def priced(which: str, s: int) -> Optional[TradeoffRow]:
            try:
                return self.row(which, s)
            except CountOverflowError:  # a count beyond 64 bits is beyond any limit
                return None

        def reaches(r: Optional[TradeoffRow]) -> bool:
            """Whether r's cost is at most the limit times store-all's, exactly (as the tool decides it: in
            doubles the answer at T = 1e18 was 130 slots short, and 1,107 at 2^63-1 with 1.01)."""
            if r is None:
                return False
            if limit is None:  # an infinite limit
                return True
            base = self._exact_baseline
            if base == 0:  # an overhead over a base of 0 is 1, as TradeoffRow.overhead says it
                return 1 <= limit
            return self._exact_costs[(r.schedule, r.slots)] <= limit * base

        if name == "sqrt-rule":
            return self.sqrt_rule if reaches(self.sqrt_rule) else None
        if name == "store-all":
            r = self.row(name, top)
            return r if reaches(r) else None
        if name in ("revolve", "uniform", "multilevel"):
            best = priced(name, top)  # the row at hi
            if not reaches(best):
                return None
            lo = min(max(self._uniform_least, 1), top) if name == "uniform" else 1
            hi = top
            while lo < hi:
                mid = lo + (hi - lo) // 2
                r = priced(name, mid)
                if reaches(r):
                    hi, best = mid, r
                else:
                    lo = mid + 1
            return best
        # online runs at least revolve's forward steps with the same slots: start from revolve's answer
        offline = self.least_slots("revolve", max_overhead)
        if offline is None:
            return None
        for s in range(offline.slots, top + 1):
            r = priced(name, s)
            if reaches(r):
                return r
        return None

    def within(self, name: str, slots: int) -> Optional[TradeoffRow]:
        """`name` with all of `slots` slots (at most store-all's are used), or the sqrt rule and store-all
        where they fit in them; None where it does not fit."""
        name, slots = self._known(name), count(slots, "slots")
        if name == "sqrt-rule":
            return self.sqrt_rule if self.sqrt_rule.slots <= slots else None
        if name == "store-all":
            return self.row(name, self.store_all_slots) if self.store_all_slots <= slots else None
        return self.row(name, min(slots, self.store_all_slots))

    def _ask_each(self, ask, slots: int):
        answers, omitted = {}, []
        for name in self.schedules():
            try:
                answers[name] = ask(name)
            except Error as e:
                omitted.append(OmittedRow(name, slots, str(e)))
        return answers, tuple(omitted)

    def _compute(self, max_overhead: Optional[float], budget: Optional[int]) -> None:
        rows: List[TradeoffRow] = []
        omitted: List[OmittedRow] = []
        grid = self.grid()
        for name in self.schedules():
            if name == "sqrt-rule":
                rows.append(self.sqrt_rule)
                continue
            # online counts share one budget: the cheapest first, so that those left out are the dearest; each
            # count's work is counted once, here, and charged once, as its row is priced
            work = {s: _remat.online_cost_work(self.steps, s) for s in grid} if name == "online" else {}
            order = sorted(grid, key=lambda s: work[s]) if work else grid
            found: Dict[int, TradeoffRow] = {}
            refused: Dict[int, str] = {}
            for s in order:
                try:
                    r = self._online_row(s, work[s]) if work else self.row(name, s)
                except Error as e:
                    refused[s] = str(e)
                    continue
                if r is not None:
                    found[s] = r
            for s in grid:
                if s in found:
                    rows.append(found[s])
                elif s in refused:
                    omitted.append(OmittedRow(name, s, refused[s]))
        self.rows, self.omitted_rows = tuple(rows), tuple(omitted)
        if max_overhead is not None:
            self.max_overhead = max_overhead
            self.least, self.least_omitted = self._ask_each(lambda n: self.least_slots(n, max_overhead), 0)
        if budget is not None:
            self.budget_bytes = budget
            self.budget_slots = budget // self.state_bytes
            self.within_budget, self.within_omitted = self._ask_each(
                lambda n: self.within(n, self.budget_slots), self.budget_slots)

    def __repr__(self) -> str:
        return f"Tradeoff(steps={self.steps}, rows={len(self.rows)})"


def _exact_cost(plan) -> Fraction:
    """A plan's predicted cost as the exact sum of its terms, which predicted_cost sums in doubles (near T = 1e18
    to a multiple of 128): step_cost x forward steps, reverse_cost x reverse steps, each level's write and read
    costs x its stores and restores (the tool's cost_terms)."""
    total = Fraction(plan.step_cost) * plan.forward_steps + Fraction(plan.reverse_cost) * plan.reverse_steps
    for level in plan.levels:
        if level.write_cost is not None:  # a level of the cost model (a single-level plan's has none)
            total += Fraction(level.write_cost) * level.stores + Fraction(level.read_cost) * level.restores
    return total


def _exact_limit(max_overhead: float) -> Optional[Fraction]:
    """The overhead limit as the fraction its shortest decimal says (1.2 is 6/5, as the tool reads "1.2"), the
    decimal a user types and Python prints for the float; None for infinity (every schedule is within it)."""
    if math.isinf(max_overhead):
        return None
    return Fraction(repr(float(max_overhead)))


def _max_overhead(value: object) -> float:
    """`value` as an overhead bound, refused as the tool's --max-overhead refuses it: not a number > 0 (NaN too;
    Tradeoff.least_slots answered None for NaN or -1, as if no schedule reached a bound that was a mistake)."""
    max_overhead = real(value, "max_overhead")
    if not max_overhead > 0:
        raise ArgumentError(f"max_overhead: expected a number > 0 such as 1.5, got {max_overhead}")
    return max_overhead


def tradeoff(steps: int, *, reverse_cost: float = 0.0, state_bytes: Optional[Bytes] = None, levels: Sequence = (),
             max_overhead: Optional[float] = None, budget: Optional[Bytes] = None) -> Tradeoff:
    """Revolve, online revolve, uniform (the best spacing for each count), the sqrt(T) rule and store-all
    (and multilevel with `levels`, the first level taking each row's slot count) over about four slot counts
    per decade, priced as `remat tradeoff --steps T` prices them. reverse_cost: an adjoint step's cost in
    forward steps (--reverse-cost), in each row's overhead. max_overhead: also the fewest slots each
    schedule needs for it (`least`); budget (bytes, with state_bytes): what each reaches within it
    (`within_budget`).

        >>> t = remat.tradeoff(1000)
        >>> [(r.slots, r.overhead) for r in t.rows if r.schedule == "revolve"][:2]
        [(1, 500.0), (2, 28.84884884884885)]
    """
    steps = count(steps, "steps")
    reverse_cost = real(reverse_cost, "reverse_cost")
    if max_overhead is not None:
        max_overhead = _max_overhead(max_overhead)
    state = parse_bytes(state_bytes, "state_bytes") if state_bytes is not None else None
    budget_bytes = parse_bytes(budget, "budget") if budget is not None else None
    if budget_bytes is not None:
        if state is None:
            raise ArgumentError("tradeoff: budget= needs state_bytes= (the bytes of one snapshot)")
        if state == 0:
            raise ArgumentError("tradeoff: state_bytes must be at least 1 byte with budget=, got 0")
        if budget_bytes // state == 0:
            raise CapacityError(f"tradeoff: a budget of {budget_bytes} bytes holds no snapshot of {state} bytes")
    t = Tradeoff(steps, reverse_cost, state, [_level_tuple(l) for l in levels])
    t._compute(max_overhead, budget_bytes)
    return t
