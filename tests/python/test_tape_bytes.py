"""The chain model's tape of a block (remat.torch._profile.tape_bytes, t_k of docs/heterogeneous.md): what the
block holds from its taped forward to its backward, each storage in one tape only. Against an independent census
of one plain forward (saved-tensor hooks, storages by address, parameters left out): block k's tape is the bytes
of the storages it saves that block k+1 does not save too (1 byte where that is none); on a stack mixing blocks
that end in a ReLU (their output is the next block's saved input), a block that saves its output where the next
does not save its input, blocks that save nothing and a last block that saves its output. On a stack of blocks
ending in ReLU, auto_checkpoint's predicted peak is within 5% of its measured one (7 of 8 budgets exactly; the
default tape, m_k + a_k, counted each output in two tapes: up to 1.44x the measured peak); on the mixed stack,
measured <= predicted <= budget at every budget, with plain autograd's gradients."""

import pytest

torch = pytest.importorskip("torch")
import remat.torch  # noqa: E402
from conftest import gradients, saved_storages  # noqa: E402
from remat.torch._profile import tape_bytes  # noqa: E402

nn = torch.nn


class AddsBias(nn.Module):
    """x + b: saves nothing."""

    def __init__(self, width):
        super().__init__()
        self.b = nn.Parameter(torch.randn(width))

    def forward(self, x):
        return x + self.b


class SigmoidOfSum(nn.Module):
    """sigmoid(x + b): saves its output, not its input."""

    def __init__(self, width):
        super().__init__()
        self.b = nn.Parameter(torch.randn(width))

    def forward(self, x):
        return torch.sigmoid(x + self.b)


def relu_stack():
    torch.manual_seed(4)
    widths = [64, 96, 64, 32, 64, 48, 64, 64, 80, 64, 64]
    return nn.Sequential(*[nn.Sequential(nn.Linear(a, b), nn.ReLU()) for a, b in zip(widths, widths[1:])])


def mixed_stack():
    torch.manual_seed(6)
    return nn.Sequential(
        nn.Sequential(nn.Linear(32, 48), nn.ReLU()),  # its output saved by the next block as its input
        nn.Sequential(nn.Linear(48, 48), nn.ReLU()),
        SigmoidOfSum(48),  # saves its output; the next block does not save its input
        AddsBias(48),  # saves nothing
        AddsBias(48),
        nn.Sequential(nn.Linear(48, 64), nn.Tanh()),  # saves its input and output
        nn.Sequential(nn.Linear(64, 32), nn.ReLU()))  # the last block: saves its output, no next tape


def saved_per_block(model, x):
    """{address: bytes} of the storages each block saves, in one plain forward (one graph, as a taped stretch)."""
    weights = [*model.parameters(), *model.buffers()]
    per_block, h = [], x
    for block in model:
        h, seen = saved_storages(lambda: block(h), weights)
        per_block.append(seen)
    return per_block, h


@pytest.mark.parametrize("make", [relu_stack, mixed_stack])
def test_a_tape_counts_each_storage_once_across_neighbours(make):
    model = make()
    width = model[0][0].in_features if isinstance(model[0], nn.Sequential) else model[0].b.numel()
    x = torch.randn(16, width, requires_grad=True)
    fast = remat.torch.auto_checkpoint(model, x, budget=1 << 40, repeats=0)
    per_block, out = saved_per_block(model, x)
    for k, seen in enumerate(per_block):
        later = per_block[k + 1] if k + 1 < len(per_block) else {}
        own = sum(size for ptr, size in seen.items() if ptr not in later)
        assert tape_bytes(fast.profiles, k) == max(1, own), k
        assert fast.chain_steps[k][4] == max(1, own), k
    # every storage the forward saves is in exactly one tape: together they are plain autograd's activations
    every = {ptr: size for seen in per_block for ptr, size in seen.items()}
    nothing_saved = sum(1 for k, seen in enumerate(per_block)
                        if not set(seen) - set(per_block[k + 1] if k + 1 < len(per_block) else {}))
    assert sum(s[4] for s in fast.chain_steps) - nothing_saved == sum(every.values())
    if make is mixed_stack:
        assert nothing_saved == 2  # the two AddsBias
        assert per_block[2] and not set(per_block[2]) & set(per_block[3])  # SigmoidOfSum keeps its own output
    del out


def test_on_blocks_ending_in_relu_the_predicted_peak_is_the_measured_one():
    model = relu_stack()
    x = torch.randn(32, 64, requires_grad=True)
    probe = remat.torch.auto_checkpoint(model, x, budget=1 << 40, repeats=0)
    least, top = probe.least_budget_bytes, probe.plain_peak_bytes
    for i in range(8):
        budget = least + (top - least) * i // 8
        fast = remat.torch.auto_checkpoint(model, x, budget=budget, repeats=0)
        fast(x).sum().backward()
        assert fast.measured_peak_bytes <= fast.predicted_peak_bytes <= budget, budget
        assert fast.predicted_peak_bytes <= 1.05 * fast.measured_peak_bytes, (budget, fast.actions())


def test_on_a_mixed_stack_every_plan_measures_within_its_prediction():
    model = mixed_stack()
    x = torch.randn(16, 32, requires_grad=True)
    plain = gradients(model, model, x)
    probe = remat.torch.auto_checkpoint(model, x, budget=1 << 40, repeats=0)
    least, top = probe.least_budget_bytes, probe.plain_peak_bytes
    taped = 0
    for i in range(9):
        budget = least + (top - least) * i // 8
        fast = remat.torch.auto_checkpoint(model, x, budget=budget, repeats=0)
        assert all(torch.equal(a, b) for a, b in zip(gradients(model, fast, x), plain)), budget
        assert fast.measured_peak_bytes <= fast.predicted_peak_bytes <= budget, (budget, fast.actions())
        taped += fast.plan is not None and fast.plan.taped_steps > 0
    assert taped >= 4
