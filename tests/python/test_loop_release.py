"""What checkpoint_loop holds after a forward with no backward, or one that fails: nothing of the steps' graphs
(weak references to every state a step returned, dead after a collection)."""

import gc
import weakref

import pytest

torch = pytest.importorskip("torch")
import remat.torch  # noqa: E402


def states_alive_after(fail_at=None, backward=False, **options):
    torch.manual_seed(0)
    w = torch.randn(16, 16, requires_grad=True)
    x0 = torch.randn(4, 16, requires_grad=True)
    made, calls = [], [0]

    def step(k, x):
        calls[0] += 1
        if calls[0] == fail_at:
            raise ValueError("step failed")
        y = torch.tanh(x @ w)
        made.append(weakref.ref(y))
        return y

    def run():
        try:
            y = remat.torch.checkpoint_loop(step, x0, steps=10, **options)
            if backward:
                y.sum().backward()
        except ValueError:
            pass

    run()
    gc.collect()
    return sum(r() is not None for r in made)


def calls_of(**options):
    """(the step calls of the loop's forward, of its forward and backward), nothing failing."""
    torch.manual_seed(0)
    w = torch.randn(16, 16, requires_grad=True)
    calls = [0]

    def step(k, x):
        calls[0] += 1
        return torch.tanh(x @ w)

    y = remat.torch.checkpoint_loop(step, torch.randn(4, 16, requires_grad=True), steps=10, **options)
    forward = calls[0]
    y.sum().backward()
    return forward, calls[0]


@pytest.mark.parametrize("options", [dict(slots=30, taped=True), dict(slots=4, taped=True), dict(slots=3),
                                     dict(slots=3, snapshots="host")])
def test_nothing_of_the_steps_stays_alive_without_a_backward_or_after_a_failure(options):
    """taped=True measured step 0's tape with saved-tensor hooks that packed each saved tensor as itself: a
    saved output then held its own graph node (a cycle the collector cannot see), and where no backward ran
    (a forward alone, a step failing in the forward) step 0's graph lived until the process ended."""
    assert states_alive_after(**options) == 0
    assert states_alive_after(fail_at=3, **options) == 0
    forward, total = calls_of(**options)
    if total > forward:  # the backward re-runs steps: the first of those fails (call 25 came only without tapes)
        assert states_alive_after(fail_at=forward + 1, backward=True, **options) == 0
    assert states_alive_after(backward=True, **options) == 0


@pytest.mark.parametrize("memory", [dict(steps=10, slots=3), dict(until=lambda k, x: k == 10, slots=3),
                                    dict(until=lambda k, x: k == 10, slots=3, snapshots="disk")])
def test_an_output_let_go_without_a_backward_frees_the_snapshots_without_the_collector(memory, tmp_path):
    """The online forward returned x_T's own tensors as the Function's outputs while the loop still held them:
    output -> its graph node -> the loop -> output, a cycle that kept every snapshot (and the "disk" directory)
    alive until Python's collector ran, where the offline loop lets them go with its output."""
    torch.manual_seed(0)
    w = torch.randn(16, 16, requires_grad=True)
    made = []

    def step(k, x):
        y = torch.tanh(x @ w)
        made.append(weakref.ref(y))
        return y

    if memory.get("snapshots") == "disk":
        memory = dict(memory, directory=tmp_path)
    enabled = gc.isenabled()
    gc.disable()
    try:
        y = remat.torch.checkpoint_loop(step, torch.randn(4, 16, requires_grad=True), **memory)
        assert sum(r() is not None for r in made) > 0 or memory.get("snapshots") == "disk"
        del y
        assert sum(r() is not None for r in made) == 0
        assert list(tmp_path.iterdir()) == []
    finally:
        if enabled:
            gc.enable()
