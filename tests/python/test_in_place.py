"""In-place modification of what remat.torch re-runs from. A re-run reads x_0 (the caller's tensor, kept as a
snapshot without a copy) and every stored state whether or not the graph saves them, so a tensor modified in
place since the forward gave silently wrong gradients where plain autograd and torch.utils.checkpoint refuse
the backward. Now: x_0 modified after the forward is refused in the backward (remat.BackwardError, also a
RuntimeError as plain autograd's), a step or block that modifies its input in place is refused where it runs
(remat.ArgumentError naming it), and profiling leaves the model's sample as it was."""

import pytest

torch = pytest.importorskip("torch")
import remat  # noqa: E402
import remat.torch  # noqa: E402

nn = torch.nn


def loop_step():
    torch.manual_seed(0)
    lin = nn.Linear(8, 8)
    return lambda k, h: torch.tanh(lin(h))


@pytest.mark.parametrize("placement", ["device", "host"])
def test_x0_modified_in_place_after_the_forward_is_refused_as_plain_autograd_refuses_it(placement):
    step = loop_step()
    x0 = torch.randn(4, 8, requires_grad=True)
    x = x0.detach().clone().requires_grad_()
    h = step(0, x)
    with torch.no_grad():
        x.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):  # plain autograd refuses it
        h.sum().backward()

    x = x0.detach().clone().requires_grad_()
    y = remat.torch.checkpoint_loop(step, x, steps=10, slots=3, snapshots=placement)
    with torch.no_grad():
        x.mul_(2)
    with pytest.raises(remat.BackwardError, match="x_0 was modified in place after the forward"):
        y.sum().backward()
    assert isinstance(remat.BackwardError("x"), RuntimeError)


def test_disk_snapshots_are_copies_so_x0_modified_afterwards_does_not_matter():
    if not remat.has_hdf5:
        pytest.skip("built without HDF5")
    step = loop_step()
    x0 = torch.randn(4, 8)
    x = x0.clone().requires_grad_()
    y = remat.torch.checkpoint_loop(step, x, steps=10, slots=3, snapshots="disk")
    with torch.no_grad():
        x.mul_(2)
    y.sum().backward()
    reference = x0.clone().requires_grad_()
    h = reference
    for k in range(10):
        h = step(k, h)
    h.sum().backward()
    assert torch.equal(x.grad, reference.grad)


def test_a_step_that_modifies_its_input_in_place_is_named_in_the_forward():
    class Step(nn.Module):  # a module step: no discovery run with a leaf requiring grad, so torch says nothing
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(8, 8)

        def forward(self, k, h):
            h.mul_(0.5)
            return torch.tanh(self.lin(h))

    with pytest.raises(remat.ArgumentError, match=r"step 0 modified its input x_0 in place"):
        remat.torch.checkpoint_loop(Step(), torch.randn(4, 8), steps=10, slots=3)

    def counter_step(k, s):  # an integer part counted up in place and passed on
        s[1].add_(1)
        return torch.tanh(s[0] * 2), s[1]

    with pytest.raises(remat.ArgumentError, match=r"step 0 modified its input x_0 \(part 1\) in place"):
        remat.torch.checkpoint_loop(counter_step, (torch.randn(3, requires_grad=True), torch.zeros((), dtype=torch.long)),
                                    steps=5, slots=2)


def in_place_relu_stack():
    torch.manual_seed(0)
    return nn.Sequential(*[layer for _ in range(6) for layer in (nn.Linear(16, 16), nn.ReLU(inplace=True))])


@pytest.mark.parametrize("input_grad", [True, False])
def test_a_block_that_modifies_its_input_in_place_is_refused_when_profiled(input_grad):
    """Such a block corrupted the snapshot of its input, which a re-run then read: wrong gradients, silently
    (profiling raised autograd's leaf error instead where the input required grad, and modified the caller's
    sample where it did not)."""
    model = in_place_relu_stack()
    sample = torch.randn(4, 16, requires_grad=input_grad)
    with pytest.raises(remat.ArgumentError, match=r"block 1 \(ReLU\) modifies its input in place"):
        remat.torch.auto_checkpoint(model, sample, budget="1GiB", repeats=0)

    first = nn.Sequential(nn.ReLU(inplace=True), nn.Linear(16, 16))
    sample = torch.randn(4, 16)
    kept = sample.clone()
    with pytest.raises(remat.ArgumentError, match=r"block 0 \(ReLU\) modifies its input in place"):
        remat.torch.auto_checkpoint(first, sample, budget="1GiB", repeats=0)
    assert torch.equal(sample, kept)  # the caller's sample is as it was


def test_the_same_stack_with_the_relu_inside_each_block_runs_as_plain_autograd():
    torch.manual_seed(0)
    model = nn.Sequential(*[nn.Sequential(nn.Linear(16, 16), nn.ReLU(inplace=True)) for _ in range(6)])
    x = torch.randn(4, 16, requires_grad=True)
    model(x).sum().backward()
    want = [p.grad.clone() for p in model.parameters()] + [x.grad.clone()]
    least = remat.torch.auto_checkpoint(model, x, budget="1GiB", repeats=0).least_budget_bytes
    fast = remat.torch.auto_checkpoint(model, x, budget=least, repeats=0)
    assert fast.recomputed_blocks > 0
    for t in [*model.parameters(), x]:
        t.grad = None
    fast(x).sum().backward()
    got = [p.grad for p in model.parameters()] + [x.grad]
    assert all(torch.equal(a, b) for a, b in zip(got, want))


def test_the_model_input_modified_in_place_after_the_forward_is_refused():
    torch.manual_seed(0)
    model = nn.Sequential(*[nn.Sequential(nn.Linear(16, 16), nn.Tanh()) for _ in range(6)])
    x = torch.randn(4, 16, requires_grad=True)
    least = remat.torch.auto_checkpoint(model, x, budget="1GiB", repeats=0).least_budget_bytes
    fast = remat.torch.auto_checkpoint(model, x, budget=least, repeats=0)
    assert fast.method == "remat.chain_taped" and fast.recomputed_blocks > 0
    y = fast(x)
    with torch.no_grad():
        x.mul_(2)
    with pytest.raises(remat.BackwardError, match="x_0 .*was modified in place after the forward"):
        y.sum().backward()
    fast(x).sum().backward()  # the module works on


@pytest.mark.parametrize("taped", [False, True])
def test_a_step_that_modifies_a_part_earlier_steps_passed_on_is_refused(taped):
    """Only each run's first step has its input checked as it runs (a state the steps after it get is the run's
    own), but a part passed on as it is stays the run's first state's: step 2 counting it up in place modified
    x_0 (and x_1), which remat keeps (its snapshot would then differ from the forward's), and is refused."""
    w = torch.randn(3, requires_grad=True)

    def step(k, s):
        if k == 2:
            s[1].add_(1)
        return torch.tanh(s[0] * w), s[1]  # the counter passed on as it is

    x0 = (torch.randn(3), torch.zeros((), dtype=torch.long))
    with pytest.raises(remat.ArgumentError, match=r"modified (its input )?x_\d+ \(part 1\) in place"):
        remat.torch.checkpoint_loop(step, x0, steps=6, slots=200 if taped else 2, taped=taped)
    assert int(x0[1]) <= 1  # refused at the first step that did it (or the end of its run), not after the loop


def test_a_step_that_modifies_a_state_only_its_run_holds_is_the_plain_loops_own():
    """A step changing in place a state no snapshot holds (made by the step before it in the same run) computes
    what the plain loop computes: with room for every tape nothing is re-run, and the gradients are plain
    autograd's bit for bit."""
    torch.manual_seed(0)
    lin = nn.Linear(8, 8)

    def step(k, h):
        if k == 3:
            h.mul_(0.5)  # x_3: step 2's output, which step 2's graph does not save (an addition's)
        return h + torch.tanh(lin(h))

    def run(use_remat):
        lin.zero_grad()
        x0 = torch.ones(2, 8, requires_grad=True)
        if use_remat:
            x = remat.torch.checkpoint_loop(step, x0, steps=6, slots=10**4, taped=True)
        else:
            x = x0
            for k in range(6):
                x = step(k, x)
        x.sum().backward()
        return x.detach(), lin.weight.grad.clone(), x0.grad

    for a, b in zip(run(False), run(True)):
        assert torch.equal(a, b)
