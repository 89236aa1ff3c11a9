"""Autocast (torch.autocast, mixed precision) in the backward's re-runs. The forward runs the steps or blocks
under the caller's autocast; the backward runs outside it (autograd's engine does not carry it), so a re-run
computed in another precision than the forward did: other values, and gradients that were not plain
autograd's. As torch.utils.checkpoint does, the settings the forward ran under (CPU and CUDA) are kept and
the backward runs under them.

Both run with autocast's cache of casts off. The cache keeps the low-precision copy of a parameter made by
its first use in an autocast region, grad mode or not: a copy made by a step run under no_grad (the
forward's sweep, the backward's advances) and then reused by a run with grad (the step the forward keeps, a
re-run for a reverse, the caller's own code after the call) carries no gradient to the parameter (gradients
went missing). Without the cache a parameter is cast at each use: the same values, but a parameter that
several steps share gets each step's gradient cast to float32 and summed there, where plain autograd under
the cache sums them in the low precision first: checkpoint_loop's gradients then differ from plain
autograd's at that precision (they are equal where the caller's autocast has cache_enabled=False)."""

from __future__ import annotations

import contextlib

import torch


class AutocastState:
    """The autocast settings in force now (where the forward runs); `uncached()` enters them again."""

    __slots__ = ("cpu", "cuda")

    def __init__(self):
        self.cpu = _settings("cpu")
        self.cuda = _settings("cuda")

    def uncached(self) -> contextlib.ExitStack:
        """These settings entered again, with the cache of casts off."""
        stack = contextlib.ExitStack()
        stack.enter_context(torch.autocast("cpu", **{**self.cpu, "cache_enabled": False}))
        if self.cuda["enabled"] or torch.cuda.is_available():
            stack.enter_context(torch.autocast("cuda", **{**self.cuda, "cache_enabled": False}))
        return stack


def _settings(device: str) -> dict:
    """torch.autocast's arguments for `device` as they are now: PyTorch 2.4's per-device queries where there
    (the older per-device functions warn there), else 1.13's."""
    if hasattr(torch, "get_autocast_dtype"):
        enabled, dtype = torch.is_autocast_enabled(device), torch.get_autocast_dtype(device)
    elif device == "cpu":
        enabled, dtype = torch.is_autocast_cpu_enabled(), torch.get_autocast_cpu_dtype()
    else:
        enabled, dtype = torch.is_autocast_enabled(), torch.get_autocast_gpu_dtype()
    return dict(enabled=enabled, dtype=dtype, cache_enabled=torch.is_autocast_cache_enabled())


def settings_key() -> tuple:
    """The autocast settings in force now that change what a graph saves: per device (CPU, CUDA) whether autocast
    is on and, where it is, its dtype (None where it is off). A tape or a profile measured under other settings
    measured other bytes (autocast's low-precision copies of the weights among them)."""
    now = AutocastState()
    return tuple((s["dtype"] if s["enabled"] else None) for s in (now.cpu, now.cuda))


def describe(key: tuple) -> str:
    """A settings_key() in words: "outside torch.autocast" or "under torch.autocast (cpu: torch.bfloat16)"."""
    on = [f"{device}: {dtype}" for device, dtype in zip(("cpu", "cuda"), key) if dtype is not None]
    return f"under torch.autocast ({', '.join(on)})" if on else "outside torch.autocast"
