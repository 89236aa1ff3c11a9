"""remat.torch.checkpoint_loop: a T-step loop x_{k+1} = step(k, x_k) differentiated by autograd within a
given number of snapshots (or bytes), along remat's optimal schedule (revolve; online revolve when T is
learned as the loop runs).

How it runs (docs/python.md): one torch.autograd.Function. Its forward walks the plan's actions up to the
first `reverse` under no_grad (storing snapshots as told), then runs the last step with grad enabled and keeps
that graph. Its backward walks the rest: `advance` runs steps under no_grad, `store`/`restore`/`free` move
snapshots, and `reverse K` re-runs step K with grad enabled from x_K and back-propagates the incoming gradient
through it (one torch.autograd.backward, or torch.autograd.grad where the parameters' .grad cannot be used:
_stretch.backpropagate), passing on the gradient of x_K and summing the parameters' gradients. Steps advanced
taped one after the other (taped=True) make one graph, as the plain loop's, reversed by one backward through
the whole stretch.

Gradients equal plain autograd's bit for bit on the CPU: each re-run builds the same graph as the plain loop
builds for that step, and a parameter's running sum enters each step's backward first (as the plain
backward's buffer does), so every addition happens in the same order.
"""

from __future__ import annotations

import atexit
import functools
import gc
import itertools
import math
import os
import weakref
from contextlib import nullcontext
from typing import Callable, Dict, List, Optional, Sequence, Union

import torch

from .. import _remat
from .._args import INT64_MAX, count, flag
from .._bytes import Bytes, parse_bytes
from .._errors import ArgumentError, BackwardError, CapacityError
from .._plans import plan_for_budget, revolve, taped_revolve
from ._action_groups import Reverses, grouped
from ._autocast import AutocastState
from ._autocast import settings_key as autocast_settings
from ._contexts import ContextRecorder, context_over
from ._graph import leaves_reached
from ._inside import runtime
from ._modes import ForwardModes
from ._norm_stats import LoopBuffers
from ._reruns import rerunning
from ._rng import RngStates
from ._saved import storage_key
from ._snapshots import PLACEMENTS, make_slots
from ._state import State, StateSpec
from ._stretch import Stretches, Tape, accumulators, backpropagate, backward_adds_to, sums_through_grad_fields
from ._versions import modified, versions


def _discover_parameters(step, spec: StateSpec, x0_parts, rng: Optional[RngStates], saved=None):
    """The tensors requiring grad that step 0 reaches besides its input: its contexts (_contexts.py: tensors
    with a graph of their own that it computes from, as a decoder's encoder outputs) and the leaves of its
    autograd graph up to those (a function's closure parameters). Runs step 0 once with grad enabled; returns
    (parameters, x_1's parts,
    the RNG state before step 0, step 0's graph as (leaves, outputs)) so that the loop does not run step 0
    again. `saved`, a dict, receives {storage key: bytes} of every tensor the graph saves (a tape's size)."""
    before = rng.get() if rng is not None else None

    def pack(t):
        key, nbytes = storage_key(t)
        saved[key] = nbytes
        # detached: a saved output packed as itself is a cycle through its own grad_fn that Python's collector
        # cannot see, so step 0's graph lived forever where no backward ran (a forward alone, or a failure)
        return t.detach()

    hooks = torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t) if saved is not None else nullcontext()
    recorder = ContextRecorder()
    with torch.enable_grad(), hooks:
        leaves = tuple(p.detach().requires_grad_() if d else p.detach() for p, d in zip(x0_parts, spec.differentiable))
        with recorder:
            out = _checked_call(step, spec, 0, leaves)
    found = recorder.contexts(leaves)
    del recorder
    seen = {id(t) for t in (*leaves, *found)}
    # a context's graph is not the step's: its leaves are reached through it
    for variable in leaves_reached((o.grad_fn for o in out), stop=[c.grad_fn for c in found]):
        if id(variable) not in seen:
            seen.add(id(variable))
            found.append(variable)
    both = context_over([t for t in found if t.grad_fn is not None], [t for t in found if t.grad_fn is None])
    if both is not None:
        raise ArgumentError(
            f"remat.torch.checkpoint_loop: step 0 differentiates a tensor (shape {tuple(both[1].shape)}) both "
            f"directly and through a tensor computed from it before the loop (shape {tuple(both[0].shape)}); each "
            f"step's backward would go through the graph that computed the latter, which only one backward can: "
            f"compute it inside the step, or use the tensor through it alone")
    return found, tuple(o.detach() for o in out), before, (leaves, out)


@functools.lru_cache(maxsize=32)
def _taped_plan(steps: int, units: int, tape_units: int, rerun_units: int):
    """remat.taped_revolve's plan, kept for the next iteration of the same loop (its table takes a while: 0.04 s
    at T = 400); each use makes a new pass over its actions."""
    return taped_revolve(steps, units, tape_units, rerun_units=rerun_units)


@functools.lru_cache(maxsize=4)
def _taped_actions(steps: int, units: int, tape_units: int, rerun_units: int) -> tuple:
    """The plan's actions as Python objects (immutable values), taped runs grouped (_action_groups.py), kept too
    for loops of at most 20000 steps (a few MiB each): making the 3000 of T = 1000 again at every iteration took
    0.7 ms, grouping them 0.5 ms."""
    plan = _taped_plan(steps, units, tape_units, rerun_units)
    return tuple(grouped(itertools.chain.from_iterable(plan._schedule.batches())))


atexit.register(_taped_plan.cache_clear)  # release the plans before the extension's own teardown
atexit.register(_taped_actions.cache_clear)


#: Per step (a function or module, weakly held): {(the state's shapes, dtypes and devices, the autocast settings,
#: a module step's modes and which of its parameters require grad): its tape's bytes} as measured on its first
#: taped call. Finding the storages alive before step 0 walks every object Python holds (0.02-0.03 s with PyTorch
#: loaded, docs/python.md), which a training loop's later calls with the same step need not repeat.
_tape_bytes: "weakref.WeakKeyDictionary[object, Dict[tuple, int]]" = weakref.WeakKeyDictionary()


def _tape_key(step, spec: StateSpec, modes: Optional[ForwardModes]) -> tuple:
    # What a step's graph saves depends on these besides the state: autocast (its low-precision copies of the
    # weights are the step's own tensors), a module's submodules' modes (a Dropout in training mode saves its
    # mask) and which parameters require grad (a layer's input is saved for its weight's gradient). A size
    # measured outside autocast, in eval mode or with a layer frozen and reused otherwise held 5.5x, 2.5x and
    # 1.7x the budget.
    state = (tuple(map(tuple, spec.shapes)), tuple(spec.dtypes), tuple(spec.devices), autocast_settings())
    if modes is None:  # not a module
        return state
    return state + (modes.flags, tuple(p.requires_grad for p in step.parameters()))


def _known_tape_bytes(step, spec: StateSpec, modes: Optional[ForwardModes]) -> Optional[int]:
    try:
        return _tape_bytes.get(step, {}).get(_tape_key(step, spec, modes))
    except TypeError:  # a step that cannot be weakly referenced (or hashed): measured at every call
        return None


def _remember_tape_bytes(step, spec: StateSpec, modes: Optional[ForwardModes], nbytes: int) -> None:
    try:
        _tape_bytes.setdefault(step, {})[_tape_key(step, spec, modes)] = nbytes
    except TypeError:
        pass


def _live_storages():
    """The storages of every tensor Python holds now (a closure's data, the parameters): not a tape's."""
    keys = set()
    tensor = torch.Tensor
    for obj in gc.get_objects():
        try:
            # type(), not isinstance(): the latter asks obj's __class__, which some module objects warn about
            if issubclass(type(obj), tensor) and not obj.is_sparse:
                keys.add(storage_key(obj)[0])
        except (RuntimeError, ReferenceError):
            pass
    return keys


def _checked_call(step, spec: StateSpec, k: int, parts):
    """x_{k+1}'s parts from step k, checked to be a state like x_0 and x_k left as it was."""
    before = versions(parts)
    out = spec.check(k, _call(step, k, spec.pack(parts)))
    i = modified(parts, before)
    if i >= 0:
        where = f" (part {i})" if spec.is_tuple else ""
        raise ArgumentError(f"remat.torch: step {k} modified its input x_{k}{where} in place; a step must return new "
                            f"tensors and leave x_k as it found it (remat keeps x_k as a snapshot and re-runs steps "
                            f"from it)")
    return out


def _left_as_it_was(spec: StateSpec, first, before, start: int, stop: int) -> None:
    """After steps start..stop-1 ran one after the other from x_start = first (whose version counters were
    `before`): remat.ArgumentError where a step after the first modified in place a tensor of x_start that the
    steps before it passed on as part of their output (step `start` itself is checked as it runs)."""
    i = modified(first, before)
    if i >= 0:
        where = f" (part {i})" if spec.is_tuple else ""
        raise ArgumentError(f"remat.torch: one of steps {start + 1}..{stop - 1} modified x_{start}{where} in place, "
                            f"which the steps before it passed on as part of their output; a step must return new "
                            f"tensors and leave its input as it found it (remat keeps x_{start} as a snapshot and "
                            f"re-runs steps from it)")


def _call(step, k: int, x):
    try:
        return step(k, x)
    except BaseException as e:
        _note(e, k)
        raise


def _note(e: BaseException, k: int) -> None:
    """Names the step on an exception it raised (once, on Python 3.11)."""
    if hasattr(e, "add_note") and not getattr(e, "_remat_noted", False):
        e.add_note(f"(raised by step {k} of remat.torch.checkpoint_loop)")
        e._remat_noted = True


def _runner_on(step, spec: StateSpec):
    """run_on(k, parts): step k from x_k = parts that step k-1 made in the same run (k > 0), only what it returns
    checked (to be a state like x_0). Nothing but this run holds x_k (a store ends a run), so an in-place change
    of it is the plain loop's own (autograd refuses it where a graph saved x_k), unless x_k shares a tensor with
    the run's first state (a step passing a part on as it is), which _left_as_it_was checks once the run ends.
    Reading two version counters around every step cost 1 us a step (0.4% of a 1000-step GRUCell loop); the
    rest is one function, a tensor state checked in line (four calls a step were another 0.3%)."""
    check = spec.check
    if spec.is_tuple:
        def run_on(k: int, parts):
            try:
                x = step(k, tuple(parts))
            except BaseException as e:
                _note(e, k)
                raise
            return check(k, x)

        return run_on
    shape, dtype, device, tensor = spec.shapes[0], spec.dtypes[0], spec.devices[0], torch.Tensor

    def run_on(k: int, parts):
        try:
            x = step(k, parts[0])
        except BaseException as e:
            _note(e, k)
            raise
        if isinstance(x, tensor) and x.shape == shape and x.dtype == dtype and x.device == device:
            return (x,)
        return check(k, x)

    return run_on


class _LeafCheck:
    """Finds, at the backward's first reverse (the graph of the loop's last steps), a tensor requiring grad that the
    graph reaches (a leaf: its AccumulateGrad node's variable) and the loop does not differentiate. The
    parameters are found once, on step 0 (or given): a step that differentiates another tensor (a function step
    running layers[k]: every layer but layers[0]) had it left out, its gradient silently lost (None where plain
    autograd's is there).

    One graph is read, not every re-run's: the walk costs a few microseconds a node in Python, and reading each
    step's graph took 12% of a 1000-step GRUCell(32, 64) loop's CPU time (taped, at the 32-step segments'
    memory: loop_bench.py). A step that differentiates a tensor at some steps only (neither step 0 nor the last
    ones) is not found: give it as params=."""

    def __init__(self, params: Sequence[torch.Tensor]):
        self.known = {id(p) for p in params}
        # a context's graph (and the leaves behind it) is not the steps': its gradient is handed back at it
        self.outside: set = {p.grad_fn for p in params if p.grad_fn is not None}
        self.read = False

    def stop_at(self, nodes) -> None:
        """The graph's nodes where the walk stops (x_{T-1}'s, where step T-1 continues a stretch: walking the
        whole stretch, the loop's 1000 GRUCell steps with room for every tape, was 21,000 nodes, 15 ms)."""
        self.outside |= {n for n in nodes if n is not None}

    def unknown_leaf(self, outputs, leaves) -> Optional[torch.Tensor]:
        if self.read:
            return None
        self.read = True
        known = self.known | {id(leaf) for leaf in leaves}
        return next((v for v in leaves_reached((o.grad_fn for o in outputs), self.outside) if id(v) not in known),
                    None)


#: `_Loop.current` after a taped advance: x_{k+1} is the open stretch's output, detached only when read (a
#: store, an advance without grad, a reverse from it). Most taped advances are followed by another, which
#: continues the graph from that output itself, so the detach (2.5 us) would be wasted there.
_OPEN_OUTPUT = object()


class _Loop:
    """Everything one checkpoint_loop call needs, from its forward to the end of its backward."""

    def __init__(self, step, spec: StateSpec, params: List[torch.Tensor], rng: Optional[RngStates], slots,
                 actions=None, online=None, until=None, first=None, buffers: Optional[LoopBuffers] = None,
                 modes: Optional[ForwardModes] = None):
        self.step = step
        # a module step's submodules' modes in the forward, entered again for the backward's re-runs
        self.modes = modes
        # a module step's buffers (None for a function): its others kept with each snapshot (_norm_stats.py)
        self.buffers = buffers
        self.spec = spec
        self.params = params
        self.rng = rng
        self.slots = slots
        # offline: an iterator over the plan's actions, taped runs grouped (_action_groups.grouped)
        self.actions = actions
        self.online = online  # online: the remat OnlineCursor
        self.until = until
        self.found_by = "those step 0 differentiates"  # how the parameters were found, for a refusal's message
        # (x_1's parts, the RNG state before step 0, step 0's graph or None) when step 0 already ran
        self.first = first
        self.current = None
        self.kept: Optional[int] = None  # K: the step whose graph the forward kept for the first reverse
        self.pending: Optional[Reverses] = None  # the reverses after K's that the forward took from the plan
        self.stretches = Stretches()
        self.positions = range(len(params))  # params[i]'s gradient sum is sums[i]
        self.leaf_check = _LeafCheck(params)  # finds a tensor the steps differentiate that params leaves out
        self.run_on = _runner_on(step, spec)  # the steps of a run after its first (_runner_on)
        self.through_grad_fields = False  # the parameters' sums read from their .grad (_stretch.backpropagate)

    # -- running steps -------------------------------------------------------------------------------------
    def _now(self):
        """The current state's parts (the open stretch's output detached, after a taped advance)."""
        if self.current is _OPEN_OUTPUT:
            self.current = self.stretches.output()
        return self.current

    def run(self, k: int, parts):
        """Step k from x_k = parts, the first of a run: checked to leave x_k as it was (a snapshot, or what
        one will hold, or x_0) and to return a state like x_0."""
        if k == 0 and self.first is not None:
            x1 = self.first[0]
            self.first = None
            return x1
        return _checked_call(self.step, self.spec, k, parts)

    def apply(self, a) -> None:
        """One action other than reverse."""
        kind = a.kind
        if kind == "taped run":
            self._tape_run(a.start, a.stop)
        elif kind == "advance":
            if a.taped:
                self._tape(a.start)
                return
            self.stretches.open = None
            first = self._now()
            before = versions(first)
            current = self.run(a.start, first)
            run_on = self.run_on
            for k in range(a.start + 1, a.stop):
                current = run_on(k, current)
            _left_as_it_was(self.spec, first, before, a.start, a.stop)
            self.current = current
        elif kind == "store":
            rng = None
            if self.rng is not None:
                rng = self.first[1] if (a.step == 0 and self.first is not None) else self.rng.get()
            held = None if self.buffers is None else self.buffers.start if a.step == 0 else self.buffers.now()
            self.slots.store(a.slot, a.step, self._now(), (rng, held))
        elif kind == "restore":
            self.stretches.reopen(a.step)
            self.current, (rng, held) = self.slots.restore(a.slot, a.step)
            if self.rng is not None:
                self.rng.set(rng)
            if self.buffers is not None:
                self.buffers.set(held)
        elif kind == "free":
            self.slots.free(a.slot)
        else:
            raise AssertionError(f"remat.torch: unexpected action {a}")

    def _tape(self, k: int) -> None:
        """`advance k k+1 tape`: step k run with grad, its graph kept for `reverse k`; right after step
        k-1's taped advance, as the same graph's continuation."""
        if k == 0 and self.first is not None:
            x1, before, graph = self.first
            self.first = None
            if graph is not None:  # step 0's graph from its first run (taped=True keeps it)
                self.stretches.keep(Tape(0, *graph))
                self.current = x1
                return
            if self.rng is not None:
                self.rng.set(before)
            if self.buffers is not None:  # step 0 runs again: from the buffers it first ran from
                self.buffers.set(self.buffers.start)
        current = None if self.stretches.continues_at(k) else self._now()
        self.stretches.advance(k, current, self.run, self._leaves, detached=False)
        self.current = _OPEN_OUTPUT

    def _tape_run(self, start: int, stop: int) -> None:
        """Steps start..stop-1 advanced taped, one after the other: one stretch (continuing the open one where
        that ends at x_start), as _tape would make of them one by one."""
        if start == 0 and self.first is not None:
            self._tape(0)
            start = 1
        if start < stop:
            current = None if self.stretches.continues_at(start) else self._now()
            first = self.stretches.open.out if current is None else current
            before = versions(first)
            self.stretches.advance_run(start, stop, current, self.run, self._leaves, self.run_on)
            _left_as_it_was(self.spec, first, before, start, stop)
            self.current = _OPEN_OUTPUT

    # -- the forward sweep ---------------------------------------------------------------------------------
    def forward(self, x0_parts):
        self.current = tuple(x0_parts)
        if self.online is None:
            for a in self.actions:
                if a.kind == "reverse":
                    return self._keep_last(a.step)
                if a.kind == "reverses":  # the backward reverses the rest of them first
                    self.pending = Reverses(a.top - 1, a.bottom) if a.top > a.bottom else None
                    return self._keep_last(a.top)
                self.apply(a)
            raise AssertionError("remat.torch: the plan has no reverse action")
        cursor = self.online
        k = 0
        while True:
            if k >= 1 and self.until(k, self.spec.pack(self._now())):
                cursor.end_state()
                # x_T's own tensors as the outputs, held here too, made a cycle (output, its node, the loop) that
                # kept every snapshot until Python's collector ran; the backward restores what it needs
                out, self.current = self.current, None
                return tuple(o.detach() for o in out)
            cursor.answer(False)
            for a in cursor.take():
                self.apply(a)
            k += 1

    def _keep_last(self, k: int):
        """x_{T-1} is current: run step T-1 keeping its graph for `reverse T-1` (as a taped advance does;
        T = 1: step 0 again from its RNG state), and return x_T (or take that graph from a taped advance)."""
        if k not in self.stretches.tapes:
            if self.stretches.continues_at(k):  # the check reads step T-1's graph, not the stretch's before it
                self.leaf_check.stop_at(o.grad_fn for o in self.stretches.open.out)
            self._tape(k)
        self.kept = k
        self.stretches.open = None
        self.current = None
        return tuple(o.detach() for o in self.stretches.tapes[k].out)

    # -- the reverse sweep ---------------------------------------------------------------------------------
    def _leaves(self, k: int, parts):
        x = tuple(p.detach().requires_grad_() if d else p.detach() for p, d in zip(parts, self.spec.differentiable))
        return x, x

    def backward(self, grads, engine_autocast: Optional[AutocastState] = None):
        """(x_0's gradients, the parameters' gradient sums) from x_T's; the engine calls under `engine_autocast`
        where given (_reruns.py)."""
        adjoint = list(grads)
        sums: List[Optional[torch.Tensor]] = [None] * len(self.params)
        # read at each backward: hooks may have been registered since the forward
        self.through_grad_fields = (sums_through_grad_fields(self.params)
                                    and backward_adds_to(accumulators(self.params)))
        if self.kept is not None:  # `reverse T-1`, which the forward took from the plan
            adjoint = self._reverse(self.kept, adjoint, sums, engine_autocast)
        pending, self.pending = self.pending, None
        for a in itertools.chain((pending,) if pending is not None else (), self._remaining()):
            kind = a.kind
            if kind == "reverses" or kind == "reverse":  # grouped, or one by one (online revolve's)
                top, bottom = (a.top, a.bottom) if kind == "reverses" else (a.step, a.step)
                for k in self.stretches.reverses(top, bottom):
                    adjoint = self._reverse(k, adjoint, sums, engine_autocast)
            else:
                self.apply(a)
        return adjoint, sums

    def _remaining(self):
        if self.online is None:
            return self.actions
        return itertools.chain.from_iterable(iter(self.online.take, []))

    def _reverse(self, k: int, adjoint, sums, engine_autocast: Optional[AutocastState]):
        """Reverses step k and, where k ends a kept stretch, the stretch's other steps with it: one backward
        through the stretch's graph (the plain loop's own for those steps). Every step shares the parameters,
        so their gradients are summed here (in the plain backward's order, _stretch.backpropagate) and
        returned, never left added to .grad by each stretch."""
        self.kept = None
        tape = self.stretches.take(k, self._now(), self.run, self._leaves)
        self.current = None
        unknown = self.leaf_check.unknown_leaf(tape.out, tape.leaves)
        if unknown is not None:
            raise BackwardError(
                f"remat.torch.checkpoint_loop: step {k} uses a tensor requiring grad (shape {tuple(unknown.shape)}, "
                f"dtype {unknown.dtype}) that is not among the loop's parameters, which were "
                f"{self.found_by}; its gradient would be lost. Give every tensor the steps differentiate as "
                f"params= (params=layers.parameters() for a step that runs layers[k]; a tensor the steps use that "
                f"was computed from it before the loop, as an encoder's output a module step keeps, in its place)")
        return backpropagate(tape, adjoint, self.params, self.positions, sums,
                             through_grad_fields=self.through_grad_fields, autocast=engine_autocast)

    def close(self) -> None:
        """Frees every snapshot, the kept graph and the schedule (after the backward, or a failure)."""
        self.kept = None
        self.stretches.clear()
        self.current = None
        self.actions = None
        self.online = None
        self.first = None
        self.leaf_check = None
        if self.slots is not None:
            slots, self.slots = self.slots, None
            slots.close()


def _plain_loop(step, spec: StateSpec, x0, steps: Optional[int], until):
    """x_T as the plain loop computes it (each step's result checked to be a state like x_0)."""
    x, k = x0, 0
    while (k < steps) if until is None else not until(k, x):
        x = spec.pack(spec.check(k, _call(step, k, x)))
        k += 1
    return x


class _CheckpointLoop(torch.autograd.Function):
    @staticmethod
    def forward(ctx, loop: _Loop, *tensors):
        x0 = tensors[:len(loop.spec.shapes)]
        # the backward's re-runs run under the forward's autocast; both without its cache of casts (_autocast.py)
        ctx.autocast = AutocastState()
        try:
            with ctx.autocast.uncached():
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
            raise BackwardError("remat.torch.checkpoint_loop: backward through the same loop twice (its snapshots "
                                "are freed by the first backward)")
        try:
            if torch.is_grad_enabled():  # the engine runs a backward with grad on only for create_graph=True
                raise BackwardError("remat.torch.checkpoint_loop: double backward (create_graph=True) is not "
                                    "supported: the re-run steps' gradients would not be differentiable")
            with rerunning(loop.modes, loop.rng, ctx.autocast) as engine_autocast:
                # the re-runs must not update a module step's norm layers' running statistics again, and leave its
                # other buffers as the forward did (_norm_stats.py, LoopBuffers)
                if loop.buffers is not None:
                    loop.buffers.backward_begins()
                try:
                    adjoint, sums = loop.backward(grads, engine_autocast)
                finally:
                    if loop.buffers is not None:
                        loop.buffers.backward_ends()
        finally:
            loop.close()
        x0_grads = [g if ctx.needs_input_grad[1 + i] else None for i, g in enumerate(adjoint)]
        return (None, *x0_grads, *sums)


@runtime  # its steps run inside remat's runtime: an auto_checkpoint among them takes its parameters (_inside.py)
def checkpoint_loop(step: Union[Callable[[int, State], State], torch.nn.Module], x0: State,
                    steps: Optional[int] = None, *, slots: Optional[int] = None, budget: Optional[Bytes] = None,
                    until: Optional[Callable[[int, State], bool]] = None, snapshots: str = "device",
                    directory: Optional[str] = None, params: Optional[Sequence[torch.Tensor]] = None,
                    preserve_rng_state: bool = True, taped: bool = False) -> State:
    """x_T of the loop x_{k+1} = step(k, x_k), k = 0..T-1, differentiable by autograd, holding at most
    `slots` snapshots of the state (x_0's included) or as many as `budget` bytes hold, along revolve's
    optimal schedule: the fewest recomputed steps for that memory. Under no_grad or inference_mode it runs the
    plain loop (nothing is differentiated).

    step: a function or an nn.Module called as step(k, x) -> x_{k+1}; it must return new tensors of the
      state's shapes, dtypes and devices and not modify x_k in place (remat.ArgumentError naming step k
      otherwise, where x_k is a state remat keeps or re-runs from, or shares a tensor with one). A module
      step's norm layers (BatchNorm) update their running statistics once per step, as in the plain loop,
      not again in the backward's re-runs; its other buffers are kept with each snapshot and
      set back with it (spectral_norm's vectors: re-runs compute the forward's weights). Under torch.autocast
      the re-runs run under the forward's settings, without autocast's cache of casts (a parameter every step
      shares has its gradient summed in float32, not in the low precision as plain autograd's cached cast
      does). Its parameters receive gradients: an nn.Module's own, the tensors given as `params`, or else
      the tensors requiring grad that step 0's autograd graph reaches (found by running step 0 with grad on;
      a tensor with a graph of its own made before the loop, as inputs = embed(tokens), is taken itself, its
      gradient handed back once). A step that differentiates a tensor these leave out (layers[k]: give
      params=layers.parameters()) is refused in the backward (remat.BackwardError naming the step), where the
      last steps do (their graph is read once; a tensor only some middle steps use must be given as params).
    x0: a tensor or a tuple of tensors.
    steps: T (0: a loop of no steps, which returns x0). Or until(k, x_k) -> bool, asked at each x_k (x_0 first:
      True there is a loop of no steps, which returns x0), True when x_k is the final state: the
      online schedule then decides which states to keep as the loop goes.
    budget: bytes for snapshots (an int or a string such as "64MiB"), each the state's bytes plus its RNG
      state's when preserve_rng_state.
    snapshots: "device" (the state's tensors where they are), "host" (copies in host memory) or "disk"
      (remat's HDF5 level, in a directory of its own under `directory`, removed when done).
    preserve_rng_state: save the RNG states with each snapshot and set them again where a step is
      recomputed, so that dropout replays the same masks (as torch.utils.checkpoint does): the default
      generators' (a torch.Generator of the step's own is not seen; its draws differ in a re-run).
    taped: plan with remat.taped_revolve instead: the memory also holds steps' tapes (a step run with grad
      and its graph kept until its reverse, which then needs no re-run), a tape costing ceil(tape bytes /
      snapshot bytes) slots, the tape bytes measured on step 0 (what its graph saves, each storage once,
      parameters left out, plus the input state) of the first taped call with this step, state shapes and autocast
      settings (and a module step's modes, train()/eval(), and which of its parameters require grad).
      slots= counts snapshots and tapes (as without tapes, not the graph of a step while a reverse re-runs
      it); budget= is everything the loop holds at its peak, in bytes: snapshots, tapes, and the re-run
      step's graph (a tape) while a reverse from a snapshot runs, as the saved-tensor hooks measure it
      (bench/python/loop_bench.py). With room for T - 1 tapes (and, with budget=, one more), no step runs
      twice. Offline only (steps=); snapshots on the state's device.

        h = remat.torch.checkpoint_loop(lambda k, h: cell(inputs[k], h), h0, steps=1000, slots=32)
        h.sum().backward()
    """
    spec = StateSpec(x0)
    if not callable(step):
        raise ArgumentError(f"remat.torch.checkpoint_loop: step must be a function or an nn.Module called as "
                            f"step(k, x), got {type(step).__name__}")
    if until is not None and not callable(until):
        raise ArgumentError(f"remat.torch.checkpoint_loop: until must be a function called as until(k, x), got "
                            f"{type(until).__name__}")
    steps = None if steps is None else count(steps, "remat.torch.checkpoint_loop: steps")
    slots = None if slots is None else count(slots, "remat.torch.checkpoint_loop: slots")
    taped = flag(taped, "remat.torch.checkpoint_loop: taped")
    if not isinstance(snapshots, str) or snapshots not in PLACEMENTS:  # here: a loop of no steps checks it too
        raise ArgumentError(f"remat.torch.checkpoint_loop: snapshots must be one of {', '.join(PLACEMENTS)}, got "
                            f"{snapshots!r}")
    if directory is not None and not isinstance(directory, (str, os.PathLike)):
        raise ArgumentError(f"remat.torch.checkpoint_loop: directory must be a path (str or os.PathLike), got "
                            f"{type(directory).__name__}")
    preserve_rng_state = flag(preserve_rng_state, "remat.torch.checkpoint_loop: preserve_rng_state")
    if params is not None:  # a generator is read once, here
        # a tensor iterates over its rows (views, not the parameter the step uses: refused in the backward as a
        # tensor left out) and a module over nothing: both are the common slip for [t] and module.parameters()
        if isinstance(params, (torch.Tensor, torch.nn.Module)) or not hasattr(params, "__iter__"):
            hint = "[t] for one tensor" if isinstance(params, torch.Tensor) else "module.parameters() for a module"
            raise ArgumentError(f"remat.torch.checkpoint_loop: params must be an iterable of tensors ({hint}), got "
                                f"{type(params).__name__}")
        params = list(params)
        for i, p in enumerate(params):
            if not isinstance(p, torch.Tensor):
                raise ArgumentError(f"remat.torch.checkpoint_loop: params[{i}] is a {type(p).__name__}, not a tensor")
    if taped and until is not None:
        raise ArgumentError("remat.torch.checkpoint_loop: taped=True plans offline; give steps=, not until=")
    if taped and snapshots != "device":
        raise ArgumentError("remat.torch.checkpoint_loop: taped=True keeps snapshots and tapes on the state's device "
                            "(snapshots='device')")
    if (steps is None) == (until is None):
        raise ArgumentError("remat.torch.checkpoint_loop: give steps= (T known up front) or until= (T learned as "
                            "the loop runs), one of them")
    if (slots is None) == (budget is None):
        raise ArgumentError("remat.torch.checkpoint_loop: give slots= or budget=, one of them")
    x0_parts = spec.parts(x0)
    is_module = isinstance(step, torch.nn.Module)
    first = None
    buffers = LoopBuffers(step) if is_module else None  # x_0's: before step 0 first runs
    rng_probe = [p for p in x0_parts] + (list(params) if params is not None else
                                         list(step.parameters()) if is_module else [])
    rng = RngStates(rng_probe) if preserve_rng_state else None
    snapshot_bytes = spec.nbytes + (rng.nbytes if rng is not None else 0)
    # What a slot is priced at: a snapshot of no bytes (an empty batch, preserve_rng_state=False) as one byte,
    # so that a budget still counts slots (the library refused a state of 0 bytes, taped=True divided by it)
    unit = max(snapshot_bytes, 1)

    def slots_within(budget_bytes: int) -> int:
        # more slots than a 64-bit count never help (nor than steps): a huge budget is capped, not refused
        slots = min(budget_bytes // unit, INT64_MAX)
        if slots == 0:  # the RNG state is most of a small state's snapshot: say so, and how to leave it out
            parts = (f" (the state's {spec.nbytes} and its RNG state's {rng.nbytes}; preserve_rng_state=False "
                     "leaves the RNG state out)" if rng is not None else "")
            raise CapacityError(f"remat.torch.checkpoint_loop: a budget of {budget_bytes} bytes holds no snapshot "
                                f"of {snapshot_bytes} bytes{parts}; at least one is needed")
        return slots

    if steps is not None and steps < 0:
        raise ArgumentError(f"remat.torch.checkpoint_loop: steps must be >= 0, got {steps}")
    if (steps is not None and steps == 0) or not torch.is_grad_enabled():
        # What a loop of steps refuses, these refuse too
        if budget is not None:
            slots_within(parse_bytes(budget, "budget"))
        elif slots < 1:
            raise ArgumentError(f"remat.torch.checkpoint_loop: slots must be at least 1, got {slots}")
        # A loop of no steps returns x_0 itself, as the plain loop does and as until= does where it is True at
        # x_0 (steps=0 was refused with the library's "steps must be at least 1", which until= accepts). Under
        # no_grad or inference_mode nothing is differentiated: the plain loop, without snapshots (finding the
        # parameters ran step 0 with grad on, which refused an inference tensor x_0 that the plain loop takes).
        return _plain_loop(step, spec, x0, steps, until)
    for i, (p, d) in enumerate(zip(x0_parts, spec.differentiable)):
        if d and p.is_inference():  # step 0's run with grad, to find the parameters, failed in PyTorch's words
            where = f" (part {i})" if spec.is_tuple else ""
            raise ArgumentError(f"remat.torch.checkpoint_loop: x0{where} is an inference tensor (made under "
                                f"torch.inference_mode), which autograd cannot save; pass one made outside it (a "
                                f"clone), or run the loop under torch.no_grad")
    if taped:
        pass  # planned below, once step 0 has shown its tape's size
    elif until is None:
        if budget is not None:
            budget_bytes = parse_bytes(budget, "budget")
            slots_within(budget_bytes)  # refuses a budget that holds no snapshot, naming its parts
            slots = plan_for_budget(steps, budget_bytes, unit).slots
        plan = revolve(steps, slots)
        actions = itertools.chain.from_iterable(plan._schedule.batches())
        online = None
    else:
        if budget is not None:
            budget_bytes = parse_bytes(budget, "budget")
            slots = slots_within(budget_bytes)
        actions = None
        online = _remat.OnlineCursor(slots)
        if until(0, x0):  # a loop of no steps
            return x0
    modes = ForwardModes([step]) if is_module else None  # every submodule's mode, as this call runs them
    known_tape_bytes = _known_tape_bytes(step, spec, modes) if taped else None
    # Measured once: a later call runs step 0 under the caller's own saved-tensor hooks, if any, not these.
    saved = {} if taped and known_tape_bytes is None else None
    existing = _live_storages() if taped and known_tape_bytes is None else set()
    if taped:
        actions, online = None, None
        if budget is not None:
            budget_bytes = parse_bytes(budget, "budget")
            slots = slots_within(budget_bytes)
        if isinstance(slots, bool) or not isinstance(slots, int) or slots < 1:
            raise ArgumentError(f"remat.torch.checkpoint_loop: slots must be an int >= 1, got {slots!r}")
    if params is not None or (is_module and not taped):
        found = list(params) if params is not None else [p for p in step.parameters() if p.requires_grad]
        if taped:
            _, x1, before, graph = _discover_parameters(step, spec, x0_parts, rng, saved)
            first = (x1, before, graph)
    else:
        found, x1, before, graph = _discover_parameters(step, spec, x0_parts, rng, saved)
        if is_module:
            found = [p for p in step.parameters() if p.requires_grad]
        first = (x1, before, graph if taped else None)
    if taped:
        if known_tape_bytes is None:
            # A tape: what step 0's graph saved that the step allocated (not parameters, buffers or the data
            # a closure indexes: storages alive before it ran), and its input state.
            excluded = {storage_key(t)[0] for t in found} | existing
            if is_module:
                excluded |= {storage_key(t)[0] for t in step.buffers()}
            # the input state's own bytes, as a snapshot counts them: x_0 may view a larger storage (a batch
            # sliced from a dataset tensor), whose bytes made the tape the dataset's and the plan refused
            inputs = {storage_key(t)[0]: n for t, n in zip(x0_parts, spec.part_bytes)}
            tape = {k: n for k, n in saved.items() if k not in excluded}
            tape.update({k: n for k, n in inputs.items() if k not in tape})
            known_tape_bytes = sum(tape.values())
            _remember_tape_bytes(step, spec, modes, known_tape_bytes)
        tape_units = max(1, math.ceil(known_tape_bytes / unit))
        # budget= prices the graph a reverse's re-run holds (a tape) as well; slots= leaves it out, as revolve does
        rerun_units = tape_units if budget is not None else 0
        least = rerun_units + 1 if steps >= 2 else max(rerun_units, 1)
        if slots < least:
            raise CapacityError(f"remat.torch.checkpoint_loop: a budget of {budget_bytes} bytes is below the least "
                                f"for taped=True, {least * unit} bytes: a snapshot of x_0 ({snapshot_bytes} "
                                f"bytes) beside the graph of a step re-run for its reverse ({tape_units} snapshots' "
                                f"worth: {known_tape_bytes} bytes measured)")
        try:
            if steps <= 20000:
                actions = iter(_taped_actions(steps, slots, tape_units, rerun_units))
            else:
                plan = _taped_plan(steps, slots, tape_units, rerun_units)
                actions = grouped(itertools.chain.from_iterable(plan._schedule.batches()))
        except ArgumentError as e:
            # the planner's refusal names its own limits ("pass taped_revolve a larger work_limit"), which the
            # caller of checkpoint_loop neither called nor can pass: say which plan it was, and the way out
            raise ArgumentError(f"remat.torch.checkpoint_loop: taped=True plans {steps} steps within {slots} "
                                f"snapshots' memory, a tape {tape_units} of them, with remat.taped_revolve, which "
                                f"refuses it: {e} (taped=False plans with remat.revolve, which takes any steps)") from e
    unique, seen = [], set()
    for p in found:
        if id(p) not in seen and p.requires_grad:
            seen.add(id(p))
            unique.append(p)
    placement = make_slots(snapshots, spec, slots, directory)
    loop = _Loop(step, spec, unique, rng, placement, actions=actions, online=online, until=until, first=first,
                 buffers=buffers, modes=modes)
    if params is not None:
        loop.found_by = "the tensors given as params="
    elif is_module:
        loop.found_by = "the module's parameters"
    # Only the loop holds step 0's graph and x_1 from here, and lets go of them when step 0 runs: these names
    # would hold them through the whole forward (a tape more than the plan prices).
    first = x1 = before = graph = None
    out = _CheckpointLoop.apply(loop, *x0_parts, *unique)
    if not any(o.requires_grad for o in out):  # nothing to differentiate: no backward will free them
        loop.close()
    return spec.pack(out)
