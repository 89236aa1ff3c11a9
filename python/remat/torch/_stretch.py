"""Kept stretches of steps and their reverse, shared by checkpoint_loop (_loop.py) and auto_checkpoint
(_auto.py): the steps a plan advances taped one after the other make one autograd graph (no cut between them,
as plain autograd builds it), from the detached leaves of the stretch's first state to the last one's output,
and `reverse k` of the stretch's last step back-propagates through all of it in one call. A state is a tuple
of tensors (a loop's parts; a block's one tensor)."""

from __future__ import annotations

import sys
import threading
from contextlib import nullcontext
from typing import Callable, Dict, Iterator, List, Optional, Sequence, Tuple, Union

import torch

from ._autocast import AutocastState
from ._stretch_input import StretchInput, differentiated

Parts = Tuple[torch.Tensor, ...]
#: run(k, parts) -> step k's output parts, the graph built where grad is enabled
Run = Callable[[int, Parts], Parts]
#: leaves(k, parts) -> (x_k's parts for step k to run on, detached, those to differentiate requiring grad or
#: viewed through a StretchInput; what the tape keeps to read their gradients: those tensors or StretchInputs)
Leaves = Callable[[int, Parts], Tuple[Parts, tuple]]


class Tape:
    """The kept graph of steps start..stop-1: from `leaves` (x_start's parts, detached, or StretchInputs standing
    for them) to `out` (x_stop's)."""

    __slots__ = ("start", "stop", "leaves", "out")

    def __init__(self, start: int, leaves: Parts, out: Parts):
        self.start, self.stop, self.leaves, self.out = start, start + 1, leaves, out


class Handover:
    """A state handed to a stretch as its only reference, emptied when taken. A tuple passed as an argument stays
    referenced by the calling frame until the call returns (before Python 3.11), so that x_start would live
    through the whole run even where its first step does not save it, one state the chain model does not count."""

    __slots__ = ("parts",)

    def __init__(self, parts: Parts):
        self.parts: Optional[Parts] = parts

    def take(self) -> Optional[Parts]:
        parts, self.parts = self.parts, None
        return parts


def _run_from(k: int, current: Parts, run: Run, leaves: Leaves) -> Tape:
    """A new stretch: step k run from x_k = current's leaves. Only the tape keeps what it reads gradients from;
    the parts step k ran on are dropped here, so that x_k lives on only where the graph saves it."""
    x, kept = leaves(k, current)
    out = run(k, x)
    del x
    return Tape(k, kept, out)


class Stretches:
    """The tapes of one forward and backward: by step, the tape through it; the open one (whose output is the
    current state, so that the next taped advance extends it); how far the reverse sweep has come. Its owner
    passes how steps run to each call (held here, its bound methods would make a reference cycle, which
    would keep the owner's snapshots until the garbage collector runs, not until its graph is freed)."""

    def __init__(self):
        self.tapes: Dict[int, Tape] = {}
        self.open: Optional[Tape] = None
        self.reversed_from: Optional[int] = None  # every step >= this has been reversed

    def keep(self, tape: Tape) -> Parts:
        """A graph built elsewhere (checkpoint_loop's step 0) kept as the open tape; x_stop detached."""
        for k in range(tape.start, tape.stop):
            self.tapes[k] = tape
        self.open = tape
        return tuple(o.detach() for o in tape.out)

    def continues_at(self, k: int) -> bool:
        """Whether the open stretch ends at x_k (a taped advance of step k continues it, not reading x_k)."""
        return self.open is not None and self.open.stop == k

    def advance(self, k: int, current: Optional[Parts], run: Run, leaves: Leaves,
                detached: bool = True) -> Optional[Parts]:
        """`advance k k+1 tape` from x_k = current: step k run with grad, its graph kept for `reverse k`, as the
        open stretch's continuation where that ends at x_k (current is not read then); returns x_{k+1} detached
        (None with detached=False: the open tape's output is x_{k+1}, read when needed, `output`)."""
        self.advance_run(k, k + 1, current, run, leaves)
        return self.output() if detached else None

    def advance_run(self, start: int, stop: int, current: Union[Parts, Handover, None], run: Run, leaves: Leaves,
                    run_on: Optional[Run] = None) -> None:
        """`advance k k+1 tape` for k = start..stop-1 in one loop: the first continues the open stretch where that
        ends at x_start (no cut in the graph; current is not read then), else starts one from current. The
        first step runs through `run`, the others through `run_on` (default `run`): from a state only this
        run holds. `current` as a Handover: held no longer than the first step runs."""
        if isinstance(current, Handover):
            current = current.take()
        run_on = run if run_on is None else run_on
        tape, tapes = self.open, self.tapes
        with torch.enable_grad():
            k = start
            if tape is None or tape.stop != start:
                tape = _run_from(start, current, run, leaves)
                tapes[start] = tape
                k += 1
            current = None  # x_start lives on where the tape saves it or a caller holds it (a snapshot)
            self.open = tape
            out = tape.out
            if k < stop and k == start:  # continuing the open stretch: x_start may be held (a store)
                out = run(k, out)
                tape.out, tape.stop = out, k + 1
                tapes[k] = tape
                k += 1
            for j in range(k, stop):  # the tape brought up to date after (a step that raises ends the loop)
                out = run_on(j, out)
            tape.out, tape.stop = out, max(tape.stop, stop)
            tapes.update(dict.fromkeys(range(k, stop), tape))

    def output(self) -> Parts:
        """The open stretch's output, detached: the state a taped advance ends at."""
        return tuple([o.detach() for o in self.open.out])

    def reopen(self, k: int) -> None:
        """x_k restored from a snapshot: where a kept stretch ends at x_k (its output, the same values), it is
        the open one again, so that steps run taped from x_k next continue its graph rather than start
        another one (one backward for both, as plain autograd's, in place of two)."""
        tape = self.tapes.get(k - 1)
        self.open = tape if tape is not None and tape.stop == k else None

    def reverses(self, top: int, bottom: int) -> Iterator[int]:
        """The steps of `reverse top` .. `reverse bottom` (k, k-1, ... as the plan gives them) that are still to
        reverse, in turn: those a kept stretch's backward reversed with a later step skipped. Read as the caller
        reverses each (take moves reversed_from)."""
        k = top
        while k >= bottom:
            done = self.reversed_from
            if done is not None and k >= done:
                self.open = None  # as take leaves it
                k = done - 1
                continue
            yield k
            k -= 1

    def take(self, k: int, current: Optional[Parts], run: Run, leaves: Leaves) -> Tape:
        """For `reverse k` (one that reverses yields): the tape through step k, ending there (step k re-run with
        grad from x_k = current where none is kept: as the open stretch's continuation where that ends at x_k),
        and its steps taken off."""
        tape, self.open = self.open, None
        if tape is None or tape.stop != k or k in self.tapes:
            tape = self.tapes.get(k)
        if tape is None:  # not kept: re-run step k with grad from x_k
            with torch.enable_grad():
                tape = _run_from(k, current, run, leaves)
        elif tape.stop == k:  # x_k is the open stretch's output: step k re-run as its continuation
            with torch.enable_grad():
                tape.out = run(k, tape.out)
            tape.stop = k + 1
        if tape.stop != k + 1:
            raise AssertionError(f"remat.torch: reverse {k} inside a kept stretch {tape.start}..{tape.stop - 1}")
        for j in range(tape.start, k + 1):
            self.tapes.pop(j, None)
        self.reversed_from = tape.start
        return tape

    def clear(self) -> None:
        self.tapes.clear()
        self.open = None


def backpropagate(tape: Tape, adjoint: Sequence[Optional[torch.Tensor]], params: Sequence[torch.Tensor] = (),
                  positions: Sequence[int] = (), sums: Optional[List[Optional[torch.Tensor]]] = None,
                  accumulate: bool = False, through_grad_fields: bool = False,
                  autocast: Optional[AutocastState] = None) -> List[Optional[torch.Tensor]]:
    """Back-propagates `adjoint` (x_stop's parts' gradients, None where none) through the tape; returns the
    gradients of its leaves (None where a leaf is not differentiated).

    accumulate=False: one torch.autograd.grad over the leaves and `params`; parameter params[i]'s gradient
    becomes sums[positions[i]], its running sum (where one is there) entering the graph first, through a view
    made now, so that a parameter shared with stretches reversed before sums in plain autograd's order: the
    caller returns the sums from its autograd.Function's backward, so that they reach the parameters as
    plain autograd's would (torch.autograd.grad on the output included).

    through_grad_fields=True (where sums_through_grad_fields(params) and backward_adds_to(params)): the same
    sums, read from the parameters' .grad after one torch.autograd.backward with each .grad set aside and None
    (AccumulateGrad then sets it to the sum, running sum first, as autograd.grad's capture would have it),
    each set back after. Bit-equal to the above, without `inputs=`: with it the engine first walks the whole
    graph to mark what leads to them (GraphTask::init_to_execute, a hash-map entry per node: 18 of the 41
    million instructions by which a 1000-step GRUCell loop's backward exceeded torch.utils.checkpoint
    segments' at equal memory, callgrind).

    accumulate=True: one torch.autograd.backward, as torch.utils.checkpoint does: every leaf the graph reaches
    accumulates its gradient into its .grad (the parameters as plain autograd's backward does, where each
    gets its gradient from this stretch alone), and the tape's leaves' .grad are returned.

    autocast: the settings the engine call runs under, where they are not those in force (the caller's backward's,
    while the re-runs run under the forward's: AutocastState.differing_now)."""
    with autocast.entered() if autocast is not None else nullcontext():
        return _backpropagate(tape, adjoint, params, positions, sums, accumulate, through_grad_fields)


def _backpropagate(tape, adjoint, params, positions, sums, accumulate, through_grad_fields):
    outputs, grad_outputs = [], []
    for o, g in zip(tape.out, adjoint):
        if g is not None and o.requires_grad:
            outputs.append(o)
            grad_outputs.append(g)
    leaves = tape.leaves
    if accumulate:
        if outputs:
            torch.autograd.backward(outputs, grad_outputs)
        return [leaf.grad if leaf.requires_grad else None for leaf in leaves]
    with torch.enable_grad():
        for p, i in zip(params, positions):
            s = sums[i]
            if s is not None:
                outputs.append(p.view_as(p))
                grad_outputs.append(s)
    inputs = differentiated(leaves)
    if not outputs or not (inputs or params):
        return [None] * len(leaves)
    if through_grad_fields:
        return _backward_through_grad_fields(outputs, grad_outputs, leaves, params, positions, sums)
    got = torch.autograd.grad(outputs, inputs + list(params), grad_outputs, allow_unused=True)
    for i, g in zip(positions, got[len(inputs):]):
        if g is not None:
            sums[i] = g
    state_grads = iter(got[:len(inputs)])
    grads: List[Optional[torch.Tensor]] = []
    for leaf in leaves:
        g = next(state_grads) if leaf.requires_grad else None
        # a StretchInput's gradient is handed to it by its Function's backward (its token's is None)
        grads.append(leaf.grad if isinstance(leaf, StretchInput) else g)
    return grads


def _backward_through_grad_fields(outputs, grad_outputs, leaves, params, positions, sums):
    """backpropagate's through_grad_fields=True: the tape's leaves are its own (fresh detached tensors or
    StretchInputs), so their .grad is this backward's gradient alone."""
    held = [p.grad for p in params]
    for p in params:
        p.grad = None
    try:
        torch.autograd.backward(outputs, grad_outputs)
    finally:
        for p, h, i in zip(params, held, positions):
            g = p.grad
            if g is not None:
                sums[i] = g
            p.grad = h
    return [leaf.grad if leaf.requires_grad else None for leaf in leaves]


#: Frameworks that watch gradients through hooks on the parameters' AccumulateGrad nodes, which Python cannot
#: see (torch 1.13 gives no getter): imported, the stretches' sums are never read through .grad.
_ACCUMULATOR_HOOKERS = ("horovod.torch", "apex.parallel", "deepspeed")


def sums_through_grad_fields(params: Sequence[torch.Tensor]) -> bool:
    """Whether backpropagate may sum these parameters' gradients through their .grad (through_grad_fields):
    only leaves (a tensor with a graph of its own, a loop's context, passes its gradient on through that
    graph, not into a .grad), none with hooks (a hook, run by the AccumulateGrad node, would see each stretch's
    running sum, not the total once), one Python thread (another thread's backward through the same parameters,
    which PyTorch allows, would add to a .grad set aside meanwhile: wrong sums, or an error inside
    AccumulateGrad), and no distributed process group or framework known to hook the AccumulateGrad nodes
    (DistributedDataParallel, Horovod, apex, DeepSpeed: such hooks would run once per stretch). A hook put on
    an AccumulateGrad node by hand is not seen: it runs once per stretch here (docs/python.md)."""
    if threading.active_count() != 1 or any(name in sys.modules for name in _ACCUMULATOR_HOOKERS):
        return False
    if any(p.grad_fn is not None or p._backward_hooks or getattr(p, "_post_accumulate_grad_hooks", None)
           for p in params):
        return False
    distributed = getattr(torch, "distributed", None)
    return not (distributed is not None and distributed.is_available() and distributed.is_initialized())


def accumulators(params: Sequence[torch.Tensor]) -> list:
    """Each leaf's AccumulateGrad node: what a backward runs to add to its .grad."""
    with torch.enable_grad():
        return [p.expand_as(p).grad_fn.next_functions[0][0] for p in params]


def backward_adds_to(nodes: Sequence) -> bool:
    """Inside a backward: whether it runs every one of these AccumulateGrad nodes (`accumulators`), adding to
    their leaves' .grad (loss.backward(), not torch.autograd.grad or backward(inputs=...) leaving one out).
    Only then may the stretches' backward run without inputs= (through_grad_fields): it also adds to the .grad
    of any other leaf its graph reaches (a tensor requiring grad that a middle step closes over, which the
    loop's leaf check does not see), which the caller's own backward then does too, but torch.autograd.grad
    never. auto_checkpoint asks it too, to let each stretch's backward add to the parameters' .grad."""
    will = getattr(torch._C, "_will_engine_execute_node", None)
    if will is None:
        return False
    try:
        return all(map(will, nodes))
    except RuntimeError:  # torch.autograd.grad asked for a parameter's gradient
        return False
