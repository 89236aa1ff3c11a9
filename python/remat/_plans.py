"""Plans from Python: each function asks the C++ planner for a schedule and its report (the fields of
`remat plan --format json`) and returns a remat.Plan, whose actions are made in C++ as they are iterated."""

from __future__ import annotations

import collections.abc
import dataclasses
import itertools
import math
from typing import Any, Dict, Iterable, Iterator, Mapping, Optional, Sequence, Tuple, Union

from . import _remat
from ._args import count, flag, optional_count, real
from ._bytes import parse_bytes
from ._errors import ArgumentError

Action = Union[_remat.Advance, _remat.Store, _remat.Restore, _remat.Free, _remat.Reverse]


def _reduce_action(action):
    """An action rebuilt from its fields (its __match_args__): what pickle and copy use. nanobind's classes
    have none, so copy.copy, copy.deepcopy and pickle refused the actions ("cannot pickle 'Advance' object")."""
    return type(action), tuple(getattr(action, f) for f in type(action).__match_args__)


def _same(value, memo=None):
    return value  # immutable: a copy may be the value itself


for _cls in (_remat.Advance, _remat.Store, _remat.Restore, _remat.Free, _remat.Reverse):
    _cls.__reduce__ = _reduce_action
# A plan's schedule is immutable C++ state (each pass makes its own cursor): copies of a Plan share it.
_remat.Schedule.__copy__ = _same
_remat.Schedule.__deepcopy__ = _same


@dataclasses.dataclass(frozen=True)
class LevelCost:
    """One storage level's counts (and, for multi-level plans, what the level is and costs)."""

    level: int
    stores: int
    restores: int
    peak_slots: int
    name: Optional[str] = None
    slots: Optional[int] = None  # None: unlimited (multi-level plans) or not a multi-level plan
    write_cost: Optional[float] = None
    read_cost: Optional[float] = None


@dataclasses.dataclass(frozen=True)
class Level:
    """A storage level for remat.multilevel: `slots` snapshots (None: unlimited), each store costing
    `write_cost` and each restore `read_cost` forward steps."""

    name: str
    slots: Optional[int] = None
    write_cost: float = 0.0
    read_cost: float = 0.0


@dataclasses.dataclass(frozen=True)
class ChainStep:
    """One step of a heterogeneous chain (remat.chain): its forward cost f_k, its adjoint's cost b_k (the
    re-run included), the bytes m_k of its input state x_k, the extra bytes a_k its adjoint needs, and the
    bytes t_k of its tape where remat.chain_taped advances it taped (0: m_k + a_k; remat.chain ignores it)."""

    forward: float
    adjoint: float
    state_bytes: int
    adjoint_bytes: int = 0
    tape_bytes: int = 0


@dataclasses.dataclass(frozen=True, eq=False)  # __eq__ and __hash__ below
class Plan:
    """A schedule and what it costs, known before it runs. The fields are those of `remat plan --format
    json` for the same plan (None where that report has no such field); iterating the plan yields its
    actions (remat.Advance, Store, Restore, Free, Reverse), made in C++ in batches.

    Plans are values: equal (and of equal hash) where they were made by the same function from the same
    parameters (as it read them: 8192 and "8KiB" alike) and have the same report fields (the same planner's
    always do; a copy whose fields dataclasses.replace changed does not), hence the same actions, compared
    without making them (a plan may have 10^12 steps)."""

    schedule: str
    steps: int
    forward_steps: int
    reverse_steps: int
    stores: int
    restores: int
    peak_slots: int
    repetition: int
    predicted_cost: float
    levels: Tuple[LevelCost, ...]
    slots: Optional[int] = None
    every: Optional[int] = None
    store_all_forward_steps: Optional[int] = None
    recompute_ratio: Optional[float] = None
    step_cost: Optional[float] = None
    reverse_cost: Optional[float] = None
    # multilevel
    method: Optional[str] = None
    structure: Optional[str] = None
    period: Optional[int] = None
    lower_bound: Optional[float] = None
    gap_to_lower_bound: Optional[float] = None
    levels_used: Optional[Tuple[int, ...]] = None
    planning_work: Optional[int] = None
    # online revolve
    offline_forward_steps: Optional[int] = None
    ratio_to_offline: Optional[float] = None
    learns_end_at: Optional[str] = None
    # plan_for_budget
    state_bytes: Optional[int] = None
    budget_bytes: Optional[int] = None
    peak_snapshot_bytes: Optional[int] = None
    # chain
    peak_bytes: Optional[int] = None
    store_all_cost: Optional[float] = None
    store_all_bytes: Optional[int] = None
    overhead: Optional[float] = None
    least_budget_bytes: Optional[int] = None
    granularity_bytes: Optional[int] = None
    memory_units: Optional[int] = None
    planned_units: Optional[int] = None
    lossless: Optional[bool] = None
    discretisation_gap_bytes: Optional[int] = None
    horizon: Optional[int] = None
    block_steps: Optional[int] = None
    exact: Optional[bool] = None
    # taped revolve
    tape_units: Optional[int] = None
    rerun_units: Optional[int] = None
    taped_steps: Optional[int] = None
    peak_tapes: Optional[int] = None
    peak_units: Optional[int] = None
    evaluations: Optional[int] = None
    _schedule: _remat.Schedule = dataclasses.field(default=None, repr=False, compare=False)
    # the planner's name and arguments, which its report and actions follow from (the C++ planners are
    # deterministic); () for a Plan made by hand, equal to itself alone
    _parameters: tuple = dataclasses.field(default=(), repr=False)

    def __eq__(self, other: object) -> bool:
        # The parameters (a chain's report leaves out its steps) and every report field: dataclasses.replace
        # keeps the parameters, and a plan whose fields it changed compared equal to the unchanged one. A field
        # may be NaN (a multi-level plan of one step: gap_to_lower_bound 0/0; a chain of costs 0: overhead):
        # NaN equals NaN here, or a plan would be unequal to its twin. The hash, the parameters', stays consistent.
        if not isinstance(other, Plan):
            return NotImplemented
        if self is other:
            return True
        return (bool(self._parameters) and self._parameters == other._parameters
                and all(_same_field(getattr(self, n), getattr(other, n)) for n in _PLAN_REPORT_FIELDS))

    def __hash__(self) -> int:
        return hash(self._parameters) if self._parameters else object.__hash__(self)

    def __iter__(self) -> Iterator[Action]:
        """The actions, in order (a new pass each time)."""
        return itertools.chain.from_iterable(self._schedule.batches())

    def batches(self, size: int = 4096) -> Iterator[list]:
        """The actions as lists of up to `size` (the fastest way through millions of them)."""
        size = count(size, "batches: size")
        if size < 1:
            raise ArgumentError(f"batches: size must be at least 1, got {size}")
        return iter(self._schedule.batches(size))

    def actions_text(self) -> str:
        """Every action's line, as `remat plan --format actions` prints them."""
        return "".join(f"{a}\n" for a in self)

    def as_dict(self) -> dict:
        """The report's fields that this plan has (those of `remat plan --format json`)."""
        out = {}
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if f.name.startswith("_") or value is None:
                continue
            if f.name == "levels":
                # A multi-level plan's level reports slots null when it is unlimited, as the tool does.
                value = [{k: v for k, v in dataclasses.asdict(l).items()
                          if v is not None or (k == "slots" and l.name is not None)} for l in value]
            elif isinstance(value, tuple):
                value = list(value)
            out[f.name] = value
        return out


_PLAN_REPORT_FIELDS = tuple(f.name for f in dataclasses.fields(Plan) if not f.name.startswith("_"))


def _same_field(x, y) -> bool:
    """x == y, or both NaN (0/0 in a report: compared with ==, a plan would be unequal to its twin)."""
    return x == y or (isinstance(x, float) and isinstance(y, float) and math.isnan(x) and math.isnan(y))


def _plan(made_by: str, *args, **limits) -> Plan:
    """The Plan that _remat.<made_by>(*args, **limits) makes, its parameters kept (as the planner took them) for
    its equality: a chain's report leaves out the chain's steps, which make its actions. `limits` (a planner's
    work limit) bound the time spent planning, not the plan, and are left out of them."""
    schedule, report = getattr(_remat, made_by)(*args, **limits)
    fields = dict(report)
    fields["levels"] = tuple(LevelCost(**l) for l in fields["levels"])
    if "levels_used" in fields:
        fields["levels_used"] = tuple(fields["levels_used"])
    parameters = (made_by, *(tuple(a) if isinstance(a, list) else a for a in args))
    return Plan(_schedule=schedule, _parameters=parameters, **fields)


def revolve(steps: int, slots: int, *, online: bool = False, step_cost: float = 1.0,
            reverse_cost: float = 0.0) -> Plan:
    """The binomial (Revolve) schedule: the fewest forward steps for `steps` steps with `slots` snapshot
    slots (x_0's included). online=True: the online schedule, as it unfolds for a loop that learns only at
    x_{T-1} that it has T steps (`remat plan --online`).
    step_cost, reverse_cost: what a forward step and an adjoint step cost (the tool's --step-cost,
    --reverse-cost): predicted_cost = step_cost x forward_steps + reverse_cost x reverse_steps; the plan does
    not depend on them.

        >>> remat.revolve(10, 3).forward_steps
        15
    """
    return _plan("revolve", count(steps, "steps"), count(slots, "slots"), flag(online, "online"),
                 *_costs(step_cost, reverse_cost))


def taped_revolve(steps: int, units: int, tape_units: int, *, step_cost: float = 1.0,
                  reverse_cost: float = 0.0, rerun_units: int = 0, work_limit: Optional[int] = None) -> Plan:
    """remat::taped_revolve (docs/tapes.md; `remat plan --schedule taped --slots UNITS --tape-units U
    [--rerun-units W]`): the fewest forward evaluations for `steps` steps within `units` units of memory (one
    unit a state's snapshot, x_0's included), where a step may also be advanced keeping its tape
    (`Advance(k, k+1, taped=True)`, `tape_units` units, its input included), so that its reverse needs no
    re-run. `evaluations` counts the advances and the re-run of each untaped reverse (`steps` at best);
    `predicted_cost` is step_cost x evaluations + reverse_cost x steps. `rerun_units` (0 to tape_units): what a
    reverse from a state holds while it re-runs its step, its input included (PyTorch: the re-run's graph, a
    tape); 0 leaves it out, as remat.revolve does; `peak_units` then counts it too. `work_limit`: the planning
    work past which it is refused (remat.ArgumentError saying so), None for remat's default
    (remat._remat.taped_revolve_work_limit, under 1 s); the plan does not depend on it.

        >>> remat.taped_revolve(10, 30, 3).evaluations      # every step but the last taped: no re-run
        10
        >>> remat.taped_revolve(10, 29, 3).evaluations, remat.taped_revolve(10, 29, 3, rerun_units=3).evaluations
        (10, 11)
    """
    limits = {} if work_limit is None else {"work_limit": count(work_limit, "work_limit", unsigned=True)}
    return _plan("taped_revolve", count(steps, "steps"), count(units, "units"), count(tape_units, "tape_units"),
                 *_costs(step_cost, reverse_cost),
                 count(rerun_units, "rerun_units"), **limits)


def uniform(steps: int, *, every: Optional[int] = None, slots: Optional[int] = None, step_cost: float = 1.0,
            reverse_cost: float = 0.0) -> Plan:
    """A snapshot every `every` steps (as CVODES and PyTorch do), or the best spacing that fits `slots`.
    step_cost, reverse_cost: what a forward step and an adjoint step cost (the tool's --step-cost,
    --reverse-cost): predicted_cost = step_cost x forward_steps + reverse_cost x reverse_steps; the plan does
    not depend on them.

        >>> remat.uniform(100, slots=20).every
        6
    """
    return _plan("uniform", count(steps, "steps"), optional_count(every, "every"), optional_count(slots, "slots"),
                 *_costs(step_cost, reverse_cost))


def store_all(steps: int, *, slots: Optional[int] = None, step_cost: float = 1.0, reverse_cost: float = 0.0) -> Plan:
    """Every state kept: T-1 forward steps, and T-1 snapshots held at the peak (`peak_slots`; x_{T-1} is
    reversed where it stands). `slots`, the slots given, defaults to T-1 and is at least 1, as every plan's
    (the tool's --slots): so 1 for T = 1, whose plan stores nothing. More may be given; fewer than T-1 is
    refused.
    step_cost, reverse_cost: what a forward step and an adjoint step cost (the tool's --step-cost,
    --reverse-cost): predicted_cost = step_cost x forward_steps + reverse_cost x reverse_steps; the plan does
    not depend on them.

        >>> [(p.steps, p.forward_steps, p.peak_slots, p.slots) for p in map(remat.store_all, (1, 2, 5))]
        [(1, 0, 0, 1), (2, 1, 1, 1), (5, 4, 4, 4)]
    """
    return _plan("store_all", count(steps, "steps"), optional_count(slots, "slots"),
                 *_costs(step_cost, reverse_cost))


def plan_for_budget(steps: int, budget_bytes: Union[int, str], state_bytes: Union[int, str], *,
                    step_cost: float = 1.0, reverse_cost: float = 0.0) -> Plan:
    """Revolve for `steps` steps with as many slots as `budget_bytes` holds snapshots of `state_bytes` (sizes as
    ints or as "2GiB"); remat.CapacityError when it holds none.
    step_cost, reverse_cost: what a forward step and an adjoint step cost (the tool's --step-cost,
    --reverse-cost): predicted_cost = step_cost x forward_steps + reverse_cost x reverse_steps; the plan does
    not depend on them.

        >>> remat.plan_for_budget(100000, "2GiB", "64MiB").slots
        32
    """
    return _plan("plan_for_budget", count(steps, "steps"), parse_bytes(budget_bytes, "budget_bytes"),
                 parse_bytes(state_bytes, "state_bytes"), *_costs(step_cost, reverse_cost))


def _costs(step_cost, reverse_cost) -> Tuple[float, float]:
    return real(step_cost, "step_cost"), real(reverse_cost, "reverse_cost")


_LEVEL_FIELDS = ("name", "slots", "write_cost", "read_cost")


def _level_tuple(level) -> tuple:
    if isinstance(level, Level):
        name, slots, write, read = level.name, level.slots, level.write_cost, level.read_cost
    elif isinstance(level, Mapping):
        unknown = set(level) - set(_LEVEL_FIELDS)
        if unknown or "name" not in level:
            raise ArgumentError(f"level {dict(level)!r}: " + (f"unknown field {sorted(map(str, unknown))[0]!r}"
                                                              if unknown else "no name") +
                                " (expected name, slots, write_cost, read_cost)")
        name, slots = level["name"], level.get("slots")
        write, read = level.get("write_cost", 0.0), level.get("read_cost", 0.0)
    elif isinstance(level, (tuple, list)) and 2 <= len(level) <= 4:
        name, slots, *costs = level
        write, read = (list(costs) + [0.0, 0.0])[:2]
    else:
        raise ArgumentError(f"level {level!r}: expected a remat.Level, a dict or a tuple (name, slots[, write_cost, "
                            "read_cost])")
    if not isinstance(name, str):
        raise ArgumentError(f"level name: expected a str, got {type(name).__name__} {name!r}")
    if isinstance(slots, float) and math.isinf(slots) and slots > 0:
        slots = None
    return (name, optional_count(slots, f"level {name}: slots"), real(write, f"level {name}: write_cost"),
            real(read, f"level {name}: read_cost"))


def multilevel(steps: int, levels: Sequence[Union[Level, tuple, Mapping]], *, step_cost: float = 1.0,
               reverse_cost: float = 0.0, method: str = "auto") -> Plan:
    """The cheapest schedule for `steps` steps across storage levels (fastest first), each a remat.Level, a tuple
    (name, slots[, write_cost, read_cost]) or a dict with those keys; slots None or math.inf: unlimited.
    method: "auto", "exact" or "near-optimal" (`remat plan --level ... --method`). step_cost, reverse_cost: a
    forward and an adjoint step's costs, in the units of the levels' write and read costs (--step-cost,
    --reverse-cost); predicted_cost prices the forward and reverse steps and each level's stores and restores.

        >>> remat.multilevel(1000, [("host", 4), ("disk", None, 5, 5)]).structure
        'exact'
    """
    if not isinstance(method, str):
        raise ArgumentError(f"method: expected auto, exact or near-optimal, got {method!r}")
    # a str is iterable too: its letters were read as levels ("level 'h': ..."), and None was a TypeError
    if isinstance(levels, (str, bytes, Mapping)) or not isinstance(levels, collections.abc.Iterable):
        raise ArgumentError(f"levels: expected a sequence of levels (remat.Level, tuples or dicts), got "
                            f"{type(levels).__name__} {levels!r}")
    return _plan("multilevel", count(steps, "steps"), [_level_tuple(l) for l in levels],
                 *_costs(step_cost, reverse_cost), method)


_STEP_FIELDS = ("forward", "adjoint", "state_bytes", "adjoint_bytes", "tape_bytes")


_MOST_BYTES = 2**64 - 1


def _chain_step(k: int, step) -> tuple:
    """Step k of a chain as (forward, adjoint, state_bytes, adjoint_bytes, tape_bytes), each field checked and
    named."""
    if type(step) is tuple and len(step) == 4:
        # The common form (plan_bench's) taken at once: the checks below build four messages a step, a third of
        # planning a 24-block stack. What this passes the general path passes alike.
        forward, adjoint, state_bytes, adjoint_bytes = step
        if (type(forward) in (float, int) and type(adjoint) in (float, int) and type(state_bytes) is int
                and type(adjoint_bytes) is int and 0 <= state_bytes <= _MOST_BYTES
                and 0 <= adjoint_bytes <= _MOST_BYTES):
            return (float(forward), float(adjoint), state_bytes, adjoint_bytes, 0)
    elif type(step) is tuple and len(step) == 5:  # auto_checkpoint's, with its tapes: the same at once
        forward, adjoint, state_bytes, adjoint_bytes, tape_bytes = step
        if (type(forward) in (float, int) and type(adjoint) in (float, int) and type(state_bytes) is int
                and type(adjoint_bytes) is int and type(tape_bytes) is int and 0 <= state_bytes <= _MOST_BYTES
                and 0 <= adjoint_bytes <= _MOST_BYTES and 0 <= tape_bytes <= _MOST_BYTES):
            return (float(forward), float(adjoint), state_bytes, adjoint_bytes, tape_bytes)
    if isinstance(step, ChainStep):
        fields = (step.forward, step.adjoint, step.state_bytes, step.adjoint_bytes, step.tape_bytes)
    elif isinstance(step, Mapping):
        unknown = set(step) - set(_STEP_FIELDS)
        missing = [f for f in _STEP_FIELDS[:3] if f not in step]
        if unknown or missing:
            raise ArgumentError(f"chain step {k}: " + (f"unknown field {sorted(map(str, unknown))[0]!r}" if unknown
                                                       else f"no {missing[0]}") +
                                " (expected forward, adjoint, state_bytes[, adjoint_bytes, tape_bytes])")
        fields = (step["forward"], step["adjoint"], step["state_bytes"], step.get("adjoint_bytes", 0),
                  step.get("tape_bytes", 0))
    elif isinstance(step, (tuple, list)) and len(step) in (3, 4, 5):
        fields = tuple(step) + (0,) * (5 - len(step))
    else:
        raise ArgumentError(f"chain step {k}: expected a remat.ChainStep, a dict or a tuple (forward, adjoint, "
                            f"state_bytes[, adjoint_bytes[, tape_bytes]]), got {step!r}")
    forward, adjoint, state_bytes, adjoint_bytes, tape_bytes = fields
    return (real(forward, f"chain step {k}: forward"), real(adjoint, f"chain step {k}: adjoint"),
            parse_bytes(state_bytes, f"chain step {k}: state_bytes"),
            parse_bytes(adjoint_bytes, f"chain step {k}: adjoint_bytes"),
            parse_bytes(tape_bytes, f"chain step {k}: tape_bytes"))


def _chain_args(costs, final_state_bytes, what: str):
    """The steps and the final state's bytes of remat.chain's and remat.chain_taped's `costs`."""
    if isinstance(costs, Mapping):
        unknown = set(costs) - {"steps", "final_state_bytes"}
        if unknown or "steps" not in costs:
            raise ArgumentError(f"{what}: " + (f"unknown field {sorted(map(str, unknown))[0]!r}" if unknown
                                               else "no steps") + " (expected steps and final_state_bytes)")
        if final_state_bytes is None:
            final_state_bytes = costs.get("final_state_bytes")
        costs = costs["steps"]
    if isinstance(costs, (str, bytes)) or not isinstance(costs, collections.abc.Iterable):
        raise ArgumentError(f"{what}: expected a sequence of chain steps, got {type(costs).__name__}")
    steps = [_chain_step(k, s) for k, s in enumerate(costs)]
    if final_state_bytes is None:
        final_state_bytes = steps[-1][2] if steps else 0
    return steps, parse_bytes(final_state_bytes, "final_state_bytes")


def chain(costs: Union[Sequence, Mapping], budget: Union[int, str], *, final_state_bytes: Optional[int] = None,
          granularity: Union[int, str] = 0, horizon: int = 0, greedy_fallback: bool = True) -> Plan:
    """The time-optimal schedule for a chain whose steps differ, within `budget` bytes (snapshots, the
    current state and a running adjoint's extra). `costs`: a sequence of remat.ChainStep, dicts or tuples
    (forward, adjoint, state_bytes[, adjoint_bytes[, tape_bytes]]; tape_bytes is ignored here), or the JSON form
    `remat plan --chain FILE` reads ({"steps": [...], "final_state_bytes": N}). final_state_bytes defaults to
    the last step's state_bytes. granularity: bytes per memory unit of the dynamic program (0: chosen, as the
    tool's default; `--granularity`); horizon: most steps of a left part of the outermost checkpoints (0: T
    where the table fits, else the most that fit; `--horizon`); greedy_fallback: where the plan is not exact,
    take the greedy memory/compute ranking's plan when it costs less (False: `--no-greedy-fallback`).

        >>> remat.chain([(1, 2, 1024)] * 10, budget=5 * 1024).forward_steps
        14
    """
    steps, final = _chain_args(costs, final_state_bytes, "chain")
    return _plan("chain", steps, final, parse_bytes(budget, "budget"), parse_bytes(granularity, "granularity"),
                 count(horizon, "horizon"), flag(greedy_fallback, "greedy_fallback"))


def parse_action(line: str) -> Action:
    """The action of one line of `remat plan --format actions`; remat.ArgumentError when it is not one.

        >>> remat.parse_action("advance 3 4 tape")
        Advance(start=3, stop=4, taped=True)
    """
    if not isinstance(line, str):
        raise ArgumentError(f"parse_action: expected a str, got {type(line).__name__} {line!r}")
    return _remat.parse_action(line)



def _same_report(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """Reports equal field by field, a NaN equal to a NaN (overhead of a chain of zero costs is 0/0)."""
    return a.keys() == b.keys() and all(_same_field(a[k], b[k]) for k in a)


class TapedChainPlan:
    """A plan of remat.chain_taped: `actions` (a list; `advance k k+1 tape` keeps step k's tape for its reverse)
    and the fields of `remat plan --chain FILE --taped-advances --format json` for the same plan: schedule
    ("chain"), steps, budget_bytes, peak_bytes, predicted_cost, store_all_cost and store_all_bytes (a store-all
    run's cost and peak, states only), all_taped_bytes (the all-taped plan's peak: more memory never helps),
    overhead (predicted_cost / store_all_cost), least_budget_bytes, granularity_bytes, exact (the optimum within
    the budget), method, forward_steps (taped ones included), reverse_steps, stores, restores, peak_slots,
    repetition (the most times one step is advanced) and taped_steps. Two are equal where their reports and
    actions are; unhashable, as its list of actions may change."""

    schedule: str
    steps: int
    budget_bytes: int
    peak_bytes: int
    predicted_cost: float
    store_all_cost: float
    store_all_bytes: int
    all_taped_bytes: int
    overhead: float
    least_budget_bytes: int
    granularity_bytes: int
    exact: bool
    method: str
    forward_steps: int
    reverse_steps: int
    stores: int
    restores: int
    peak_slots: int
    repetition: int
    taped_steps: int

    def __init__(self, actions: Iterable["_remat.Action"], report: Mapping[str, Any]) -> None:
        self.actions = list(actions)
        for key, value in report.items():
            setattr(self, key, value)
        self._report = dict(report)

    def __iter__(self) -> Iterator["_remat.Action"]:
        """The actions, in order."""
        return iter(self.actions)

    def as_dict(self) -> Dict[str, Any]:
        """The report's fields (steps, budget_bytes, predicted_cost, ...) as a dict."""
        return dict(self._report)

    def __eq__(self, other: object) -> bool:
        """The same report and the same actions (a list: the plan holds them all)."""
        if not isinstance(other, TapedChainPlan):
            return NotImplemented
        return _same_report(self._report, other._report) and self.actions == other.actions

    # its `actions` is a list the caller may change: equal by value, so not hashable (as a list is not)
    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return (f"TapedChainPlan(steps={self.steps}, predicted_cost={self.predicted_cost}, "
                f"peak_bytes={self.peak_bytes}, taped_steps={self.taped_steps})")


def chain_taped(costs: Union[Sequence, Mapping], budget: Union[int, str], *, final_state_bytes: Optional[int] = None,
                granularity: Union[int, str] = 0) -> TapedChainPlan:
    """remat.chain's problem where a step may also be advanced keeping its tape (tape_bytes, else its input and
    adjoint_bytes, held until its reverse, which then costs max(0, adjoint - forward): no re-run); the exact optimum
    (docs/heterogeneous.md, "Taped advances"). With budget >= the plan's all_taped_bytes, no step runs twice.
    costs and final_state_bytes as remat.chain's; granularity: bytes per memory unit (0: chosen, as the tool's
    default; `remat plan --chain FILE --taped-advances --granularity`).

        >>> remat.chain_taped([(1, 2, 1024)] * 10, budget=20 * 1024).taped_steps
        9
    """
    steps, final = _chain_args(costs, final_state_bytes, "chain_taped")
    actions, report = _remat.chain_taped(steps, final, parse_bytes(budget, "budget"),
                                         parse_bytes(granularity, "granularity"))
    return TapedChainPlan(actions, report)
