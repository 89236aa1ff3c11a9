"""The contexts of a loop's step: tensors it computes from that require grad, are no leaves and that it did not
compute itself, such as a decoder's encoder outputs or a parameter transformed once before the loop
(softplus(raw)). checkpoint_loop takes them as inputs of its autograd.Function, as it takes the parameters, so
that each step's backward stops at them and their gradients, summed over the steps, flow back through the graph
that made them once, after the loop's backward, as under plain autograd. Before, the parameters behind them were
taken instead: every step's backward went through that graph, and the second one failed (autograd's "Trying to
backward through the graph a second time")."""

from __future__ import annotations

import weakref
from typing import Dict, List, Sequence

import torch
from torch.overrides import TorchFunctionMode

from ._graph import leaves_reached


def _tensors(obj):
    if isinstance(obj, torch.Tensor):
        yield obj
    elif isinstance(obj, (list, tuple)):
        for o in obj:
            yield from _tensors(o)
    elif isinstance(obj, dict):
        for o in obj.values():
            yield from _tensors(o)


class ContextRecorder(TorchFunctionMode):
    """While active (step 0's discovery run): every tensor an operation took that requires grad, has a graph and
    was not returned by an operation before (those weakly held: the step's temporaries die when it is done
    with them, as without the recorder; an id is compared while both tensors live). PyTorch 1.13's
    TorchFunctionMode does not see basic indexing (x[k], x[:, 1]), whose results, views, are taken for their
    base (inputs for inputs[k]): a context where that is one, a leaf or the step's own tensor otherwise. (A
    TorchDispatchMode sees every operator but broke saved-tensor hooks in attention blocks under 1.13.)"""

    def __init__(self):
        super().__init__()
        self.taken: Dict[int, torch.Tensor] = {}
        self.made: Dict[int, "weakref.ref[torch.Tensor]"] = {}

    def _made(self, t: torch.Tensor) -> bool:
        ref = self.made.get(id(t))
        return ref is not None and ref() is t

    def __torch_function__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        for t in _tensors((args, kwargs)):
            if t.requires_grad and t.grad_fn is not None and not self._made(t):
                self.taken.setdefault(id(t), t)
        for t in _tensors(out):
            self.made[id(t)] = weakref.ref(t)
        return out

    def contexts(self, leaves: Sequence[torch.Tensor]) -> List[torch.Tensor]:
        """The tensors taken that no operation of the step returned and whose graph does not reach the step's
        input `leaves` (one an operation the recorder does not see made from them, as an autograd.Function's
        apply, is the step's own)."""
        inputs = {id(leaf) for leaf in leaves}
        contexts: Dict[int, torch.Tensor] = {}
        for t in self.taken.values():
            base = t
            while base._base is not None:  # a view the recorder did not see made: its base is what was taken
                base = base._base
            if self._made(base) or base.grad_fn is None or id(base) in contexts:
                continue
            if not _reaches(base.grad_fn, inputs):
                contexts[id(base)] = base
        return list(contexts.values())


def context_over(contexts: Sequence[torch.Tensor], leaves: Sequence[torch.Tensor]):
    """(a context, a leaf) where the step differentiates the leaf both directly and through the context (raw and
    softplus(raw) computed before the loop), else None: each step's backward would then go through the
    context's graph for the leaf's gradient, which only one backward can."""
    for c in contexts:
        reached = {id(variable) for variable in leaves_reached([c.grad_fn])}  # its graph walked once
        for leaf in leaves:
            if id(leaf) in reached:
                return c, leaf
    return None


def _reaches(node, leaf_ids) -> bool:
    """Whether the graph from `node` reaches the accumulator of one of the tensors whose ids are `leaf_ids`."""
    return any(id(variable) in leaf_ids for variable in leaves_reached([node]))
