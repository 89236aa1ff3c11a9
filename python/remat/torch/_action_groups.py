"""A plan's actions grouped for running, shared by checkpoint_loop (_loop.py) and auto_checkpoint (_auto.py):
taped advances of consecutive steps as one run (one stretch built in one loop, _stretch.Stretches.advance_run),
reverses of steps k, k-1, ... as one group (where a stretch's backward reverses several at once, the rest are
skipped together). A dispatch per action cost a few microseconds a step, more than a small block's run."""

from __future__ import annotations


class TapedRun:
    """`advance k k+1 tape` for k = start..stop-1, as the plan gives them one after the other: run as one
    stretch in one loop (the per-step dispatch of 1000 steps cost a few ms an iteration)."""

    __slots__ = ("start", "stop")
    kind = "taped run"

    def __init__(self, start: int, stop: int):
        self.start, self.stop = start, stop


class Reverses:
    """`reverse k` for k = top down to bottom, as the plan gives them one after the other: where a stretch's
    backward reverses several of them at once, the rest are skipped together (a dispatch each was 0.5 us)."""

    __slots__ = ("top", "bottom")
    kind = "reverses"

    def __init__(self, top: int, bottom: int):
        self.top, self.bottom = top, bottom


def grouped(actions):
    """The plan's actions, each maximal sequence of taped advances of consecutive steps as one TapedRun and
    of reverses of steps k, k-1, ... as one Reverses (the order is the plan's)."""
    run = rev = None  # [start, stop] of the taped advances, [top, bottom] of the reverses being grouped
    for a in actions:
        kind = a.kind
        if kind == "advance" and a.taped:
            if rev is not None:
                yield Reverses(*rev)
                rev = None
            if run is not None and a.start == run[1]:
                run[1] = a.stop
                continue
            if run is not None:
                yield TapedRun(*run)
            run = [a.start, a.stop]
            continue
        if run is not None:
            yield TapedRun(*run)
            run = None
        if kind == "reverse":
            if rev is not None and a.step == rev[1] - 1:
                rev[1] -= 1
                continue
            if rev is not None:
                yield Reverses(*rev)
            rev = [a.step, a.step]
            continue
        if rev is not None:
            yield Reverses(*rev)
            rev = None
        yield a
    if run is not None:
        yield TapedRun(*run)
    if rev is not None:
        yield Reverses(*rev)
