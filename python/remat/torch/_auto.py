"""remat.torch.auto_checkpoint: a stack of blocks (nn.Sequential or a list of modules) trained within a budget
of activation bytes along the cheapest schedule of remat's heterogeneous-chain planner with taped advances
(remat.chain_taped; remat.chain, states only, with taped=False).

Profiling (_profile.py) gives each block k a chain step: f_k its forward seconds, b_k its forward plus its
backward seconds (an untaped reverse re-runs the block), m_k its input's bytes and a_k the activation bytes
its backward holds besides its input; a taped advance (`advance k k+1 tape`) holds m_k + a_k until `reverse
k`, which then needs no re-run. Where the budget holds plain autograd's activations as measured (every
block's saved tensors at once), the plan is plain autograd's: every block taped, no schedule costs less
(the chain model counts a tape's input and output even where the block does not save them, so its own
all-taped peak can be higher). The last block's tape is kept by the forward, as checkpoint_loop does.

Where the plan is plain autograd's, the module's forward is the blocks' own, one ordinary graph. Below that
it runs one torch.autograd.Function whose forward walks the plan up to its first reverse and whose backward
walks the rest, like checkpoint_loop (_loop.py). Blocks advanced taped one after the other make one graph (no
cut between them, as plain autograd's); `reverse k` back-propagates with torch.autograd.grad through block k's
kept graph, and with it through the rest of the stretch k belongs to, or re-runs block k with grad from x_k.
Each block's parameter list is made once, not walked for each block in each iteration.
"""

from __future__ import annotations

import itertools
from contextlib import nullcontext
from typing import TYPE_CHECKING, Dict, List, Optional, Sequence, Union

import torch

from .._bytes import Bytes, parse_bytes
from .._errors import ArgumentError, CapacityError
from .._plans import Plan, TapedChainPlan, chain, chain_taped
from .._remat import Advance, Reverse
from ._profile import BlockProfile, profile_blocks
from ._rng import RngStates
from ._saved import SavedBytes

if TYPE_CHECKING:
    from .._remat import Action  # a name of the stubs only (_remat.pyi)


#: What auto_checkpoint and tradeoff take as a model: an nn.Sequential or a list of blocks.
Blocks = Union[torch.nn.Sequential, torch.nn.ModuleList, Sequence[torch.nn.Module]]


def _plain_actions(blocks: int) -> List[Action]:
    """Plain autograd as a plan: every block advanced with its tape kept, then reversed from the last."""
    actions: List[Action] = [Advance(k, k + 1, True) for k in range(blocks)]
    return actions + [Reverse(k) for k in reversed(range(blocks))]


class _Tape:
    """The kept graph of a stretch of blocks start..stop-1 advanced taped one after the other: one autograd
    graph from `leaf` (x_start, detached) to `out` (x_stop), as plain autograd would build it, so that their
    reverses are one backward through it with no boundary between the blocks."""

    __slots__ = ("start", "stop", "leaf", "out")

    def __init__(self, start: int, leaf: torch.Tensor, out: torch.Tensor):
        self.start, self.stop, self.leaf, self.out = start, start + 1, leaf, out


class _Run:
    """One forward and backward of the stack along the plan."""

    def __init__(self, owner: "AutoCheckpoint", actions, block_params: List[List[torch.Tensor]]):
        self.owner = owner
        self.blocks = owner.blocks
        self.block_params = block_params  # per block, its parameters requiring grad
        self.counter: SavedBytes = owner._counter
        self.rng: Optional[RngStates] = owner._rng
        self.actions = iter(actions)
        self.current: Optional[torch.Tensor] = None
        self.slots: Dict[int, tuple] = {}  # slot -> (state, key in the counter, RNG state)
        self.tapes: Dict[int, _Tape] = {}  # k -> the kept graph through block k, for `reverse k`
        self.open: Optional[_Tape] = None  # the tape whose output is the current state (a taped advance extends it)
        self.reversed_from = len(self.blocks)  # every step >= this has been reversed
        self.pending = None  # the plan's first reverse, reached by the forward
        self.x0_grad = False

    def _hooks(self):
        return self.counter.hooks() if self.owner.measure_memory else nullcontext()

    def _leaf(self, k: int, x: torch.Tensor) -> torch.Tensor:
        x = x.detach()
        if (k > 0 or self.x0_grad) and (x.is_floating_point() or x.is_complex()):
            x.requires_grad_()
        return x

    def _tape(self, k: int) -> None:
        tape = self.open
        with torch.enable_grad(), self._hooks():
            if tape is not None and tape.stop == k:  # the stretch goes on: no cut in the graph
                tape.out = self.blocks[k](tape.out)
                tape.stop = k + 1
            else:
                leaf = self._leaf(k, self.current)
                tape = _Tape(k, leaf, self.blocks[k](leaf))
        self.tapes[k] = tape
        self.open = tape
        self.current = tape.out.detach()

    def apply(self, a) -> None:
        kind = a.kind
        if kind == "advance":
            if a.taped:
                self._tape(a.start)
                return
            self.open = None
            with torch.no_grad():
                for k in range(a.start, a.stop):
                    self.current = self.blocks[k](self.current)
        elif kind == "store":
            rng = self.rng.get() if self.rng is not None else None
            self.slots[a.slot] = (self.current, self.counter.hold(self.current), rng)
        elif kind == "restore":
            self.open = None
            self.current, _, rng = self.slots[a.slot]
            if self.rng is not None:
                self.rng.set(rng)
        elif kind == "free":
            _, key, _ = self.slots.pop(a.slot)
            self.counter.release(key)
        else:
            raise AssertionError(f"remat.torch.auto_checkpoint: unexpected action {a}")

    def forward(self, x0: torch.Tensor) -> torch.Tensor:
        self.x0_grad = x0.requires_grad
        self.current = x0.detach()
        last = len(self.blocks) - 1
        for a in self.actions:
            if a.kind == "reverse":
                if a.step != last:
                    raise AssertionError(f"remat.torch.auto_checkpoint: the plan reverses {a.step} first")
                if last not in self.tapes:  # keep the last block's tape for its reverse (it runs next)
                    self._tape(last)
                self.pending = a
                return self.current
            self.apply(a)
        raise AssertionError("remat.torch.auto_checkpoint: the plan has no reverse action")

    def backward(self, grad: torch.Tensor, params: List[torch.Tensor]):
        sums: List[Optional[torch.Tensor]] = [None] * len(params)
        index = {id(p): i for i, p in enumerate(params)}
        adjoint = grad
        for a in itertools.chain([self.pending], self.actions):
            if a.kind == "reverse":
                self.open = None
                if a.step < self.reversed_from:  # else a kept stretch's backward has reversed it already
                    adjoint = self._reverse(a.step, adjoint, sums, index)
            else:
                self.apply(a)
        return adjoint, sums

    def _reverse(self, k: int, adjoint, sums, index):
        """Reverses step k and, where k ends a kept stretch, the stretch's other steps with it: one backward
        through the stretch's graph (plain autograd's own for those blocks)."""
        tape = self.tapes.get(k)
        if tape is None:  # not kept: re-run block k with grad from x_k
            with torch.enable_grad(), self._hooks():
                leaf = self._leaf(k, self.current)
                tape = _Tape(k, leaf, self.blocks[k](leaf))
        if tape.stop != k + 1:
            raise AssertionError(f"remat.torch.auto_checkpoint: reverse {k} inside a kept stretch "
                                 f"{tape.start}..{tape.stop - 1}")
        for j in range(tape.start, k + 1):
            self.tapes.pop(j, None)
        self.reversed_from = tape.start
        self.current = None
        leaf, out = tape.leaf, tape.out
        mine, seen = [], set()
        for j in range(tape.start, k + 1):
            for p in self.block_params[j]:
                if id(p) not in seen:
                    seen.add(id(p))
                    mine.append(p)
        outputs, grad_outputs = [], []
        if adjoint is not None and out.requires_grad:
            outputs.append(out)
            grad_outputs.append(adjoint)
        # A parameter's running sum (shared with blocks reversed before) enters first, so that its additions
        # happen in plain autograd's order (as in checkpoint_loop).
        with torch.enable_grad():
            for p in mine:
                s = sums[index[id(p)]]
                if s is not None:
                    outputs.append(p.view_as(p))
                    grad_outputs.append(s)
        inputs = [leaf] if leaf.requires_grad else []
        if not outputs or not (inputs or mine):
            return None
        got = torch.autograd.grad(outputs, inputs + mine, grad_outputs, allow_unused=True)
        for p, g in zip(mine, got[len(inputs):]):
            if g is not None:
                sums[index[id(p)]] = g
        return got[0] if inputs else None

    def close(self) -> None:
        self.tapes.clear()
        self.open = None
        for _, key, _ in self.slots.values():
            self.counter.release(key)
        self.slots.clear()
        self.current = None
        self.pending = None


class _Stack(torch.autograd.Function):
    @staticmethod
    def forward(ctx, run: _Run, x0, *params):
        try:
            out = run.forward(x0)
        except BaseException:
            run.close()
            raise
        ctx.run = run
        ctx.params = params
        return out

    @staticmethod
    def backward(ctx, grad):
        run: _Run = ctx.run
        if run.actions is None:
            raise RuntimeError("remat.torch.auto_checkpoint: backward through the same forward twice")
        devices = run.rng.devices if run.rng is not None else []
        try:
            with torch.random.fork_rng(devices=devices, enabled=run.rng is not None):
                adjoint, sums = run.backward(grad, list(ctx.params))
        finally:
            run.close()
            run.actions = None
        return (None, adjoint if ctx.needs_input_grad[1] else None, *sums)


class AutoCheckpoint(torch.nn.Module):
    """A stack of blocks whose forward and backward follow a remat plan within a budget of activation bytes
    (made by remat.torch.auto_checkpoint, which says what the attributes mean)."""

    def __init__(self, blocks: Sequence[torch.nn.Module], sample: torch.Tensor, budget_bytes: int,
                 profiles: List[BlockProfile], plain_peak_bytes: int, preserve_rng_state: bool,
                 taped: bool = True) -> None:
        super().__init__()
        self.blocks = torch.nn.ModuleList(blocks)
        self.budget_bytes = budget_bytes
        self.profiles = profiles
        self.plain_peak_bytes = plain_peak_bytes
        self.input_shape, self.input_dtype = tuple(sample.shape), sample.dtype
        params = [p for b in blocks for p in b.parameters()]
        self._counter = SavedBytes(params + [t for b in blocks for t in b.buffers()])
        self._rng = RngStates([sample, *params]) if preserve_rng_state else None
        #: The chain the planner was given: remat.ChainStep-like tuples (forward, adjoint, state, adjoint bytes).
        self.chain_steps = [(p.forward_seconds, p.forward_seconds + p.backward_seconds, p.input_bytes,
                             p.adjoint_bytes) for p in profiles]
        self.final_state_bytes = profiles[-1].output_bytes
        plain_cost = sum(s[1] for s in self.chain_steps)
        self.taped = taped
        self.plan: Optional[Union[TapedChainPlan, Plan]]
        if budget_bytes >= plain_peak_bytes:
            self.plan = None
            self.method = "plain autograd"
            self.predicted_peak_bytes = plain_peak_bytes
            self.predicted_cost = plain_cost
            self.recomputed_blocks = 0
        else:
            plan = _plan_within(self.chain_steps, self.final_state_bytes, budget_bytes, taped)
            self.plan = plan
            self.method = "remat.chain_taped" if taped else "remat.chain"
            self.predicted_peak_bytes = int(plan.peak_bytes or 0)  # a chain plan always has it
            # The plan never advances the last block (it is reversed where x_{T-1} stands); its re-run is
            # the forward's taped run, so the plan's cost is the run's.
            self.predicted_cost = plan.predicted_cost
            # Block forwards: every advanced step, plus a re-run per untaped reverse; T of them are plain's.
            taped_steps = plan.taped_steps if isinstance(plan, TapedChainPlan) else 0
            self.recomputed_blocks = plan.forward_steps - taped_steps
        self._ran = False
        self._actions: Optional[List[Action]] = None
        self._param_lists: Optional[List[List[torch.Tensor]]] = None
        self._least: Optional[int] = None
        #: Count the activation bytes (saved-tensor hooks, a Python call per saved tensor) for
        #: measured_peak_bytes; False runs without the hooks (the peak then counts the snapshots only).
        self.measure_memory = True

    @property
    def measured_peak_bytes(self) -> Optional[int]:
        """Activation bytes at the peak since the last forward began, through its backward: the tensors
        autograd saved and the snapshots held, each storage once. None before the first forward."""
        return self._counter.peak if self._ran else None

    @property
    def least_budget_bytes(self) -> int:
        """The least budget the planner plans this stack within (what a smaller budget's refusal names)."""
        if self._least is None:
            self._least = _least_budget(self.chain_steps, self.final_state_bytes, self.taped)
        return self._least

    def actions(self) -> List[Action]:
        """The plan this module follows, as remat actions."""
        if self.plan is None:
            return _plain_actions(len(self.blocks))
        if self._actions is None:
            self._actions = list(self.plan)
        return list(self._actions)

    def _block_params(self) -> List[List[torch.Tensor]]:
        """Per block, its parameters that require grad. The lists are made once (walking the modules for
        them costs about 0.3 ms per block and iteration) and again after .to() and the like; a block changed
        in place after auto_checkpoint (parameters added, blocks replaced) needs a new auto_checkpoint, as
        its profile and plan do."""
        if self._param_lists is None:
            self._param_lists = [list(b.parameters()) for b in self.blocks]
        return [[p for p in ps if p.requires_grad] for ps in self._param_lists]

    def _apply(self, *args, **kwargs):
        self._param_lists = None  # conversions may swap the parameter objects (torch.__future__)
        done = super()._apply(*args, **kwargs)
        # Parameters and buffers moved have new storages, which the activation count must still leave out.
        self._counter.exclude([*self.parameters(), *self.buffers()])
        return done

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not isinstance(x, torch.Tensor):
            raise ArgumentError(f"remat.torch.auto_checkpoint: expected a tensor input, got {type(x).__name__}")
        block_params = self._block_params()
        params, seen = [], set()
        for p in itertools.chain.from_iterable(block_params):
            if id(p) not in seen:
                seen.add(id(p))
                params.append(p)
        if not torch.is_grad_enabled() or not (x.requires_grad or params):
            for block in self.blocks:
                x = block(x)
            return x
        if tuple(x.shape) != self.input_shape or x.dtype != self.input_dtype:
            raise ArgumentError(f"remat.torch.auto_checkpoint: the input has shape {tuple(x.shape)} and dtype "
                                f"{x.dtype}; the plan was made for the sample's {self.input_shape} and "
                                f"{self.input_dtype} (call auto_checkpoint again with such a sample)")
        self._counter.reset_peak()
        self._ran = True
        if self.plan is None:
            # Plain autograd's plan (every block taped, in order) is one ordinary graph: no boundary between
            # blocks, nothing of remat's in the backward.
            with self._counter.hooks() if self.measure_memory else nullcontext():
                for block in self.blocks:
                    x = block(x)
            return x
        return _Stack.apply(_Run(self, self.actions(), block_params), x, *params)


def _planner(taped: bool):
    return chain_taped if taped else chain


def _plan_within(steps, final_state_bytes: int, budget_bytes: int, taped: bool):
    try:
        return _planner(taped)(steps, budget_bytes, final_state_bytes=final_state_bytes)
    except (ArgumentError, CapacityError):
        least = _least_budget(steps, final_state_bytes, taped)
        raise CapacityError(f"remat.torch.auto_checkpoint: no schedule fits a budget of {budget_bytes} bytes; "
                            f"the least budget that fits is {least} bytes") from None


def _least_budget(steps, final_state_bytes: int, taped: bool) -> int:
    """The least budget the planner plans this chain within (at the granularity it picks there)."""
    plan = _planner(taped)
    roomy = plan(steps, sum(s[2] + s[3] for s in steps) * 2 + final_state_bytes, final_state_bytes=final_state_bytes)
    least = roomy.least_budget_bytes
    while True:
        try:
            return plan(steps, least, final_state_bytes=final_state_bytes).budget_bytes
        except (ArgumentError, CapacityError):
            least += max(1, roomy.granularity_bytes)


def auto_checkpoint(model: Blocks, sample: torch.Tensor, budget: Bytes = "8GiB", *, preserve_rng_state: bool = True,
                    repeats: int = 3, taped: bool = True) -> AutoCheckpoint:
    """A module that computes what `model` computes (an nn.Sequential or a list of nn.Modules, each taking and
    returning one tensor), with a forward and backward that hold at most `budget` bytes of activations along
    the cheapest schedule remat finds for that memory.

    Each block is profiled on `sample` (a batch shaped like the ones to come): its forward and backward time
    (the least of `repeats` runs after one warm-up; CPU time on the CPU with one PyTorch thread, else wall
    time), its input's and output's bytes and the bytes autograd saves for its backward (saved-tensor hooks,
    each storage once; parameters and buffers left out). Where the budget holds plain autograd's
    activations (`plain_peak_bytes`), the module runs plain autograd: no block is run twice. Below that it
    follows remat.chain_taped's optimal plan for the budget: snapshots of block inputs, some blocks run
    keeping their tapes, the others re-run in the backward (taped=False: remat.chain's, snapshots only). A
    budget below the least that any plan fits is refused (remat.CapacityError naming that least budget).

    budget: bytes (an int or a string such as "8GiB"); the chain model's memory: snapshots, the current
      block input, and a running block's saved activations.
    preserve_rng_state: save the RNG states with each snapshot and set them again where a block is re-run,
      so that dropout replays the same masks (as torch.utils.checkpoint does).

    The module has `method` ("plain autograd", "remat.chain_taped" or "remat.chain"), `plan` (the
    remat.TapedChainPlan or remat.Plan, None for plain autograd), `actions()`, `predicted_peak_bytes`,
    `predicted_cost` (seconds per iteration as profiled),
    `recomputed_blocks` (block forwards per iteration beyond plain autograd's one each),
    `measured_peak_bytes` (after a forward and backward), `plain_peak_bytes` and `profiles`.

        fast = remat.torch.auto_checkpoint(model, x, budget="2GiB")
        fast(x).sum().backward()
        fast.predicted_peak_bytes, fast.measured_peak_bytes
    """
    blocks = _blocks_of(model, sample, repeats)
    budget_bytes = parse_bytes(budget, "budget")
    profiles, plain_peak, _ = profile_blocks(blocks, sample, repeats)
    return AutoCheckpoint(blocks, sample, budget_bytes, profiles, plain_peak, preserve_rng_state, bool(taped))


def _blocks_of(model, sample, repeats) -> List[torch.nn.Module]:
    """The blocks of `model`, with auto_checkpoint's checks of its arguments."""
    if isinstance(model, torch.nn.Sequential):
        blocks = list(model)
    elif isinstance(model, (list, tuple, torch.nn.ModuleList)):
        blocks = list(model)
    else:
        raise ArgumentError("remat.torch.auto_checkpoint: expected an nn.Sequential or a list of nn.Modules, got "
                            f"{type(model).__name__}")
    if not blocks:
        raise ArgumentError("remat.torch.auto_checkpoint: the model has no blocks")
    for k, b in enumerate(blocks):
        if not isinstance(b, torch.nn.Module):
            raise ArgumentError(f"remat.torch.auto_checkpoint: block {k} is a {type(b).__name__}, not an nn.Module")
    if not isinstance(sample, torch.Tensor):
        raise ArgumentError(f"remat.torch.auto_checkpoint: the sample must be a tensor, got {type(sample).__name__}")
    if isinstance(repeats, bool) or not isinstance(repeats, int) or repeats < 0:
        raise ArgumentError(f"remat.torch.auto_checkpoint: repeats must be an int >= 0, got {repeats!r}")
    return blocks
