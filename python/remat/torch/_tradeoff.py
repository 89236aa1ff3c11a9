"""remat.torch.tradeoff: measured peak activation bytes against measured time per iteration for a stack of
blocks, over a range of budgets of remat.torch.auto_checkpoint, with plain autograd and
torch.utils.checkpoint.checkpoint_sequential at each segment count on the same axes; the data as an object
and the picture as SVG.

Every configuration is measured the same way: one untimed iteration (a forward and a backward of
loss(model(x))) counts the peak of the activation bytes (each storage once, as auto_checkpoint counts:
saved-tensor hooks for what autograd saves, plus the snapshots auto_checkpoint holds; parameters, buffers
and gradients left out) and the block forwards (forward pre-hooks); then `rounds` rounds each time one
iteration of every configuration in turn (interleaved, so that a loaded machine slows them alike; each round
starting one configuration further on), and the median is reported, of the wall time and of the process's
CPU time. The timed iterations run without the counting hooks (auto_checkpoint's own turned off
with its measure_memory attribute), as users run them.
"""

from __future__ import annotations

import contextlib
import math
import operator
import os
import statistics
import time
from dataclasses import asdict, dataclass, field
from typing import Callable, Dict, List, Optional, Sequence, Union
from xml.sax.saxutils import escape

import torch
import torch.utils.checkpoint

from .._args import bounded, flag
from .._bytes import Bytes, parse_bytes
from .._errors import ArgumentError, CapacityError
from ._auto import MAX_REPEATS, AutoCheckpoint, Blocks, _blocks_of
from ._profile import BlockProfile, left_as_they_were, profile_unrestored
from ._saved import SavedBytes


@dataclass(frozen=True)
class TradeoffPoint:
    """One measured configuration. `method`: "plain autograd", "checkpoint_sequential" (with `segments`) or
    "auto_checkpoint" (with `budget_bytes`, `plan_method`, `predicted_peak_bytes` and `predicted_cost`, the
    module's own: the seconds per iteration of the plan it ran, as Tradeoff.profiles prices it). `peak_bytes`:
    the measured peak of activation bytes; `seconds`: the median over the rounds of the time of one iteration
    (forward and backward), `times` every round's; `cpu_seconds` and `cpu_times` the same in the process's
    CPU time (which the other processes of a loaded machine do not add to); `recomputed_blocks`: block
    forwards per iteration beyond one per block, counted."""
    method: str
    peak_bytes: int
    seconds: float
    times: List[float]
    recomputed_blocks: int
    segments: Optional[int] = None
    budget_bytes: Optional[int] = None
    plan_method: Optional[str] = None
    predicted_peak_bytes: Optional[int] = None
    cpu_seconds: float = 0.0
    cpu_times: List[float] = field(default_factory=list)
    predicted_cost: Optional[float] = None

    @property
    def label(self) -> str:
        """The point's name in tables and the picture: "plain autograd", "checkpoint_sequential segments=S" or
        "auto_checkpoint budget=B"."""
        if self.segments is not None:
            return f"checkpoint_sequential segments={self.segments}"
        if self.budget_bytes is not None:
            return f"auto_checkpoint budget={self.budget_bytes}"
        return self.method


@dataclass
class Tradeoff:
    """The measured points of remat.torch.tradeoff. `plain`, `sequential` (by segment count) and `auto` (by
    budget) are the points of each method; `least_budget_bytes` the least budget auto_checkpoint plans
    within; `refused_budgets` budgets below it; `profiles` the blocks' profile every auto_checkpoint point was
    planned from (as an AutoCheckpoint's `profiles`). svg() draws them; as_dict() is the data as plain values
    (without the profile)."""
    plain: TradeoffPoint
    sequential: List[TradeoffPoint]
    auto: List[TradeoffPoint]
    least_budget_bytes: int
    rounds: int
    refused_budgets: List[int] = field(default_factory=list)
    profiles: List[BlockProfile] = field(default_factory=list)

    @property
    def points(self) -> List[TradeoffPoint]:
        """Every point: plain autograd's, then checkpoint_sequential's (by segment count), then auto_checkpoint's."""
        return [self.plain, *self.sequential, *self.auto]

    def as_dict(self) -> Dict:
        """The measurement as plain values (rounds, least_budget_bytes, refused_budgets, points with their
        labels), for json.dumps."""
        return {"rounds": self.rounds, "least_budget_bytes": self.least_budget_bytes,
                "refused_budgets": list(self.refused_budgets),
                "points": [dict(asdict(p), label=p.label) for p in self.points]}

    def auto_within(self, peak_bytes: Bytes) -> Optional[TradeoffPoint]:
        """The fastest auto_checkpoint point whose measured peak is at most `peak_bytes` (an int or a string such
        as "2MiB"; None if none)."""
        limit = parse_bytes(peak_bytes, "auto_within: peak_bytes")
        fits = [p for p in self.auto if p.peak_bytes <= limit]
        return min(fits, key=lambda p: p.seconds) if fits else None

    def svg(self, title: str = "remat.torch.tradeoff", width: int = 720, height: int = 440) -> str:
        """The picture as SVG text, `width` x `height` pixels under `title`: measured peak MiB (x) against
        seconds per iteration (y), plain autograd a black square, checkpoint_sequential red circles labelled
        with their segment counts, auto_checkpoint blue diamonds joined in order of peak."""
        if not isinstance(title, str):
            raise ArgumentError(f"svg: title must be a str, got {type(title).__name__}")
        # the plot keeps its margins and its legend (230 pixels wide, three lines) inside the picture
        for name, value, least in (("width", width, 320), ("height", height, 160)):
            if not bounded(value, least, 100_000):
                raise ArgumentError(f"svg: {name} must be an int of {least} to 100000 pixels, got {value!r}")
        return _svg(self, title, operator.index(width), operator.index(height))

    def save_svg(self, path: Union[str, os.PathLike], title: str = "remat.torch.tradeoff") -> None:
        """Writes svg(title) to the file `path` (a str or os.PathLike)."""
        if not isinstance(path, (str, os.PathLike)):
            raise ArgumentError(f"save_svg: path must be a str or os.PathLike, got {type(path).__name__}")
        text = self.svg(title)  # checked before the file is opened
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)


def _add_budgets_up_to_measured_peaks(configs, refused, make, measure, say) -> None:
    """A plan's peak can fall short of its budget (the peaks plans reach are few; the planner's unit rounds
    sizes up), so an auto_checkpoint point's measured peak can too. For each peak another method measured,
    more budgets: that of the largest plan
    measured within the peak, raised by what it left unused, and so on from each raised plan kept (up to 4
    times); a raised plan is kept where it is cheaper (as predicted) and its measured peak still within, so
    that auto_checkpoint is compared at equal measured memory rather than equal modelled memory."""
    tried = {c[1] for c in configs if c[0] == "auto_checkpoint"} | set(refused)
    for target in sorted({c[4] for c in configs if c[0] != "auto_checkpoint"}):
        within = [c for c in configs if c[0] == "auto_checkpoint" and c[4] <= target]
        if not within:
            continue
        best = max(within, key=lambda c: c[1])
        for _ in range(4):
            budget = best[1] + (target - best[4])
            if budget in tried:
                break
            tried.add(budget)
            module = make(budget)
            if module.predicted_cost >= best[3].predicted_cost:
                break
            say(f"tradeoff: measuring auto_checkpoint budget={budget} ({module.method}, up to the measured {target})")
            _, recomputed = measure(module, False)
            if module.measured_peak_bytes > target:
                break
            best = ["auto_checkpoint", budget, module, module, module.measured_peak_bytes, recomputed]
            configs.append(best)


def _counting_pre_hooks(blocks, counts: List[int]):
    def pre(module, inputs):
        counts[0] += 1
    return [b.register_forward_pre_hook(pre) for b in blocks]


def _iteration(run: Callable, x: torch.Tensor, params, loss) -> None:
    for p in params:
        p.grad = None
    if x.grad is not None:
        x.grad = None
    loss(run(x)).backward()


def _sync(x: torch.Tensor) -> None:
    if x.is_cuda:
        torch.cuda.synchronize(x.device)


def tradeoff(model: Blocks, sample: torch.Tensor, budgets: Optional[Sequence] = None, *,
             segments: Optional[Sequence[int]] = None, rounds: int = 3, repeats: int = 3, taped: bool = True,
             reach_parameters: bool = True, loss: Optional[Callable[[torch.Tensor], torch.Tensor]] = None,
             progress: Optional[Callable[[str], None]] = None) -> Tradeoff:
    """Measures peak activation bytes and time per iteration (forward and backward of loss(model(sample)),
    default loss: the output's sum; the sample is made to require grad, so that every method computes the
    input's gradient as well) for plain autograd, torch.utils.checkpoint.checkpoint_sequential at each
    segment count in `segments` (default 1 .. number of blocks) and remat.torch.auto_checkpoint at each
    budget in `budgets` (bytes, ints or strings such as "64MiB"; default: the peaks the other points
    measured, the least budget auto_checkpoint plans within, and for each of those peaks the largest
    measured-within budget raised by the bytes its plan left unused, again from each raised plan kept (up
    to 4 times), where that gives a cheaper plan whose measured peak is still within: a plan's peak can
    fall short of its budget). The blocks are profiled once (`repeats`, `taped`, `reach_parameters` as
    auto_checkpoint's) and every budget's module is made from that profile. `rounds`: timed iterations of
    each configuration, interleaved; `progress`: called with a line per step (e.g. print to stderr).

        t = remat.torch.tradeoff(model, x)
        t.save_svg("tradeoff.svg")          # peak bytes (x) against seconds per iteration (y)
        [(p.label, p.peak_bytes, p.seconds) for p in t.points]

    The model is left as it was: its parameters' .grad, its buffers (BatchNorm's running statistics, which
    every measured iteration updates) and the RNG states (dropout's draws).
    """
    blocks = _blocks_of(model, sample, repeats)
    with _left_as_it_was(blocks, sample):
        return _measure(blocks, sample, budgets, segments, rounds, repeats, taped, reach_parameters, loss, progress)


@contextlib.contextmanager
def _left_as_it_was(blocks: List[torch.nn.Module], sample: torch.Tensor):
    """The blocks' parameters' gradients set back when the block ends, and their buffers and the RNG states
    (left_as_they_were, inside which _measure profiles the blocks: profiling copies no buffer again)."""
    params = [p for b in blocks for p in b.parameters()]
    grads = [p.grad for p in params]
    try:
        with left_as_they_were(blocks, sample):
            yield
    finally:
        for p, g in zip(params, grads):
            p.grad = g


def _measure(blocks, sample, budgets, segments, rounds, repeats, taped, reach_parameters, loss,
             progress) -> Tradeoff:
    if not bounded(rounds, 1, MAX_REPEATS):  # numpy's ints too, as every count of remat's
        raise ArgumentError(f"remat.torch.tradeoff: rounds must be an int in 1..{MAX_REPEATS}, got "
                            f"{type(rounds).__name__} {rounds!r}")
    taped = flag(taped, "remat.torch.tradeoff: taped")
    reach_parameters = flag(reach_parameters, "remat.torch.tradeoff: reach_parameters")
    for name, given in (("loss", loss), ("progress", progress)):
        if given is not None and not callable(given):
            raise ArgumentError(f"remat.torch.tradeoff: {name} must be a function or None, got {type(given).__name__}")
    if isinstance(segments, (str, bytes)) or (segments is not None and not hasattr(segments, "__iter__")):
        raise ArgumentError(f"remat.torch.tradeoff: segments must be a list of ints, got {type(segments).__name__}")
    # Checked here, before the minutes of profiling and measuring that come before the budgets are used: a str
    # was read a character at a time ("1MiB": 'got "M"'), an int was a TypeError.
    if isinstance(budgets, (str, bytes)) or (budgets is not None and not hasattr(budgets, "__iter__")):
        raise ArgumentError(f"remat.torch.tradeoff: budgets must be a list of byte counts (ints or strings such as "
                            f"\"64MiB\"), got {type(budgets).__name__}")
    given_budgets = None if budgets is None else sorted({parse_bytes(b, "budget") for b in budgets})
    n = len(blocks)
    if segments is None:
        segments = range(1, n + 1)
    segments = list(segments)
    for s in segments:
        if not bounded(s, 1, n):  # numpy's ints too, as every count of remat's
            raise ArgumentError(f"remat.torch.tradeoff: a segment count must be an int in 1..{n}, got "
                                f"{type(s).__name__} {s!r}")
    # plain ints from here: TradeoffPoint.segments and as_dict() (JSON) hold them
    segments = sorted({operator.index(s) for s in segments})
    loss = loss if loss is not None else (lambda y: y.sum())
    say = progress if progress is not None else (lambda line: None)
    params = [p for b in blocks for p in b.parameters() if p.requires_grad]
    excluded = params + [t for b in blocks for t in b.buffers()]
    x = sample.detach().clone().requires_grad_(sample.is_floating_point() or sample.is_complex())
    sequential_model = torch.nn.Sequential(*blocks)

    say(f"tradeoff: profiling {n} blocks")
    profiles, plain_peak, _ = profile_unrestored(blocks, x, repeats)  # inside _left_as_it_was
    probe = AutoCheckpoint(blocks, x, plain_peak, profiles, plain_peak, True, taped)
    least = probe.least_budget_bytes

    def plain(v):
        for b in blocks:
            v = b(v)
        return v

    def sequential(s):
        return lambda v: torch.utils.checkpoint.checkpoint_sequential(sequential_model, s, v)

    def measure(run, hooked: bool):
        """(peak bytes, recomputed blocks) of one iteration; counting hooks on for `hooked` runs."""
        counts = [0]
        handles = _counting_pre_hooks(blocks, counts)
        counter = SavedBytes(excluded)
        try:
            if hooked:
                with counter.hooks():
                    _iteration(run, x, params, loss)
            else:
                _iteration(run, x, params, loss)
        finally:
            for h in handles:
                h.remove()
        return counter.peak, counts[0] - n

    configs = []  # (kind, setting, run, module or None, peak, recomputed)
    say("tradeoff: measuring plain autograd")
    configs.append(["plain autograd", None, plain, None, *measure(plain, True)])
    for s in segments:
        say(f"tradeoff: measuring checkpoint_sequential segments={s}")
        configs.append(["checkpoint_sequential", s, sequential(s), None, *measure(sequential(s), True)])
    if budgets is None:
        wanted = sorted({c[4] for c in configs} | {least})
    else:
        wanted = given_budgets
    refused = []
    for budget in wanted:
        try:
            module = AutoCheckpoint(blocks, x, budget, profiles, plain_peak, True, taped,
                                    reach_parameters=reach_parameters)
        except CapacityError:
            refused.append(budget)
            continue
        say(f"tradeoff: measuring auto_checkpoint budget={budget} ({module.method})")
        _, recomputed = measure(module, False)
        configs.append(["auto_checkpoint", budget, module, module, module.measured_peak_bytes, recomputed])
    if budgets is None:
        _add_budgets_up_to_measured_peaks(configs, refused, lambda b: AutoCheckpoint(
            blocks, x, b, profiles, plain_peak, True, taped, reach_parameters=reach_parameters), measure, say)

    measuring = {}
    for c in configs:  # timed as users run them past the first iteration: auto_checkpoint's counting hooks off
        if c[3] is not None:
            measuring[id(c[3])] = c[3].measure_memory
            c[3].measure_memory = False
    times: List[List[float]] = [[] for _ in configs]
    cpu_times: List[List[float]] = [[] for _ in configs]
    for r in range(rounds):
        say(f"tradeoff: round {r + 1} of {rounds} ({len(configs)} configurations)")
        # Each round starts one configuration further on, so that none is always timed right after another.
        for i in [(r + j) % len(configs) for j in range(len(configs))]:
            c = configs[i]
            _sync(x)
            cpu, start = time.process_time(), time.perf_counter()
            _iteration(c[2], x, params, loss)
            _sync(x)
            times[i].append(time.perf_counter() - start)
            cpu_times[i].append(time.process_time() - cpu)

    points = []
    for c, ts, cs in zip(configs, times, cpu_times):
        kind, setting, _, module, peak, recomputed = c
        points.append(TradeoffPoint(
            method=kind, peak_bytes=int(peak), seconds=statistics.median(ts), times=ts,
            cpu_seconds=statistics.median(cs), cpu_times=cs,
            recomputed_blocks=int(recomputed), segments=setting if kind == "checkpoint_sequential" else None,
            budget_bytes=setting if kind == "auto_checkpoint" else None,
            plan_method=module.method if module is not None else None,
            predicted_peak_bytes=module.predicted_peak_bytes if module is not None else None,
            predicted_cost=module.predicted_cost if module is not None else None))
    for c in configs:
        if c[3] is not None:
            c[3].measure_memory = measuring[id(c[3])]
            c[3].measure_next()  # the timed iterations counted the snapshots only
    return Tradeoff(plain=points[0], sequential=[p for p in points if p.method == "checkpoint_sequential"],
                    auto=[p for p in points if p.method == "auto_checkpoint"], least_budget_bytes=least,
                    rounds=rounds, refused_budgets=refused, profiles=profiles)


def _nice_ticks(low: float, high: float, count: int = 5) -> List[float]:
    span = max(high - low, 1e-12)
    raw = span / count
    magnitude = 10 ** math.floor(math.log10(raw))
    step = min((m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw), default=raw)
    first = math.ceil(low / step) * step
    ticks = []
    v = first
    while v <= high + 1e-9 * span:
        ticks.append(round(v, 12))
        v += step
    return ticks


def _svg(t: Tradeoff, title: str, width: int, height: int) -> str:
    """Peak MiB (x) against seconds per iteration (y): plain autograd a square, checkpoint_sequential's
    points circles labelled with their segment counts, auto_checkpoint's points diamonds joined by a line
    in order of budget."""
    left, right, top, bottom = 70, 20, 40, 55
    mib = 1024.0 * 1024.0
    xs = [p.peak_bytes / mib for p in t.points]
    ys = [p.seconds for p in t.points]
    x_low, x_high = 0.0, max(xs) * 1.05 or 1.0
    y_low, y_high = min(0.0, min(ys)), max(ys) * 1.08 or 1.0
    pw, ph = width - left - right, height - top - bottom

    def px(v):
        return left + (v - x_low) / (x_high - x_low) * pw

    def py(v):
        return top + ph - (v - y_low) / (y_high - y_low) * ph

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="11">',
           f'<rect width="{width}" height="{height}" fill="white"/>',
           f'<text x="{width / 2:.1f}" y="20" text-anchor="middle" font-size="14">{escape(title)}</text>',
           f'<line x1="{left}" y1="{top + ph}" x2="{left + pw}" y2="{top + ph}" stroke="black"/>',
           f'<line x1="{left}" y1="{top}" x2="{left}" y2="{top + ph}" stroke="black"/>']
    for v in _nice_ticks(x_low, x_high):
        out.append(f'<line x1="{px(v):.1f}" y1="{top + ph}" x2="{px(v):.1f}" y2="{top + ph + 4}" stroke="black"/>')
        out.append(f'<text x="{px(v):.1f}" y="{top + ph + 16}" text-anchor="middle">{v:g}</text>')
    for v in _nice_ticks(y_low, y_high):
        out.append(f'<line x1="{left - 4}" y1="{py(v):.1f}" x2="{left}" y2="{py(v):.1f}" stroke="black"/>')
        out.append(f'<text x="{left - 6}" y="{py(v) + 4:.1f}" text-anchor="end">{v:g}</text>')
    out.append(f'<text x="{left + pw / 2:.1f}" y="{height - 12}" text-anchor="middle">measured peak activation '
               'MiB</text>')
    out.append(f'<text x="16" y="{top + ph / 2:.1f}" text-anchor="middle" '
               f'transform="rotate(-90 16 {top + ph / 2:.1f})">seconds per iteration (median)</text>')
    auto = sorted(t.auto, key=lambda p: p.peak_bytes)
    if len(auto) > 1:
        path = " ".join(f"{px(p.peak_bytes / mib):.1f},{py(p.seconds):.1f}" for p in auto)
        out.append(f'<polyline points="{path}" fill="none" stroke="#1f77b4" stroke-width="1.5"/>')
    for p in auto:
        x, y = px(p.peak_bytes / mib), py(p.seconds)
        out.append(f'<path class="auto_checkpoint" d="M{x:.1f},{y - 5:.1f} L{x + 5:.1f},{y:.1f} L{x:.1f},'
                   f'{y + 5:.1f} L{x - 5:.1f},{y:.1f} Z" fill="#1f77b4"><title>{escape(p.label)}</title></path>')
    for p in t.sequential:
        x, y = px(p.peak_bytes / mib), py(p.seconds)
        out.append(f'<circle class="checkpoint_sequential" cx="{x:.1f}" cy="{y:.1f}" r="4" fill="none" '
                   f'stroke="#d62728" stroke-width="1.5"><title>{escape(p.label)}</title></circle>')
        out.append(f'<text x="{x + 5:.1f}" y="{y - 5:.1f}" fill="#d62728" font-size="9">{p.segments}</text>')
    x, y = px(t.plain.peak_bytes / mib), py(t.plain.seconds)
    out.append(f'<rect class="plain" x="{x - 4:.1f}" y="{y - 4:.1f}" width="8" height="8" fill="black">'
               f'<title>plain autograd</title></rect>')
    legend = [("black", "plain autograd"), ("#d62728", "checkpoint_sequential (segments)"),
              ("#1f77b4", "remat.torch.auto_checkpoint (budgets)")]
    for i, (colour, name) in enumerate(legend):
        ly = top + 8 + 16 * i
        out.append(f'<rect x="{left + pw - 230}" y="{ly - 8}" width="9" height="9" fill="{colour}"/>')
        out.append(f'<text x="{left + pw - 216}" y="{ly}">{escape(name)}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"
