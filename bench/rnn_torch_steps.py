#!/usr/bin/python3
"""PyTorch's plain BPTT on remat's values, step by step: the counterpart of bench/rnn_backward_steps.

Reads the parameters, inputs and targets that `rnn_backward_steps --dump DIR` wrote (raw float32 in remat's
layout: per layer W_ih, W_hh column-major so that ours(i, j) == torch's weight[i][j], b_ih, b_hh; then W_out,
b_out; inputs step after step, input x batch column-major), copies them into torch.nn.LSTMCell (or GRUCell)
and a linear read-out, unrolls the cell over the sequence with an MSE loss after the last step, and times
each step's backward by gradient hooks on each step's state (h, c): from the moment its output's gradient is
ready to the moment its input's is. One thread (torch.set_num_threads(1)); OPENBLAS_CORETYPE as for remat.
Both sides then compute the same values, so their subnormal windows coincide step for step (docs/rnn.md).

    OPENBLAS_CORETYPE=SkylakeX OPENBLAS_NUM_THREADS=1 build/bench/rnn_backward_steps --dump /tmp/v
    OPENBLAS_CORETYPE=SkylakeX OPENBLAS_NUM_THREADS=1 bench/rnn_torch_steps.py --dump /tmp/v [--flush-denormals]
"""
import argparse
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rnn_vs_torch import import_torch  # noqa: E402


def fail(message, status):
    print(f"rnn_torch_steps: {message}", file=sys.stderr)
    sys.exit(status)


def main():
    p = argparse.ArgumentParser(description="PyTorch's backward steps on remat's values (bench/rnn_backward_steps)")
    p.add_argument("--dump", required=True, help="the folder rnn_backward_steps --dump wrote")
    p.add_argument("--cell", default="lstm", choices=["gru", "lstm"])
    p.add_argument("--steps", type=int, default=1000)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--hidden", type=int, default=256)
    p.add_argument("--input", type=int, default=32)
    p.add_argument("--flush-denormals", action="store_true", help="torch.set_flush_denormal(True)")
    p.add_argument("--format", default="text", choices=["text", "json"])
    a = p.parse_args()
    try:
        import numpy as np  # before subnormals are flushed, which numpy's import warns of
    except ImportError:
        fail("numpy is not importable by this Python (Debian: apt-get install python3-numpy)", 77)
    torch = import_torch(a.flush_denormals, fail)
    T, B, H, IN = a.steps, a.batch, a.hidden, a.input
    G = (4 if a.cell == "lstm" else 3) * H

    def read(name, count):
        path = os.path.join(a.dump, name)
        try:
            v = np.fromfile(path, dtype=np.float32)
        except OSError as e:
            fail(f"cannot read {path}: {e.strerror}", 1)
        if v.size != count:
            fail(f"{path}: {v.size} values (expected {count}: are the sizes those of the dump?)", 2)
        return v

    params = read("parameters.f32", G * IN + G * H + 2 * G + H + 1)
    offset = 0

    def take(n):
        nonlocal offset
        v = params[offset:offset + n]
        offset += n
        return v

    # Column-major G x n in remat's memory is n x G row-major: transposed, it is torch's weight.
    w_ih = take(G * IN).reshape(IN, G).T.copy()
    w_hh = take(G * H).reshape(H, G).T.copy()
    b_ih, b_hh = take(G), take(G)
    w_out, b_out = take(H).reshape(1, H).copy(), take(1)
    x = torch.from_numpy(read("inputs.f32", T * IN * B).reshape(T, B, IN))
    target = torch.from_numpy(read("targets.f32", B).reshape(B, 1))
    cell = (torch.nn.LSTMCell if a.cell == "lstm" else torch.nn.GRUCell)(IN, H)
    readout = torch.nn.Linear(H, 1)
    with torch.no_grad():
        for parameter, value in ((cell.weight_ih, w_ih), (cell.weight_hh, w_hh), (cell.bias_ih, b_ih),
                                 (cell.bias_hh, b_hh), (readout.weight, w_out), (readout.bias, b_out)):
            parameter.copy_(torch.from_numpy(value))

    ready = {}  # (state index, part) -> (CPU time when its gradient was ready, the gradient)

    def watch(tensor, k, part):
        tensor.register_hook(lambda g: ready.__setitem__((k, part), (time.thread_time(), g)))

    def run(timed):
        for q in list(cell.parameters()) + list(readout.parameters()):
            q.grad = None
        ready.clear()
        h = torch.zeros(B, H, requires_grad=True)
        c = torch.zeros(B, H, requires_grad=True)
        if timed:
            watch(h, 0, "h")
            if a.cell == "lstm":
                watch(c, 0, "c")
        for k in range(T):
            if a.cell == "lstm":
                h, c = cell(x[k], (h, c))
            else:
                h = cell(x[k], h)
            if timed:
                watch(h, k + 1, "h")
                if a.cell == "lstm":
                    watch(c, k + 1, "c")
        loss = torch.nn.functional.mse_loss(readout(h), target)
        start = time.thread_time()
        loss.backward()
        return time.thread_time() - start

    run(False)  # allocations and first-call costs outside the timed run
    total = run(True)
    parts = ["h", "c"] if a.cell == "lstm" else ["h"]
    tiny = np.finfo(np.float32).tiny

    def done(k):
        return max(ready[(k, part)][0] for part in parts)

    def subnormals(k, part):
        if (k, part) not in ready:
            return 0
        g = ready[(k, part)][1].numpy()
        return int(((g != 0) & (np.abs(g) < tiny)).sum())

    records = [{"step": k, "cpu_seconds": done(k) - done(k + 1), "subnormal_dh": subnormals(k, "h"),
                "subnormal_dc": subnormals(k, "c")} for k in range(T - 1, -1, -1)]
    times = [r["cpu_seconds"] for r in records]
    median = statistics.median(times)
    window = [t for t in times if t > 5 * median]
    report = {"side": "torch", "cell": a.cell, "steps": T, "flush_denormals": a.flush_denormals,
              "backward_seconds": total, "median_step_seconds": median, "window_steps": len(window),
              "window_seconds": sum(window), "per_step": records}
    if a.format == "json":
        json.dump(report, sys.stdout, indent=1)
        print()
        return 0
    print(f"torch {a.cell}, T = {T}: backward sweep {total:.3f} s of CPU; median step {median * 1e3:.3f} ms; "
          f"{len(window)} steps over 5x it (the subnormal window) took {sum(window):.3f} s")
    print(f"{'step':>8} {'CPU ms':>10} {'subnormal dh':>14} {'subnormal dc':>14}")
    for r in records:
        if r["cpu_seconds"] > 5 * median or r["step"] % 50 == 0:
            print(f"{r['step']:8d} {r['cpu_seconds'] * 1e3:10.3f} {r['subnormal_dh']:14d} {r['subnormal_dc']:14d}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
