"""The programs in bench/python at their --quick sizes, so that they cannot rot: each runs in this process
(torch imported once), prints JSON, and what it reports is checked against independent counts where one
exists. Timings are not checked (CI machines are loaded); the full sizes are documented in docs/python.md."""

import importlib
import json
import re
import shlex
import sys

import pytest

from conftest import ROOT

torch = pytest.importorskip("torch")
import remat.torch  # noqa: E402
sys.path.insert(0, str(ROOT / "bench" / "python"))


def run_bench(name, capsys, monkeypatch, *args):
    module = importlib.import_module(name)
    # --malloc default: settling glibc's allocator would last for the rest of this process's tests
    # (test_settled_malloc_keeps_tensors_on_the_heap checks settling, in interpreters of its own)
    monkeypatch.setattr(sys, "argv", [name + ".py", "--quick", "--format", "json", "--rounds", "1", "--malloc",
                                      "default", *args])
    capsys.readouterr()
    module.main()
    out = capsys.readouterr()
    assert out.err.strip()  # progress goes to stderr
    return json.loads(out.out)


def table(data, prefix):
    found = [t for t in data["tables"] if t["title"].startswith(prefix)]
    assert found, f"no table titled {prefix!r}"
    return found[0]["rows"]


def test_stack_bench(capsys, monkeypatch):
    data = run_bench("stack_bench", capsys, monkeypatch)
    assert set(data["tradeoffs"]) == {"transformer", "hetero", "resnet", "hvit"}
    assert data["reach_parameters"] is False  # the default: as checkpoint_sequential's reentrant checkpoint
    for name in ("transformer", "hetero", "resnet", "hvit"):
        points = data["tradeoffs"][name]["points"]
        n = max(p["segments"] for p in points if p["segments"] is not None)
        assert {p["segments"] for p in points if p["method"] == "checkpoint_sequential"} == set(range(1, n + 1))
        for p in points:
            assert p["peak_bytes"] > 0 and p["seconds"] > 0
            if p["method"] == "auto_checkpoint":
                assert p["peak_bytes"] <= p["predicted_peak_bytes"] <= p["budget_bytes"]
        assert len(table(data, f"{name} stack: every")) == len(points)
        by_label = {p["label"]: p for p in points}
        for r in table(data, f"{name} stack: auto_checkpoint at equal"):
            # the segments' schedule as the chain model prices it: what they measure on the transformer
            # blocks, and on resnet's, which end in a ReLU that saves the output the next block saves as its
            # input (one storage, in one tape: tape_bytes; docs/python.md, "The resnet stack"); a checkpointed
            # segment's input, which torch.utils.checkpoint holds while it re-runs the segment, is not counted
            # where the segment's first block does not save it (the model frees the snapshot there: the
            # block's tape would hold it)
            if name in ("transformer", "resnet"):
                assert r["sequential peak (model)"] == r["sequential peak"]
            assert r["sequential peak (model)"] <= r["sequential peak"]
            if r["auto budget"] is None:
                continue
            a = by_label[f"auto_checkpoint budget={r['auto budget']}"]
            s = by_label[f"checkpoint_sequential segments={r['segments']}"]
            # one round: the paired ratio is that round's
            assert r["auto faster by (paired wall)"] == pytest.approx(1 - a["times"][0] / s["times"][0])
            # the plan at a budget that holds the segments' schedule (as the model prices its peak) is the
            # model's cheapest there: never dearer than that schedule as the same profile prices both
            assert r["auto budget"] >= r["sequential peak (model)"]
            assert r["auto faster by (profile)"] >= -1e-9
            if r["segments"] == 1:  # both are plain autograd
                assert r["auto faster by (profile)"] == pytest.approx(0, abs=1e-9)
        # auto_checkpoint's runtime given the segments' own schedule: at every count past 1, the same gradients
        rows = table(data, f"{name} stack: auto_checkpoint's runtime on checkpoint_sequential's own schedule")
        assert [r["segments"] for r in rows] == list(range(2, n + 1))
        assert all(r["gradients bit-equal"] is True for r in rows)


def test_stack_bench_prices_the_plan_each_auto_checkpoint_point_ran():
    """"auto faster by (profile)" prices the plan the tradeoff's module ran: the module's own predicted cost,
    on the profile it was planned from, against the segments' schedule priced on that same profile. It
    re-planned at the budget on a second profile instead, taking plain autograd's plan where the budget held
    plain's measured peak where the module decides on the profiled one: at a budget between the two it
    priced a plan the module did not run."""
    import stack_bench

    model, x = stack_bench.hetero(True, torch.device("cpu"))
    t = remat.torch.tradeoff(model, x, rounds=1, repeats=1)
    rows, _ = stack_bench.goals_of("hetero", t)
    paired = [r for r in rows if r["auto budget"] is not None]
    assert paired
    for r in paired:
        a = next(p for p in t.auto if p.budget_bytes == r["auto budget"])
        _, sequential_cost = stack_bench.segments_priced(t.profiles, r["segments"])
        assert r["auto faster by (profile)"] == pytest.approx(1 - a.predicted_cost / sequential_cost)


def test_plan_bench(capsys, monkeypatch):
    try:
        data = run_bench("plan_bench", capsys, monkeypatch)
    except SystemExit as e:  # rockmate missing: bench/rotor_plan.py exits naming scripts/install-python.sh
        pytest.skip(f"rockmate's rotor is not installed: {e}")
    rows = table(data, "planning")
    assert {r["chain"] for r in rows} == {"transformer", "hetero", "resnet", "hetero x12", "hetero x12 distinct"}
    for r in rows:
        assert r["remat s"] > 0 and r["rotor s"] > 0
        if r["rotor cost"] is not None:  # rotor's model is the more cautious one: never a cheaper optimum
            assert r["remat cost"] <= r["rotor cost"] + 1e-9


def test_loop_bench(capsys, monkeypatch):
    import remat

    data = run_bench("loop_bench", capsys, monkeypatch, "--segments", "7,20")
    T = data["T"]
    rows = {r["method"]: r for r in table(data, "GRUCell loop")}
    assert rows["plain autograd"]["recomputed steps"] == 0
    for L in (7, 20):  # every segment but the last re-run once
        assert rows[f"segments L={L}"]["recomputed steps"] == list(range(0, T, L))[-1]
    for r in table(data, "checkpoint_loop against"):
        if r["taped"]:  # the plan's evaluations: advances (taped ones with grad) and a re-run per untaped reverse
            u = data["tape_units"]  # budget= prices the re-run's graph too (rerun_units: a tape)
            plan = remat.taped_revolve(T, r["budget"] // data["state_bytes"], u, rerun_units=u)
            assert r["loop recomputed"] == plan.evaluations - T
            assert r["loop peak"] <= r["segments peak"] == r["budget"]  # at equal or lower memory
            assert r["loop recomputed"] <= r["segments recomputed"]  # the segments' schedule is one such plan
        else:  # the plan's advances run without grad (the forward sweep included), then every step with grad
            assert r["loop recomputed"] == remat.revolve(T, r["slots"]).forward_steps


def test_ode_bench(capsys, monkeypatch):
    pytest.importorskip("torchdiffeq")
    data = run_bench("ode_bench", capsys, monkeypatch)
    rows = {r["method"].split(" slots=")[0]: r for r in table(data, "spiral neural ODE")}
    assert rows["checkpoint_loop"]["bit-equal"]  # the exact discrete gradient
    assert rows["torchdiffeq odeint"]["gradient error"] < 1e-5  # the same discrete map
    assert 0 < rows["torchdiffeq odeint_adjoint"]["gradient error"] < 1e-2  # the continuous adjoint
    assert rows["checkpoint_loop"]["peak bytes"] < rows["store every state (plain autograd)"]["peak bytes"]


def test_tape_bench(capsys, monkeypatch):
    """Both tapes' plans within their prediction and the budget; the block tapes' prediction is what the resnet
    blocks measure (each ends in a ReLU whose output the next block saves as its input: one storage)."""
    data = run_bench("tape_bench", capsys, monkeypatch)
    rows = table(data, "resnet stack")
    assert len(rows) >= 3
    for r in rows:
        for name in ("default tape", "block tapes"):
            assert r[f"{name} measured"] <= r[f"{name} predicted"] <= r["budget"]
        assert r["block tapes measured"] == r["block tapes predicted"]
    assert any(r["default tape predicted"] > r["default tape measured"] for r in rows)


def test_threads_option_sets_openblas_pool_too():
    """--threads sets OpenBLAS's own pool as well as PyTorch's (torch.set_num_threads leaves it at a thread
    per core, and the benches' CPU times then counted two threads' work)."""
    import argparse
    import ctypes
    import os

    import bench_common

    try:
        lib = ctypes.CDLL("libopenblas.so.0", mode=os.RTLD_NOLOAD | os.RTLD_LAZY)
    except OSError:
        pytest.skip("this PyTorch has no OpenBLAS loaded")
    threads, pool = torch.get_num_threads(), lib.openblas_get_num_threads()
    try:
        for n in (2, 1):
            bench_common.set_threads(argparse.Namespace(threads=n))
            assert lib.openblas_get_num_threads() == n and torch.get_num_threads() == n
    finally:
        torch.set_num_threads(threads)
        bench_common.set_openblas_threads(pool)


_MMAPPED_BYTES_OF_A_NEW_TENSOR = """
import ctypes, sys
import torch
sys.path.insert(0, sys.argv[2])
import bench_common
class MallInfo2(ctypes.Structure):
    _fields_ = [(n, ctypes.c_size_t) for n in ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks",
                                               "fsmblks", "uordblks", "fordblks", "keepcost")]
libc = ctypes.CDLL("libc.so.6")
libc.mallinfo2.restype = MallInfo2
if sys.argv[1] == "settled":
    assert bench_common.settle_malloc()
before = libc.mallinfo2().hblkhd
t = torch.ones(5 << 20)  # 20 MiB
print(libc.mallinfo2().hblkhd - before)
"""


def test_settled_malloc_keeps_tensors_on_the_heap():
    """--malloc settled (the benches' default): a 20 MiB tensor comes from glibc's heap (mallinfo2's bytes in
    mmapped blocks unchanged), where glibc's defaults give it an mmap of its own, which the kernel zeroes page
    by page at its first touch and takes back at its free (the page faults whose number varied 0-1,100 an
    iteration from one method to another). A fresh interpreter each, as the settings are process-wide."""
    import subprocess

    if not hasattr(__import__("ctypes").CDLL("libc.so.6"), "mallinfo2"):
        pytest.skip("not glibc 2.33 or later")
    mmapped = {}
    for how in ("default", "settled"):
        done = subprocess.run([sys.executable, "-c", _MMAPPED_BYTES_OF_A_NEW_TENSOR, how,
                               str(ROOT / "bench" / "python")], capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        mmapped[how] = int(done.stdout)
    assert mmapped["default"] >= 20 << 20 and mmapped["settled"] == 0, mmapped


def test_gain_bound_is_at_least_what_the_best_set_of_kept_tapes_gains():
    """stack_bench's bound on what any schedule gains over checkpoint_sequential against a brute force over
    every set of blocks whose tapes the forward could end holding: never below the best set's gain, equal to
    it where every tape fits."""
    import itertools
    import random

    import stack_bench
    from remat.torch._profile import BlockProfile

    rng = random.Random(3)
    for _ in range(20):
        n = rng.randint(2, 8)
        profiles = [BlockProfile(rng.uniform(0.1, 2), rng.uniform(0.1, 3), 64, 64, rng.choice([0, 100, 300, 700]),
                                 False, False) for _ in range(n)]
        f = [p.forward_seconds for p in profiles]
        plain = sum(p.forward_seconds + p.backward_seconds for p in profiles)
        for segments in range(1, n + 1):
            sequential = plain + sum(f[:(n // segments) * (segments - 1)])
            for peak in (0, 250, 900, 10 ** 6):
                best = min(sum(f[k] for k in range(n) if k not in kept)
                           for r in range(n + 1) for kept in itertools.combinations(range(n), r)
                           if sum(profiles[k].saved_bytes for k in kept) <= peak)
                exact = 1 - (plain + best) / sequential
                bound = stack_bench.gain_bound(profiles, segments, peak)
                assert bound >= exact - 1e-12
                if peak >= sum(p.saved_bytes for p in profiles):
                    assert bound == pytest.approx(exact)


@pytest.mark.parametrize("name", ["stack_bench", "plan_bench", "loop_bench", "ode_bench", "tape_bench"])
def test_bench_answers_help_and_refuses_an_unknown_option_in_one_line(name, capsys, monkeypatch):
    module = importlib.import_module(name)
    for args, code in ((["--help"], 0), (["--bogus"], 2), (["--format", "xml"], 2), (["--rounds", "x"], 2)):
        monkeypatch.setattr(sys, "argv", [name + ".py", *args])
        capsys.readouterr()
        with pytest.raises(SystemExit) as done:
            module.main()
        assert done.value.code == code, args
        out = capsys.readouterr()
        if code == 0:
            assert "usage:" in out.out and "--quick" in out.out
        else:  # one line naming the program and the option, as the remat tool's usage errors
            assert out.out == "" and out.err.count("\n") == 1 and out.err.startswith(name + ".py: "), out.err


def documented_commands():
    """(program, arguments) of every bench/python command docs/python.md shows: each line of its sh blocks and
    each inline `..._bench.py ARGS` (comments left out)."""
    text = (ROOT / "docs/python.md").read_text(encoding="utf-8")
    found = set()
    for block in re.findall(r"```sh\n(.*?)```", text, re.S):
        for line in block.splitlines():
            m = re.search(r"bench/python/(\w+)\.py([^#]*)", line)
            if m:
                found.add((m.group(1), m.group(2).strip()))
    for span in re.findall(r"`([^`\n]+)`", re.sub(r"```.*?```", "", text, flags=re.S)):
        m = re.search(r"(?:^|[\s/])(\w+_bench)\.py(\s[^#]*)?$", span)
        if m:
            found.add((m.group(1), (m.group(2) or "").strip()))
    return sorted(found)


class _Parsed(Exception):
    pass


def test_every_bench_has_a_documented_command():
    programs = {name for name, _ in documented_commands()}
    assert programs == {p.stem for p in (ROOT / "bench" / "python").glob("*_bench.py")}


@pytest.mark.parametrize("name,args", documented_commands())
def test_documented_command_parses(name, args, capsys, monkeypatch):
    """Each command docs/python.md shows takes only options its program has, with values it accepts (the
    programs' own parsers, stopped once they have parsed: no benchmark runs)."""
    import bench_common

    module = importlib.import_module(name)
    real = bench_common._Parser.parse_args

    def parse_then_stop(self, *a, **k):
        raise _Parsed(real(self, *a, **k))

    monkeypatch.setattr(bench_common._Parser, "parse_args", parse_then_stop)
    monkeypatch.setattr(sys, "argv", [name + ".py", *shlex.split(args)])
    capsys.readouterr()
    try:
        module.main()
    except SystemExit:
        pytest.fail(f"docs/python.md shows `{name}.py {args}`, which it refuses: {capsys.readouterr().err.strip()}")
    except _Parsed:
        pass
    else:
        pytest.fail(f"{name}.main() did not parse its arguments through bench_common's parser")
