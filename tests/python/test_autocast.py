"""Under torch.autocast (mixed precision) the gradients are plain autograd's: the backward's re-runs run under
the autocast settings of the forward, as torch.utils.checkpoint's do, and the forward's and backward's runs
without autocast's cache of casts (_autocast.py). Before, the re-runs ran outside autocast (the backward is
called outside the autocast block), computing in float32 what the forward computed in bfloat16, and a
parameter's cast cached by a run under no_grad carried no gradient where a run with grad reused it: gradients
off by up to 1e-2, or missing."""

import pytest

torch = pytest.importorskip("torch")
import remat  # noqa: E402
import remat.torch  # noqa: E402

nn = torch.nn


def gradients(run, tensors, cache_enabled=True):
    for t in tensors:
        t.grad = None
    with torch.autocast("cpu", dtype=torch.bfloat16, cache_enabled=cache_enabled):
        y = run()
    y.float().sum().backward()  # outside the autocast block, as the autocast recipe has it
    return [t.grad for t in tensors]


def loop_case():
    torch.manual_seed(0)
    lin = nn.Linear(16, 16)
    x0 = torch.randn(4, 16, requires_grad=True)

    def step(k, h):  # bfloat16 inside, the state kept in float32
        return torch.tanh(lin(h)).float()

    def plain():
        h = x0
        for k in range(10):
            h = step(k, h)
        return h

    return step, plain, x0, [*lin.parameters(), x0]


LOOP_OPTIONS = [dict(slots=3), dict(slots=3, taped=True), dict(until=lambda k, h: k == 10, slots=3)]


@pytest.mark.parametrize("options", LOOP_OPTIONS)
def test_checkpoint_loop_under_autocast_without_its_cache_equals_plain_autograd(options):
    step, plain, x0, tensors = loop_case()
    want = gradients(plain, tensors, cache_enabled=False)
    steps = None if "until" in options else 10
    got = gradients(lambda: remat.torch.checkpoint_loop(step, x0, steps, **options), tensors, cache_enabled=False)
    assert all(torch.equal(a, b) for a, b in zip(got, want))


@pytest.mark.parametrize("options", LOOP_OPTIONS)
def test_checkpoint_loop_under_autocast_with_its_cache_gets_every_gradient(options):
    """Plain autograd sums the shared weight's ten bfloat16 gradients in bfloat16 through its one cached cast;
    the re-runs cast it at each use and sum in float32: equal at bfloat16's precision, and every gradient there
    (the weight's lost the kept step's part before)."""
    step, plain, x0, tensors = loop_case()
    want = gradients(plain, tensors)
    steps = None if "until" in options else 10
    got = gradients(lambda: remat.torch.checkpoint_loop(step, x0, steps, **options), tensors)
    exact = gradients(plain, tensors, cache_enabled=False)
    for a, b, c in zip(got, want, exact):
        assert torch.equal(a, c)
        assert torch.allclose(a, b, rtol=2e-2, atol=2e-2 * b.abs().max().item())


@pytest.mark.parametrize("taped", [True, False])
def test_auto_checkpoint_under_autocast_equals_plain_autograd(taped):
    torch.manual_seed(0)
    model = nn.Sequential(*[nn.Sequential(nn.Linear(16, 16), nn.Tanh()) for _ in range(6)])
    x = torch.randn(4, 16, requires_grad=True)
    tensors = [*model.parameters(), x]
    want = [g.clone() for g in gradients(lambda: model(x), tensors)]
    with torch.autocast("cpu", dtype=torch.bfloat16):  # profiled under the autocast it runs under
        least = remat.torch.auto_checkpoint(model, x, budget="1GiB", repeats=0, taped=taped).least_budget_bytes
        fast = remat.torch.auto_checkpoint(model, x, budget=least, repeats=0, taped=taped)
    assert fast.recomputed_blocks > 0
    got = gradients(lambda: fast(x), tensors)
    assert all(g is not None and torch.equal(a, g) for a, g in zip(want, got))
    assert fast.measured_peak_bytes <= fast.predicted_peak_bytes <= least


def test_auto_checkpoint_refuses_other_autocast_settings_than_profiled_with_grad():
    """Profiled in float32 and run under bfloat16 autocast, the blocks also saved autocast's copies of the weights
    (uncounted): a measured peak of 400,896 bytes within a budget of 16,384. Refused now, as a block in another
    mode is, naming both settings; under no_grad any runs, and under the profiled settings it measures within."""
    torch.manual_seed(0)
    model = nn.Sequential(*[nn.Sequential(nn.Linear(64, 512), nn.Tanh(), nn.Linear(512, 64)) for _ in range(6)])
    x = torch.randn(2, 64, requires_grad=True)
    probe = remat.torch.auto_checkpoint(model, x, budget="1GiB", repeats=0)
    budget = (probe.least_budget_bytes + probe.plain_peak_bytes) // 2
    fast = remat.torch.auto_checkpoint(model, x, budget=budget, repeats=0)
    # the reason, independently: under autocast plain autograd alone saves more than the float32 plan's peak
    with torch.autocast("cpu", dtype=torch.bfloat16):
        assert remat.torch.auto_checkpoint(model, x, budget="1GiB", repeats=0).plain_peak_bytes > budget
        with pytest.raises(remat.ArgumentError, match=r"runs under torch.autocast \(cpu: torch.bfloat16\), but the "
                                                      r"blocks were profiled outside torch.autocast"):
            fast(x)
        with torch.no_grad():
            assert fast(x).shape == x.shape
    fast(x).sum().backward()
    assert fast.measured_peak_bytes <= fast.predicted_peak_bytes <= budget


def test_a_backward_inside_an_autocast_region_runs_its_kernels_as_plain_autograds_do():
    """A forward outside autocast whose backward the caller runs inside an autocast region: plain autograd's
    backward kernels then cast their inputs (float32 gradients to bfloat16), so the stretches' backward must
    run under the caller's settings while their re-runs run under the forward's (autocast off). They ran all
    under the forward's: gradients of the blocks and steps re-run differed from plain autograd's (as
    torch.utils.checkpoint's re-run and backward do not). Now bit-equal, for both forms."""
    torch.manual_seed(0)
    model = nn.Sequential(*[nn.Sequential(nn.Linear(16, 16), nn.Tanh()) for _ in range(6)])
    x = torch.randn(4, 16, requires_grad=True)
    tensors = [*model.parameters(), x]

    def grads(run, region=True):
        for t in tensors:
            t.grad = None
        y = run()
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=region):
            y.sum().backward()
        return [t.grad.clone() for t in tensors]

    want = grads(lambda: model(x))
    assert not all(torch.equal(a, b) for a, b in zip(want, grads(lambda: model(x), region=False)))
    for taped in (False, True):
        least = remat.torch.auto_checkpoint(model, x, budget="1GiB", repeats=0, taped=taped).least_budget_bytes
        fast = remat.torch.auto_checkpoint(model, x, budget=least, repeats=0, taped=taped)
        assert fast.recomputed_blocks > 0
        assert all(torch.equal(a, b) for a, b in zip(want, grads(lambda: fast(x))))
    step = lambda k, h: model[k](h)  # noqa: E731
    for options in (dict(slots=2), dict(slots=2, taped=True)):
        got = grads(lambda: remat.torch.checkpoint_loop(step, x, steps=6, params=list(model.parameters()), **options))
        assert all(torch.equal(a, b) for a, b in zip(want, got)), options
