"""Walks of an autograd graph, for checkpoint_loop: the tensors whose gradient accumulators it reaches (step 0's
parameters; a tensor the loop does not differentiate; a leaf a context made before the loop reaches)."""

from __future__ import annotations

from typing import Iterable, Iterator

import torch


def leaves_reached(roots: Iterable, stop: Iterable = ()) -> Iterator[torch.Tensor]:
    """Each tensor whose AccumulateGrad node the graph from the nodes `roots` (grad_fns, None ignored) reaches,
    once, not walking through the nodes in `stop` (a graph that is not the step's own)."""
    stack = [n for n in roots if n is not None]
    visited = set(stop)
    while stack:
        node = stack.pop()
        if node is None or node in visited:
            continue
        visited.add(node)
        variable = getattr(node, "variable", None)
        if variable is not None:
            yield variable
            continue
        stack.extend(n for n, _ in node.next_functions)
