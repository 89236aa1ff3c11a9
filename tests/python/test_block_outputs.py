"""A block of auto_checkpoint, or a step of checkpoint_loop, that returns what the API does not take (a tuple, None,
a list, a number where one tensor is expected; another kind of state than x_0's): remat.ArgumentError naming the
block or step and what it returned, on every path that runs it (the profile, the forward of each kind of plan,
the re-runs of the backward, remat.torch.tradeoff), never a TypeError from inside the next block; and the module
or loop gives plain autograd's gradients afterwards."""

import pytest

torch = pytest.importorskip("torch")
import remat  # noqa: E402
import remat.torch  # noqa: E402

nn = torch.nn

WRONG = {
    "tuple": (lambda y: (y, y), r"a tuple of 2 \(Tensor, Tensor\)"),
    "one-tuple": (lambda y: (y,), r"a tuple of 1 \(Tensor\)"),
    "list": (lambda y: [y], r"a list of 1 \(Tensor\)"),
    "None": (lambda y: None, "None"),
    "int": (lambda y: 3, "int 3"),
}


class Switch(nn.Module):
    """A Linear + tanh block that returns `wrong(y)` instead of y from its `fail_from`-th call on."""

    def __init__(self, wrong):
        super().__init__()
        self.linear = nn.Linear(8, 8)
        self.wrong = wrong
        self.calls = 0
        self.fail_from = None

    def forward(self, x):
        self.calls += 1
        y = torch.tanh(self.linear(x))
        return self.wrong(y) if self.fail_from is not None and self.calls >= self.fail_from else y


def stack(wrong, bad):
    torch.manual_seed(3)
    blocks = [nn.Sequential(nn.Linear(8, 8), nn.Tanh()) for _ in range(6)]
    blocks[bad] = Switch(wrong)
    return nn.Sequential(*blocks), torch.randn(4, 8)


def plain_grads(model, x):
    model.zero_grad()
    x = x.detach().requires_grad_()
    model(x).sum().backward()
    return [p.grad.clone() for p in model.parameters()], x.grad.clone()


def still_plain_autograd(model, fast, x):
    """The module after the failure, the block mended: plain autograd's gradients, exactly."""
    model[[i for i, b in enumerate(model) if isinstance(b, Switch)][0]].fail_from = None
    want, want_x = plain_grads(model, x)
    model.zero_grad()
    xr = x.detach().requires_grad_()
    fast(xr).sum().backward()
    assert all(torch.equal(p.grad, g) for p, g in zip(model.parameters(), want))
    assert torch.equal(xr.grad, want_x)


@pytest.mark.parametrize("kind", WRONG)
def test_a_block_that_returns_no_tensor_is_named_when_profiled(kind):
    wrong, said = WRONG[kind]
    model, x = stack(wrong, 2)
    model[2].fail_from = 1
    for call in (lambda: remat.torch.auto_checkpoint(model, x, budget="1GiB", repeats=0),
                 lambda: remat.torch.tradeoff(model, x, rounds=1, repeats=0)):
        with pytest.raises(remat.ArgumentError, match=f"block 2 returned {said}; every block must return one tensor"):
            call()


@pytest.mark.parametrize("kind", WRONG)
@pytest.mark.parametrize("where", ["plain plan", "least budget", "without grad", "last block"])
def test_a_block_that_returns_no_tensor_in_the_forward_is_named(kind, where):
    wrong, said = WRONG[kind]
    bad = 5 if where == "last block" else 2
    model, x = stack(wrong, bad)
    probe = remat.torch.auto_checkpoint(model, x, budget="1GiB", repeats=0)
    budget = "1GiB" if where in ("plain plan", "without grad") else probe.least_budget_bytes
    fast = remat.torch.auto_checkpoint(model, x, budget=budget, repeats=0)
    assert (fast.method == "plain autograd") == (budget == "1GiB")
    model[bad].fail_from = model[bad].calls + 1
    with pytest.raises(remat.ArgumentError, match=f"block {bad} returned {said}"):
        if where == "without grad":
            with torch.no_grad():
                fast(x)
        else:
            fast(x.detach().requires_grad_())
    still_plain_autograd(model, fast, x)


@pytest.mark.parametrize("kind", WRONG)
def test_a_block_that_returns_no_tensor_when_re_run_in_the_backward_is_named(kind):
    wrong, said = WRONG[kind]
    model, x = stack(wrong, 1)
    least = remat.torch.auto_checkpoint(model, x, budget="1GiB", repeats=0).least_budget_bytes
    fast = remat.torch.auto_checkpoint(model, x, budget=least, repeats=0)
    y = fast(x.detach().requires_grad_())
    before = model[1].calls
    y.sum().backward()
    assert model[1].calls > before  # block 1 runs again in the backward
    y = fast(x.detach().requires_grad_())
    model[1].fail_from = model[1].calls + 1  # its re-run in the backward returns the wrong thing
    with pytest.raises(remat.ArgumentError, match=f"block 1 returned {said}"):
        y.sum().backward()
    del y
    still_plain_autograd(model, fast, x)


STEP_WRONG = {
    "tuple for a tensor": (False, lambda y, x: (y, y), "step 3 returned tuple, but the state is a tensor"),
    "list for a tensor": (False, lambda y, x: [y], "step 3 returned list, but the state is a tensor"),
    "None for a tensor": (False, lambda y, x: None, "step 3 returned NoneType, but the state is a tensor"),
    "int for a tensor": (False, lambda y, x: 3, "step 3 returned int, but the state is a tensor"),
    "list for a tuple": (True, lambda y, x: [y, x[1]], "step 3 returned list, but the state is a tuple of 2"),
    "tensor for a tuple": (True, lambda y, x: y, "step 3 returned Tensor, but the state is a tuple of 2"),
    "3-tuple for a tuple": (True, lambda y, x: (y, y, y),
                            "step 3 returned tuple of 3 parts, but the state is a tuple of 2"),
    "None part": (True, lambda y, x: (y, None), "step 3 returned NoneType as part 1 of the state"),
}


@pytest.mark.parametrize("kind", STEP_WRONG)
@pytest.mark.parametrize("when", ["forward", "backward re-run"])
def test_a_step_that_returns_another_kind_of_state_is_named(kind, when):
    tuple_state, wrong, said = STEP_WRONG[kind]
    torch.manual_seed(4)
    cell = nn.Linear(8, 8)
    fail = {"from": None, "calls": 0}

    def step(k, x):
        a = x[0] if tuple_state else x
        y = torch.tanh(cell(a))
        good = (y, x[1]) if tuple_state else y
        if k == 3:
            fail["calls"] += 1
            if fail["from"] is not None and fail["calls"] >= fail["from"]:
                return wrong(y, x)
        return good

    x = torch.randn(4, 8)
    x0 = (x.clone().requires_grad_(), x.clone()) if tuple_state else x.clone().requires_grad_()
    fail["from"] = 1 if when == "forward" else 2  # 10 steps in 3 slots: step 3 runs again in the backward
    with pytest.raises(remat.ArgumentError, match=said):
        out = remat.torch.checkpoint_loop(step, x0, steps=10, slots=3)
        (out[0] if tuple_state else out).sum().backward()
    assert fail["calls"] == fail["from"]
    # the loop again, the step mended: plain autograd's gradient
    fail["from"] = None
    out = remat.torch.checkpoint_loop(step, x0, steps=10, slots=3)
    wrt = [x0[0] if tuple_state else x0, *cell.parameters()]
    got = torch.autograd.grad((out[0] if tuple_state else out).sum(), wrt)
    v = x0
    for k in range(10):
        v = step(k, v)
    want = torch.autograd.grad((v[0] if tuple_state else v).sum(), wrt)
    assert all(torch.equal(a, b) for a, b in zip(got, want))
