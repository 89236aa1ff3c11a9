"""remat.torch.checkpoint_loop on a 1000-step GRUCell loop against hand-written torch.utils.checkpoint
segments at equal memory (recomputed steps, time, peak activation bytes), and its per-step overhead over a
bare unrolled loop.

    python bench/python/loop_bench.py [--quick] [--format json] [--rounds N] [--segments 32,100]

The loop: h_{k+1} = GRUCell(32, 64)(inputs[k], h_k), batch 16, T = 1000 (one step's forward and backward
1.5 to 4 ms of wall time on this project's loaded machine); loss h_T.sum(). --quick: T = 60, batch 4.

Hand-written segments: the loop cut into segments of L steps, each run under torch.utils.checkpoint except the last
(as checkpoint_sequential does), h_0 requiring grad (reentrant checkpoint needs an input that does). Memory is
measured by saved-tensor hooks (what autograd saves, each storage once: the segments' inputs and the graphs of the
segment being re-run and of the last one). checkpoint_loop then gets the most slots whose memory, slots x the
state's bytes plus one step's saved bytes (the graph it holds at a time), is at most the segments' measured peak
(with taped=True, slots = the segments' measured peak over the state's bytes, snapshots and tapes in one memory as
the segments' own tapes are: remat.taped_revolve's plan, a tape one step's saved bytes over the state's, rounded up;
a tape fewer while its measured peak is higher); its reported peak is the hooks' peak plus its plan's peak_slots x
the state's bytes (its snapshots are the state's tensors, not saved by autograd). Recomputed steps: step calls
counted, minus T.

Overhead: plain autograd over the unrolled loop (t_plain, T steps) and the loop's forward alone under no_grad
(t_fwd, T steps) are timed in the same rounds; a checkpoint_loop that runs R recomputed steps would ideally take
t_plain + R t_fwd / T; its overhead is its median time over that. "per-step autograd.grad" is the floor of any
design that back-propagates a step at a time: the unrolled loop with each step's graph cut at its input and one
torch.autograd.grad per step in the backward, nothing recomputed (its parameter sums in another order). Every time
is the median over interleaved rounds (each starting one configuration further on) of the wall time, and the least
over the rounds of the process's CPU time (on a loaded VM the steadiest figure: the other processes' turns do not
count in it); the overhead is given in both.
Goal (issue #38): <= 5% at ~1 ms steps; fewer recomputed steps and less time than the segments at equal memory."""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_common as bc  # noqa: E402


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
    import torch.utils.checkpoint

    import remat.torch
    from remat.torch._saved import SavedBytes

    bc.set_threads(args)
    torch.manual_seed(0)
    cell = torch.nn.GRUCell(32, 64)
    inputs = torch.randn(T, batch, 32)
    h0 = torch.zeros(batch, 64).requires_grad_()
    params = list(cell.parameters())
    calls = [0]

    def step(k, h):
        calls[0] += 1
        return cell(inputs[k], h)

    def plain():
        h = h0
        for k in range(T):
            h = step(k, h)
        return h

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
            plain()

    def segments(L):
        def run(start, stop):
            def f(h):
                for k in range(start, stop):
                    h = step(k, h)
                return h
            return f

        def go():
            h = h0
            starts = list(range(0, T, L))
            for s in starts[:-1]:
                h = torch.utils.checkpoint.checkpoint(run(s, s + L), h, preserve_rng_state=False)
            return run(starts[-1], T)(h)
        return go

    def looped(slots, taped=False):
        return lambda: remat.torch.checkpoint_loop(step, h0, steps=T, slots=slots, preserve_rng_state=False,
                                                   taped=taped)

    def iteration(run):
        for q in (*params, h0):
            q.grad = None
        run().sum().backward()

    excluded = params + [inputs]

    def measure(run):
        counter = SavedBytes(excluded)
        calls[0] = 0
        with counter.hooks():
            iteration(run)
        return counter.peak, calls[0] - T

    state_bytes = h0.numel() * h0.element_size()
    one_step, _ = measure(lambda: step(0, h0))  # h_0 among the saved: a tape, as checkpoint_loop counts it
    tape_units = -(-one_step // state_bytes)
    bc.progress(f"loop_bench: T={T}, state {state_bytes} bytes, one step saves {one_step} bytes")
    runs = {"plain autograd": plain, "forward only (no_grad)": forward_only,
            "per-step autograd.grad, no recomputation": per_step}
    facts = {"plain autograd": measure(plain), "per-step autograd.grad, no recomputation": measure(per_step)}
    pairs = []
    for L in lengths:
        seg_peak, seg_re = measure(segments(L))
        slots = max(2, (seg_peak - one_step) // state_bytes)
        slots = min(slots, T)
        plan = remat.revolve(T, slots)
        hooked, loop_re = measure(looped(slots))
        loop_peak = hooked + plan.peak_slots * state_bytes
        # The segments' own memory, their tapes counted; less by a tape where the measured peak is higher (the
        # graph of a step re-run for its reverse is not in the plan's units).
        units = min(seg_peak // state_bytes, T * tape_units)
        while True:
            taped_plan = remat.taped_revolve(T, units, tape_units)
            hooked, taped_re = measure(looped(units, True))
            taped_peak = hooked + taped_plan.peak_slots * state_bytes
            if taped_peak <= seg_peak or units <= tape_units + 1:
                break
            units -= tape_units
        runs[f"segments L={L}"] = segments(L)
        runs[f"checkpoint_loop slots={slots}"] = looped(slots)
        runs[f"checkpoint_loop slots={units} taped"] = looped(units, True)
        facts[f"segments L={L}"] = (seg_peak, seg_re)
        facts[f"checkpoint_loop slots={slots}"] = (loop_peak, loop_re)
        facts[f"checkpoint_loop slots={units} taped"] = (taped_peak, taped_re)
        pairs.append((L, slots, units))
    cpu = {}
    times = bc.interleaved({k: (lambda r=r: iteration(r)) if k != "forward only (no_grad)" else r
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
    for L, slots, units in pairs:
        s = f"segments L={L}"
        for taped in (False, True):
            c = f"checkpoint_loop slots={units} taped" if taped else f"checkpoint_loop slots={slots}"
            compare.append({"L": L, "slots": units if taped else slots, "taped": taped, "segments peak": facts[s][0],
                            "loop peak": facts[c][0], "segments recomputed": facts[s][1],
                            "loop recomputed": facts[c][1], "segments s/iter": med[s], "loop s/iter": med[c],
                            "loop faster by": 1 - med[c] / med[s],
                            "loop faster by (least cpu)": 1 - cpu_least[c] / cpu_least[s]})
    bc.emit(args, [
        {"title": f"GRUCell loop, T = {T}, batch {batch}: every configuration ({rounds} rounds, medians)",
         "columns": ["method", "peak bytes", "recomputed steps", "s/iter", "ideal s/iter", "overhead",
                     "least cpu s/iter", "overhead (least cpu)"], "rows": rows,
         "notes": [f"one step forward+backward: {t_plain / T * 1e3:.3f} ms (plain / T; CPU time "
                   f"{cpu_least['plain autograd'] / T * 1e3:.3f} ms, least); forward alone {t_fwd / T * 1e3:.3f} "
                   f"ms; state {state_bytes} bytes, one step's saved bytes {one_step} (a tape: {tape_units} slots)"]},
        {"title": "checkpoint_loop against hand-written segments at equal memory",
         "columns": ["L", "slots", "taped", "segments peak", "loop peak", "segments recomputed", "loop recomputed",
                     "segments s/iter", "loop s/iter", "loop faster by", "loop faster by (least cpu)"],
         "rows": compare}],
        {"T": T, "batch": batch, "rounds": rounds, "tape_units": tape_units, "times": times, "cpu_times": cpu})


if __name__ == "__main__":
    main()
