"""Norm layers' running statistics across a backward's re-runs. A BatchNorm (or InstanceNorm with
track_running_stats) in training mode updates its running mean and variance (and num_batches_tracked) at every
forward call; the forward sweep calls each block or step once, as plain autograd does, but every re-run in the
backward would update them again (torch.utils.checkpoint does: one more momentum step per re-run). The
backward saves them where it begins and sets them back where it ends, so that they are plain autograd's. The
re-runs themselves do not read them: in training mode a norm layer normalises with the batch's statistics.
auto_checkpoint's blocks go further (ForwardBuffers): any other buffer a block's forward run modified
(spectral_norm's vectors, which the block reads) is set back to its value before that run for each re-run of
the block. checkpoint_loop keeps LoopBuffers instead (a loop's steps share one module, so that a copy per
step run would grow with the steps): the statistics saved once for the backward, the other buffers with each
snapshot. Both find the buffers through BlockBuffers and copy and set them back with copied and set_back."""

from __future__ import annotations

from typing import Callable, Dict, Iterable, List, Optional, Sequence, Tuple

import torch

_NormBase = getattr(torch.nn.modules.batchnorm, "_NormBase", torch.nn.modules.batchnorm._BatchNorm)


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

    def every(self) -> List[BufferSlot]:
        """Every buffer's slot: the norm layers' statistics, then the others."""
        return self.norms + self.others


#: Buffers copied, each with where it lives: (submodule, name, copy).
Copies = List[Tuple[torch.nn.Module, str, torch.Tensor]]


def in_training(slots: Iterable[BufferSlot]) -> List[BufferSlot]:
    """Those of `slots` whose module is in training mode (a norm layer updates its statistics only there)."""
    return [(m, n) for m, n in slots if m.training]


def each_once(slots: Iterable[BufferSlot]) -> List[BufferSlot]:
    """`slots` without repeats (a layer that several blocks share is in each block's), in their order."""
    return list({(id(m), n): (m, n) for m, n in slots}.values())


def copied(slots: Iterable[BufferSlot]) -> Copies:
    """The buffers at `slots` as they are now, copied."""
    return [(m, n, m._buffers[n].clone()) for m, n in slots]


def set_back(copies: Copies) -> None:
    """Each buffer set to its copy, in place (where it lives now: conversions may have replaced the tensor)."""
    with torch.no_grad():
        for m, n, copy in copies:
            m._buffers[n].copy_(copy)


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
        self.before: Dict[int, Copies] = {}
        self.after: Copies = []

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
        slots = in_training(slot for b in self.blocks[:start] for slot in b.norms)
        slots += [(m, n) for kept in self.before.values() for m, n, _ in kept]
        self.after = copied(each_once(slots))

    def rerun(self, k: int) -> None:
        """Block k's buffers as they were before its forward run: it runs again now."""
        copies = self.before.get(k)
        if copies:  # most blocks' runs modify none (set_back enters no_grad, 1 us)
            set_back(copies)

    def backward_ends(self) -> None:
        set_back(self.after)
        self.after = []
        self.before = {}


class LoopBuffers:
    """A module step's buffers. Its norm layers' running statistics (`norms`) are copied where the backward
    begins and set back where it ends, as ForwardBuffers does for a stack's blocks. Its other buffers
    (`slots`) are kept with each snapshot of x_k as they were before step k (made at the start, before step
    0 runs, for x_0), and set back with it: a re-run of steps j..k from x_j then updates them as the
    forward's runs did (spectral_norm's vectors, from which the step computes its weight: a re-run from the
    vectors the forward left computed other values). Where the step has none (most steps), nothing is kept
    with the snapshots (now() is None). The backward ends with all of them as the forward left them."""

    def __init__(self, step: torch.nn.Module):
        where = BlockBuffers(step)
        self.norms = where.norms
        self.slots = where.others
        self.start = self.now()  # before step 0: x_0's
        self.after: Copies = []

    def now(self) -> Optional[Copies]:
        """The buffers kept with a snapshot as they are now, copied (None where the step has none)."""
        return copied(self.slots) if self.slots else None

    def set(self, held: Optional[Copies]) -> None:
        """The buffers kept with a snapshot set back to `held` (a now())."""
        if held is not None:
            set_back(held)

    def backward_begins(self) -> None:
        """The buffers the backward's re-runs may change, as the forward left them, copied now: the norm
        layers' statistics (of those in training mode) and the others."""
        self.after = copied(in_training(self.norms) + self.slots)

    def backward_ends(self) -> None:
        set_back(self.after)
        self.after = []
