"""What auto_checkpoint (and remat.torch.tradeoff) take from a block: one tensor. Checked where a block runs (its
profile, the forward, the re-runs in the backward), so that a block returning a tuple, None, a list or a number
fails there, as a remat.ArgumentError naming the block and what it returned, rather than as a TypeError inside
the next block or in autograd."""

from __future__ import annotations

from typing import NoReturn

from .._errors import ArgumentError


def _describe(value) -> str:
    if value is None:
        return "None"
    if isinstance(value, (tuple, list)):
        kinds = ", ".join(type(v).__name__ for v in value[:4]) + (", ..." if len(value) > 4 else "")
        return f"a {type(value).__name__} of {len(value)} ({kinds})"
    if isinstance(value, (bool, int, float, complex, str)):
        return f"{type(value).__name__} {value!r:.40}"
    return f"an object of type {type(value).__name__}"


def bad_block_output(k: int, value, who: str = "remat.torch.auto_checkpoint") -> NoReturn:
    """Raises the error for block k's output `value`, which is not a tensor (the caller checks: isinstance in
    line costs less than a call per block)."""
    raise ArgumentError(f"{who}: block {k} returned {_describe(value)}; every block must return one tensor (the "
                        "next block's input)")


def block_modified_input(k: int, block, who: str = "remat.torch.auto_checkpoint") -> NoReturn:
    """Raises the error for block k, which modified its input in place (seen by the input's version counter).
    Plain autograd allows that where the graph does not need the input; remat keeps block inputs as snapshots
    and re-runs blocks from them, so a re-run would read the modified values (silently wrong gradients)."""
    raise ArgumentError(f"{who}: block {k} ({type(block).__name__}) modifies its input in place; remat keeps block "
                        "inputs as snapshots and re-runs blocks from them, so every block must leave its input as "
                        "it found it (an nn.ReLU(inplace=True) of its own: make it inplace=False, or put it at the "
                        "end of the block before it)")
