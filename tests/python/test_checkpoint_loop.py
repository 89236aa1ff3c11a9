"""remat.torch.checkpoint_loop against plain autograd on the CPU: the same x_T and gradients bit for bit
(torch.equal), for several kinds of step; parameter gradients that accumulate; dropout replayed; the online
form; snapshot placements; bad input."""

import gc
import os
import tempfile
import weakref

import pytest

torch = pytest.importorskip("torch")
import remat  # noqa: E402
import remat.torch  # noqa: E402

nn = torch.nn
F = torch.nn.functional


def plain_loop(step, x0, steps):
    x = x0
    for k in range(steps):
        x = step(k, x)
    return x


def grads_of(tensors):
    return [None if t.grad is None else t.grad.clone() for t in tensors]


def zero_grads(tensors):
    for t in tensors:
        t.grad = None


def assert_same(a, b):
    assert len(a) == len(b)
    for x, y in zip(a, b):
        assert (x is None) == (y is None)
        if x is not None:
            assert torch.equal(x, y)


def compare(step, make_x0, steps, watched, loss=lambda x: (x ** 2).sum(), seed=0, **options):
    """Runs the plain loop and checkpoint_loop from the same RNG state: x_T, the gradients of the `watched`
    parameters and of x_0, and the RNG state after the backward must be equal."""
    results = []
    for use_remat in (False, True):
        zero_grads(watched)
        torch.manual_seed(seed)
        x0 = make_x0()
        if use_remat:
            x = remat.torch.checkpoint_loop(step, x0, steps, **options)
        else:
            x = plain_loop(step, x0, steps)
        parts = x if isinstance(x, tuple) else (x,)
        loss(*parts).backward()
        leaves = [t for t in (x0 if isinstance(x0, tuple) else (x0,)) if t.requires_grad]
        results.append(([p.detach().clone() for p in parts], grads_of(watched), grads_of(leaves),
                        torch.get_rng_state()))
    (x_plain, g_plain, gx_plain, rng_plain), (x_remat, g_remat, gx_remat, rng_remat) = results
    assert_same(x_plain, x_remat)
    assert_same(g_plain, g_remat)
    assert_same(gx_plain, gx_remat)
    assert torch.equal(rng_plain, rng_remat)  # the user's RNG goes on as after the plain loop
    assert all(g is not None for g in g_plain)


class MlpStep(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.a = nn.Linear(width, 2 * width)
        self.b = nn.Linear(2 * width, width)

    def forward(self, k, x):
        return x + 0.1 * self.b(torch.tanh(self.a(x)))


@pytest.mark.parametrize("steps,slots", [(1, 1), (2, 1), (37, 3), (100, 6), (64, 64)])
def test_mlp_module_equals_plain_autograd(steps, slots):
    torch.manual_seed(1)
    step = MlpStep(8)
    compare(step, lambda: torch.randn(4, 8, requires_grad=True), steps, list(step.parameters()), slots=slots)


def test_closure_parameters_are_found_and_get_their_gradients():
    torch.manual_seed(2)
    w = torch.randn(6, 6, requires_grad=True) * 0.3
    w = w.detach().requires_grad_()
    b = torch.zeros(6, requires_grad=True)

    def step(k, x):
        return torch.tanh(x @ w + b) + 0.5 * x

    compare(step, lambda: torch.randn(3, 6), 40, [w, b], slots=4)


def test_parameter_gradients_accumulate_over_several_backwards():
    torch.manual_seed(3)
    step = MlpStep(5)
    params = list(step.parameters())
    totals = []
    for use_remat in (False, True):
        zero_grads(params)
        for seed in (10, 11):
            x0 = torch.randn(2, 5, generator=torch.Generator().manual_seed(seed))
            x = remat.torch.checkpoint_loop(step, x0, 30, slots=3) if use_remat else plain_loop(step, x0, 30)
            x.sum().backward()
        totals.append(grads_of(params))
    assert_same(*totals)


def test_gru_cell_with_dropout_for_500_steps():
    torch.manual_seed(4)
    cell = nn.GRUCell(8, 16)
    inputs = torch.randn(500, 4, 8)

    def step(k, h):
        return cell(F.dropout(inputs[k], p=0.3, training=True), F.dropout(h, p=0.1, training=True))

    compare(step, lambda: torch.zeros(4, 16), 500, list(cell.parameters()), params=list(cell.parameters()),
            slots=10, seed=123)


def test_dropout_without_preserved_rng_state_differs():
    # The reference check that the RNG handling matters: without it the recomputed masks differ.
    torch.manual_seed(5)
    cell = nn.GRUCell(4, 8)
    step = lambda k, h: cell(torch.ones(2, 4), F.dropout(h, p=0.5, training=True))  # noqa: E731
    params = list(cell.parameters())
    grads = []
    for preserve in (True, False):
        zero_grads(params)
        torch.manual_seed(0)
        remat.torch.checkpoint_loop(step, torch.ones(2, 8), 50, slots=3, params=params,
                                    preserve_rng_state=preserve).sum().backward()
        grads.append(grads_of(params))
    zero_grads(params)
    torch.manual_seed(0)
    plain_loop(step, torch.ones(2, 8), 50).sum().backward()
    assert_same(grads[0], grads_of(params))
    assert not all(torch.equal(a, b) for a, b in zip(grads[1], grads_of(params)))


class OdeField(nn.Module):
    def __init__(self):
        super().__init__()
        self.l1 = nn.Linear(2, 32)
        self.l2 = nn.Linear(32, 2)

    def forward(self, y):
        return self.l2(torch.tanh(self.l1(y ** 3)))


def rk4_step(f, h):
    """The classical Runge-Kutta step of dy/dt = f(y) with step size h, as the loop's `step(k, y)`."""

    def rk4(k, y):
        k1 = f(y)
        k2 = f(y + 0.5 * h * k1)
        k3 = f(y + 0.5 * h * k2)
        k4 = f(y + h * k3)
        return y + (h / 6) * (k1 + 2 * k2 + 2 * k3 + k4)

    return rk4


def test_rk4_neural_ode_equals_plain_autograd():
    # Each parameter is used four times per step: the running sums must enter each step's backward first.
    torch.manual_seed(6)
    f = OdeField()
    h = 0.025

    rk4 = rk4_step(f, h)

    compare(rk4, lambda: torch.tensor([[2.0, 0.0], [1.0, 0.5]], requires_grad=True), 200, list(f.parameters()),
            params=list(f.parameters()), slots=10)


def test_tuple_state_lstm_cell():
    torch.manual_seed(7)
    cell = nn.LSTMCell(3, 5)
    inputs = torch.randn(60, 2, 3)
    step = lambda k, hc: cell(inputs[k], hc)  # noqa: E731
    compare(step, lambda: (torch.zeros(2, 5), torch.zeros(2, 5, requires_grad=True)), 60, list(cell.parameters()),
            loss=lambda h, c: h.sum() + (c ** 2).sum(), slots=5)


def test_step_calls_are_the_plans_forward_steps_plus_one_re_run_per_step():
    torch.manual_seed(8)
    inner = MlpStep(4)
    calls = []

    def step(k, x):
        calls.append(k)
        return inner(k, x)

    x = remat.torch.checkpoint_loop(step, torch.randn(2, 4), 100, slots=5, params=list(inner.parameters()))
    forward_calls = len(calls)
    x.sum().backward()
    plan = remat.revolve(100, 5)
    # The forward sweep of revolve up to x_{T-1}, step T-1 once (its graph kept), then the rest of the plan's
    # advances and one re-run for each reverse but T-1's.
    assert len(calls) == plan.forward_steps + 100
    assert calls[:forward_calls] == list(range(100))


def test_online_form_with_until_equals_plain_autograd():
    torch.manual_seed(9)
    step = MlpStep(4)
    x0 = torch.randn(3, 4)
    seen = []

    def until(k, x):
        seen.append(k)
        return k == 77

    compare(step, lambda: x0.clone().requires_grad_(), 77, list(step.parameters()), slots=6, until=None)
    params = list(step.parameters())
    zero_grads(params)
    a = x0.clone().requires_grad_()
    remat.torch.checkpoint_loop(step, a, until=until, slots=6).pow(2).sum().backward()
    online = grads_of(params) + [a.grad.clone()]
    zero_grads(params)
    b = x0.clone().requires_grad_()
    plain_loop(step, b, 77).pow(2).sum().backward()
    assert_same(online, grads_of(params) + [b.grad])
    assert seen == list(range(0, 78))


@pytest.mark.parametrize("placement", ["host", "disk"])
def test_snapshot_placements_equal_plain_autograd(placement):
    if placement == "disk" and not remat.has_hdf5:
        with pytest.raises(remat.UnavailableError, match="HDF5"):
            remat.torch.checkpoint_loop(MlpStep(3), torch.zeros(1, 3), 5, slots=2, snapshots="disk")
        return
    torch.manual_seed(10)
    step = MlpStep(6)
    with tempfile.TemporaryDirectory() as directory:
        compare(step, lambda: torch.randn(2, 6, requires_grad=True), 50, list(step.parameters()), slots=4,
                snapshots=placement, directory=directory)
        assert os.listdir(directory) == []  # the snapshot file went with the loop


def test_budget_plans_the_slots_it_holds():
    torch.manual_seed(11)
    step = MlpStep(8)
    x0 = torch.randn(4, 8)
    snapshot = x0.numel() * 4 + torch.get_rng_state().numel()
    compare(step, lambda: x0.clone(), 80, list(step.parameters()), budget=5 * snapshot)
    compare(step, lambda: x0.clone(), 80, list(step.parameters()), budget=f"{5 * snapshot}B", until=None)


def test_bad_input_is_refused_with_remat_errors():
    step = MlpStep(3)
    x0 = torch.zeros(2, 3)
    with pytest.raises(remat.ArgumentError, match="slots"):
        remat.torch.checkpoint_loop(step, x0, 10, slots=0)
    with pytest.raises(remat.CapacityError):
        remat.torch.checkpoint_loop(step, x0, 10, budget=10)
    with pytest.raises(remat.CapacityError):
        remat.torch.checkpoint_loop(step, x0, until=lambda k, x: k == 3, budget=0)
    with pytest.raises(remat.ArgumentError, match="steps"):
        remat.torch.checkpoint_loop(step, x0, -1, slots=2)  # 0 steps returns x0 (test_a_loop_of_no_steps_...)
    with pytest.raises(remat.ArgumentError):
        remat.torch.checkpoint_loop(step, x0, 10)  # neither slots nor budget
    with pytest.raises(remat.ArgumentError):
        remat.torch.checkpoint_loop(step, [x0], 10, slots=2)
    with pytest.raises(remat.ArgumentError, match="snapshots"):
        remat.torch.checkpoint_loop(step, x0, 10, slots=2, snapshots="gpu")


@pytest.mark.parametrize("change,message", [
    (lambda x: x[:, :2], r"step 4 changed the state.*shape \(2, 2\)"),
    (lambda x: x.double(), r"step 4 changed the state.*dtype torch.float64"),
    (lambda x: (x, x), r"step 4 returned tuple"),
])
def test_a_step_that_changes_the_state_is_named(change, message):
    def step(k, x):
        return change(x) if k == 4 else x + 1

    with pytest.raises(remat.ArgumentError, match=message):
        remat.torch.checkpoint_loop(step, torch.zeros(2, 3), 10, slots=3)


class Boom(Exception):
    pass


class Interrupt(KeyboardInterrupt):  # Ctrl-C inside a step: a BaseException, not an Exception
    pass


@pytest.mark.parametrize("error", [Boom, Interrupt])
@pytest.mark.parametrize("when", ["forward", "backward"])
@pytest.mark.parametrize("placement", ["device", "disk"])
def test_a_step_that_raises_propagates_and_frees_everything(when, placement, error):
    if placement == "disk" and not remat.has_hdf5:
        pytest.skip("built without HDF5")
    states = []
    phase = {"backward": False}
    w = torch.ones(3, requires_grad=True)

    def step(k, x):
        if k == 6 and (when == "forward" or phase["backward"]):
            raise error(f"step {k} failed")
        y = x * w + 1
        states.append(weakref.ref(y))
        return y

    with tempfile.TemporaryDirectory() as directory:
        with pytest.raises(error, match="step 6 failed") as raised:
            x = remat.torch.checkpoint_loop(step, torch.zeros(2, 3), 20, slots=3, snapshots=placement,
                                            directory=directory, params=[w])
            phase["backward"] = True
            x.sum().backward()
        assert "step 6" in "".join(getattr(raised.value, "__notes__", ["step 6"]))
        del raised
        x = None
        gc.collect()
        assert os.listdir(directory) == []
    assert all(ref() is None for ref in states)  # no snapshot is left


def test_torch_autograd_grad_reaches_the_parameters_too():
    torch.manual_seed(12)
    cell = nn.GRUCell(3, 4)
    inputs = torch.randn(40, 2, 3)
    params = list(cell.parameters())
    step = lambda k, h: cell(inputs[k], h)  # noqa: E731  (parameters found through step 0's graph)
    got = torch.autograd.grad(remat.torch.checkpoint_loop(step, torch.zeros(2, 4), 40, slots=4).sum(), params)
    want = torch.autograd.grad(plain_loop(step, torch.zeros(2, 4), 40).sum(), params)
    assert_same(list(got), list(want))
    assert all(p.grad is None for p in params)


def test_disk_snapshots_without_hdf5_are_refused_clearly(monkeypatch):
    monkeypatch.setattr(remat._remat, "has_hdf5", False)
    with pytest.raises(remat.UnavailableError, match="snapshots='disk' needs remat's HDF5 level"):
        remat.torch.checkpoint_loop(MlpStep(3), torch.zeros(1, 3), 5, slots=2, snapshots="disk")


@pytest.mark.parametrize("where", ["missing/below", "a-file"])
def test_disk_snapshots_where_no_directory_can_be_made_raise_remat_io_error(where, tmp_path):
    """tempfile's FileNotFoundError / NotADirectoryError came out bare, naming neither remat nor the option."""
    if not remat.has_hdf5:
        pytest.skip("built without HDF5")
    (tmp_path / "a-file").write_text("")
    with pytest.raises(remat.IoError, match="snapshots='disk' cannot make its directory in") as raised:
        remat.torch.checkpoint_loop(MlpStep(3), torch.zeros(1, 3), 5, slots=2, snapshots="disk",
                                    directory=tmp_path / where)
    assert isinstance(raised.value, OSError) and raised.value.errno is not None
    assert sorted(os.listdir(tmp_path)) == ["a-file"]


@pytest.mark.parametrize("form", [dict(steps=5), dict(until=lambda k, x: k == 5), dict(steps=5, taped=True)])
def test_a_budget_below_one_snapshot_names_the_rng_states_share(form):
    """A 16-byte state's snapshot is 5,072 bytes with the CPU generator's state: a budget of 1000 bytes was
    refused as holding no snapshot of 5072 bytes, which did not say where the bytes come from nor that
    preserve_rng_state=False leaves them out."""
    w = torch.ones(4, requires_grad=True)
    step = lambda k, x: torch.tanh(x * w)  # noqa: E731
    rng = torch.get_rng_state().numel()
    with pytest.raises(remat.CapacityError, match=rf"holds no snapshot of {16 + rng} bytes \(the state's 16 and its "
                                                  rf"RNG state's {rng}; preserve_rng_state=False leaves"):
        remat.torch.checkpoint_loop(step, torch.zeros(4), budget=1000, **form)
    y = remat.torch.checkpoint_loop(step, torch.zeros(4), budget=1000, preserve_rng_state=False, **form)
    y.sum().backward()
    assert w.grad is not None


@pytest.mark.parametrize("dtype", [torch.bool, torch.complex64, torch.bfloat16, torch.float16, torch.int8,
                                   torch.int64, torch.float64])
def test_disk_snapshots_keep_every_dtype(dtype):
    """A bool part of the state failed on disk with a bare RuntimeError "std::bad_cast" (the extension reads
    tensors through DLPack, which PyTorch 1.13 refuses for bool): the parts go to disk as their bytes now."""
    if not remat.has_hdf5:
        pytest.skip("built without HDF5")
    torch.manual_seed(7)
    w = torch.randn(3, requires_grad=True)
    flags = (torch.rand(2, 3) > 0.5).to(dtype) if dtype == torch.bool else torch.randn(2, 3).to(dtype)

    def step(k, s):  # the second part rides along, the first reads it
        return torch.tanh(s[0] * w + s[1].real.float().sum()), s[1].clone()

    x0 = (torch.randn(3), flags)
    got = remat.torch.checkpoint_loop(step, x0, steps=8, slots=3, snapshots="disk")
    got[0].sum().backward()
    g, w.grad = w.grad, None
    want = plain_loop(step, x0, 8)
    want[0].sum().backward()
    assert torch.equal(got[0], want[0]) and torch.equal(got[1], flags) and got[1].dtype == dtype
    assert torch.equal(g, w.grad)


def test_integer_parts_of_the_state_ride_along():
    w = torch.randn(3, requires_grad=True)

    def step(k, state):
        x, n = state
        return x * w + n.float(), n + 1

    def make_x0():
        return torch.ones(2, 3, requires_grad=True), torch.zeros(2, 3, dtype=torch.long)

    compare(step, make_x0, 20, [w], loss=lambda x, n: x.sum() + n.sum(), slots=3)


# -- taped=True: remat.taped_revolve's plans, snapshots and steps' tapes in one memory ----------------------


def gru_loop(T, seed=9):
    torch.manual_seed(seed)
    cell = nn.GRUCell(3, 6)
    inputs = torch.randn(T, 2, 3)
    calls = []

    def step(k, h):
        calls.append(k)
        return cell(F.dropout(inputs[k], 0.2), h)

    step.inputs = inputs
    return cell, step, calls


def tape_units_of(step, h0, existing):
    """A tape's units, counted here independently: the storages step 0's graph saves (the `existing` tensors'
    left out: parameters, the loop's inputs), with its input, over one snapshot's bytes (the state's plus
    the CPU RNG state's)."""
    keys = {}
    exclude = {p.data_ptr() for p in existing}
    storage = lambda t: t.untyped_storage() if hasattr(t, "untyped_storage") else t.storage()  # noqa: E731

    def pack(t):
        if t.data_ptr() not in exclude:
            keys[storage(t).data_ptr()] = storage(t).nbytes()
        return t

    state = h0.detach().requires_grad_()
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        step(0, state)
    keys.setdefault(storage(state).data_ptr(), storage(state).nbytes())
    snapshot = h0.numel() * h0.element_size() + torch.get_rng_state().numel()
    return -(-sum(keys.values()) // snapshot)


@pytest.mark.parametrize("slots", [2, 7, 30, 200])
def test_taped_gru_with_dropout_equals_plain_autograd(slots):
    cell, step, _ = gru_loop(80)
    compare(step, lambda: torch.zeros(2, 6, requires_grad=True), 80, list(cell.parameters()), slots=slots, taped=True)


@pytest.mark.parametrize("given", [True, False])
def test_taped_rk4_equals_plain_autograd(given):
    torch.manual_seed(6)
    f = OdeField()
    h = 0.025

    rk4 = rk4_step(f, h)

    options = {"params": list(f.parameters())} if given else {}
    compare(rk4, lambda: torch.tensor([[2.0, 0.0], [1.0, 0.5]], requires_grad=True), 120, list(f.parameters()),
            slots=40, taped=True, **options)


@pytest.mark.parametrize("slots", [3, 12, 60, 10**4])
def test_taped_step_calls_are_the_plans_evaluations(slots):
    T = 60
    cell, step, calls = gru_loop(T)
    h0 = torch.zeros(2, 6)
    units = tape_units_of(step, h0, [*cell.parameters(), step.inputs])
    calls.clear()
    remat.torch.checkpoint_loop(step, h0, T, slots=slots, taped=True).sum().backward()
    plan = remat.taped_revolve(T, slots, units)
    assert len(calls) == plan.evaluations  # step 0's first run included: it becomes the plan's first advance
    untaped = remat.revolve(T, slots)
    assert plan.evaluations <= untaped.forward_steps + T
    if slots >= (T - 1) * units:
        assert len(calls) == T  # room for every tape: no step runs twice


def test_taped_refuses_the_online_form_and_other_placements():
    _, step, _ = gru_loop(10)
    with pytest.raises(remat.ArgumentError, match="offline"):
        remat.torch.checkpoint_loop(step, torch.zeros(2, 6), until=lambda k, x: k == 5, slots=3, taped=True)
    with pytest.raises(remat.ArgumentError, match="device"):
        remat.torch.checkpoint_loop(step, torch.zeros(2, 6), 10, slots=3, taped=True, snapshots="host")
    with pytest.raises(remat.ArgumentError):
        remat.torch.checkpoint_loop(step, torch.zeros(2, 6), 10, slots=0, taped=True)


@pytest.mark.parametrize("slots", [12, 10**4])
def test_taped_steps_in_order_are_reversed_as_one_graph(slots, grad_calls, backward_calls):
    """Steps advanced taped one after the other make one graph, reversed by one backward (no cut between
    them, no backward per step): with room for every tape one call in all, with less far fewer calls than
    steps; the gradients stay plain autograd's (compare checks them bit for bit). The parameters are leaves
    without hooks, so each reverse is a torch.autograd.backward summing through their .grad, never a
    torch.autograd.grad (whose `inputs=` walk of the graph costs more than the steps' own Python)."""
    T = 60
    cell, step, _ = gru_loop(T)
    plan = remat.taped_revolve(T, slots, tape_units_of(step, torch.zeros(2, 6), [*cell.parameters(), step.inputs]))
    assert any(a.kind == "advance" and a.taped and b.kind == "advance" and b.taped and b.start == a.start + 1
               for a, b in zip(list(plan), list(plan)[1:]))  # neighbours taped: the case this test is about
    grad_calls.calls = backward_calls.calls = 0
    compare(step, lambda: torch.zeros(2, 6, requires_grad=True), T, list(cell.parameters()), slots=slots, taped=True)
    reverses = backward_calls.calls - 2  # compare's two loss.backward()
    assert grad_calls.calls == 0
    assert reverses == 1 if slots >= (T - 1) * 7 else 1 < reverses < T // 2


@pytest.mark.parametrize("taped", [False, True])
def test_a_parameters_hook_sees_its_whole_gradient_once(taped, grad_calls):
    """A hook on a parameter (Tensor.register_hook) runs once with the loop's whole gradient, as in the plain
    loop, not once per reversed stretch with a running sum: with a hook the sums are not read through .grad
    (torch.autograd.grad then), and the hook and the gradient equal plain autograd's bit for bit."""
    T = 40
    cell, step, _ = gru_loop(T)
    seen = []
    handle = cell.weight_hh.register_hook(lambda g: seen.append(g.clone()))
    try:
        compare(step, lambda: torch.zeros(2, 6, requires_grad=True), T, list(cell.parameters()), slots=4,
                taped=taped)
    finally:
        handle.remove()
    assert len(seen) == 2 and torch.equal(seen[0], seen[1])  # the plain loop's, then checkpoint_loop's
    assert grad_calls.calls > 0


def test_a_tapes_size_is_measured_once_per_step_and_state_shape(monkeypatch):
    """Finding the storages alive before step 0 (to leave them out of a tape) walks every Python object; a
    later taped call with the same step and state shapes reuses the tape's size instead."""
    from remat.torch import _loop

    walks = [0]
    live = _loop._live_storages

    def counting_live():
        walks[0] += 1
        return live()

    monkeypatch.setattr(_loop, "_live_storages", counting_live)
    monkeypatch.setattr(_loop, "_tape_bytes", __import__("weakref").WeakKeyDictionary())
    _, step, _ = gru_loop(20)
    for f, h0 in ((step, torch.zeros(2, 6)), (step, torch.ones(2, 6)), (lambda k, h: step(k, h), torch.zeros(2, 6))):
        remat.torch.checkpoint_loop(f, h0.requires_grad_(), 20, slots=30, taped=True).sum().backward()
    assert walks[0] == 2  # the second call has the first's step and state shape; the third another step


def test_until_is_asked_at_every_state_from_x0_in_order():
    """The docs said k >= 1; the loop asks at x_0 too (True there: no steps, x_0 itself returned)."""
    asked = []
    x0 = torch.ones(3)

    def until(k, x):
        asked.append(k)
        return k >= 4

    out = remat.torch.checkpoint_loop(lambda k, x: x * 2, x0, until=until, slots=2)
    assert asked == [0, 1, 2, 3, 4] and torch.equal(out, x0 * 16)
    assert remat.torch.checkpoint_loop(lambda k, x: x * 2, x0, until=lambda k, x: True, slots=2) is x0


@pytest.mark.parametrize("memory", [dict(slots=2), dict(budget="1MiB"), dict(slots=3, taped=True),
                                    dict(slots=2, snapshots="disk")])
def test_a_loop_of_no_steps_returns_x0_as_the_plain_loop_does(memory):
    """steps=0 (a loop over an empty sequence, steps=len(inputs)) was refused with the library's "steps must be
    at least 1", where until= True at x_0 and the plain loop return x_0."""
    calls = []
    x0 = (torch.randn(3, requires_grad=True), torch.arange(2))
    out = remat.torch.checkpoint_loop(lambda k, x: calls.append(k) or x, x0, 0, **memory)
    assert out is x0 and calls == []
    out[0].pow(2).sum().backward()
    assert torch.equal(x0[0].grad, 2 * x0[0].detach())
    with pytest.raises(remat.ArgumentError, match="steps must be >= 0, got -1"):
        remat.torch.checkpoint_loop(lambda k, x: x, x0, -1, **memory)
    # what a loop of steps refuses, a loop of none refuses too
    with pytest.raises(remat.ArgumentError, match="slots must be at least 1, got 0"):
        remat.torch.checkpoint_loop(lambda k, x: x, x0, 0, slots=0)
    with pytest.raises(remat.CapacityError, match="holds no snapshot"):
        remat.torch.checkpoint_loop(lambda k, x: x, x0, 0, budget=1)


@pytest.mark.parametrize("slots", [10**4, 40])
def test_the_parameter_check_reads_the_last_steps_graph_not_its_whole_stretch(slots, monkeypatch):
    """The check for tensors the steps differentiate beyond the parameters walks the graph of the backward's first
    reverse in Python (microseconds a node). Where step T-1 continues a kept stretch (with room for every tape:
    the whole loop), it walks step T-1's graph only: walking all of it was 15 ms an iteration at T = 1000, a
    tenth of the loop. Counted here: the nodes the walk visits, against one step's."""
    from remat.torch import _loop

    walks = []  # nodes visited by each walk

    def counting(roots, stop=()):
        walks.append(0)
        stack, seen = [n for n in roots if n is not None], set(stop)
        while stack:
            node = stack.pop()
            if node is None or node in seen:
                continue
            seen.add(node)
            walks[-1] += 1
            variable = getattr(node, "variable", None)
            if variable is not None:
                yield variable
                continue
            stack.extend(n for n, _ in node.next_functions)

    T = 100
    cell, step, _ = gru_loop(T)
    h0 = torch.zeros(2, 6, requires_grad=True)
    list(counting([step(0, h0.detach().requires_grad_()).grad_fn]))
    one_step = walks.pop()
    monkeypatch.setattr(_loop, "leaves_reached", counting)
    compare(step, lambda: torch.zeros(2, 6, requires_grad=True), T, list(cell.parameters()), slots=slots, taped=True)
    assert len(walks) == 2  # step 0's parameters found, then the check
    assert 0 < walks[1] <= one_step, (walks, one_step)


@pytest.mark.parametrize("memory", [dict(steps=12, slots=2), dict(steps=12, budget="1MiB", taped=True),
                                    dict(until=lambda k, x: k == 12, slots=2),
                                    dict(steps=12, slots=3, snapshots="disk")])
@pytest.mark.parametrize("mode", [torch.no_grad, torch.inference_mode])
def test_without_grad_the_plain_loop_runs_on_an_inference_tensor_too(memory, mode):
    """Under no_grad (evaluation) nothing is differentiated: the plain loop's x_T from T step calls. x_0 made under
    inference_mode, which the plain loop takes under no_grad, raised PyTorch's "Setting requires_grad=True on
    inference tensor outside InferenceMode" (remat ran step 0 with grad on to find the parameters)."""
    cell = nn.GRUCell(3, 5)
    inputs = torch.randn(12, 2, 3)
    calls = []

    def step(k, h):
        calls.append(k)
        return cell(inputs[k], h)

    with torch.inference_mode():
        h0 = torch.randn(2, 5)
    with mode():
        expected = plain_loop(step, h0, 12)
        calls.clear()
        out = remat.torch.checkpoint_loop(step, h0, **memory)
    assert torch.equal(out, expected) and not out.requires_grad
    assert calls == list(range(12))
    with pytest.raises(remat.ArgumentError, match="slots must be at least 1"), mode():
        remat.torch.checkpoint_loop(step, h0, 12, slots=0)


@pytest.mark.parametrize("tuple_state", [False, True])
def test_an_inference_tensor_x0_under_grad_is_refused_naming_it(tuple_state):
    """Outside no_grad, x_0 made under inference_mode (which autograd cannot save: the plain loop fails with
    "Inference tensors cannot be saved for backward") raised PyTorch's "Setting requires_grad=True on inference
    tensor outside InferenceMode", which names nothing the caller did; now a remat.ArgumentError naming x0."""
    with torch.inference_mode():
        h0 = torch.randn(2, 5)
    x0 = (torch.arange(3), h0) if tuple_state else h0
    w = torch.randn(5, 5, requires_grad=True)

    def step(k, x):
        return (x[0], torch.tanh(x[1] @ w)) if tuple_state else torch.tanh(x @ w)

    for memory in (dict(steps=6, slots=2), dict(steps=6, slots=4, taped=True),
                   dict(until=lambda k, x: k == 6, slots=2)):
        with pytest.raises(remat.ArgumentError, match=r"x0( \(part 1\))? is an inference tensor"):
            remat.torch.checkpoint_loop(step, x0, **memory)


class _DropoutNormStep(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin, self.norm, self.drop = nn.Linear(4, 4), nn.BatchNorm1d(4), nn.Dropout(0.5)

    def forward(self, k, x):
        return torch.tanh(self.norm(self.lin(self.drop(x))))


@pytest.mark.parametrize("memory", [dict(steps=10, slots=3), dict(steps=10, slots=8, taped=True),
                                    dict(until=lambda k, x: k == 10, slots=3)])
def test_a_module_switched_to_eval_between_forward_and_backward_is_re_run_as_the_forward_ran_it(memory):
    """Plain autograd's backward reads the graph the forward saved, whatever mode the module is in by then (a
    validation pass under model.eval() between a forward and its backward); the backward's re-runs ran in eval
    mode (no dropout, the running statistics): other gradients, silently. They run in the forward's modes now,
    and the caller's modes are as it left them after the backward."""
    torch.manual_seed(0)
    step = _DropoutNormStep()
    results = []
    for use_remat in (False, True):
        step.train()
        step.zero_grad()
        torch.manual_seed(3)
        x0 = torch.randn(6, 4, requires_grad=True)
        x = remat.torch.checkpoint_loop(step, x0, **memory) if use_remat else plain_loop(step, x0, 10)
        step.eval()
        step.drop.train()  # one submodule in its own mode
        x.pow(2).sum().backward()
        assert not step.training and not step.norm.training and step.drop.training
        results.append([p.grad.clone() for p in step.parameters()] + [x0.grad.clone()] + list(step.buffers()))
    assert_same(*results)


def test_a_taped_plan_the_planner_refuses_is_refused_naming_the_loop_and_the_way_out():
    """Past remat.taped_revolve's work limit (8000 steps in 100 snapshots' memory, a tape 3 of them, here) the
    loop raised the planner's "pass taped_revolve a larger work_limit", naming a call the caller did not make
    and cannot pass anything to; now the loop's own refusal, the planner's reason in it, and taped=False."""
    calls = []
    x0 = torch.randn(4, requires_grad=True)

    def step(k, x):
        calls.append(k)
        return torch.cat([x[1:], x[:1]]) * torch.tanh(x)  # saves x and tanh(x): a tape of 3 states

    with pytest.raises(remat.ArgumentError, match=r"checkpoint_loop: taped=True plans 8000 steps within 100 "
                                                  r"snapshots' memory, a tape 3 of them, .*work_limit.*taped=False"):
        remat.torch.checkpoint_loop(step, x0, 8000, slots=100, taped=True, preserve_rng_state=False)
    assert calls == [0]  # step 0 measured the tape; nothing else ran


@pytest.mark.parametrize("memory", [dict(budget="1KiB"), dict(budget="1KiB", taped=True)])
def test_an_empty_batch_without_rng_states_runs_within_a_budget(memory):
    """A state of no bytes (an empty last batch) with preserve_rng_state=False makes snapshots of no bytes: the
    library refused planning for them ("the state size must be at least 1 byte") and taped=True raised
    ZeroDivisionError. Such a slot is priced as one byte now, and the loop is the plain loop's."""
    cell = nn.GRUCell(3, 5)
    inputs = torch.randn(10, 0, 3)

    def step(k, h):
        return cell(inputs[k], h)

    compare(step, lambda: torch.zeros(0, 5, requires_grad=True), 10, list(cell.parameters()),
            loss=lambda x: (x ** 2).sum() + sum(p.sum() for p in cell.parameters()), preserve_rng_state=False,
            **memory)


def test_disk_snapshots_keep_the_states_layout():
    """A state kept column-major (x_0 a transposed tensor, each step keeping its layout) came back from disk
    row-major: a re-run reduced over it in another order than the forward's run, and the gradients were up to
    8e-6 off plain autograd's. Restored in the layout it was stored in now (as a copy keeps it): torch.equal."""
    if not remat.has_hdf5:
        pytest.skip("built without HDF5")
    torch.manual_seed(0)
    w = torch.randn(257, requires_grad=True)

    def step(k, x):  # the row sums read along the stored layout's strided dimension
        return torch.tanh(x * w + x.sum(1, keepdim=True) * 1e-3).t().contiguous().t()

    compare(step, lambda: torch.randn(257, 33).t().requires_grad_(), 20, [w], slots=3, snapshots="disk")
