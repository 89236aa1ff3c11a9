"""Autocast (torch.autocast, mixed precision) in the backward's re-runs. The forward runs the steps or blocks
under the caller's autocast; the backward runs outside it (autograd's engine does not carry it), so a re-run
computed in another precision than the forward did: other values, and gradients that were not plain
autograd's. As torch.utils.checkpoint does, the settings the forward ran under (CPU and CUDA) are kept and
the re-runs run under them; the stretches' backward (the engine calls) runs under the settings the backward
itself was called in, as plain autograd's backward kernels do (inside a caller's autocast region they cast
their inputs).

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
from typing import ContextManager, Optional

import torch


class AutocastState:
    """The autocast settings in force now (where the forward runs); `uncached()` enters them again for the
    runs, `differing_now()` finds a backward's own (the caller's region's) for its engine calls."""

    __slots__ = ("cpu", "cuda")

    def __init__(self):
        self.cpu = _settings("cpu")
        self.cuda = _settings("cuda")

    def uncached(self) -> ContextManager[None]:
        """These settings entered again, with the cache of casts off. Where autocast is off in them and now (most
        runs), nothing to enter: entering autocast twice, forward and backward, was 0.6% of an iteration of
        stack_bench's transformer stack (paired, 400 rounds)."""
        if not (self.cpu["enabled"] or self.cuda["enabled"] or _enabled_now()):
            return contextlib.nullcontext()
        return self._entered(cache_enabled=False)

    def key(self) -> tuple:
        """What these settings compute in: per device (CPU, CUDA) autocast's dtype where it is on, None where
        it is off (the cache of casts aside)."""
        return tuple((s["dtype"] if s["enabled"] else None) for s in (self.cpu, self.cuda))

    def entered(self) -> ContextManager[None]:
        """These settings entered as they are, their cache of casts included."""
        return self._entered()

    def differing_now(self) -> Optional["AutocastState"]:
        """The settings in force now where they compute otherwise than these (autocast on or off, its dtype),
        else None. A backward's engine calls (the stretches' backward) run under the settings the backward was
        called in, as plain autograd's backward kernels do (a caller's autocast region casts their inputs:
        float32 gradients cast to bfloat16), while its re-runs enter the forward's (uncached)."""
        now = AutocastState()
        return None if now.key() == self.key() else now

    def _entered(self, **override) -> contextlib.ExitStack:
        stack = contextlib.ExitStack()
        stack.enter_context(torch.autocast("cpu", **{**self.cpu, **override}))
        if self.cuda["enabled"] or torch.cuda.is_available():
            stack.enter_context(torch.autocast("cuda", **{**self.cuda, **override}))
        return stack


#: PyTorch 2.4's per-device queries (the older per-device functions warn there); 1.13 has one function per device
_PER_DEVICE_QUERIES = hasattr(torch, "get_autocast_dtype")


def _enabled(device: str) -> bool:
    if _PER_DEVICE_QUERIES:
        return torch.is_autocast_enabled(device)
    return torch.is_autocast_cpu_enabled() if device == "cpu" else torch.is_autocast_enabled()


def _enabled_now() -> bool:
    """Whether autocast is on now on the CPU or CUDA (a backward called inside the caller's autocast region
    runs the re-runs on the calling thread, in that region, unless they enter the forward's settings)."""
    return _enabled("cpu") or _enabled("cuda")


def _settings(device: str) -> dict:
    """torch.autocast's arguments for `device` as they are now."""
    if _PER_DEVICE_QUERIES:
        dtype = torch.get_autocast_dtype(device)
    else:
        dtype = torch.get_autocast_cpu_dtype() if device == "cpu" else torch.get_autocast_gpu_dtype()
    return dict(enabled=_enabled(device), dtype=dtype, cache_enabled=torch.is_autocast_cache_enabled())


def settings_key() -> tuple:
    """The autocast settings in force now that change what a graph saves: per device (CPU, CUDA) whether autocast
    is on and, where it is, its dtype (None where it is off). A tape or a profile measured under other settings
    measured other bytes (autocast's low-precision copies of the weights among them)."""
    return AutocastState().key()


def describe(key: tuple) -> str:
    """A settings_key() in words: "outside torch.autocast" or "under torch.autocast (cpu: torch.bfloat16)"."""
    on = [f"{device}: {dtype}" for device, dtype in zip(("cpu", "cuda"), key) if dtype is not None]
    return f"under torch.autocast ({', '.join(on)})" if on else "outside torch.autocast"
