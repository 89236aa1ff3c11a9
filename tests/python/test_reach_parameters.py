"""auto_checkpoint(reach_parameters=False): the parameters are no inputs of the autograd graph's remat node (as
torch.utils.checkpoint's reentrant form has it). Under loss.backward() every parameter's .grad is still plain
autograd's bit for bit (each stretch's backward adds to it); under torch.autograd.grad and backward(inputs=...)
x's gradient is right and no .grad is touched, and the re-run blocks' parameters are out of reach, as
documented; where a parameter serves two blocks the setting has no effect."""

import copy
import pickle

import pytest

torch = pytest.importorskip("torch")
import remat  # noqa: E402
import remat.torch  # noqa: E402
from test_auto_checkpoint import STACKS, budgets_of, run, transformer_and_plain_grads  # noqa: E402
from torch.autograd.function import BackwardCFunction  # noqa: E402

nn = torch.nn


def remat_node_inputs(y):
    """The number of inputs of the remat node (the autograd.Function) in y's graph: x and what else it takes."""
    stack, seen = [y.grad_fn], set()
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        if isinstance(node, BackwardCFunction):
            return len(node.next_functions)
        stack.extend(n for n, _ in node.next_functions)
    raise AssertionError("no remat node in the graph")


@pytest.mark.parametrize("name", sorted(STACKS))
def test_backward_gradients_equal_plain_autograd(name):
    """Every budget below plain autograd's peak: output, x's and every parameter's gradient torch.equal to plain
    autograd's (the conv stack's input needs no gradient: the node's backward runs all the same), the node
    taking x and one sentinel only; a second backward adds onto .grad as plain autograd's does."""
    model, make_x = STACKS[name]()
    x = make_x()
    plain_y, plain_grads, plain_x_grad = run(model, x, seed=5)
    probe = remat.torch.auto_checkpoint(model, x, budget=1 << 40, repeats=0)
    for budget in budgets_of(probe):
        if budget >= probe.plain_peak_bytes:
            continue
        fast = remat.torch.auto_checkpoint(model, x, budget=budget, repeats=0, reach_parameters=False)
        assert not fast.reach_parameters
        torch.manual_seed(5)
        assert remat_node_inputs(fast(x)) == 2, budget
        y, grads, x_grad = run(fast, x, seed=5)
        assert torch.equal(y, plain_y), budget
        assert (x_grad is None and plain_x_grad is None) or torch.equal(x_grad, plain_x_grad)
        assert all(torch.equal(a, b) for a, b in zip(grads, plain_grads)), budget
        for p in model.parameters():
            p.grad = None
        for seed in (6, 7):  # the second adds onto the first's .grad
            torch.manual_seed(seed)
            (fast(x) ** 2).sum().backward()
        summed = [p.grad.clone() for p in model.parameters()]
        for p in model.parameters():
            p.grad = None
        for seed in (6, 7):
            torch.manual_seed(seed)
            (model(x) ** 2).sum().backward()
        assert all(torch.equal(p.grad, s) for p, s in zip(model.parameters(), summed)), budget


def test_the_default_node_takes_the_parameters():
    """The remat node with reach_parameters=True (the default) takes the re-run blocks' parameters besides x,
    which is what lets torch.autograd.grad reach them (the count above is not the same either way)."""
    model, make_x = STACKS["mlp"]()
    x = make_x()
    probe = remat.torch.auto_checkpoint(model, x, budget=1 << 40, repeats=0)
    fast = remat.torch.auto_checkpoint(model, x, budget=probe.least_budget_bytes, repeats=0)
    assert fast.reach_parameters and remat_node_inputs(fast(x)) > 2


def test_autograd_grad_and_partial_backward_refused_loudly():
    """torch.autograd.grad(out, [x]) and backward(inputs=...) cannot reach the re-run blocks' parameters: refused
    (remat.BackwardError naming reach_parameters), as torch.utils.checkpoint's reentrant form refuses them, not
    run with their gradients left out silently (backward(inputs=[x, *params]) left 8 of 12 .grad None), and
    no .grad written; the module runs again after. torch.autograd.grad on a re-run block's parameter alone does
    not reach the node: autograd's own error (None with allow_unused=True), while the final stretch's
    parameters, in the caller's own graph, are reached."""
    model, x, params, want = transformer_and_plain_grads()
    probe = remat.torch.auto_checkpoint(model, x, budget=1 << 40, repeats=0)
    fast = remat.torch.auto_checkpoint(model, x, budget=probe.least_budget_bytes, repeats=0, reach_parameters=False)
    with pytest.raises(remat.BackwardError, match="reach_parameters=True"):
        torch.autograd.grad((fast(x) ** 2).sum(), [x])
    with pytest.raises(remat.BackwardError, match="reach_parameters=True"):
        (fast(x) ** 2).sum().backward(inputs=[x, *params])
    # the final stretch's parameters, reversed by the caller's own backward before the node, may hold theirs
    assert all(p.grad is None for p in model[0].parameters()) and x.grad is None
    for p in params:
        p.grad = None
    first = list(model[0].parameters())
    with pytest.raises(RuntimeError, match="appears to not have been used in the graph"):
        torch.autograd.grad((fast(x) ** 2).sum(), first)
    last = list(model[-1].parameters())
    torch.manual_seed(5)
    got = torch.autograd.grad((fast(x) ** 2).sum(), first + last, allow_unused=True)
    assert all(g is None for g in got[:len(first)])
    assert all(torch.equal(g, w) for g, w in zip(got[len(first):], want[1 + len(params) - len(last):]))
    assert all(p.grad is None for p in params)
    _, grads, x_grad = run(fast, x, seed=5)
    _, plain_grads, plain_x_grad = run(model, x, seed=5)
    assert torch.equal(x_grad, plain_x_grad) and all(torch.equal(a, b) for a, b in zip(grads, plain_grads))


def test_shared_parameter_still_reached():
    """A parameter serving two blocks keeps every parameter an input of the node (their sums are returned
    through it): torch.autograd.grad reaches them all, plain autograd's gradients."""
    torch.manual_seed(4)
    a = nn.Sequential(nn.Linear(8, 8), nn.GELU())
    model = nn.Sequential(a, nn.Linear(8, 8), nn.Tanh(), a, nn.GELU(), a, nn.Linear(8, 8), a)
    x = torch.randn(5, 8, requires_grad=True)
    params = list(model.parameters())
    want = torch.autograd.grad((model(x) ** 2).sum(), [x, *params])
    probe = remat.torch.auto_checkpoint(model, x, budget=1 << 40, repeats=0)
    fast = remat.torch.auto_checkpoint(model, x, budget=probe.least_budget_bytes, repeats=0, reach_parameters=False)
    assert fast.method != "plain autograd"
    got = torch.autograd.grad((fast(x) ** 2).sum(), [x, *params])
    assert all(torch.equal(g, w) for g, w in zip(got, want))


def test_setting_checked_and_kept_by_copies():
    """Not a bool: refused naming it, before profiling; set on the module later; kept by deepcopy and pickle,
    whose copies compute plain autograd's gradients."""
    model, make_x = STACKS["mlp"]()
    x = make_x()
    with pytest.raises(remat.ArgumentError, match="reach_parameters"):
        remat.torch.auto_checkpoint(model, x, budget=1 << 40, repeats=0, reach_parameters="no")
    probe = remat.torch.auto_checkpoint(model, x, budget=1 << 40, repeats=0)
    fast = remat.torch.auto_checkpoint(model, x, budget=probe.least_budget_bytes, repeats=0)
    with pytest.raises(remat.ArgumentError, match="reach_parameters"):
        fast.reach_parameters = None
    fast.reach_parameters = False
    assert remat_node_inputs(fast(x)) == 2
    _, plain_grads, _ = run(model, x, seed=5)
    for copied in (copy.deepcopy(fast), pickle.loads(pickle.dumps(fast))):
        assert copied.reach_parameters is False
        assert remat_node_inputs(copied(x)) == 2
        _, grads, _ = run(copied, x, seed=5)
        assert all(torch.equal(a, b) for a, b in zip(grads, plain_grads))


def test_nested_in_remat_takes_its_parameters():
    """Inside remat's runtime (a checkpoint_loop's step module; a block of an outer auto_checkpoint whose shared
    block makes it sum gradients with torch.autograd.grad) the nested module takes its parameters as inputs
    whatever reach_parameters says: plain autograd's gradients (before, the loop refused its sentinel as an
    unknown tensor of shape (0,), and the outer left 4 of 22 .grad None, silently)."""
    torch.manual_seed(7)
    inner_model = nn.Sequential(*[nn.Sequential(nn.Linear(8, 8), nn.Tanh()) for _ in range(5)])
    h = torch.randn(3, 8)
    probe = remat.torch.auto_checkpoint(inner_model, h, budget=1 << 40, repeats=0)
    inner = remat.torch.auto_checkpoint(inner_model, h, budget=probe.least_budget_bytes, repeats=0,
                                        reach_parameters=False)
    assert inner.method != "plain autograd"

    class Step(nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = inner

        def forward(self, k, x):
            return self.inner(x)

    def plain_loop(x):
        for _ in range(6):
            x = inner_model(x)
        return x

    params = list(inner_model.parameters())
    want = torch.autograd.grad(plain_loop(h).pow(2).sum(), params)
    y = remat.torch.checkpoint_loop(Step(), h, steps=6, slots=2)
    y.pow(2).sum().backward()
    assert all(torch.equal(p.grad, w) for p, w in zip(params, want))

    for p in params:
        p.grad = None
    shared = nn.Sequential(nn.Linear(8, 8), nn.GELU())
    outer_model = nn.Sequential(shared, inner, nn.Linear(8, 8), shared, nn.Tanh(), shared)
    every = list(outer_model.parameters())
    for p in every:
        p.grad = None
    outer_model(h).pow(2).sum().backward()
    want = [p.grad.clone() for p in every]
    for p in every:
        p.grad = None
    outer_probe = remat.torch.auto_checkpoint(outer_model, h, budget=1 << 40, repeats=0)
    outer = remat.torch.auto_checkpoint(outer_model, h, budget=outer_probe.least_budget_bytes, repeats=0)
    assert outer.method != "plain autograd"
    outer(h).pow(2).sum().backward()
    assert all(torch.equal(p.grad, w) for p, w in zip(every, want))


def test_without_the_engine_query_the_parameters_are_taken(monkeypatch):
    """Where autograd cannot tell loss.backward() from torch.autograd.grad (no _will_engine_execute_node), the
    parameters stay the node's inputs: plain autograd's gradients (before, 8 of 12 .grad were None)."""
    from remat.torch import _auto

    monkeypatch.setattr(_auto, "_ENGINE_QUERY", False)
    model, make_x = STACKS["mlp"]()
    x = make_x()
    _, plain_grads, _ = run(model, x, seed=5)
    probe = remat.torch.auto_checkpoint(model, x, budget=1 << 40, repeats=0)
    fast = remat.torch.auto_checkpoint(model, x, budget=probe.least_budget_bytes, repeats=0, reach_parameters=False)
    assert remat_node_inputs(fast(x)) > 2
    _, grads, _ = run(fast, x, seed=5)
    assert all(torch.equal(a, b) for a, b in zip(grads, plain_grads))


def test_plain_leaf_where_the_block_saves_its_input(monkeypatch):
    """A stretch starts from a plain leaf where its first block saves its input (the MLP's Linear layers: no
    StretchInput view at all), through a view where it does not (the transformer layers save a copy), and
    through a view again once a block's weight is frozen after profiling (it may no longer save its input for
    that weight: the leaf would hold x_k beside its tape, uncounted)."""
    from remat.torch import _stretch_input

    views = [0]
    real = _stretch_input.StretchInput.view

    def counting(self, x):
        views[0] += 1
        return real(self, x)

    monkeypatch.setattr(_stretch_input.StretchInput, "view", counting)
    counts = {}
    for name in ("mlp", "transformer"):
        model, make_x = STACKS[name]()
        x = make_x().requires_grad_()
        probe = remat.torch.auto_checkpoint(model, x, budget=1 << 40, repeats=0)
        fast = remat.torch.auto_checkpoint(model, x, budget=probe.least_budget_bytes, repeats=0)
        views[0] = 0
        run(fast, x, seed=5)
        counts[name] = views[0]
        if name == "mlp":
            model[1][0].weight.requires_grad_(False)
            views[0] = 0
            fast(x).pow(2).sum().backward()
            counts["mlp frozen"] = views[0]
            model[1][0].weight.requires_grad_(True)
    assert counts["mlp"] == 0 and counts["transformer"] > 0 and counts["mlp frozen"] > 0
