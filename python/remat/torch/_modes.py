"""The modes (train()/eval()) a stack's blocks were profiled in, every submodule's, and the check that a forward
runs them so: what autograd saves depends on each module's own mode (a Dropout in training mode saves its mask,
a BatchNorm its batch statistics), and a submodule may be switched alone (`block.drop.eval()`), which comparing
the blocks' own `.training` missed, so the plan's peak could pass the budget unnoticed. And the modes a forward
ran a module in, entered again for its backward's re-runs (ForwardModes)."""

from __future__ import annotations

import contextlib
from typing import ContextManager, Iterator, List, Optional, Sequence, Tuple

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

    def entered(self) -> ContextManager[None]:
        """The modes as profiled (those of every forward with grad, which changed() checks) while the block runs,
        the modes found set back after it: a backward's re-runs run in them (ForwardModes)."""
        return entered(self._modules, self._flags)


class ForwardModes:
    """Every submodule's mode of a module as a forward ran it, entered again for that forward's backward. A
    backward re-runs steps or blocks, and the caller may switch modes between the forward and the backward
    (model.eval() for a validation pass): a re-run in the other mode computed another graph (dropout off, batch
    norm from its running statistics), gradients silently not plain autograd's, whose backward reads the graph
    the forward saved."""

    __slots__ = ("_modules", "_flags")

    def __init__(self, modules: Sequence[torch.nn.Module]) -> None:
        self._modules = list({id(m): m for top in modules for m in top.modules()}.values())
        self._flags = [m.training for m in self._modules]

    @property
    def flags(self) -> tuple:
        """Each submodule's mode (training), each module once: what checkpoint_loop keeps its tape sizes by."""
        return tuple(self._flags)

    def entered(self) -> ContextManager[None]:
        """The forward's modes while the block runs, the modes found set back after it."""
        return entered(self._modules, self._flags)


@contextlib.contextmanager
def entered(modules: Sequence[torch.nn.Module], flags: Sequence[bool]) -> Iterator[None]:
    """Each of `modules` in the mode `flags` gives it while the block runs, set back to the one it had after it
    (each module's own flag: train()/eval() would set its submodules' too)."""
    now = [m.training for m in modules]
    if now == list(flags):
        yield
        return
    try:
        for m, flag in zip(modules, flags):
            m.training = flag
        yield
    finally:
        for m, flag in zip(modules, now):
            m.training = flag
