"""Shared fixtures of the Python tests: the `remat` tool whose output the plans are compared with, counters
of torch.autograd.grad and torch.autograd.backward calls, and a model's gradients through a run of it."""

import os
import pathlib
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _find_tool():
    given = os.environ.get("REMAT_CLI")
    if given:
        return pathlib.Path(given)
    built = ROOT / "build" / "tools" / "cli" / "remat"
    return built if built.exists() else None


@pytest.fixture(scope="session")
def remat_tool():
    """Runs the `remat` tool (REMAT_CLI, else build/tools/cli/remat) and returns its stdout."""
    tool = _find_tool()
    if tool is None or not tool.exists():
        pytest.skip("the remat tool is not built (cmake --build build --target remat, or set REMAT_CLI)")

    def run(*args):
        done = subprocess.run([str(tool), *map(str, args)], capture_output=True, text=True)
        if done.returncode != 0:
            raise AssertionError(f"remat {' '.join(map(str, args))} failed: {done.stderr}")
        return done.stdout

    return run


def gradients(model, run, x):
    """The parameters' and the input's gradients of run(x).sum() (run: the model or a module made from it)."""
    for p in model.parameters():
        p.grad = None
    x.grad = None
    run(x).sum().backward()
    return [p.grad.clone() for p in model.parameters()] + [x.grad.clone()]


def saved_storages(run, excluded=()):
    """(run()'s result, {storage address: bytes} of every storage autograd saves while run() runs, those of
    the tensors `excluded` (parameters, buffers) left out): an independent census of what a forward saves,
    with hooks of its own rather than remat's counter."""
    import torch

    def storage(t):
        return t.untyped_storage() if hasattr(t, "untyped_storage") else t.storage()

    left_out = {storage(t).data_ptr() for t in excluded}
    seen = {}

    def pack(t):
        s = storage(t)
        if s.data_ptr() not in left_out:
            seen[s.data_ptr()] = s.nbytes()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = run()
    return out, seen


class CallCount:
    """How often the wrapped function was called since the count was last reset (`count.calls = 0`)."""

    def __init__(self):
        self.calls = 0


def _count_calls(monkeypatch, owner, name):
    """Replaces owner.<name> (a module's function or a class's method) for one test by a wrapper that counts
    its calls."""
    count = CallCount()
    original = getattr(owner, name)

    def counting(*args, **kwargs):
        count.calls += 1
        return original(*args, **kwargs)

    monkeypatch.setattr(owner, name, counting)
    return count


@pytest.fixture
def grad_calls(monkeypatch):
    """Counts the calls of torch.autograd.grad (what remat.torch reverses each graph with) for one test."""
    import torch

    return _count_calls(monkeypatch, torch.autograd, "grad")


@pytest.fixture
def backward_calls(monkeypatch):
    """Counts the calls of torch.autograd.backward (Tensor.backward's too) for one test."""
    import torch

    return _count_calls(monkeypatch, torch.autograd, "backward")


@pytest.fixture
def counting_hooks_calls(monkeypatch):
    """Counts the entries into auto_checkpoint's activation counting (SavedBytes.hooks: the saved-tensor hooks,
    a Python call per saved tensor) for one test."""
    from remat.torch import _saved

    return _count_calls(monkeypatch, _saved.SavedBytes, "hooks")
