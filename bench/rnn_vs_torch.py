#!/usr/bin/python3
"""rnn_vs_torch — remat's recurrent cells against PyTorch itself, side by side, in one interleaved run.

Both sides run a one-layer GRU (or LSTM) over T steps, batch B, H units, I input features, float32, a
linear read-out and a mean-squared-error loss after the last step, on the CPU, single-threaded, on the
same OpenBLAS (Debian's python3-torch links the system's libblas, OpenBLAS; OPENBLAS_NUM_THREADS=1 for
both, torch.set_num_threads(1)). Rounds alternate which side runs first; each round runs, as child
processes:

  remat: bench/rnn_bptt --repeats 1 --format json (its own untimed first round allocates, then one timed
         round: plain BPTT, an untaped forward sweep, and the checkpointed rows), the rows' measured
         memory the growth of the process's peak RSS while each first ran;
  torch: this script with --torch-child: torch.nn.GRUCell/LSTMCell unrolled over the sequence: a
         no_grad forward sweep (the forward step), plain BPTT (autograd keeps every step's activations),
         torch.utils.checkpoint.checkpoint_sequential at each segment count (each step one module of the
         sequence; the LSTM's (h, c) one tensor), each once untimed, then timed.

With --flush-denormals both sides flush subnormal floats to zero (torch.set_flush_denormal(True); remat's
sequence_model::set_flush_denormals, x86's FTZ and DAZ): the adjoint of a long sequence decays through the
subnormal range, where every operation takes a microcode assist, and the backward steps of both then run
several times slower than their GEMMs' arithmetic needs. Without it both keep subnormals (their default).

Torch's memory is measured in a child per configuration (--torch-memory-child), with glibc's malloc
returning every block of 64 KiB or more to the system when freed (MALLOC_MMAP_THRESHOLD_), so that the
growth of the peak RSS during the configuration's second run is that run's own and not pages its first
run left in the heap.
Reported: medians over the rounds of each row's seconds and of its ratio to the same round's torch
checkpoint_sequential (or plain BPTT), of the process's CPU time (steadier on a shared machine) and of
wall time; the forward steps by wall time (a sweep of T steps).

    OPENBLAS_NUM_THREADS=1 bench/rnn_vs_torch.py --remat-bench build/bench/rnn_bptt            # GRU, T = 1000
    bench/rnn_vs_torch.py --remat-bench build/bench/rnn_bptt --cell lstm --rounds 5 --format json
    bench/rnn_vs_torch.py --remat-bench build/bench/rnn_bptt --flush-denormals    # both sides flush subnormals
"""
import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import time


def fail(message, status):
    print(f"rnn_vs_torch: {message}", file=sys.stderr)
    sys.exit(status)


def import_torch(flush_denormals, fail):
    """PyTorch on one thread, flushing subnormals where asked, as both RNN benches compare it with remat (this
    one and bench/rnn_torch_steps.py); `fail(message, status)` ends the program (77: PyTorch missing)."""
    try:
        import torch
        import torch.utils.checkpoint
    except ImportError:
        fail("PyTorch is not importable by this Python (Debian: apt-get install python3-torch)", 77)
    torch.set_num_threads(1)
    if flush_denormals and not torch.set_flush_denormal(True):
        fail("--flush-denormals: this processor cannot flush subnormals (torch.set_flush_denormal)", 2)
    return torch


def rss_bytes(key):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024
    return 0


def reset_peak_rss():
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")


class torch_model:
    """The cell, read-out, data and the runs of one configuration."""

    def __init__(self, a):
        torch = import_torch(a.flush_denormals, fail)
        torch.manual_seed(1)
        self.torch = torch
        self.a = a
        cell = torch.nn.GRUCell if a.cell == "gru" else torch.nn.LSTMCell
        self.cell = cell(a.input, a.hidden)
        self.readout = torch.nn.Linear(a.hidden, 1)
        self.x = torch.rand(a.steps, a.batch, a.input) * 2 - 1
        self.target = torch.rand(a.batch, 1) * 2 - 1
        self.state_width = a.hidden if a.cell == "gru" else 2 * a.hidden
        self.functions = self.sequence_of_steps()

    def step(self, k, s):
        if self.a.cell == "gru":
            return self.cell(self.x[k], s)
        h, c = self.cell(self.x[k], (s[:, : self.a.hidden], s[:, self.a.hidden :]))
        return self.torch.cat((h, c), 1)

    def loss(self, s):
        return self.torch.nn.functional.mse_loss(self.readout(s[:, : self.a.hidden]), self.target)

    def zero_grad(self):
        for p in list(self.cell.parameters()) + list(self.readout.parameters()):
            p.grad = None

    def forward_sweep(self):
        with self.torch.no_grad():
            s = self.torch.zeros(self.a.batch, self.state_width)
            for k in range(self.a.steps):
                s = self.step(k, s)
        return s

    def plain(self):
        self.zero_grad()
        s = self.torch.zeros(self.a.batch, self.state_width)
        for k in range(self.a.steps):
            s = self.step(k, s)
        self.loss(s).backward()

    def sequence_of_steps(self):
        """The steps as modules of one torch.nn.Sequential, as checkpoint_sequential wants them."""
        torch = self.torch
        model = self

        class step_module(torch.nn.Module):
            def __init__(self, k):
                super().__init__()
                self.k = k

            def forward(self, s):
                return model.step(self.k, s)

        return torch.nn.Sequential(*[step_module(k) for k in range(self.a.steps)])

    def sequential(self, segments):
        self.zero_grad()
        # (The reentrant checkpoint passes gradients only through inputs that require them.)
        s = self.torch.zeros(self.a.batch, self.state_width, requires_grad=True)
        s = self.torch.utils.checkpoint.checkpoint_sequential(self.functions, segments, s)
        self.loss(s).backward()

    def run(self, name):
        if name == "forward":
            self.forward_sweep()
        elif name == "plain":
            self.plain()
        else:
            self.sequential(int(name))


def torch_configs(a):
    return ["forward", "plain"] + [str(s) for s in a.segment_counts]


def torch_child(a):
    """One round of torch's runs: each configuration once untimed, then once timed; JSON on stdout."""
    m = torch_model(a)
    out = {}
    for name in torch_configs(a):
        m.run(name)
        t0, c0 = time.perf_counter(), time.process_time()
        m.run(name)
        out[name] = time.perf_counter() - t0
        out[name + " cpu"] = time.process_time() - c0
    json.dump(out, sys.stdout)


def torch_memory_child(a):
    """The growth of peak RSS during the second run of one configuration (--config) in a fresh process:
    the first sets up torch's lazy state (autograd's engine, the checkpoint machinery). (In one process
    for all, a run reuses pages an earlier, larger run left resident and shows no growth at all.)"""
    m = torch_model(a)
    m.run(a.config)
    reset_peak_rss()
    before = rss_bytes("VmRSS")
    m.run(a.config)
    json.dump({"torch": m.torch.__version__, "rss_growth_bytes": max(0, rss_bytes("VmHWM") - before)}, sys.stdout)


def child_env(extra=None):
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    env.update(extra or {})
    return env


def size_args(a):
    return ["--steps", str(a.steps), "--batch", str(a.batch), "--hidden", str(a.hidden), "--input", str(a.input),
            "--cell", a.cell] + (["--flush-denormals"] if a.flush_denormals else [])


def run_child(command, env):
    r = subprocess.run(command, capture_output=True, text=True, env=env)
    if r.returncode == 77:  # no PyTorch: the child said so
        fail(r.stderr.strip().splitlines()[-1].removeprefix("rnn_vs_torch: "), 77)
    if r.returncode != 0:
        fail(f"{' '.join(command[:2])} exited {r.returncode}: {r.stderr.strip().splitlines()[-1:]}", 1)
    return json.loads(r.stdout)


def run_torch(a):
    return run_child([sys.executable, __file__, "--torch-child"] + size_args(a) + segment_args(a), child_env())


def segment_args(a):
    return ["--segments", ",".join(str(s) for s in a.segment_counts)]


def run_remat(a):
    command = [a.remat_bench, "--repeats", "1", "--format", "json", "--rows", ",".join(a.remat_rows)] + size_args(a) + \
        segment_args(a)
    return run_child(command, child_env())


def main():
    p = argparse.ArgumentParser(description="remat's RNN against PyTorch's, side by side (CPU, one thread)")
    p.add_argument("--remat-bench", help="the bench/rnn_bptt binary")
    p.add_argument("--steps", type=int, default=1000)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--hidden", type=int, default=256)
    p.add_argument("--input", type=int, default=32)
    p.add_argument("--cell", default="gru", choices=["gru", "lstm"])
    p.add_argument("--rounds", type=int, default=3, help="interleaved rounds (medians reported)")
    p.add_argument("--segments", default="", help="checkpoint_sequential's segment counts (default: sqrt(T),100)")
    p.add_argument("--remat-rows", default="taped-equal,taped-fraction,binomial-fraction,taped-its-memory",
                   help="bench/rnn_bptt's rows to run")
    p.add_argument("--flush-denormals", action="store_true",
                   help="both sides flush subnormal floats to zero (default: both keep them)")
    p.add_argument("--format", default="text", choices=["text", "json"])
    p.add_argument("--torch-child", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--torch-memory-child", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--config", help=argparse.SUPPRESS)
    a = p.parse_args()
    if min(a.steps, a.batch, a.hidden, a.input, a.rounds) < 1:
        fail("steps, batch, hidden, input and rounds must be at least 1", 2)
    try:
        a.segment_counts = ([int(s) for s in a.segments.split(",")] if a.segments else
                            sorted({min(a.steps, math.ceil(math.sqrt(a.steps))), min(a.steps, 100)}))
    except ValueError:
        fail(f"segments '{a.segments}' (expected counts separated by commas)", 2)
    if any(s < 1 or s > a.steps for s in a.segment_counts):
        fail(f"segments '{a.segments}' (expected counts from 1 to T = {a.steps})", 2)
    a.remat_rows = [r for r in a.remat_rows.split(",") if r]
    if a.torch_child or a.torch_memory_child:
        (torch_child if a.torch_child else torch_memory_child)(a)
        return 0
    if not a.remat_bench or not os.access(a.remat_bench, os.X_OK):
        fail(f"--remat-bench '{a.remat_bench}' is not an executable (build the rnn_bptt target)", 2)
    # Torch's memory, in a child of its own (its first import also says whether torch is there at all).
    torch_memory = {}
    for name in torch_configs(a)[1:]:  # (the forward sweep keeps nothing)
        torch_memory.update(run_child([sys.executable, __file__, "--torch-memory-child", "--config", name] +
                                      size_args(a) + segment_args(a), child_env({"MALLOC_MMAP_THRESHOLD_": "65536"})))
        torch_memory[name] = torch_memory.pop("rss_growth_bytes")

    torch_rounds, remat_rounds = [], []
    for k in range(a.rounds):
        if k % 2 == 0:
            remat_rounds.append(run_remat(a))
            torch_rounds.append(run_torch(a))
        else:
            torch_rounds.append(run_torch(a))
            remat_rounds.append(run_remat(a))
        print(f"rnn_vs_torch: round {k + 1} of {a.rounds} done", file=sys.stderr)

    def remat_row(r, method):
        return next(x for x in r["rows"] if x["method"] == method)

    med = statistics.median
    rows = []
    seq_names = [f"torch checkpoint_sequential, {s} segments" for s in a.segment_counts]

    def torch_row(name, key, memory):
        times = [t[key] for t in torch_rounds]
        cpu = [t[key + " cpu"] for t in torch_rounds]
        rows.append({"side": "torch", "method": name, "seconds": med(times), "cpu_seconds": med(cpu),
                     "memory_bytes": memory, "per_round": times, "cpu_per_round": cpu})

    torch_row("torch forward step", "forward", None)
    rows[-1]["seconds"] = med(t["forward"] / a.steps for t in torch_rounds)
    rows[-1]["per_round"] = [t["forward"] / a.steps for t in torch_rounds]
    rows.append({"side": "remat", "method": "remat forward step",
                 "seconds": med(remat_row(r, "plain BPTT")["forward_step_seconds"] for r in remat_rounds),
                 "memory_bytes": None,
                 "per_round": [remat_row(r, "plain BPTT")["forward_step_seconds"] for r in remat_rounds]})
    torch_row("torch plain BPTT", "plain", torch_memory["plain"])
    for s, name in zip(a.segment_counts, seq_names):
        torch_row(name, str(s), torch_memory[str(s)])
    for method in [x["method"] for x in remat_rounds[0]["rows"]]:
        first = remat_row(remat_rounds[0], method)
        times = [remat_row(r, method)["seconds"] for r in remat_rounds]
        cpu = [remat_row(r, method)["cpu_seconds"] for r in remat_rounds]
        rows.append({"side": "remat", "method": "remat " + method, "seconds": med(times), "cpu_seconds": med(cpu),
                     "cpu_per_round": cpu,
                     "memory_bytes": first.get("rss_growth_bytes"), "model_bytes": first["memory_bytes"],
                     "step_evaluations": first["step_evaluations"], "bit_identical_to_plain":
                     all(remat_row(r, method)["bit_identical_to_plain"] for r in remat_rounds), "per_round": times})
    # Ratios within each round: remat's forward step to torch's, plain BPTT to plain BPTT, and every
    # row to each checkpoint_sequential.
    base = {"torch forward step": "remat forward step"}
    by_name = {r["method"]: r for r in rows}
    by_name["remat forward step"]["vs_torch_forward_step"] = med(
        x / y for x, y in zip(by_name["remat forward step"]["per_round"], by_name["torch forward step"]["per_round"]))
    for r in rows:
        if r["method"] in base or r["method"] in ("remat forward step", "torch forward step"):
            continue
        for clock, key in (("", "cpu_per_round"), ("wall_", "per_round")):
            r[clock + "vs_torch_plain"] = med(x / y for x, y in zip(r[key], by_name["torch plain BPTT"][key]))
            for s, name in zip(a.segment_counts, seq_names):
                r[f"{clock}vs_torch_sequential_{s}"] = med(x / y for x, y in zip(r[key], by_name[name][key]))
    report = {"cell": a.cell, "steps": a.steps, "batch": a.batch, "hidden": a.hidden, "input": a.input,
              "rounds": a.rounds, "segments": a.segment_counts, "flush_denormals": a.flush_denormals, "torch": torch_memory["torch"],
              "blas": remat_rounds[0]["blas"], "rows": rows}
    if a.format == "json":
        json.dump(report, sys.stdout, indent=1)
        print()
        return 0
    flushed = ", subnormals flushed on both sides" if a.flush_denormals else ""
    print(f"{a.cell.upper()}, T = {a.steps}, batch {a.batch}, hidden {a.hidden}, input {a.input}, float32{flushed}, one "
          f"thread, {report['blas']}, torch {report['torch']}; medians of {a.rounds} interleaved rounds")
    print("(forward steps: wall ms and remat/torch; the rest: CPU s, and CPU time over torch's plain BPTT and "
          "checkpoint_sequential, medians of per-round ratios)")
    head = "  ".join(f"vs seq {s:>3}" for s in a.segment_counts)
    print(f"{'method':<45} {'ms or s':>9} {'RSS MiB':>8}  {'vs torch':>8}  {head}")
    for r in rows:
        mem = "" if r["memory_bytes"] is None else f"{r['memory_bytes'] / 2**20:8.1f}"
        ratios = "  ".join(f"{r.get(f'vs_torch_sequential_{s}', float('nan')):10.3f}" for s in a.segment_counts)
        forward = "forward step" in r["method"]
        vs = r.get("vs_torch_forward_step", float("nan")) if forward else r.get("vs_torch_plain", float("nan"))
        value = r["seconds"] * 1e3 if forward else r["cpu_seconds"]
        print(f"{r['method']:<45} {value:9.3f} {mem:>8}  {vs:8.3f}  {ratios}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
