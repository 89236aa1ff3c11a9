"""The modes (train()/eval()) a stack's blocks were profiled in, every submodule's, and the check that a forward
runs them so: what autograd saves depends on each module's own mode (a Dropout in training mode saves its mask,
a BatchNorm its batch statistics), and a submodule may be switched alone (`block.drop.eval()`), which comparing
the blocks' own `.training` missed, so the plan's peak could pass the budget unnoticed."""

from __future__ import annotations

from typing import List, Optional, Sequence, Tuple

import torch


class ProfiledModes:
    """Every submodule's mode of the blocks as they were profiled. The modules are listed once (walking them
    took 120 us a forward on a 24-block transformer stack, the flags of the list 7 us); a submodule replaced after
    the profile needs a new profile anyway, as its parameters do."""

    def __init__(self, blocks: Sequence[torch.nn.Module]) -> None:
        self._where: List[Tuple[int, str]] = []  # (block index, submodule path) of each module below
        self._modules: List[torch.nn.Module] = []
        for k, block in enumerate(blocks):
            for path, module in block.named_modules():
                self._where.append((k, path))
                self._modules.append(module)
        self._flags = [m.training for m in self._modules]

    def changed(self) -> Optional[Tuple[int, str, bool]]:
        """(block index, submodule path, "" for the block itself, its mode as profiled) of the first module now
        in the other mode; None where every one is as profiled."""
        now = [m.training for m in self._modules]
        if now == self._flags:
            return None
        i = next(i for i, (a, b) in enumerate(zip(now, self._flags)) if a != b)
        return (*self._where[i], self._flags[i])
