"""remat.torch.checkpoint_loop: a T-step loop x_{k+1} = step(k, x_k) differentiated by autograd within a
given number of snapshots (or bytes), along remat's optimal schedule (revolve; online revolve when T is
learned as the loop runs).

How it runs (docs/python.md): one torch.autograd.Function. Its forward walks the plan's actions up to the
first `reverse` under no_grad (storing snapshots as told), then runs the last step with grad enabled and keeps
that graph. Its backward walks the rest: `advance` runs steps under no_grad, `store`/`restore`/`free` move
snapshots, and `reverse K` re-runs step K with grad enabled from x_K and back-propagates the incoming gradient
through it with torch.autograd.grad, passing on the gradient of x_K and summing the parameters' gradients.

Gradients equal plain autograd's bit for bit on the CPU: each re-run builds the same graph as the plain loop
builds for that step, and a parameter's running sum enters each step's backward first (as the plain
backward's buffer does), so every addition happens in the same order.
"""

from __future__ import annotations

import itertools
from typing import Callable, List, Optional, Sequence

import torch

from .. import _remat
from .._bytes import parse_bytes
from .._errors import ArgumentError, CapacityError
from .._plans import plan_for_budget, revolve
from ._rng import RngStates
from ._snapshots import make_slots
from ._state import StateSpec


def _discover_parameters(step, spec: StateSpec, x0_parts, rng: Optional[RngStates]):
    """The tensors requiring grad that step 0 reaches besides its input (the leaves of its autograd graph):
    a function's closure parameters. Runs step 0 once with grad enabled; returns (parameters, x_1's parts,
    the RNG state before step 0) so that the loop does not run step 0 again."""
    before = rng.get() if rng is not None else None
    with torch.enable_grad():
        leaves = [p.detach().requires_grad_() if d else p for p, d in zip(x0_parts, spec.differentiable)]
        out = spec.check(0, _call(step, 0, spec.pack(leaves)))
    found, seen = [], {id(l) for l in leaves}
    stack = [o.grad_fn for o in out if o.grad_fn is not None]
    visited = set()
    while stack:
        node = stack.pop()
        if node is None or node in visited:
            continue
        visited.add(node)
        variable = getattr(node, "variable", None)
        if variable is not None and id(variable) not in seen:
            seen.add(id(variable))
            found.append(variable)
        stack.extend(n for n, _ in node.next_functions)
    return found, tuple(o.detach() for o in out), before


def _call(step, k: int, x):
    try:
        return step(k, x)
    except BaseException as e:
        if hasattr(e, "add_note") and not getattr(e, "_remat_noted", False):
            e.add_note(f"(raised by step {k} of remat.torch.checkpoint_loop)")
            e._remat_noted = True
        raise


class _Loop:
    """Everything one checkpoint_loop call needs, from its forward to the end of its backward."""

    def __init__(self, step, spec: StateSpec, params: List[torch.Tensor], rng: Optional[RngStates], slots,
                 actions=None, online=None, until=None, first=None):
        self.step = step
        self.spec = spec
        self.params = params
        self.rng = rng
        self.slots = slots
        self.actions = actions  # offline: an iterator over the plan's actions
        self.online = online  # online: the remat OnlineCursor
        self.until = until
        self.first = first  # (x_1's parts, the RNG state before step 0) when step 0 already ran
        self.current = None
        self.kept = None  # (K, leaves, outputs): step K's graph kept by the forward

    # -- running steps -------------------------------------------------------------------------------------
    def run(self, k: int, parts):
        if k == 0 and self.first is not None:
            x1, _ = self.first
            self.first = None
            return x1
        return self.spec.check(k, _call(self.step, k, self.spec.pack(parts)))

    def apply(self, a) -> None:
        """One action other than reverse."""
        kind = a.kind
        if kind == "advance":
            for k in range(a.start, a.stop):
                self.current = self.run(k, self.current)
        elif kind == "store":
            rng = None
            if self.rng is not None:
                rng = self.first[1] if (a.step == 0 and self.first is not None) else self.rng.get()
            self.slots.store(a.slot, a.step, self.current, rng)
        elif kind == "restore":
            self.current, rng = self.slots.restore(a.slot, a.step)
            if self.rng is not None:
                self.rng.set(rng)
        elif kind == "free":
            self.slots.free(a.slot)
        else:
            raise AssertionError(f"remat.torch: unexpected action {a}")

    # -- the forward sweep ---------------------------------------------------------------------------------
    def forward(self, x0_parts):
        self.current = tuple(x0_parts)
        if self.online is None:
            for a in self.actions:
                if a.kind == "reverse":
                    return self._keep_last(a.step)
                self.apply(a)
            raise AssertionError("remat.torch: the plan has no reverse action")
        cursor = self.online
        k = 0
        while True:
            if k >= 1 and self.until(k, self.spec.pack(self.current)):
                cursor.end_state()
                return self.current
            cursor.answer(False)
            for a in cursor.take():
                self.apply(a)
            k += 1

    def _keep_last(self, k: int):
        """x_{T-1} is current: run step T-1 keeping its graph for `reverse T-1`, and return x_T."""
        if self.first is not None:  # T = 1: step 0 ran without its graph; run it again from its RNG state
            if self.rng is not None:
                self.rng.set(self.first[1])
            self.first = None
        with torch.enable_grad():
            leaves = self._leaves(self.current)
            out = self.run(k, leaves)
        self.kept = (k, leaves, out)
        self.current = None
        return tuple(o.detach() for o in out)

    # -- the reverse sweep ---------------------------------------------------------------------------------
    def _leaves(self, parts):
        return tuple(p.detach().requires_grad_() if d else p.detach() for p, d in zip(parts, self.spec.differentiable))

    def backward(self, grads):
        adjoint = list(grads)
        sums: List[Optional[torch.Tensor]] = [None] * len(self.params)
        if self.kept is not None:  # `reverse T-1`, which the forward took from the plan
            adjoint = self._reverse(self.kept[0], adjoint, sums)
        for a in self._remaining():
            if a.kind == "reverse":
                adjoint = self._reverse(a.step, adjoint, sums)
            else:
                self.apply(a)
        return adjoint, sums

    def _remaining(self):
        if self.online is None:
            return self.actions
        return itertools.chain.from_iterable(iter(self.online.take, []))

    def _reverse(self, k: int, adjoint, sums):
        if self.kept is not None and self.kept[0] == k:
            _, leaves, out = self.kept
            self.kept = None
        else:
            with torch.enable_grad():
                leaves = self._leaves(self.current)
                out = self.run(k, leaves)
        self.current = None
        outputs, grad_outputs = [], []
        for o, g in zip(out, adjoint):
            if g is not None and o.requires_grad:
                outputs.append(o)
                grad_outputs.append(g)
        # A parameter's running sum enters first (a view made after the step's graph runs first), so that
        # its additions happen in the plain backward's order.
        with torch.enable_grad():
            for p, s in zip(self.params, sums):
                if s is not None:
                    outputs.append(p.view_as(p))
                    grad_outputs.append(s)
        inputs = [l for l in leaves if l.requires_grad]
        if not outputs or not (inputs or self.params):
            return [None] * len(leaves)
        got = torch.autograd.grad(outputs, inputs + self.params, grad_outputs, allow_unused=True)
        state_grads = iter(got[:len(inputs)])
        new_adjoint = [next(state_grads) if l.requires_grad else None for l in leaves]
        for i, g in enumerate(got[len(inputs):]):
            if g is not None:
                sums[i] = g
        return new_adjoint

    def close(self) -> None:
        """Frees every snapshot, the kept graph and the schedule (after the backward, or a failure)."""
        self.kept = None
        self.current = None
        self.actions = None
        self.online = None
        self.first = None
        if self.slots is not None:
            slots, self.slots = self.slots, None
            slots.close()


class _CheckpointLoop(torch.autograd.Function):
    @staticmethod
    def forward(ctx, loop: _Loop, *tensors):
        x0 = tensors[:len(loop.spec.shapes)]
        try:
            out = loop.forward(x0)
        except BaseException:
            loop.close()
            raise
        ctx.loop = loop
        ctx.state_parts = len(x0)
        return tuple(out)

    @staticmethod
    def backward(ctx, *grads):
        loop: _Loop = ctx.loop
        if loop.slots is None:
            raise RuntimeError("remat.torch.checkpoint_loop: backward through the same loop twice (its snapshots "
                               "are freed by the first backward)")
        devices = loop.rng.devices if loop.rng is not None else []
        try:
            with torch.random.fork_rng(devices=devices, enabled=loop.rng is not None):
                adjoint, sums = loop.backward(grads)
        finally:
            loop.close()
        x0_grads = [g if ctx.needs_input_grad[1 + i] else None for i, g in enumerate(adjoint)]
        return (None, *x0_grads, *sums)


def checkpoint_loop(step: Callable, x0, steps: Optional[int] = None, *, slots: Optional[int] = None,
                    budget=None, until: Optional[Callable] = None, snapshots: str = "device",
                    directory: Optional[str] = None, params: Optional[Sequence[torch.Tensor]] = None,
                    preserve_rng_state: bool = True):
    """x_T of the loop x_{k+1} = step(k, x_k), k = 0..T-1, differentiable by autograd, holding at most
    `slots` snapshots of the state (x_0's included) or as many as `budget` bytes hold, along revolve's
    optimal schedule: the fewest recomputed steps for that memory.

    step: a function or an nn.Module called as step(k, x) -> x_{k+1}; it must return new tensors of the
      state's shapes, dtypes and devices (remat.ArgumentError naming step k otherwise) and not modify x_k in
      place. Its parameters receive gradients: an nn.Module's own, the tensors given as `params`, or else the
      tensors requiring grad that step 0's autograd graph reaches (found by running step 0 with grad on).
    x0: a tensor or a tuple of tensors.
    steps: T. Or until(k, x_k) -> bool, asked at each x_k (k >= 1), True when x_k is the final state: the
      online schedule then decides which states to keep as the loop goes.
    budget: bytes for snapshots (an int or a string such as "64MiB"), each the state's bytes plus its RNG
      state's when preserve_rng_state.
    snapshots: "device" (the state's tensors where they are), "host" (copies in host memory) or "disk"
      (remat's HDF5 level, in a directory of its own under `directory`, removed when done).
    preserve_rng_state: save the RNG states with each snapshot and set them again where a step is
      recomputed, so that dropout replays the same masks (as torch.utils.checkpoint does).

        h = remat.torch.checkpoint_loop(lambda k, h: cell(inputs[k], h), h0, steps=1000, slots=32)
        h.sum().backward()
    """
    spec = StateSpec(x0)
    if (steps is None) == (until is None):
        raise ArgumentError("remat.torch.checkpoint_loop: give steps= (T known up front) or until= (T learned as "
                            "the loop runs), one of them")
    if (slots is None) == (budget is None):
        raise ArgumentError("remat.torch.checkpoint_loop: give slots= or budget=, one of them")
    x0_parts = spec.parts(x0)
    is_module = isinstance(step, torch.nn.Module)
    first = None
    rng_probe = [p for p in x0_parts] + (list(params) if params is not None else
                                         list(step.parameters()) if is_module else [])
    rng = RngStates(rng_probe) if preserve_rng_state else None
    snapshot_bytes = spec.nbytes + (rng.nbytes if rng is not None else 0)
    if until is None:
        if budget is not None:
            slots = plan_for_budget(steps, parse_bytes(budget, "budget"), snapshot_bytes).slots
        plan = revolve(steps, slots)
        actions = itertools.chain.from_iterable(plan._schedule.batches())
        online = None
    else:
        if budget is not None:
            budget_bytes = parse_bytes(budget, "budget")
            slots = budget_bytes // snapshot_bytes
            if slots == 0:
                raise CapacityError(f"remat.torch.checkpoint_loop: a budget of {budget_bytes} bytes holds no snapshot "
                                    f"of {snapshot_bytes} bytes; at least one is needed")
        actions = None
        online = _remat.OnlineCursor(slots)
        if until(0, x0):  # a loop of no steps
            return x0
    if params is not None:
        found = list(params)
    elif is_module:
        found = [p for p in step.parameters() if p.requires_grad]
    else:
        found, x1, before = _discover_parameters(step, spec, x0_parts, rng)
        first = (x1, before)
    unique, seen = [], set()
    for p in found:
        if id(p) not in seen and p.requires_grad:
            seen.add(id(p))
            unique.append(p)
    placement = make_slots(snapshots, spec, slots, directory)
    loop = _Loop(step, spec, unique, rng, placement, actions=actions, online=online, until=until, first=first)
    out = _CheckpointLoop.apply(loop, *x0_parts, *unique)
    if not any(o.requires_grad for o in out):  # nothing to differentiate: no backward will free them
        loop.close()
    return spec.pack(out)
