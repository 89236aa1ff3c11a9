"""Norm layers' running statistics across a backward's re-runs. A BatchNorm (or InstanceNorm with
track_running_stats) in training mode updates its running mean and variance (and num_batches_tracked) at every
forward call; the forward sweep calls each block or step once, as plain autograd does, but every re-run in the
backward would update them again (torch.utils.checkpoint does: one more momentum step per re-run). The
backward saves them where it begins and sets them back where it ends, so that they are plain autograd's. The
re-runs themselves do not read them: in training mode a norm layer normalises with the batch's statistics."""

from __future__ import annotations

from typing import Iterable, List

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
