"""Shared fixtures of the Python tests: the `remat` tool whose output the plans are compared with, and
counters of torch.autograd.grad and torch.autograd.backward calls."""

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


class CallCount:
    """How often the wrapped function was called since the count was last reset (`count.calls = 0`)."""

    def __init__(self):
        self.calls = 0


@pytest.fixture
def grad_calls(monkeypatch):
    """Counts the calls of torch.autograd.grad (what remat.torch reverses each graph with) for one test."""
    import torch

    count = CallCount()
    grad = torch.autograd.grad

    def counting_grad(*args, **kwargs):
        count.calls += 1
        return grad(*args, **kwargs)

    monkeypatch.setattr(torch.autograd, "grad", counting_grad)
    return count


@pytest.fixture
def backward_calls(monkeypatch):
    """Counts the calls of torch.autograd.backward (Tensor.backward's too) for one test."""
    import torch

    count = CallCount()
    backward = torch.autograd.backward

    def counting_backward(*args, **kwargs):
        count.calls += 1
        return backward(*args, **kwargs)

    monkeypatch.setattr(torch.autograd, "backward", counting_backward)
    return count
