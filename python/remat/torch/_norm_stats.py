"""Norm layers' running statistics across a backward's re-runs. A BatchNorm (or InstanceNorm with
track_running_stats) in training mode updates its running mean and variance (and num_batches_tracked) at every
forward call; the forward sweep calls each block or step once, as plain autograd does, but every re-run in the
backward would update them again (torch.utils.checkpoint does: one more momentum step per re-run). The
backward saves them where it begins and sets them back where it ends, so that they are plain autograd's. The
re-runs themselves do not read them: in training mode a norm layer normalises with the batch's statistics.
auto_checkpoint's blocks go further (ForwardBuffers): any other buffer a block's forward run modified
(spectral_norm's vectors, which the block reads) is set back to its value before that run for each re-run of
the block. checkpoint_loop keeps RunningStats: a loop's steps share one module, so that one copy per step
would grow with the steps."""

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


class BlockBuffers:
    """Where a module's buffers live, (submodule, name), read there at each use (conversions such as .to
    replace the tensors): `norms`, its norm layers' running statistics; `others`, every other buffer."""

    def __init__(self, module: torch.nn.Module):
        self.norms: List[BufferSlot] = []
        self.others: List[BufferSlot] = []
        for m in module.modules():
            for n, b in m._buffers.items():
                if b is not None:
                    (self.norms if isinstance(m, _NormBase) else self.others).append((m, n))


class ForwardBuffers:
    """The buffers of the blocks a backward re-runs, as plain autograd leaves them, and as each block's re-runs
    need them. A norm layer's running statistics are only set back where the backward ends (in training mode a
    norm layer normalises with the batch's statistics; batch_norm's kernel updates them without bumping their
    version counters). Any other buffer that a block's forward run modifies in place (by its version counter,
    or replaced) is kept as it was before that run, and each re-run of the block starts from it: spectral_norm's
    power iteration updates its vectors u and v at every forward in training mode and computes the weight from
    them, so that a re-run from the updated vectors computed another weight (other gradients than plain
    autograd's, and vectors a step further). The backward ends with every such buffer as the forward left it."""

    def __init__(self, blocks: Sequence[BlockBuffers]):
        self.blocks = blocks
        self.before: Dict[int, List[Tuple[torch.nn.Module, str, torch.Tensor]]] = {}
        self.after: List[Tuple[torch.nn.Module, str, torch.Tensor]] = []

    def forward_run(self, k: int, run: Callable[[], object]):
        """Block k's run in the forward (`run()`), the buffers it modifies kept as they were."""
        slots = self.blocks[k].others
        if not slots:
            return run()
        held = [(m, n, m._buffers[n]) for m, n in slots]
        saved = [(t._version, t.clone()) for _, _, t in held]
        out = run()
        changed = [(m, n, copy) for (m, n, t), (v, copy) in zip(held, saved)
                   if m._buffers[n] is not t or t._version != v]
        if changed:
            self.before[k] = changed
        return out

    def backward_begins(self, start: int) -> None:
        """The buffers of blocks 0..start-1 that re-runs may change, as the forward left them, copied now."""
        seen = set()
        slots = [(m, n) for b in self.blocks[:start] for m, n in b.norms if m.training]
        slots += [(m, n) for kept in self.before.values() for m, n, _ in kept]
        for m, n in slots:
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


class LoopBuffers:
    """A module step's buffers other than its norm layers' statistics, kept with each snapshot of x_k as they
    were before step k (made at the start, before step 0 runs, for x_0), and set back with it: a re-run of
    steps j..k from x_j then updates them as the forward's runs did (spectral_norm's vectors, from which the
    step computes its weight: a re-run from the vectors the forward left computed other values). Where the
    step has none (most steps), nothing is kept. The backward ends with them as the forward left them."""

    def __init__(self, step: torch.nn.Module):
        self.slots = BlockBuffers(step).others
        self.start = self.now()  # before step 0: x_0's
        self.after: list = []

    def now(self) -> list:
        """The buffers as they are now, copied."""
        return [m._buffers[n].clone() for m, n in self.slots]

    def set(self, held: list) -> None:
        with torch.no_grad():
            for (m, n), copy in zip(self.slots, held):
                m._buffers[n].copy_(copy)

    def backward_begins(self) -> None:
        self.after = self.now()

    def backward_ends(self) -> None:
        self.set(self.after)
        self.after = []
