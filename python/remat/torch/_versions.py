"""Version counters: how remat.torch tells that a tensor it reads again later (a snapshot, x_0, a step's or a
block's input) was modified in place since. Plain autograd refuses such a backward where the graph saved the
tensor; remat's re-runs read it whether or not the graph saves it, and would compute from other values than
the forward did (silently wrong gradients), so they refuse it wherever they read it."""

from __future__ import annotations

import operator
from typing import Sequence, Tuple

import torch

from .._errors import BackwardError


_VERSION = operator.attrgetter("_version")


def versions(parts: Sequence[torch.Tensor]) -> Tuple[int, ...]:
    """Each tensor's version counter (bumped by every in-place operation on its storage's views)."""
    try:  # read around many steps a loop runs: the plain attribute through map (a comprehension makes a function)
        return tuple(map(_VERSION, parts))
    except RuntimeError:
        return tuple(_version(p) for p in parts)


def modified(parts: Sequence[torch.Tensor], before: Tuple[int, ...]) -> int:
    """The index of the first part modified in place since `before` was read, or -1."""
    if versions(parts) == before:
        return -1
    for i, (p, v) in enumerate(zip(parts, before)):
        if _version(p) != v:
            return i
    return -1


def snapshot_modified(who: str, what: str, reruns: str) -> BackwardError:
    """The error for a snapshot modified in place after the forward stored it (`what`: "x_3", with any
    detail), raised where the backward restores it: `who`, the entry point; `reruns`, what runs from it."""
    return BackwardError(f"{who}: {what} was modified in place after the forward stored it as a snapshot; the "
                         f"backward re-runs {reruns} from it and would compute from other values (modify a clone, "
                         f"or modify it after the backward)")


def _version(t: torch.Tensor) -> int:
    try:
        return t._version
    except RuntimeError:  # an inference tensor (torch.inference_mode) keeps no version counter
        return -1
