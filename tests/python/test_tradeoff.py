"""remat.torch.tradeoff: every point measured (time per round, peak activation bytes, block forwards counted),
checked against independent counts on a small MLP stack; the SVG parses as XML and draws every point."""

import xml.etree.ElementTree as ET

import pytest

torch = pytest.importorskip("torch")
import remat  # noqa: E402
import remat.torch  # noqa: E402
from conftest import saved_storages  # noqa: E402

nn = torch.nn


def stack():
    torch.manual_seed(5)
    widths = [8, 32, 16, 64, 8, 24, 8]
    model = nn.Sequential(*[nn.Sequential(nn.Linear(a, 4 * b), nn.Tanh(), nn.Linear(4 * b, b))
                            for a, b in zip(widths, widths[1:])])
    return model, torch.randn(10, 8)


def saved_storages_of_plain(model, x):
    """Plain autograd's saved activation bytes at the end of its forward, counted without remat: every
    storage the graph saves once, parameters left out."""
    x = x.detach().requires_grad_()
    y, seen = saved_storages(lambda: model(x), model.parameters())
    del y
    return sum(seen.values())


def test_points_are_measured_and_agree_with_independent_counts():
    model, x = stack()
    n = len(model)
    t = remat.torch.tradeoff(model, x, rounds=2, segments=[1, 2, 3, n])
    assert [p.segments for p in t.sequential] == [1, 2, 3, n]
    for p in t.points:
        assert len(p.times) == 2 and all(s > 0 for s in p.times)
        assert min(p.times) <= p.seconds <= max(p.times)
        assert len(p.cpu_times) == 2 and min(p.cpu_times) <= p.cpu_seconds <= max(p.cpu_times)
        assert p.peak_bytes > 0
    assert t.plain.recomputed_blocks == 0
    assert t.plain.peak_bytes == saved_storages_of_plain(model, x)
    # checkpoint_sequential re-runs every block of its checkpointed segments: (n // s) * (s - 1) of them.
    for p in t.sequential:
        assert p.recomputed_blocks == (n // p.segments) * (p.segments - 1)
    assert t.sequential[0].peak_bytes == t.plain.peak_bytes  # one segment: plain autograd
    assert t.sequential[-1].peak_bytes < t.plain.peak_bytes
    # The default budgets are the peaks measured and the least budget, and budgets raised towards a measured
    # peak, each a cheaper plan than the largest measured within that peak and still measured within it;
    # each auto point within its budget.
    budgets = [p.budget_bytes for p in t.auto] + t.refused_budgets
    peaks = {p.peak_bytes for p in [t.plain, *t.sequential]}
    assert set(budgets) >= peaks | {t.least_budget_bytes}
    for p in t.auto:
        if p.budget_bytes not in peaks | {t.least_budget_bytes}:
            target = min(q for q in peaks if q >= p.peak_bytes)
            below = max((q for q in t.auto if q.budget_bytes in peaks | {t.least_budget_bytes}
                         and q.peak_bytes <= target), key=lambda q: q.budget_bytes)
            assert below.budget_bytes < p.budget_bytes and p.peak_bytes <= target
    for p in t.auto:
        assert p.peak_bytes <= p.predicted_peak_bytes <= p.budget_bytes
    top = max(t.auto, key=lambda p: p.budget_bytes)
    assert top.plan_method == "plain autograd" and top.recomputed_blocks == 0
    # each auto point's predicted cost is its module's, on the profile it was planned from: plain autograd's
    # every block's forward and backward once; a plan re-running blocks more
    plain_cost = sum(p.forward_seconds + p.backward_seconds for p in t.profiles)
    assert len(t.profiles) == len(model)
    assert top.predicted_cost == pytest.approx(plain_cost)
    for p in t.auto:
        assert p.predicted_cost >= plain_cost * (1 - 1e-9)
    assert all(p.predicted_cost is None for p in [t.plain, *t.sequential])
    least = min(t.auto, key=lambda p: p.budget_bytes)
    assert least.budget_bytes == t.least_budget_bytes and least.recomputed_blocks > 0
    data = t.as_dict()
    assert len(data["points"]) == len(t.points) and data["rounds"] == 2


def test_svg_parses_and_draws_every_point(tmp_path):
    model, x = stack()
    t = remat.torch.tradeoff(model, x, budgets=["1KiB", 10**9], rounds=1, segments=[2, 3])
    assert t.refused_budgets == [1024]
    path = tmp_path / "t.svg"
    t.save_svg(str(path), title="a <small> stack")
    root = ET.parse(path).getroot()
    ns = "{http://www.w3.org/2000/svg}"
    assert root.tag == ns + "svg"
    assert len(root.findall(f"{ns}circle[@class='checkpoint_sequential']")) == 2
    assert len(root.findall(f"{ns}path[@class='auto_checkpoint']")) == 1
    assert len(root.findall(f"{ns}rect[@class='plain']")) == 1
    assert any(e.text == "a <small> stack" for e in root.iter(ns + "text"))


def test_bad_arguments():
    model, x = stack()
    with pytest.raises(remat.ArgumentError):
        remat.torch.tradeoff(model, x, segments=[0])
    with pytest.raises(remat.ArgumentError):
        remat.torch.tradeoff(model, x, rounds=0)
    with pytest.raises(remat.ArgumentError):
        remat.torch.tradeoff(nn.Linear(2, 2), x)


def test_auto_checkpoint_without_its_counting_hooks_computes_the_same():
    model, x = stack()
    probe = remat.torch.auto_checkpoint(model, x, budget=10**9)
    fast = remat.torch.auto_checkpoint(model, x, budget=(probe.least_budget_bytes + probe.plain_peak_bytes) // 2)
    assert fast.method == "remat.chain_taped" and fast.recomputed_blocks > 0
    grads = []
    for measure in (True, False):
        fast.measure_memory = measure
        for p in model.parameters():
            p.grad = None
        torch.manual_seed(0)
        fast(x.detach().requires_grad_()).sum().backward()
        grads.append([p.grad.clone() for p in model.parameters()])
        if measure:
            counted = fast.measured_peak_bytes
            assert counted > 0
    assert all(torch.equal(a, b) for a, b in zip(*grads))
    assert fast.measured_peak_bytes < counted  # only the snapshots were counted


def test_the_model_is_left_as_it_was_buffers_gradients_and_rng():
    """tradeoff runs dozens of training iterations to measure them: it set every parameter's .grad to None
    (a gradient the caller had accumulated was lost), took a BatchNorm momentum step per iteration (more per
    checkpoint_sequential re-run) and drew dropout masks from the caller's RNG stream. A measurement leaves
    the model's buffers, gradients and the RNG as they were, as profiling does."""
    torch.manual_seed(5)
    blocks = [nn.Sequential(nn.Linear(8, 8), nn.BatchNorm1d(8), nn.Dropout(0.2), nn.Tanh()) for _ in range(4)]
    model = nn.Sequential(*blocks)
    x = torch.randn(16, 8)
    model(x).sum().backward()  # the caller's gradients, accumulated before
    grads = [p.grad.clone() for p in model.parameters()]
    buffers = [b.clone() for b in model.buffers()]
    rng = torch.get_rng_state()
    remat.torch.tradeoff(model, x, rounds=1, repeats=0, segments=[2])
    assert all(torch.equal(p.grad, g) for p, g in zip(model.parameters(), grads))
    assert all(torch.equal(b, c) for b, c in zip(model.buffers(), buffers))
    assert torch.equal(torch.get_rng_state(), rng)


class Counting(nn.Module):
    """A block that replaces its buffer at each forward (an assignment to a registered buffer's attribute sets
    a new tensor in its place), rather than updating it in place."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)
        self.register_buffer("calls", torch.zeros(()))

    def forward(self, x):
        self.calls = self.calls + 1
        return torch.tanh(self.lin(x))


def test_a_buffer_that_a_block_replaces_is_left_as_it_was():
    """The buffers are set back where they live when the measurement ends (module and name), not into the
    tensors they held when it began: a block that assigns a new tensor to its buffer was left with the count
    of every measured iteration."""
    torch.manual_seed(8)
    model = nn.Sequential(*[Counting() for _ in range(3)])
    remat.torch.tradeoff(model, torch.randn(4, 8), rounds=1, repeats=0, segments=[2])
    assert [float(b.calls) for b in model] == [0.0, 0.0, 0.0]


def test_auto_checkpoint_counts_its_first_iteration_by_default(counting_hooks_calls):
    """The counting hooks (a Python call per saved tensor) run on the first forward and its backward only, by
    default: the peak is the same at every iteration (same plan, the sample's shape), and counting every one cost
    10% of a transformer stack's instructions. The first's peak stays reported; measure_memory=True counts each."""
    model, x = stack()
    probe = remat.torch.auto_checkpoint(model, x, budget=10**9)
    fast = remat.torch.auto_checkpoint(model, x, budget=(probe.least_budget_bytes + probe.plain_peak_bytes) // 2)
    assert fast.measure_memory is None and fast.recomputed_blocks > 0
    peaks, counts = [], []
    for measure in (None, None, None, True, True):
        fast.measure_memory = measure
        counting_hooks_calls.calls = 0
        fast(x.detach().requires_grad_()).sum().backward()
        peaks.append(fast.measured_peak_bytes)
        counts.append(counting_hooks_calls.calls)
    assert counts[0] > 0 and counts[1] == counts[2] == 0 and counts[3] == counts[4] == counts[0]
    assert peaks[0] > 0 and len(set(peaks)) == 1  # the first iteration's peak, kept, and measured again the same


def test_measure_next_counts_the_next_iteration_again(counting_hooks_calls):
    """After iterations run uncounted (measure_memory False, as tradeoff times them: the peak then counts the
    snapshots only), measure_next() has the next forward and its backward count again under None, once."""
    model, x = stack()
    probe = remat.torch.auto_checkpoint(model, x, budget=10**9)
    fast = remat.torch.auto_checkpoint(model, x, budget=(probe.least_budget_bytes + probe.plain_peak_bytes) // 2)
    peaks, counts = [], []
    for measure, again in ((None, False), (False, False), (None, True), (None, False)):
        fast.measure_memory = measure
        if again:
            fast.measure_next()
        counting_hooks_calls.calls = 0
        fast(x.detach().requires_grad_()).sum().backward()
        peaks.append(fast.measured_peak_bytes)
        counts.append(counting_hooks_calls.calls)
    assert counts[0] > 0 and counts[1] == 0 and counts[2] == counts[0] and counts[3] == 0
    assert peaks[1] < peaks[0] == peaks[2] == peaks[3]


def test_measure_memory_takes_none_true_or_false():
    """Anything else is refused naming it (a truthy 'yes' used to turn counting on; with None a third choice it
    would have turned it off silently); numpy's and Python's 0 and 1 stand for False and True."""
    import numpy as np

    model, x = stack()
    fast = remat.torch.auto_checkpoint(model, x, budget=10**9)
    for bad in ("yes", 2, 0.5, []):
        with pytest.raises(remat.ArgumentError, match="measure_memory"):
            fast.measure_memory = bad
    for given, kept in ((np.bool_(True), True), (1, True), (0, False), (None, None), (False, False)):
        fast.measure_memory = given
        assert fast.measure_memory is kept
