"""remat.torch.checkpoint_loop on a 1000-step GRUCell loop against hand-written torch.utils.checkpoint
segments at equal memory (recomputed steps, time, peak activation bytes), and its per-step overhead over a
bare unrolled loop.

    python bench/python/loop_bench.py [--quick] [--format json] [--rounds N] [--segments 32,100]

The loop: h_{k+1} = GRUCell(32, 64)(inputs[k], h_k), batch 16, T = 1000 (one step's forward and backward
1.5 to 4 ms of wall time on this project's loaded machine); loss h_T.sum(). --quick: T = 60, batch 4.

Hand-written segments: the loop cut into segments of L steps, each run under torch.utils.checkpoint except the last
(as checkpoint_sequential does), h_0 requiring grad (reentrant checkpoint needs an input that does). Memory is
measured by saved-tensor hooks (what autograd saves, each storage once: the segments' inputs and the graphs of the
segment being re-run and of the last one) and, for checkpoint_loop, its snapshots in the same count (a snapshot
that a graph also saves counted once: counted_snapshots). checkpoint_loop then gets that memory: without tapes,
the most slots whose snapshots plus one step's saved bytes (the graph it holds at a time) fit the segments'
measured peak; with taped=True, budget= the segments' measured peak itself (remat.taped_revolve's plan for what
the loop holds: snapshots, tapes, and the graph of a step re-run for its reverse; a tape is one step's saved
bytes over the state's, rounded up). Recomputed steps: step calls counted, minus T.

Overhead: plain autograd over the unrolled loop (t_plain, T steps) and the loop's forward alone under no_grad
(t_fwd, T steps) are timed in the same rounds; a checkpoint_loop that runs R recomputed steps would ideally take
t_plain + R t_fwd / T; its overhead is its median time over that. "per-step autograd.grad" is the floor of any
design that back-propagates a step at a time: the unrolled loop with each step's graph cut at its input and one
torch.autograd.grad per step in the backward, nothing recomputed (its parameter sums in another order). Every time
is the median over interleaved rounds (each starting one configuration further on) of the wall time, and the least
over the rounds of the process's CPU time (on a loaded VM the steadiest figure: the other processes' turns do not
count in it); the overhead is given in both. Against the segments also the median over the rounds of the two's
ratio within a round ("paired", wall and CPU: run one after the other, a loaded machine's slow spells fall on both).
Goal (issue #38): <= 5% at ~1 ms steps; fewer recomputed steps and less time than the segments at equal memory."""

from __future__ import annotations

import contextlib
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_common as bc  # noqa: E402


class GruLoop:
    """The benchmark's loop: h_{k+1} = GRUCell(features, hidden)(inputs[k], h_k) from h_0 = 0 (requiring grad),
    its step calls counted in `calls[0]`."""

    def __init__(self, T, batch, features=32, hidden=64, seed=0):
        import torch

        torch.manual_seed(seed)
        self.T = T
        self.cell = torch.nn.GRUCell(features, hidden)
        self.inputs = torch.randn(T, batch, features)
        self.h0 = torch.zeros(batch, hidden).requires_grad_()
        self.params = list(self.cell.parameters())
        self.calls = [0]
        cell, inputs, calls = self.cell, self.inputs, self.calls

        def step(k, h):
            calls[0] += 1
            return cell(inputs[k], h)

        self.step = step

    def plain(self):
        h = self.h0
        for k in range(self.T):
            h = self.step(k, h)
        return h

    def segments(self, L):
        """The loop cut into segments of L steps, each under torch.utils.checkpoint but the last."""
        import torch.utils.checkpoint

        def run(start, stop):
            def f(h):
                for k in range(start, stop):
                    h = self.step(k, h)
                return h
            return f

        def go():
            h = self.h0
            starts = list(range(0, self.T, L))
            for s in starts[:-1]:
                h = torch.utils.checkpoint.checkpoint(run(s, s + L), h, preserve_rng_state=False)
            return run(starts[-1], self.T)(h)
        return go

    def looped(self, taped=False, **memory):
        import remat.torch

        return lambda: remat.torch.checkpoint_loop(self.step, self.h0, steps=self.T, preserve_rng_state=False,
                                                   taped=taped, **memory)

    def iteration(self, run):
        for q in (*self.params, self.h0):
            q.grad = None
        run().sum().backward()

    def measure(self, run):
        """(peak bytes, recomputed steps) of one forward and backward of run(): what the graphs save and the
        snapshots checkpoint_loop holds, each storage once (parameters and the inputs left out), after one
        unmeasured iteration (checkpoint_loop measures a step's tape on its first call, under its own hooks)."""
        from remat.torch._saved import SavedBytes

        self.iteration(run)
        counter = SavedBytes(self.params + [self.inputs])
        self.calls[0] = 0
        with counter.hooks(), counted_snapshots(counter):
            self.iteration(run)
        return counter.peak, self.calls[0] - self.T


class _CountedSlots:
    """checkpoint_loop's snapshot placement, each stored state's storages held in `counter` until freed."""

    def __init__(self, slots, counter):
        self.slots, self.counter, self.keys = slots, counter, {}

    def store(self, slot, step, parts, rng):
        self.slots.store(slot, step, parts, rng)
        self.keys[slot] = [self.counter.hold(p) for p in parts]

    def restore(self, slot, step):
        return self.slots.restore(slot, step)

    def free(self, slot):
        self.slots.free(slot)
        for key in self.keys.pop(slot, []):
            self.counter.release(key)

    def close(self):
        self.slots.close()
        for slot in list(self.keys):
            for key in self.keys.pop(slot):
                self.counter.release(key)


@contextlib.contextmanager
def counted_snapshots(counter):
    """checkpoint_loop's snapshots counted in `counter` (a SavedBytes) beside what the graphs save: a storage
    both hold counted once, as the memory it is."""
    from remat.torch import _loop

    make = _loop.make_slots
    _loop.make_slots = lambda *args, **kwargs: _CountedSlots(make(*args, **kwargs), counter)
    try:
        yield
    finally:
        _loop.make_slots = make


def main():
    p = bc.parser(bc.summary(__doc__), "T = 1000, batch 16, segments 32 and 100, 5 rounds",
                  "T = 60, batch 4, segments 6, 20, 2 rounds")
    p.add_argument("--segments", default=None, help="comma-separated segment lengths L of the hand-written form")
    args = p.parse_args()
    rounds = bc.rounds_of(args, 5, 2)
    T, batch = (60, 4) if args.quick else (1000, 16)
    try:
        lengths = [int(s) for s in (args.segments or ("6,20" if args.quick else "32,100")).split(",")]
    except ValueError:
        bc.fail("--segments: expected comma-separated integers", usage=True)
    if any(not 1 <= L <= T for L in lengths):
        bc.fail(f"--segments: every length must be in 1..{T}", usage=True)
    import torch

    bc.set_threads(args)
    loop = GruLoop(T, batch)
    h0, params, step = loop.h0, loop.params, loop.step

    class PerStep(torch.autograd.Function):
        """The floor of any design that back-propagates one step at a time (as checkpoint_loop does): every
        step's graph kept from a detached input, then one torch.autograd.grad per step, nothing recomputed."""

        @staticmethod
        def forward(ctx, h, *ps):
            graphs = []
            with torch.enable_grad():
                for k in range(T):
                    leaf = h.detach().requires_grad_()
                    h = step(k, leaf)
                    graphs.append((leaf, h))
            ctx.graphs = graphs
            return h.detach()

        @staticmethod
        def backward(ctx, grad):
            sums = [None] * len(params)
            for leaf, out in reversed(ctx.graphs):
                got = torch.autograd.grad([out], [leaf, *params], [grad])
                grad = got[0]
                sums = [g if s is None else s + g for s, g in zip(sums, got[1:])]
            ctx.graphs = None
            return (grad, *sums)

    def per_step():
        return PerStep.apply(h0, *params)

    def forward_only():
        with torch.no_grad():
            loop.plain()

    state_bytes = h0.numel() * h0.element_size()
    one_step, _ = loop.measure(lambda: step(0, h0))  # h_0 among the saved: a tape, as checkpoint_loop counts it
    tape_units = -(-one_step // state_bytes)
    bc.progress(f"loop_bench: T={T}, state {state_bytes} bytes, one step saves {one_step} bytes")
    runs = {"plain autograd": loop.plain, "forward only (no_grad)": forward_only,
            "per-step autograd.grad, no recomputation": per_step}
    facts = {"plain autograd": loop.measure(loop.plain),
             "per-step autograd.grad, no recomputation": loop.measure(per_step)}
    pairs = []
    for L in lengths:
        seg_peak, seg_re = loop.measure(loop.segments(L))
        slots = min(max(2, (seg_peak - one_step) // state_bytes), T)
        runs[f"segments L={L}"] = loop.segments(L)
        runs[f"checkpoint_loop slots={slots}"] = loop.looped(slots=slots)
        runs[f"checkpoint_loop budget={seg_peak} taped"] = loop.looped(True, budget=seg_peak)
        facts[f"segments L={L}"] = (seg_peak, seg_re)
        facts[f"checkpoint_loop slots={slots}"] = loop.measure(runs[f"checkpoint_loop slots={slots}"])
        facts[f"checkpoint_loop budget={seg_peak} taped"] = loop.measure(runs[f"checkpoint_loop budget={seg_peak} taped"])
        pairs.append((L, slots, seg_peak))
    cpu = {}
    times = bc.interleaved({k: (lambda r=r: loop.iteration(r)) if k != "forward only (no_grad)" else r
                            for k, r in runs.items()}, rounds, name="loop_bench: ", cpu=cpu)
    med = {k: bc.median(v) for k, v in times.items()}
    cpu_least = {k: min(v) for k, v in cpu.items()}
    t_plain, t_fwd = med["plain autograd"], med["forward only (no_grad)"]
    rows = []
    for k in runs:
        peak, re = facts.get(k, (None, None))
        judged = k.startswith(("checkpoint_loop", "per-step"))
        # The ideal: plain autograd's time plus a no-grad forward per recomputed step, in either clock.
        ideal = t_plain + (re or 0) * t_fwd / T if re is not None else None
        cpu_ideal = (cpu_least["plain autograd"] + (re or 0) * cpu_least["forward only (no_grad)"] / T
                     if re is not None else None)
        rows.append({"method": k, "peak bytes": peak, "recomputed steps": re, "s/iter": med[k],
                     "ideal s/iter": ideal if judged else None,
                     "overhead": (med[k] / ideal - 1) if judged else None,
                     "least cpu s/iter": cpu_least[k],
                     "overhead (least cpu)": (cpu_least[k] / cpu_ideal - 1) if judged else None})
    compare = []
    for L, slots, seg_peak in pairs:
        s = f"segments L={L}"
        for taped in (False, True):
            c = f"checkpoint_loop budget={seg_peak} taped" if taped else f"checkpoint_loop slots={slots}"
            compare.append({"L": L, "taped": taped, "slots": None if taped else slots,
                            "budget": seg_peak if taped else None, "segments peak": facts[s][0],
                            "loop peak": facts[c][0], "segments recomputed": facts[s][1],
                            "loop recomputed": facts[c][1], "segments s/iter": med[s], "loop s/iter": med[c],
                            "loop faster by": 1 - med[c] / med[s],
                            "loop faster by (least cpu)": 1 - cpu_least[c] / cpu_least[s],
                            "loop faster by (paired wall)": bc.faster_paired(times[c], times[s]),
                            "loop faster by (paired cpu)": bc.faster_paired(cpu[c], cpu[s])})
    bc.emit(args, [
        {"title": f"GRUCell loop, T = {T}, batch {batch}: every configuration ({rounds} rounds, medians)",
         "columns": ["method", "peak bytes", "recomputed steps", "s/iter", "ideal s/iter", "overhead",
                     "least cpu s/iter", "overhead (least cpu)"], "rows": rows,
         "notes": [f"one step forward+backward: {t_plain / T * 1e3:.3f} ms (plain / T; CPU time "
                   f"{cpu_least['plain autograd'] / T * 1e3:.3f} ms, least); forward alone {t_fwd / T * 1e3:.3f} "
                   f"ms; state {state_bytes} bytes, one step's saved bytes {one_step} (a tape: {tape_units} slots)"]},
        {"title": "checkpoint_loop against hand-written segments at equal memory",
         "columns": ["L", "taped", "slots", "budget", "segments peak", "loop peak", "segments recomputed",
                     "loop recomputed", "segments s/iter", "loop s/iter", "loop faster by",
                     "loop faster by (least cpu)", "loop faster by (paired wall)", "loop faster by (paired cpu)"],
         "rows": compare}],
        {"T": T, "batch": batch, "rounds": rounds, "state_bytes": state_bytes, "tape_units": tape_units,
         "times": times, "cpu_times": cpu})


if __name__ == "__main__":
    main()
