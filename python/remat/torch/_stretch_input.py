"""A kept stretch's input state that does not hold its storage: the first block of a stretch runs on a view of
x_k made by an autograd.Function whose backward hands x_k's gradient to this object, so that x_k's storage
lives only as long as the graph saves it (or a snapshot holds it). A detached leaf requiring grad would be
held by the stretch, and by autograd's AccumulateGrad node, until the stretch is reversed: one state more
than the chain model counts where the block does not save its input (torch.utils.checkpoint holds its
segment's input so while it re-runs the segment; stack_bench's segments measure one state above the model's
price there)."""

from __future__ import annotations

from typing import List, Optional

import torch


class StretchInput:
    """Where a stretch's leaf x_k would be: `tensor` the view its first block runs on (dropped by whoever
    runs the block, as the block's input is), `token` the leaf of no bytes that autograd differentiates in its
    place, `grad` x_k's gradient once a backward through the stretch has run."""

    __slots__ = ("token", "grad")
    requires_grad = True

    def __init__(self):
        self.token = torch.empty(0, requires_grad=True)
        self.grad: Optional[torch.Tensor] = None

    def view(self, x: torch.Tensor) -> torch.Tensor:
        """x (detached, not requiring grad) as the input of the stretch's first block."""
        return _Input.apply(self.token, x, self)


class _Input(torch.autograd.Function):
    @staticmethod
    def forward(ctx, token, x, holder: StretchInput):
        ctx.holder = holder
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad):
        ctx.holder.grad = grad
        return None, None, None


def differentiated(leaves) -> List[torch.Tensor]:
    """What torch.autograd.grad differentiates for these leaves: a StretchInput's token, a tensor itself."""
    return [leaf.token if isinstance(leaf, StretchInput) else leaf for leaf in leaves if leaf.requires_grad]
