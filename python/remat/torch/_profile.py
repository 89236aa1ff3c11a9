"""Profiles a stack of blocks on a sample input, for remat.torch.auto_checkpoint: each block's forward and
backward time, the bytes of its input and output, and the activation bytes autograd saves for it (through
saved-tensor hooks, each storage once, parameters left out). The user's RNG stream and the blocks' buffers
(BatchNorm's running statistics) are left as they were. Identical blocks (the same module, parameters and
input shapes) share their times: the least over all of them."""

from __future__ import annotations

import contextlib
import dataclasses
import time
from contextlib import nullcontext
from dataclasses import dataclass
from typing import Dict, Hashable, Iterator, List, Optional, Sequence, Tuple

import torch

from ._blocks import bad_block_output, block_modified_input
from ._contexts import ContextRecorder
from ._inside import runtime
from ._norm_stats import BlockBuffers, copied, each_once, set_back
from ._saved import SavedBytes, storage_key
from ._versions import modified, versions


@dataclass(frozen=True)
class BlockProfile:
    """One block: forward and backward seconds (the least of the timed runs), its input's and output's storage
    bytes, and what autograd saves for its backward: `saved_bytes` besides its input's and output's storages,
    and whether it saves its input and its output."""
    forward_seconds: float
    backward_seconds: float
    input_bytes: int
    output_bytes: int
    saved_bytes: int
    saves_input: bool
    saves_output: bool
    #: The shape of a tensor the block computes from that it did not make and that has a graph of its own (a
    #: cross-attention's memory made before the model), None where there is none: a backward of the block apart
    #: from the rest goes through that graph, which autograd allows once (_contexts.py)
    context_shape: Optional[Tuple[int, ...]] = None
    #: Block 0 of a sample that does not require grad: how many more bytes it saves for an input that does (a
    #: block whose parameters are all frozen saves nothing for an input without grad), 0 otherwise
    grad_input_extra_bytes: int = 0

    @property
    def adjoint_bytes(self) -> int:
        """a_k of the chain model, whose tape of block k holds m_k + a_k (its input and a_k): what the block
        saves besides its input (a saved output included), less its input's bytes where it does not save its
        input (never below 0), so that the tape is what the block holds. Counting an input the block does not
        save left 2-7% of the budget unused on stack_bench's stacks (a block's input is held, or counted as
        a snapshot, only where the plan stores it)."""
        held = self.saved_bytes + (self.output_bytes if self.saves_output else 0)
        return held if self.saves_input else max(0, held - self.input_bytes)


def tape_bytes(profiles: Sequence[BlockProfile], k: int) -> int:
    """t_k of the chain model: what block k's tape holds from its taped forward to its backward, each storage
    counted in one tape only. A taped stretch is one graph (_stretch.py): block k+1 runs on block k's output
    itself, and a stretch's first block on a view of its input state (_stretch_input.py), which lives on only
    where the graph saves it. So the tape holds the input where the block saves it, the other tensors it saves,
    and its output where it saves it, unless block k+1 saves that same storage as its input: then block k+1's
    tape counts it (where block k+1 is not taped, x_{k+1} is a snapshot or the current state, counted as such;
    block k's reverse follows block k+1's at once, whose moment counted it). Where block k+1 does not save it,
    block k's tape counts it, and a snapshot of x_{k+1}, the same storage, counts it again (more than is held,
    never less); the last block's tape keeps its saved output (the plans never tape the last block). At least 1
    byte (0 would stand for the default m_k + a_k): a block that saves nothing holds next to nothing."""
    p = profiles[k]
    shared_out = k + 1 < len(profiles) and profiles[k + 1].saves_input
    held = ((p.input_bytes if p.saves_input else 0) + p.saved_bytes +
            (p.output_bytes if p.saves_output and not shared_out else 0))
    return max(1, held)


def chain_steps(profiles: Sequence[BlockProfile]) -> List[Tuple[float, float, int, int, int]]:
    """The chain auto_checkpoint plans: (f_k, b_k, m_k, a_k, t_k) per block, b_k its forward and backward."""
    return [(p.forward_seconds, p.forward_seconds + p.backward_seconds, p.input_bytes, p.adjoint_bytes,
             tape_bytes(profiles, k)) for k, p in enumerate(profiles)]


def _leaf(x: torch.Tensor, grad: bool) -> torch.Tensor:
    x = x.detach()
    return x.requires_grad_() if grad and (x.is_floating_point() or x.is_complex()) else x


def _devices(blocks: Sequence[torch.nn.Module], sample: torch.Tensor) -> List[int]:
    """The GPUs of the sample and the blocks' parameters."""
    return sorted({t.get_device() for t in [sample, *(p for b in blocks for p in b.parameters())] if t.is_cuda})


@contextlib.contextmanager
def left_as_they_were(blocks: Sequence[torch.nn.Module], sample: torch.Tensor) -> Iterator[None]:
    """The blocks' buffers (BatchNorm's running statistics, which every forward in training mode updates) and
    the RNG states of the CPU and of the sample's and parameters' GPUs (dropout's draws) set back when the
    block ends: profiling, and tradeoff's measured iterations, leave the model and the caller's RNG stream
    as they found them."""
    buffers = copied(each_once(slot for b in blocks for slot in BlockBuffers(b).every()))
    try:
        with torch.random.fork_rng(devices=_devices(blocks, sample)):
            yield
    finally:
        set_back(buffers)


def profile_blocks(blocks: Sequence[torch.nn.Module], sample: torch.Tensor, repeats: int = 3):
    """(profiles, plain autograd's activation bytes at the end of its forward, the last block's output,
    detached), the blocks' buffers and the RNG states left as they were."""
    with left_as_they_were(blocks, sample):
        return profile_unrestored(blocks, sample, repeats)


@runtime  # it times each block's backward with torch.autograd.grad: a nested auto_checkpoint takes its parameters
def profile_unrestored(blocks: Sequence[torch.nn.Module], sample: torch.Tensor, repeats: int = 3):
    """profile_blocks without setting the buffers and the RNG states back, for a caller inside
    left_as_they_were around more than the profile (remat.torch.tradeoff: one copy of each buffer)."""
    params = [p for b in blocks for p in b.parameters()]
    excluded = params + [t for b in blocks for t in b.buffers()]
    devices = _devices(blocks, sample)
    clock = _clock(devices, sample)
    profiles: List[BlockProfile] = []
    first = sample.detach()
    if storage_key(first)[1] > first.numel() * first.element_size():
        # a sample viewing a larger storage (a batch sliced from a dataset tensor) counted that storage as
        # block 0's input and saved bytes (6.4 MB for a 6 KB slice): profiled on a copy of its own bytes
        first = first.clone()
    states = [first]  # every x_k kept alive, so that storage keys stay unique
    plain_bytes = 0
    state_saved = [False] * (len(blocks) + 1)
    with_grad = None
    for k, block in enumerate(blocks):
        x = states[-1]
        forward_s, backward_s = float("inf"), float("inf")
        for run in range(repeats + 1):
            # The first run warms up and counts the saved bytes; the timed runs go without the
            # counting hooks (a Python call per saved tensor, which would add to the forward's time
            # as no plain forward pays it).
            counter = SavedBytes(excluded) if run == 0 else None
            leaf = _leaf(x, k > 0 or sample.requires_grad)
            # The caller's sample, which a block 0 that modifies its input in place (refused below) would
            # change where autograd does not refuse it (no grad): set back from this copy then.
            kept = x.clone() if run == 0 and not leaf.requires_grad else None
            before = versions((x,))  # the leaf's too: a detached tensor shares its version counter
            _sync(devices)
            start = clock()
            recorder = ContextRecorder() if run == 0 else nullcontext()
            try:
                with torch.enable_grad(), counter.hooks() if counter is not None else nullcontext(), recorder:
                    out = block(leaf)
            except RuntimeError as e:
                # autograd refuses an in-place operation on a leaf that requires grad: said so here
                if "in-place operation" in str(e) and "leaf Variable" in str(e):
                    block_modified_input(k, block)
                raise
            _sync(devices)
            middle = clock()
            if modified((x,), before) >= 0:
                if kept is not None:
                    with torch.no_grad():
                        x.copy_(kept)
                block_modified_input(k, block)
            del kept
            if not isinstance(out, torch.Tensor):
                bad_block_output(k, out)
            if counter is not None:
                keys = dict((key, entry[1]) for key, entry in counter.live.items())
                counted_out = out  # kept alive, so that its storage key stays its own
                contexts = recorder.contexts([leaf])
                context_shape = tuple(contexts[0].shape) if contexts else None
            del recorder
            inputs = [t for t in [leaf, *block.parameters()] if t.requires_grad]
            if out.requires_grad and inputs:
                torch.autograd.grad(out, inputs, torch.ones_like(out), allow_unused=True)
            _sync(devices)
            end = clock()
            if run > 0:
                forward_s = min(forward_s, middle - start)
                backward_s = min(backward_s, end - middle)
            del counter
        out = counted_out
        in_bytes, out_bytes = storage_key(x)[1], storage_key(out)[1]
        saves_input, inner, saves_output = _split_saved(keys, x, out)
        state_saved[k] |= saves_input
        state_saved[k + 1] |= saves_output
        plain_bytes += inner
        if k == 0 and not sample.requires_grad and (x.is_floating_point() or x.is_complex()):
            with_grad = _saved_with_grad_input(block, x, excluded)
        profiles.append(BlockProfile(forward_s if repeats else 0.0, backward_s if repeats else 0.0,
                                     in_bytes, out_bytes, inner, saves_input, saves_output, context_shape))
        del contexts
        states.append(out.detach())
    if with_grad is not None:  # what block 0 saves beyond the profile for an input requiring grad
        p, (saves_input, inner, saves_output) = profiles[0], with_grad
        extra = (max(0, inner - p.saved_bytes) + (p.input_bytes if saves_input and not p.saves_input else 0) +
                 # its output, unless block 1 saves that storage anyway (as its input)
                 (p.output_bytes if saves_output and not p.saves_output
                  and not (len(profiles) > 1 and profiles[1].saves_input) else 0))
        profiles[0] = dataclasses.replace(p, grad_input_extra_bytes=extra)
    # each storage once: a block that returns its input or a view of it (nn.Identity, nn.Flatten, a transpose)
    # makes a state of the same storage, which plain autograd holds once (counted twice, the plain peak came out
    # too high, and budgets between the two planned re-runs where plain autograd fits)
    held = dict(storage_key(s) for s, saved in zip(states, state_saved) if saved)
    plain_bytes += sum(held.values())
    keys = [_identity(b, x, p, k > 0 or sample.requires_grad)
            for k, (b, x, p) in enumerate(zip(blocks, states, profiles))]
    return _times_shared(profiles, keys), plain_bytes, states[-1]


def _saved_with_grad_input(block: torch.nn.Module, x: torch.Tensor, excluded) -> Tuple[bool, int, bool]:
    """(whether it saves its input, the bytes it saves besides its input and output, whether it saves its output)
    of `block` run on x made to require grad: what block 0 holds when the module's input requires grad where
    the sample did not."""
    counter = SavedBytes(excluded)
    with torch.enable_grad(), counter.hooks():
        out = block(_leaf(x, True))
    return _split_saved({key: entry[1] for key, entry in counter.live.items()}, x, out)


def _split_saved(keys: Dict[Hashable, int], x: torch.Tensor, out: torch.Tensor) -> Tuple[bool, int, bool]:
    """What a block saves (`keys`: storage -> bytes) split as its profile keeps it: (whether its input x's storage
    is among them, the bytes of the others but its output's, whether its output's is)."""
    in_key, out_key = storage_key(x)[0], storage_key(out)[0]
    return in_key in keys, sum(b for key, b in keys.items() if key not in (in_key, out_key)), out_key in keys


def _identity(block: torch.nn.Module, x: torch.Tensor, profile: BlockProfile, input_grad: bool) -> Hashable:
    """What makes two blocks run the same operations on the same shapes: the module (its class and its repr,
    which names its submodules and their settings), its parameters' and buffers' shapes, dtypes and devices,
    whether it is in training mode, its input's shape, dtype and device, whether its input's gradient is
    computed, and what it saves."""
    tensors = tuple((n, tuple(t.shape), t.dtype, t.device, t.requires_grad)
                    for n, t in [*block.named_parameters(), *block.named_buffers()])
    return (type(block), repr(block), tensors, block.training, tuple(x.shape), x.dtype, x.device, input_grad,
            profile.input_bytes, profile.output_bytes, profile.saved_bytes, profile.saves_input, profile.saves_output)


def _times_shared(profiles: List[BlockProfile], keys: List[Hashable]) -> List[BlockProfile]:
    """Each block's times the least over the blocks identical to it. Identical blocks cost the same; their
    profiled times differ by the machine's noise alone (up to 40% between the 24 identical layers of
    bench/python/stack_bench.py's transformer stack on a loaded VM, where the planner then re-ran 13
    "cheap" blocks rather than the segments' 12), and the least is the least disturbed (as over the
    repeats)."""
    forward: Dict[Hashable, float] = {}
    backward: Dict[Hashable, float] = {}
    for p, k in zip(profiles, keys):
        forward[k] = min(forward.get(k, p.forward_seconds), p.forward_seconds)
        backward[k] = min(backward.get(k, p.backward_seconds), p.backward_seconds)
    return [dataclasses.replace(p, forward_seconds=forward[k], backward_seconds=backward[k])
            for p, k in zip(profiles, keys)]


def _clock(devices, sample: torch.Tensor):
    """What the forward and backward times are read from: on the CPU with one PyTorch thread, the
    process's CPU time, which a loaded machine's other processes do not add to (its wall time there can
    come out several times the block's own for a run; with more threads the CPU time adds up the threads,
    so the wall time is read then); on a GPU the wall time between synchronisations."""
    if not devices and sample.device.type == "cpu" and torch.get_num_threads() == 1:
        return time.process_time
    return time.perf_counter


def _sync(devices) -> None:
    for d in devices:
        torch.cuda.synchronize(d)
