"""Norm layers' running statistics across a backward's re-runs. A BatchNorm (or InstanceNorm with
track_running_stats) in training mode updates its running mean and variance (and num_batches_tracked) at every
forward call; the forward sweep calls each block or step once, as plain autograd does, but every re-run in the
backward would update them again (torch.utils.checkpoint does: one more momentum step per re-run). The
backward saves them where it begins and sets them back where it ends, so that they are plain autograd's. The
re-runs themselves do not read them: in training mode a norm layer normalises with the batch's statistics.
auto_checkpoint's blocks go further (ForwardBuffers): every buffer a block's forward run modified (a norm layer's
statistics, spectral_norm's vectors, which the block reads) is set back to its value before that run for each
re-run of the block. checkpoint_loop keeps RunningStats: a loop's steps share one module, so that one copy per
step would grow with the steps."""

from __future__ import annotations

from typing import Callable, Dict, Iterable, List, Sequence, Tuple

import torch

_NormBase = getattr(torch.nn.modules.batchnorm, "_NormBase", torch.nn.modules.batchnorm._BatchNorm)


def norm_layers(module: torch.nn.Module) -> List[torch.nn.Module]:
    """The norm layers of `module` (itself included) that keep running statistics."""
    return [m for m in module.modules() if isinstance(m, _NormBase) and m.track_running_stats]


class RunningStats:
    """The running statistics of those of `layers` in training mode, copied now; restore() sets them back."""

    def __init__(self, layers: Iterable[torch.nn.Module]):
        self.saved = [(t, t.clone()) for m in layers if m.training
                      for t in (m.running_mean, m.running_var, m.num_batches_tracked) if t is not None]

    def restore(self) -> None:
        with torch.no_grad():
            for t, copy in self.saved:
                t.copy_(copy)
        self.saved = []


BufferSlot = Tuple[torch.nn.Module, str]


def buffer_slots(module: torch.nn.Module) -> List[BufferSlot]:
    """Where `module`'s buffers live, (submodule, name): read there at each use, as conversions (.to, .half)
    replace the tensors."""
    return [(m, n) for m in module.modules() for n, b in m._buffers.items() if b is not None]


class ForwardBuffers:
    """The buffers that each block's run in the forward modified in place, as they were before that run, so
    that the backward's re-runs of the block start from them as that run did. BatchNorm's running statistics
    need only be set back at the end (a norm layer in training mode normalises with the batch's statistics),
    but a block may also read what it updates: spectral_norm's power iteration updates its vectors u and v
    at every forward in training mode and computes the weight from them, so that a re-run from the updated
    vectors computed another weight (other gradients than plain autograd's, and vectors a step further).
    The backward ends with every such buffer as the forward left it."""

    def __init__(self, slots: Sequence[List[BufferSlot]]):
        self.slots = slots  # per block
        self.before: Dict[int, List[Tuple[torch.nn.Module, str, torch.Tensor]]] = {}
        self.after: List[Tuple[torch.nn.Module, str, torch.Tensor]] = []

    def forward_run(self, k: int, run: Callable[[], object]):
        """Block k's run in the forward (`run()`), its buffers kept where the run modifies them."""
        slots = self.slots[k]
        if not slots:
            return run()
        held = [(m, n, m._buffers[n]) for m, n in slots]
        saved = [(t._version, t.clone()) for _, _, t in held]
        out = run()
        # a norm layer's running statistics always (batch_norm's kernel updates them without bumping their
        # version counters), any other buffer where its version counter says the run modified it
        changed = [(m, n, copy) for (m, n, t), (v, copy) in zip(held, saved)
                   if isinstance(m, _NormBase) or m._buffers[n] is not t or t._version != v]
        if changed:
            self.before[k] = changed
        return out

    def backward_begins(self) -> None:
        """Every kept buffer as the forward left it, copied now (the backward ends with these)."""
        seen = set()
        for kept in self.before.values():
            for m, n, _ in kept:
                if (id(m), n) not in seen:
                    seen.add((id(m), n))
                    self.after.append((m, n, m._buffers[n].clone()))

    def rerun(self, k: int) -> None:
        """Block k's buffers as they were before its forward run: it runs again now."""
        with torch.no_grad():
            for m, n, copy in self.before.get(k, ()):
                m._buffers[n].copy_(copy)

    def backward_ends(self) -> None:
        with torch.no_grad():
            for m, n, copy in self.after:
                m._buffers[n].copy_(copy)
        self.after = []
        self.before = {}
