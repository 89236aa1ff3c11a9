"""remat.torch.auto_checkpoint: a stack of blocks (nn.Sequential or a list of modules) trained within a budget
of activation bytes along the cheapest schedule of remat's heterogeneous-chain planner with taped advances
(remat.chain_taped; remat.chain, states only, with taped=False).

Profiling (_profile.py) gives each block k a chain step: f_k its forward seconds, b_k its forward plus its
backward seconds (an untaped reverse re-runs the block), m_k its input's bytes and a_k the activation bytes
its backward holds besides its input (less m_k where it does not save its input); a taped advance (`advance
k k+1 tape`) holds m_k + a_k, what the block saves, until `reverse k`, which then needs no re-run. Where the
budget holds plain autograd's activations as measured (every block's saved tensors at once), the plan is
plain autograd's: every block taped, no schedule costs less (the chain model also counts the current state
and a state both neighbours save twice, so its own all-taped peak can be higher). The last block's tape is
kept by the forward.

Where the plan is plain autograd's, the module's forward is the blocks' own, one ordinary graph. Below that,
the plan's final stretch (the blocks it runs taped at the end of its forward and reverses first, the last
block at least) runs as the blocks' own graph too, as checkpoint_sequential runs its last segment, after one
torch.autograd.Function whose forward walks the plan up to that stretch and whose backward walks the rest
(_Split). Blocks advanced taped one after the other make one graph (_stretch.py); `reverse k` back-propagates
through block k's kept graph, and with it through the rest of the stretch k belongs to, or re-runs block k
with grad from x_k: under loss.backward() with one torch.autograd.backward that adds to the parameters' .grad
as plain autograd's would (torch.utils.checkpoint's way, the cheapest), else (parameters shared between
blocks; torch.autograd.grad) with torch.autograd.grad, the parameters' gradients summed in plain autograd's
order and returned. Each block's parameter list is made once, not walked for each block in each iteration.
"""

from __future__ import annotations

import atexit
import operator
import weakref
from contextlib import nullcontext
from typing import TYPE_CHECKING, Dict, List, Optional, Sequence, Tuple, Union

import torch

from .._args import bounded, flag
from .._bytes import Bytes, parse_bytes
from .._errors import ArgumentError, BackwardError, CapacityError
from .._plans import Plan, TapedChainPlan, chain, chain_taped
from .._remat import Advance, Reverse
from ._action_groups import grouped
from ._autocast import AutocastState
from ._autocast import describe as describe_autocast
from ._autocast import settings_key as autocast_settings
from ._blocks import bad_block_output, block_modified_input
from ._chain_budget import least_plan, plan_taped_within, priced_plan
from ._inside import inside, running
from ._modes import ProfiledModes
from ._norm_stats import BlockBuffers, ForwardBuffers
from ._profile import BlockProfile, chain_steps, profile_blocks
from ._reruns import rerunning
from ._rng import RngStates
from ._saved import SavedBytes
from ._stretch import Handover, Stretches, accumulators, backpropagate, backward_adds_to, sums_through_grad_fields
from ._stretch_input import StretchInput
from ._versions import modified, snapshot_modified, versions

if TYPE_CHECKING:
    from .._remat import Action  # a name of the stubs only (_remat.pyi)


#: What auto_checkpoint and tradeoff take as a model: an nn.Sequential or a list of blocks.
Blocks = Union[torch.nn.Sequential, torch.nn.ModuleList, Sequence[torch.nn.Module]]


#: The most timed runs of each block (repeats=) or interleaved rounds (tradeoff's rounds=) taken: more is a
#: mistake that would profile for hours, not a measurement.
MAX_REPEATS = 10_000


def _plain_actions(blocks: int) -> List[Action]:
    """Plain autograd as a plan: every block but the last advanced with its tape kept, then each reversed from
    the last (whose reverse runs it where x_{T-1} stands, as every plan of the chain planner has it)."""
    actions: List[Action] = [Advance(k, k + 1, True) for k in range(blocks - 1)]
    return actions + [Reverse(k) for k in reversed(range(blocks))]


class _Run:
    """One forward and backward of the stack along the plan."""

    def __init__(self, owner: "AutoCheckpoint", split: "_Split", params: "_Params"):
        self.owner = owner
        self.measuring = False  # whether the forward that made it counts the activation bytes (its re-runs too)
        self.blocks = owner._block_list  # indexing a ModuleList costs ~10 us (it checks and wraps the index)
        self.plain_leaves = params.plain_leaves
        self.params = params
        self.counter: SavedBytes = owner._counter
        self.rng: Optional[RngStates] = owner._rng
        self.split = split
        self.current: Optional[torch.Tensor] = None
        # slot -> (state, key in the counter, RNG state, its version counter: x_0 is the caller's tensor)
        self.slots: Dict[int, tuple] = {}
        self.stretches = Stretches()
        self.done = False  # the backward ran (its snapshots are freed)
        self.x0_grad = False
        self.buffers = ForwardBuffers(owner._buffer_slots)  # what the forward's runs modified (_norm_stats.py)
        self.in_backward = False
        #: reach_parameters=False: the AccumulateGrad node of the module's sentinel, the Function's one input
        #: besides x_0; whether the engine runs it tells loss.backward() from torch.autograd.grad (None: the
        #: parameters are the Function's inputs)
        self.sentinel_node = None

    def _call(self, k: int, x: torch.Tensor) -> torch.Tensor:
        """Block k on x, its output checked to be a tensor: in the forward, its buffers kept where it modifies
        them; in the backward (a re-run), set back to those first."""
        if self.in_backward:
            self.buffers.rerun(k)
            out = self.blocks[k](x)
        elif self.buffers.blocks[k].others:  # a buffer its forward run may modify (most blocks have none)
            out = self.buffers.forward_run(k, lambda: self.blocks[k](x))
        else:
            out = self.blocks[k](x)
        if not isinstance(out, torch.Tensor):
            bad_block_output(k, out)
        return out

    def _block(self, k: int, parts):
        if self.measuring:
            with self.counter.hooks():
                out = self._call(k, parts[0])
        else:
            out = self._call(k, parts[0])
        return (out,)

    def _leaves(self, k: int, parts):
        """x_k as a stretch's input: where its gradient is wanted, a leaf requiring grad where block k saves its
        input anyway (as the profile found), else a view through a StretchInput, so that the stretch holds x_k
        only where its first block saves it, as the chain model counts its tape (the view's autograd.Function,
        with its backward in Python, cost about 20 us a stretch: 11 stretches were 5% of an iteration of 24
        Linear(8, 8) blocks)."""
        x = parts[0].detach()
        if (k > 0 or self.x0_grad) and (x.is_floating_point() or x.is_complex()):
            if self.plain_leaves[k]:
                x.requires_grad_()
                return (x,), (x,)
            leaf = StretchInput()
            return (leaf.view(x),), (leaf,)
        return (x,), (x,)

    def _handed_over(self) -> Handover:
        """The current state as a stretch's input, no longer held here: through the stretch's later blocks x_k
        lives on only where its first block saves it, as the chain model counts its tape."""
        handover, self.current = Handover((self.current,)), None
        return handover

    def apply(self, a) -> None:
        """One action other than reverse (the plan's actions grouped: _action_groups.py)."""
        kind = a.kind
        if kind == "taped run":  # one stretch built in one loop, continuing the open one where that ends at x_start
            self.stretches.advance_run(a.start, a.stop, self._handed_over(), self._block, self._leaves)
            self.current = self.stretches.output()[0]
        elif kind == "advance":
            self.stretches.open = None
            with torch.no_grad():
                for k in range(a.start, a.stop):
                    x, before = self.current, versions((self.current,))
                    self.current = self._call(k, x)
                    if modified((x,), before) >= 0:  # a snapshot may be x: refused, never silently wrong
                        block_modified_input(k, self.blocks[k])
                    del x
        elif kind == "store":
            rng = self.rng.get() if self.rng is not None else None
            self.slots[a.slot] = (self.current, self.counter.hold(self.current), rng, versions((self.current,)))
        elif kind == "restore":
            self.stretches.reopen(a.step)
            self.current, _, rng, before = self.slots[a.slot]
            if modified((self.current,), before) >= 0:
                raise snapshot_modified("remat.torch.auto_checkpoint", f"x_{a.step} (the input of block {a.step}"
                                        f"{', the model input' if a.step == 0 else ''})", "blocks")
            if self.rng is not None:
                self.rng.set(rng)
        elif kind == "free":
            key = self.slots.pop(a.slot)[1]
            self.counter.release(key)
        else:
            raise AssertionError(f"remat.torch.auto_checkpoint: unexpected action {a}")

    def forward(self, x0: torch.Tensor) -> torch.Tensor:
        """x_j: the plan's forward up to the final stretch."""
        self.x0_grad = x0.requires_grad
        self.current = x0.detach()
        for a in self.split.forward:
            self.apply(a)
        # an alias for the Function to make its output (give a grad_fn): x_j itself, which the run may hold
        # as a snapshot, would hold the run's node, and through it the run (a cycle). The run lets go of x_j
        # as its current state (its backward begins after the final stretch's reverses, where none is): the
        # final stretch's graph holds it where its first block saves it, as the chain model counts it.
        out, self.current = self.current.detach(), None
        return out

    def backward(self, grad: torch.Tensor, accumulate: bool, engine_autocast: Optional[AutocastState] = None):
        """(x_0's gradient, the parameters' gradient sums) from x_j's gradient: accumulate=True, every
        parameter's gradient added to its .grad by the stretch that reverses its block (sums all None); else
        returned as sums."""
        sums: List[Optional[torch.Tensor]] = [None] * len(self.params.unique)
        adjoint = grad
        self.in_backward = True
        through_grad_fields = (not accumulate and sums_through_grad_fields(self.params.unique)
                               and self.params.accumulated_by_this_backward())
        for a in self.split.backward:  # grouped: every reverse is in a group (_action_groups.Reverses)
            if a.kind != "reverses":
                self.apply(a)
                continue
            for k in self.stretches.reverses(a.top, a.bottom):
                adjoint = self._reverse(k, adjoint, sums, accumulate, through_grad_fields, engine_autocast)
        return adjoint, sums

    def _reverse(self, k: int, adjoint: torch.Tensor, sums: List[Optional[torch.Tensor]], accumulate: bool,
                 through_grad_fields: bool, engine_autocast: Optional[AutocastState]) -> torch.Tensor:
        """`reverse k`: back-propagates through the tape through block k (the whole stretch k ends, kept or
        re-run now), x_k's gradient returned; the engine call under `engine_autocast` where given
        (_reruns.py)."""
        current = (self.current,) if self.current is not None else None
        tape = self.stretches.take(k, current, self._block, self._leaves)
        self.current = current = None  # x_k lives on only where the tape saves it
        if accumulate:
            return backpropagate(tape, (adjoint,), accumulate=True, autocast=engine_autocast)[0]
        params, positions = self.params.of_stretch(tape.start, tape.stop)
        # the reversed stretch's output, x_{k+1}, is no state of the plan's any more (none is current after a
        # reverse): the tape is this function's only, so it goes with it, not held until the next reverse
        return backpropagate(tape, (adjoint,), params, positions, sums, through_grad_fields=through_grad_fields,
                             autocast=engine_autocast)[0]

    def close(self) -> None:
        self.stretches.clear()
        for held in self.slots.values():
            self.counter.release(held[1])
        self.slots.clear()
        self.current = None
        self.buffers.before = {}


class _Split:
    """A plan's actions around its final stretch, blocks start..T-1: those the plan runs taped one after the
    other at the end of its forward (the last block's tape is the forward's: the plan never advances it) and
    reverses first. They run after the plan's autograd.Function as the blocks' own graph, as
    checkpoint_sequential runs its last segment, so that their backward is the caller's, with nothing of
    remat's in it. `forward`: the plan's actions before the stretch; `backward`: those after its reverses.
    whole=True (parameters shared between blocks, whose gradients the Function sums in plain autograd's
    order only if every block's pass through it) keeps every block in the Function: start = T."""

    def __init__(self, actions: List[Action], blocks: int, whole: bool = False):
        last = blocks - 1
        first = next((i for i, a in enumerate(actions) if a.kind == "reverse"), None)
        if first is None or actions[first].step != last:
            raise AssertionError(f"remat.torch.auto_checkpoint: the plan does not begin its reverse at {last}")
        if whole:
            self.start = blocks
            self.forward = list(grouped(actions[:first] + [Advance(last, blocks, True)]))
            self.backward = list(grouped(actions[first:]))
            return
        taped = 0  # the taped advances just before the first reverse, ending at x_{T-1}
        while taped < first and _is_taped(actions[first - 1 - taped], last - 1 - taped):
            taped += 1
        reversed_ = 1  # the reverses from the first on, of T-1, T-2, ... in turn
        while (reversed_ <= taped and first + reversed_ < len(actions) and actions[first + reversed_].kind == "reverse"
               and actions[first + reversed_].step == last - reversed_):
            reversed_ += 1
        self.start = blocks - reversed_
        self.forward = list(grouped(actions[:first - (reversed_ - 1)]))
        self.backward = list(grouped(actions[first + reversed_:]))


_requires_grad = operator.attrgetter("requires_grad")

#: Whether autograd tells a backward's nodes to run (torch._C._will_engine_execute_node), which tells
#: loss.backward() from torch.autograd.grad: without it reach_parameters=False would lose gradients.
_ENGINE_QUERY = hasattr(torch._C, "_will_engine_execute_node")


def _is_taped(a, k: int) -> bool:
    return a.kind == "advance" and a.taped and a.start == k and a.stop == k + 1


class _Params:
    """The stack's parameters that require grad, made once per parameter set (walking the modules for them
    costs about 0.3 ms per block and iteration): `unique` (each once, in block order), per block its own and
    their positions in `unique`, whether a parameter serves more than one block, and each one's gradient
    accumulator (the graph node through which plain autograd's backward adds to its .grad)."""

    def __init__(self, per_block: List[List[torch.Tensor]], unfrozen: Optional[Tuple[int, str]] = None,
                 plain_leaves: Optional[List[bool]] = None):
        #: (block index, parameter name) of one that requires grad and did not when the blocks were profiled
        self.unfrozen = unfrozen
        #: per block, whether a stretch starting there takes x_k as a plain leaf (_Run._leaves)
        self.plain_leaves = plain_leaves if plain_leaves is not None else [False] * len(per_block)
        self.unique: List[torch.Tensor] = []
        where: Dict[int, int] = {}
        self.per_block: List[List[torch.Tensor]] = []
        self.positions: List[List[int]] = []
        uses = 0
        for ps in per_block:
            mine = [p for p in ps if p.requires_grad]
            for p in mine:
                if id(p) not in where:
                    where[id(p)] = len(self.unique)
                    self.unique.append(p)
            uses += len({id(p) for p in mine})
            self.per_block.append(mine)
            self.positions.append([where[id(p)] for p in mine])
        self.shared = uses > len(self.unique)
        self._accumulators: Optional[list] = None
        self._before: Dict[int, int] = {}

    def inputs_before(self, start: int) -> List[torch.Tensor]:
        """The parameters of blocks 0..start-1: the first of `unique`, where no parameter is shared (the
        Function's inputs: each costs about 4 us an iteration in autograd's machinery, forward and backward,
        and the blocks from `start` on reach theirs through their own graph)."""
        count = self._before.get(start)
        if count is None:
            count = self._before[start] = len({i for ps in self.positions[:start] for i in ps})
        return self.unique[:count]

    def of_stretch(self, start: int, stop: int):
        """(parameters, their positions in `unique`) of blocks start..stop-1, each parameter once."""
        if stop == start + 1:
            return self.per_block[start], self.positions[start]
        params, positions, seen = [], [], set()
        for j in range(start, stop):
            for p, i in zip(self.per_block[j], self.positions[j]):
                if i not in seen:
                    seen.add(i)
                    params.append(p)
                    positions.append(i)
        return params, positions

    def accumulated_by_this_backward(self) -> bool:
        """Inside a backward: whether it adds to every parameter's .grad (loss.backward(), not
        torch.autograd.grad or backward(inputs=...) leaving some out), so that a stretch's backward may add
        to them itself, as torch.utils.checkpoint's does."""
        if self._accumulators is None:
            self._accumulators = accumulators(self.unique)
        return backward_adds_to(self._accumulators)


class _SpentRun:
    """What a _Stack node holds once its backward ran: enough to refuse a second backward, nothing else."""
    done = True


_done_run = _SpentRun()

#: The nodes whose backward has not run yet. A forward whose output is kept to the end (a script's global,
#: never backpropagated) keeps its node, and with it the run and the plan's actions, alive past the
#: extension's teardown, which nanobind reports on stderr as leaked instances; at exit they drop their runs.
_pending_nodes: "weakref.WeakSet" = weakref.WeakSet()


@atexit.register
def _drop_pending_runs() -> None:
    for ctx in list(_pending_nodes):
        ctx.run = _done_run


class _Stack(torch.autograd.Function):
    @staticmethod
    def forward(ctx, run: _Run, x0, *params):
        # the backward's re-runs run under the forward's autocast; both without its cache of casts (_autocast.py)
        ctx.autocast = AutocastState()
        try:
            with running(), ctx.autocast.uncached():
                out = run.forward(x0)
        except BaseException:
            run.close()
            raise
        ctx.run = run
        _pending_nodes.add(ctx)
        return out

    @staticmethod
    def backward(ctx, grad):
        run: _Run = ctx.run
        if run.done:
            raise BackwardError("remat.torch.auto_checkpoint: backward through the same forward twice")
        # Where each parameter serves one block and this backward adds to every parameter's .grad, each
        # stretch's backward adds its blocks' gradients itself (torch.utils.checkpoint's way, the cheapest:
        # no gradient handed back through this node), exactly as plain autograd would add them. Otherwise
        # (a parameter shared between blocks; torch.autograd.grad) they are summed and returned.
        if run.sentinel_node is None:
            accumulate = not run.params.shared and run.params.accumulated_by_this_backward()
        else:
            # reach_parameters=False: the parameters are no inputs of this node. Under loss.backward() each
            # stretch's backward adds to their .grad (as torch.utils.checkpoint's reentrant form's does);
            # torch.autograd.grad and backward(inputs=...) cannot reach them here, and are refused.
            accumulate = backward_adds_to((run.sentinel_node,))
            if not accumulate:
                run.close()
                run.done = True
                ctx.run = _done_run
                raise BackwardError(
                    "remat.torch.auto_checkpoint: with reach_parameters=False only loss.backward() without inputs= "
                    "reaches the parameters (as torch.utils.checkpoint's reentrant form, which refuses these too): "
                    "torch.autograd.grad and backward(inputs=...) cannot reach those of the blocks before the plan's "
                    "final stretch, and would leave their gradients out silently; set reach_parameters=True (the "
                    "default) for them")
        try:
            if torch.is_grad_enabled():  # the engine runs a backward with grad on only for create_graph=True
                raise BackwardError("remat.torch.auto_checkpoint: double backward (create_graph=True) is not "
                                    "supported below plain autograd's peak: the re-run blocks' gradients would not "
                                    "be differentiable")
            # the re-runs run in the modes the forward ran in (checked there to be the profiled ones), its RNG
            # and autocast settings (_reruns.py)
            with rerunning(getattr(run.owner, "_profiled_modes", None), run.rng, ctx.autocast) as engine_autocast:
                # the re-runs start from the buffers the forward's runs started from, and leave them as the forward
                # did: BatchNorm's running statistics, spectral_norm's vectors (_norm_stats.py)
                run.buffers.backward_begins(run.split.start)
                try:
                    adjoint, sums = run.backward(grad, accumulate, engine_autocast)
                finally:
                    run.buffers.backward_ends()
        finally:
            run.close()
            run.done = True
            # The graph outlives its backward where the output is kept (a script's global): drop the run
            # (its plan's actions) with it, so that nothing of the extension's is alive at interpreter exit.
            ctx.run = _done_run
        if run.sentinel_node is not None:
            return None, adjoint if ctx.needs_input_grad[1] else None, None
        return (None, adjoint if ctx.needs_input_grad[1] else None, *sums[:len(ctx.needs_input_grad) - 2])


class AutoCheckpoint(torch.nn.Module):
    """A stack of blocks whose forward and backward follow a remat plan within a budget of activation bytes
    (made by remat.torch.auto_checkpoint, which says what the attributes mean)."""

    def __init__(self, blocks: Sequence[torch.nn.Module], sample: torch.Tensor, budget_bytes: int,
                 profiles: List[BlockProfile], plain_peak_bytes: int, preserve_rng_state: bool,
                 taped: bool = True, actions: Optional[Sequence[Action]] = None,
                 reach_parameters: bool = True) -> None:
        """`actions`: a plan of the chain model with taped advances given as its actions (checked by its rules,
        priced by it: remat.ArgumentError names an action that breaks them), followed in place of the planner's
        plan within the budget: what stack_bench.py runs checkpoint_sequential's own schedule with, to measure
        this module's runtime apart from its plan."""
        super().__init__()
        self.blocks = torch.nn.ModuleList(blocks)
        # the blocks as a list: a ModuleList's slice is a new ModuleList, 0.1 ms for 12 blocks per forward
        self._block_list: List[torch.nn.Module] = list(self.blocks)
        self.budget_bytes = budget_bytes
        self.profiles = profiles
        self._saves_input = [p.saves_input for p in profiles]  # per block, as profiled (_Run._leaves)
        self.plain_peak_bytes = plain_peak_bytes
        self.input_shape, self.input_dtype = tuple(sample.shape), sample.dtype
        # What else the profile's bytes depend on: each block's and submodule's mode (dropout saves its mask in
        # training mode only, batch norm its statistics)
        self._profiled_modes = ProfiledModes(blocks)
        self._profiled_autocast = autocast_settings()  # profiled where it is made (auto_checkpoint, tradeoff)
        # which parameters required grad when profiled, in _params' order (each block's parameters() in turn)
        self._profiled_grads = tuple(p.requires_grad for b in blocks for p in b.parameters())
        params = [p for b in blocks for p in b.parameters()]
        self._counter = SavedBytes(params + [t for b in blocks for t in b.buffers()])
        self._rng = RngStates([sample, *params]) if preserve_rng_state else None
        #: The chain the planner was given: remat.ChainStep-like tuples (forward, adjoint, state, adjoint and tape
        #: bytes).
        self.chain_steps = chain_steps(profiles)
        # per block, where its buffers live: those its forward run modifies are set back for its re-runs
        self._buffer_slots = [BlockBuffers(b) for b in blocks]
        self.final_state_bytes = profiles[-1].output_bytes
        plain_cost = sum(s[1] for s in self.chain_steps)
        self.taped = taped
        self.plan: Optional[Union[TapedChainPlan, Plan]]
        if actions is not None:
            _refuse_contexts(profiles, plain_peak_bytes)
            actions = list(actions)
            last = next((i for i, a in enumerate(actions)
                         if getattr(a, "kind", None) == "advance" and a.stop == len(profiles)), None)
            if last is not None:  # the runtime runs block T-1 where x_{T-1} stands, after the plan's forward
                raise ArgumentError(f"remat.torch.auto_checkpoint: action {last} ({actions[last]}) advances the last "
                                    f"block; a plan reverses it where x_{len(profiles) - 1} stands, never advances it")
            self.plan = plan = priced_plan(self.chain_steps, self.final_state_bytes, actions, budget_bytes)
            if plan.peak_bytes > budget_bytes:
                raise CapacityError(f"remat.torch.auto_checkpoint: the given actions peak at {plan.peak_bytes} bytes "
                                    f"under the chain model, above the budget of {budget_bytes}")
            self.method = "given actions"
            self.predicted_peak_bytes = int(plan.peak_bytes or 0)
            self.predicted_cost = plan.predicted_cost
            self.recomputed_blocks = plan.forward_steps - plan.taped_steps
        elif budget_bytes >= plain_peak_bytes:
            self.plan = None
            self.method = "plain autograd"
            self.predicted_peak_bytes = plain_peak_bytes
            self.predicted_cost = plain_cost
            self.recomputed_blocks = 0
        else:
            _refuse_contexts(profiles, plain_peak_bytes)
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
        self._splits: Dict[bool, _Split] = {}
        self._param_lists: Optional[List[List[torch.Tensor]]] = None
        self._flat_params: List[torch.Tensor] = []
        self._params_by_flags: Dict[tuple, _Params] = {}
        self._least: Optional[int] = None
        self.measure_memory = None
        self.reach_parameters = reach_parameters
        self._sentinel: Optional[tuple] = None  # (tensor, its AccumulateGrad node): reach_parameters=False
        self._forwards = 0

    @property
    def measure_memory(self) -> Optional[bool]:
        """Whether a forward counts the activation bytes for measured_peak_bytes (saved-tensor hooks, a Python
        call per saved tensor): None (the default) the first forward and its backward only (the plan and the
        input's shape are the same at every iteration, and so is the peak; counting every one cost 10% of the
        instructions of a 24-layer transformer stack's iteration, callgrind), True every one, False none (the
        peak then counts the snapshots only)."""
        return self._measure_memory

    @measure_memory.setter
    def measure_memory(self, value: Optional[bool]) -> None:
        integral = isinstance(value, int) or type(value).__name__ == "bool_"  # numpy's bool too
        if value is not None and (not integral or value not in (True, False)):
            raise ArgumentError(f"remat.torch.auto_checkpoint: measure_memory must be None, True or False, got "
                                f"{value!r}")
        self._measure_memory = None if value is None else bool(value)

    @property
    def reach_parameters(self) -> bool:
        """Whether torch.autograd.grad and backward(inputs=...) reach every parameter (True, the default): the
        blocks' parameters before the final stretch are inputs of the autograd graph's remat node. False leaves
        them out, as torch.utils.checkpoint's reentrant form does (each costs autograd's engine about 1.3 us a
        backward, 1.6% of a 24-layer transformer stack's iteration on a CPU): loss.backward() still adds every
        parameter's gradient to its .grad, bit-equal, but a backward through the node by torch.autograd.grad or
        backward(inputs=...) is refused (remat.BackwardError: it could not reach them), and
        torch.autograd.grad(out, those parameters) alone raises autograd's "appears to not have been used in
        the graph" (gives None with allow_unused=True), as with torch.utils.checkpoint's reentrant form. No
        effect where a parameter serves more than one block (their sums are returned through the node), where
        torch lacks _will_engine_execute_node, or inside remat's runtime (a block of another auto_checkpoint,
        a checkpoint_loop's step: _inside.py)."""
        return self._reach_parameters

    @reach_parameters.setter
    def reach_parameters(self, value: bool) -> None:
        self._reach_parameters = flag(value, "remat.torch.auto_checkpoint: reach_parameters")

    def _sentinel_node(self) -> tuple:
        """(a leaf of no elements that requires grad, its AccumulateGrad node): with reach_parameters=False the
        remat node's one input besides x, so that its backward runs where x needs no gradient, and tells
        loss.backward() (which runs every AccumulateGrad node) from torch.autograd.grad (which runs none but its
        inputs')."""
        if self._sentinel is None:
            leaf = torch.empty(0, requires_grad=True)
            self._sentinel = (leaf, accumulators([leaf])[0])
        return self._sentinel

    def measure_next(self) -> None:
        """The next forward and its backward count the activation bytes again where measure_memory is None (as
        the first did; True counts every one anyway, False none): after iterations run uncounted (tradeoff
        times them with measure_memory False), so that measured_peak_bytes is a counted peak again."""
        self._forwards = 0

    @property
    def measured_peak_bytes(self) -> Optional[int]:
        """Activation bytes at the peak of the last counted forward and its backward (measure_memory: the first
        by default): the tensors autograd saved and the snapshots held, each storage once. None before the
        first forward."""
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

    def _params(self) -> _Params:
        """The parameters that require grad, per block and each once. The lists are made once (walking the
        modules for them costs about 0.3 ms per block and iteration), again after .to() and the like and
        when a parameter is frozen or unfrozen; a block changed in place after auto_checkpoint (parameters
        added, blocks replaced) needs a new auto_checkpoint, as its profile and plan do."""
        if self._param_lists is None:
            self._param_lists = [list(b.parameters()) for b in self.blocks]
            self._flat_params = [p for ps in self._param_lists for p in ps]
            self._params_by_flags = {}
        flags = tuple(map(_requires_grad, self._flat_params))
        params = self._params_by_flags.get(flags)
        if params is None:
            params = self._params_by_flags[flags] = _Params(self._param_lists, self._unfrozen_since_profiled(flags),
                                                            self._plain_leaves(flags))
        return params

    def _plain_leaves(self, flags: tuple) -> List[bool]:
        """Per block: whether a stretch starting at it takes x_k as a plain leaf: the block saves its input as
        profiled, with its parameters requiring grad as they did then (a weight frozen since, its layer may no
        longer save its input for it, and the leaf would hold x_k beside the tape, uncounted)."""
        profiled = getattr(self, "_profiled_grads", None)
        leaves, i = [], 0
        for k, ps in enumerate(self._param_lists):
            n = len(ps)
            same = profiled is not None and len(profiled) == len(flags) and flags[i:i + n] == profiled[i:i + n]
            leaves.append(bool(self._saves_input[k] and same))
            i += n
        return leaves

    def _unfrozen_since_profiled(self, flags: tuple) -> Optional[Tuple[int, str]]:
        """(block index, parameter name) of the first parameter that requires grad now (`flags`) and did not when
        the blocks were profiled; None where there is none."""
        profiled = getattr(self, "_profiled_grads", None)  # None: pickled before it was recorded
        if profiled is None or len(profiled) != len(flags):
            return None
        i = next((i for i, (now, was) in enumerate(zip(flags, profiled)) if now and not was), None)
        if i is None:
            return None
        for k, block in enumerate(self.blocks):
            names = [name for name, _ in block.named_parameters()]
            if i < len(names):
                return k, names[i]
            i -= len(names)
        return None

    def __getstate__(self):
        """For copy.deepcopy and pickle: without the caches of this module's own parameter objects and their
        gradient nodes (autograd nodes do not pickle) and its activation count (which leaves out its own
        parameters' storages, not a copy's); __setstate__ makes them again."""
        state = self.__dict__.copy()
        state.update(_param_lists=None, _flat_params=[], _params_by_flags={}, _counter=None, _ran=False,
                     _forwards=0, _sentinel=None)
        return state

    def __setstate__(self, state) -> None:
        state.setdefault("_forwards", 0)  # pickled before the first forward alone was counted
        state.setdefault("_reach_parameters", True)  # pickled before it could be turned off
        state.setdefault("_sentinel", None)
        if "_saves_input" not in state:  # pickled before the runtime read it
            state["_saves_input"] = [p.saves_input for p in state["profiles"]]
        if "measure_memory" in state:  # an attribute then, True by default
            state["_measure_memory"] = bool(state.pop("measure_memory"))
        super().__setstate__(state)
        self._counter = SavedBytes([*self.parameters(), *self.buffers()])

    def _apply(self, *args, **kwargs):
        self._param_lists = None  # conversions may swap the parameter objects (torch.__future__)
        done = super()._apply(*args, **kwargs)
        # Parameters and buffers moved have new storages, which the activation count must still leave out.
        self._counter.exclude([*self.parameters(), *self.buffers()])
        return done

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """The blocks' output for `x`, a batch of the sample's shape and dtype (another is refused: the plan
        depends on the sizes), its backward along the plan; under torch.no_grad the blocks simply run."""
        if not isinstance(x, torch.Tensor):
            raise ArgumentError(f"remat.torch.auto_checkpoint: expected a tensor input, got {type(x).__name__}")
        params = self._params()
        if not torch.is_grad_enabled() or not (x.requires_grad or params.unique):
            return _run_blocks(self.blocks, x, 0)
        if tuple(x.shape) != self.input_shape or x.dtype != self.input_dtype:
            raise ArgumentError(f"remat.torch.auto_checkpoint: the input has shape {tuple(x.shape)} and dtype "
                                f"{x.dtype}; the plan was made for the sample's {self.input_shape} and "
                                f"{self.input_dtype} (call auto_checkpoint again with such a sample)")
        self._check_profiled_conditions(x)
        if params.unfrozen is not None:
            k, name = params.unfrozen
            raise ArgumentError(
                f"remat.torch.auto_checkpoint: block {k}'s parameter {name!r} requires grad, but it did not when the "
                f"blocks were profiled; what autograd saves depends on it (a layer's input, for its weight's "
                f"gradient), so the predicted peak would not be what it measures, nor hold a budget near it (call "
                f"auto_checkpoint again with the parameters as they are now; freezing more needs no new profile)")
        if x.requires_grad and getattr(self.profiles[0], "grad_input_extra_bytes", 0):
            raise ArgumentError(
                f"remat.torch.auto_checkpoint: the input requires grad, but the sample did not, and block 0 saves "
                f"{self.profiles[0].grad_input_extra_bytes} bytes more for such an input than was profiled (its "
                f"parameters frozen, say), so the predicted peak would not hold, nor a budget near it: call "
                f"auto_checkpoint with a sample that requires grad (sample.requires_grad_())")
        measuring = self.measure_memory is True or (self.measure_memory is None and self._forwards == 0)
        self._forwards += 1
        if measuring or self.measure_memory is False:  # None past the first: the first's peak is kept
            self._counter.reset_peak()
        self._ran = True
        self._counter.own_bytes(x)  # a slice of a larger tensor counts its own bytes, as profiled
        if self.plan is None:
            # Plain autograd's plan (every block taped, in order) is one ordinary graph: no boundary between
            # blocks, nothing of remat's in the backward.
            with self._counter.hooks() if measuring else nullcontext():
                return _run_blocks(self.blocks, x, 0)
        split = self._split(params.shared)
        run = None
        if split.start > 0:
            run = _Run(self, split, params)
            run.measuring = measuring
            if self._reach_parameters or params.shared or not _ENGINE_QUERY or inside():
                # The Function takes the parameters of the blocks it reverses (all of them where one is shared:
                # the split is then whole), so that torch.autograd.grad on the output reaches them; every
                # parameter where those blocks have none, so that its output still needs its backward, which
                # frees the run.
                x = _Stack.apply(run, x, *(params.inputs_before(split.start) or params.unique))
            else:
                leaf, run.sentinel_node = self._sentinel_node()
                x = _Stack.apply(run, x, leaf)
        try:
            with self._counter.hooks() if measuring else nullcontext():
                # in line, not through _run_blocks: its caller's x would hold the final stretch's input, x_j,
                # through the whole stretch (uncounted where its first block does not save it)
                for k, block in enumerate(self._block_list[split.start:], split.start):
                    x = block(x)
                    if not isinstance(x, torch.Tensor):
                        bad_block_output(k, x)
        except BaseException:
            if run is not None:  # no backward will free the snapshots
                run.close()
                run.done = True
            raise
        return x

    def _check_profiled_conditions(self, x: torch.Tensor) -> None:
        """Refuses a forward with grad whose activations the profile did not measure: a block, or any submodule
        of one, in another mode than when it was profiled (profiled in eval mode and run in training mode,
        dropout's masks and batch norm's statistics were saved uncounted: measured peaks past the predicted and
        the budget), named with the submodule's path; or under other autocast settings (profiled in float32 and
        run under bfloat16 autocast, its copies of the weights were saved uncounted: 24x the budget)."""
        profiled_autocast = getattr(self, "_profiled_autocast", None)  # None: pickled before it was recorded
        if profiled_autocast is not None and autocast_settings() != profiled_autocast:
            raise ArgumentError(
                f"remat.torch.auto_checkpoint: the forward runs {describe_autocast(autocast_settings())}, but the "
                f"blocks were profiled {describe_autocast(profiled_autocast)}; what autograd saves depends on it "
                f"(low-precision activations, the weights' low-precision copies), so the predicted peak would not be "
                f"what it measures, nor hold a budget near it (call auto_checkpoint under the same autocast; under "
                f"torch.no_grad any runs)")
        profiled = getattr(self, "_profiled_modes", None)
        if profiled is not None:
            changed = profiled.changed()
        else:  # pickled before the submodules' modes were recorded: the blocks' own, where those were
            was = getattr(self, "_profiled_training", None) or ()
            changed = next(((k, "", w) for k, (b, w) in enumerate(zip(self._block_list, was)) if b.training != w),
                           None)
        if changed is not None:
            k, path, was = changed
            mode = {True: "training", False: "eval"}
            what = f"block {k}" if not path else f"block {k}'s submodule {path!r}"
            raise ArgumentError(
                f"remat.torch.auto_checkpoint: {what} is in {mode[not was]} mode, but it was profiled in "
                f"{mode[was]} mode; what autograd saves depends on the mode (dropout's masks, batch norm's "
                f"statistics), so the predicted peak would not be what it measures, nor hold a budget near it (call "
                f"auto_checkpoint again with the model in this mode; under torch.no_grad any mode runs)")

    def _split(self, whole: bool) -> "_Split":
        if self._splits.get(whole) is None:
            self._splits[whole] = _Split(self.actions(), len(self.blocks), whole)
        return self._splits[whole]


def _refuse_contexts(profiles: List[BlockProfile], plain_peak_bytes: int) -> None:
    """Below plain autograd's peak, blocks are re-run and their stretches back-propagated apart: a block that
    computes from a tensor made outside the model with a graph of its own (a cross-attention's memory) had each
    such backward go through that graph, and the second failed with autograd's "Trying to backward through the
    graph a second time", after the forward. Refused when the module is made, naming the block."""
    for k, p in enumerate(profiles):
        if p.context_shape is not None:
            raise ArgumentError(
                f"remat.torch.auto_checkpoint: block {k} computes from a tensor made outside the model that requires "
                f"grad (shape {p.context_shape}; a cross-attention's memory, say); below plain autograd's peak remat "
                f"back-propagates blocks apart, each through that tensor's graph, which autograd allows once. Compute "
                f"it inside a block, detach it, or give a budget of at least plain autograd's peak "
                f"({plain_peak_bytes} bytes)")


def _run_blocks(blocks, x, first: int):
    """x through `blocks` (block `first` on), each output checked to be a tensor."""
    for k, block in enumerate(blocks, first):
        x = block(x)
        if not isinstance(x, torch.Tensor):
            bad_block_output(k, x)
    return x


def _planner(taped: bool):
    return chain_taped if taped else chain


def _plan_within(steps, final_state_bytes: int, budget_bytes: int, taped: bool):
    """The plan to follow: with taped advances, the cheapest of remat.chain_taped's within the budget in true
    bytes, its sizes rounded up and, at a finer unit, down, or one of the least peak near the least budget
    (_chain_budget.py: rounded up only, a budget that a schedule fills exactly, as checkpoint_sequential's
    measured peak, missed that schedule, and budgets just above the least were refused)."""
    try:
        if taped:
            return plan_taped_within(steps, final_state_bytes, budget_bytes)
        return chain(steps, budget_bytes, final_state_bytes=final_state_bytes)
    except (ArgumentError, CapacityError):
        least = _least_budget(steps, final_state_bytes, taped)
        raise CapacityError(f"remat.torch.auto_checkpoint: no schedule fits a budget of {budget_bytes} bytes; "
                            f"the least budget that fits is {least} bytes") from None


def _least_budget(steps, final_state_bytes: int, taped: bool) -> int:
    """The least budget auto_checkpoint plans this chain within: with taped advances, the least in true bytes
    of any plan of the model (_chain_budget.least_plan, remat::plan_taped_chain_least; plan_taped_within plans
    every budget from it up); states only, the least remat.chain plans (at the granularity it picks there)."""
    if taped:
        return least_plan(steps, final_state_bytes).least_budget_bytes
    plan = _planner(taped)
    roomy = plan(steps, sum(s[2] + s[3] for s in steps) * 2 + final_state_bytes, final_state_bytes=final_state_bytes)
    least = roomy.least_budget_bytes
    while True:
        try:
            return plan(steps, least, final_state_bytes=final_state_bytes).budget_bytes
        except (ArgumentError, CapacityError):
            least += max(1, roomy.granularity_bytes)


def auto_checkpoint(model: Blocks, sample: torch.Tensor, budget: Bytes = "8GiB", *, preserve_rng_state: bool = True,
                    repeats: int = 3, taped: bool = True, reach_parameters: bool = True) -> AutoCheckpoint:
    """A module that computes what `model` computes (an nn.Sequential, an nn.ModuleList, or a list or tuple of
    nn.Modules, each taking and returning one tensor and leaving its input as it found it: no in-place block),
    with a forward and backward that hold at most `budget` bytes of activations along the cheapest schedule remat
    finds for that memory.

    Each block is profiled on `sample` (a batch shaped like the ones to come): its forward and backward time
    (the least of `repeats` runs after one warm-up; CPU time on the CPU with one PyTorch thread, else wall
    time), its input's and output's bytes and the bytes autograd saves for its backward (saved-tensor hooks,
    each storage once; parameters and buffers left out). Where the budget holds plain autograd's
    activations (`plain_peak_bytes`), the module runs plain autograd: no block is run twice. Below that it
    follows remat.chain_taped's optimal plan for the budget: snapshots of block inputs, some blocks run
    keeping their tapes, the others re-run in the backward (taped=False: remat.chain's, snapshots only). A
    budget below the least that any plan fits is refused (remat.CapacityError naming that least budget).
    The blocks' norm layers (BatchNorm) update their running statistics once per forward and backward, as
    under plain autograd, not again in the re-runs; a block's re-runs start from the buffers its forward run
    started from (spectral_norm's vectors, which its weight is computed from).

    budget: bytes (an int or a string such as "2GiB"; default "8GiB"); the chain model's memory: snapshots, the
      current block input, and a running block's saved activations.
    preserve_rng_state: save the RNG states with each snapshot and set them again where a block is re-run,
      so that dropout replays the same masks (as torch.utils.checkpoint does).
    repeats: timed runs of each block's forward and backward, after one warm-up (0..10000).
    reach_parameters: False leaves the parameters out of the autograd graph's remat node, as
      torch.utils.checkpoint's reentrant form does: a little faster; loss.backward() adds to every .grad as
      before, but torch.autograd.grad and backward(inputs=...) are refused (remat.BackwardError): they cannot
      reach the parameters of the blocks before the plan's final stretch (the module's reach_parameters
      attribute says more; it can be set later).

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
    taped = flag(taped, "remat.torch.auto_checkpoint: taped")
    reach_parameters = flag(reach_parameters, "remat.torch.auto_checkpoint: reach_parameters")
    preserve_rng_state = flag(preserve_rng_state, "remat.torch.auto_checkpoint: preserve_rng_state")
    budget_bytes = parse_bytes(budget, "budget")
    profiles, plain_peak, _ = profile_blocks(blocks, sample, repeats)
    return AutoCheckpoint(blocks, sample, budget_bytes, profiles, plain_peak, preserve_rng_state, taped,
                          reach_parameters=reach_parameters)


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
    if sample.numel() == 0:  # the chain planner refused its blocks' inputs of no bytes, naming a "step 0"
        raise ArgumentError(f"remat.torch.auto_checkpoint: the sample has no elements (shape {tuple(sample.shape)}); "
                            f"the blocks are profiled on it, their bytes and times, so it must be a batch shaped "
                            f"like the ones to come")
    # Profiling measures what autograd saves and its backward's time: neither exists under inference_mode.
    if torch.is_inference_mode_enabled():
        raise ArgumentError("remat.torch.auto_checkpoint: the blocks cannot be profiled under torch.inference_mode "
                            "(autograd is off there); make the module outside it (it runs under inference_mode as "
                            "the blocks themselves)")
    if sample.is_inference():
        raise ArgumentError("remat.torch.auto_checkpoint: the sample is an inference tensor (made under "
                            "torch.inference_mode), which autograd cannot save; pass one made outside it (a clone)")
    if not bounded(repeats, 0, MAX_REPEATS):  # numpy's ints too, as every count of remat's
        raise ArgumentError(f"remat.torch.auto_checkpoint: repeats must be an int in 0..{MAX_REPEATS} (timed runs of "
                            f"each block), got {type(repeats).__name__} {repeats!r}")
    return blocks
