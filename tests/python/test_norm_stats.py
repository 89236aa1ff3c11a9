"""BatchNorm's running statistics after a forward and backward equal plain autograd's (torch.equal), where
the forward calls each block or step once, as plain autograd does, and the backward re-runs some: every
re-run updated them again before (a block re-run 5 times took 6 momentum steps on the same batch;
torch.utils.checkpoint takes one more per re-run). The gradients are plain autograd's either way (a norm
layer in training mode normalises with the batch's statistics)."""

import copy

import pytest

torch = pytest.importorskip("torch")
import remat  # noqa: E402
import remat.torch  # noqa: E402

nn = torch.nn


def same(a, b):
    a, b = list(a), list(b)
    return len(a) == len(b) and all(torch.equal(x, y) for x, y in zip(a, b))


def plain_and_checkpointed(plain, h0, options, steps=20):
    """The loop of a module step run plainly (`plain`) and by checkpoint_loop with `options` (a copy made
    before), each backward from its final state's sum; returns both steps."""
    step = copy.deepcopy(plain)
    h = h0
    for k in range(steps):
        h = plain(k, h)
    h.sum().backward()
    remat.torch.checkpoint_loop(step, h0, steps=steps, **options).sum().backward()
    return plain, step


def plain_and_at_least(plain, x, taped):
    """The stack, a copy, and auto_checkpoint of the copy at its least budget (five blocks re-run at least)."""
    fast_model = copy.deepcopy(plain)
    least = remat.torch.auto_checkpoint(fast_model, x, budget="1GiB", repeats=0, taped=taped).least_budget_bytes
    fast = remat.torch.auto_checkpoint(fast_model, x, budget=least, repeats=0, taped=taped)
    assert fast.recomputed_blocks >= 5
    return plain, fast_model, fast


def bn_stack():
    torch.manual_seed(1)
    return nn.Sequential(*[nn.Sequential(nn.Linear(16, 16), nn.BatchNorm1d(16), nn.ReLU()) for _ in range(6)]
                         + [nn.Sequential(nn.Linear(16, 16), nn.BatchNorm1d(16, momentum=None))])  # cumulative


@pytest.mark.parametrize("taped", [True, False])
def test_auto_checkpoint_updates_running_stats_once_per_forward_as_plain_autograd(taped):
    x = torch.randn(32, 16, requires_grad=True)
    plain, fast_model, fast = plain_and_at_least(bn_stack(), x, taped)
    assert same(plain.buffers(), fast_model.buffers())  # profiling left them as they were
    for _ in range(2):
        plain(x).sum().backward()
        fast(x).sum().backward()
        assert same(plain.buffers(), fast_model.buffers())
        assert same((p.grad for p in plain.parameters()), (p.grad for p in fast_model.parameters()))
    plain.eval(), fast.eval()
    with torch.no_grad():
        assert torch.equal(plain(x), fast(x))


class BnStep(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)
        self.norm = nn.BatchNorm1d(8)

    def forward(self, k, h):
        return torch.tanh(self.norm(self.lin(h)))


@pytest.mark.parametrize("options", [dict(slots=3), dict(slots=3, taped=True), dict(slots=2, snapshots="host")])
def test_checkpoint_loop_with_a_module_step_updates_running_stats_as_the_plain_loop(options):
    torch.manual_seed(2)
    plain, step = plain_and_checkpointed(BnStep(), torch.randn(16, 8, requires_grad=True), options)
    assert int(step.norm.num_batches_tracked) == 20
    assert same(plain.buffers(), step.buffers())
    assert same((p.grad for p in plain.parameters()), (p.grad for p in step.parameters()))


def spectral_stack():
    torch.manual_seed(3)
    return nn.Sequential(*[nn.Sequential(nn.utils.spectral_norm(nn.Linear(16, 16)), nn.Tanh()) for _ in range(6)])


def shared_norm_stack():
    torch.manual_seed(4)
    norm = nn.BatchNorm1d(16)  # one layer in every block: each run updates it
    return nn.Sequential(*[nn.Sequential(nn.Linear(16, 16), norm, nn.Tanh()) for _ in range(6)])


@pytest.mark.parametrize("taped", [True, False])
@pytest.mark.parametrize("make", [spectral_stack, shared_norm_stack])
def test_a_re_run_block_starts_from_the_buffers_its_forward_run_started_from(make, taped):
    """spectral_norm's power iteration updates its vectors u and v at every forward in training mode and
    computes the weight from them: a re-run from the vectors its forward run left computed another weight,
    and gradients that were not plain autograd's (they differed; u and v ended steps further). Each block's
    re-runs now start from the buffers its forward run started from, and the backward leaves them as the
    forward did (a norm layer that every block shares too)."""
    x = torch.randn(32, 16, requires_grad=True)
    plain, fast_model, fast = plain_and_at_least(make(), x, taped)
    for _ in range(2):
        plain(x).sum().backward()
        fast(x).sum().backward()
        assert same(plain.buffers(), fast_model.buffers())
        assert same((p.grad for p in plain.parameters()), (p.grad for p in fast_model.parameters()))


class SpectralStep(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.utils.spectral_norm(nn.Linear(8, 8))

    def forward(self, k, h):
        return torch.tanh(self.lin(h))


@pytest.mark.parametrize("options", [dict(slots=3), dict(slots=3, taped=True), dict(slots=2, snapshots="host"),
                                     dict(slots=2, snapshots="disk"), dict(slots=1)])
def test_checkpoint_loop_re_runs_steps_from_the_buffers_the_forward_ran_them_from(options):
    """A module step's buffers other than norm statistics are kept with each snapshot and set back with it:
    spectral_norm's power iteration updates u and v at every step in training mode and computes the weight
    from them, so a re-run from the vectors the forward left computed another weight (gradients up to 3e-6
    off plain autograd's, u and v steps further). Now torch.equal, and u and v as the plain loop leaves them."""
    if options.get("snapshots") == "disk" and not remat.has_hdf5:
        pytest.skip("built without HDF5")
    torch.manual_seed(6)
    plain, step = plain_and_checkpointed(SpectralStep(), torch.randn(4, 8, requires_grad=True), options)
    assert same(plain.buffers(), step.buffers())
    assert same((p.grad for p in plain.parameters()), (p.grad for p in step.parameters()))


class BnSpectralStep(nn.Module):
    """Both kinds of buffers in one step: the norm layer's statistics (saved once for the backward) and
    spectral_norm's vectors (kept with each snapshot)."""

    def __init__(self):
        super().__init__()
        self.lin = nn.utils.spectral_norm(nn.Linear(8, 8))
        self.norm = nn.BatchNorm1d(8)

    def forward(self, k, h):
        return torch.tanh(self.norm(self.lin(h)))


@pytest.mark.parametrize("options", [dict(slots=3), dict(slots=3, taped=True), dict(slots=2, snapshots="host"),
                                     dict(slots=2, snapshots="disk")])
def test_checkpoint_loop_with_norm_statistics_and_other_buffers_in_one_step_is_the_plain_loop(options):
    if options.get("snapshots") == "disk" and not remat.has_hdf5:
        pytest.skip("built without HDF5")
    torch.manual_seed(7)
    plain, step = plain_and_checkpointed(BnSpectralStep(), torch.randn(16, 8, requires_grad=True), options)
    assert int(step.norm.num_batches_tracked) == 20
    assert same(plain.buffers(), step.buffers())
    assert same((p.grad for p in plain.parameters()), (p.grad for p in step.parameters()))
