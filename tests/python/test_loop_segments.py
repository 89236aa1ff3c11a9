"""checkpoint_loop(taped=True) at the memory hand-written torch.utils.checkpoint segments measure (issue #38's goal:
fewer recomputed steps at equal memory): given budget= the segments' measured peak (saved-tensor hooks, the loop's
snapshots in the same count, each storage once: bench/python/loop_bench.py), its plan prices what the loop holds
(snapshots, tapes, and the graph of a step re-run for its reverse), so it measures within that peak, exactly what
the plan predicts, with no more recomputed steps than the segments (whose schedule is one plan within it), and
plain autograd's gradients bit for bit."""

import sys

import pytest

from conftest import ROOT

torch = pytest.importorskip("torch")
import remat  # noqa: E402
import remat.torch  # noqa: E402

sys.path.insert(0, str(ROOT / "bench" / "python"))
from loop_bench import GruLoop, counted_snapshots  # noqa: E402  (the bench's loop, its segments and its measure)


def gradients(loop, run):
    loop.iteration(run)
    return [q.grad.clone() for q in (*loop.params, loop.h0)]


@pytest.mark.parametrize("T", [97])  # the last segment shorter than L at every L
def test_at_the_segments_measured_peak_the_taped_loop_holds_no_more_and_re_runs_no_more(T):
    loop = GruLoop(T, 2, features=4, hidden=8, seed=3)
    state_bytes = loop.h0.numel() * loop.h0.element_size()
    plain = gradients(loop, loop.plain)
    for L in (5, 10, 20, 32, 50):
        segments_peak, segments_re = loop.measure(loop.segments(L))
        run = loop.looped(True, budget=segments_peak)
        peak, re = loop.measure(run)
        assert peak <= segments_peak, L
        assert re <= segments_re, L
        # what the plan prices is what the loop holds: a GRUCell's tape is 7 states exactly, its input among them
        plan = remat.taped_revolve(T, segments_peak // state_bytes, 7, rerun_units=7)
        assert peak == plan.peak_units * state_bytes, L
        assert re == plan.evaluations - T, L
        assert all(torch.equal(a, b) for a, b in zip(gradients(loop, run), plain)), L


def test_a_budget_below_a_snapshot_beside_a_re_run_is_refused_naming_the_least():
    loop = GruLoop(20, 2, features=4, hidden=8)
    state_bytes = loop.h0.numel() * loop.h0.element_size()
    least = 8 * state_bytes  # x_0's snapshot and the re-run step's graph (7 states)
    loop.iteration(loop.looped(True, budget=least))
    with pytest.raises(remat.CapacityError, match=f"{least} bytes"):
        loop.iteration(loop.looped(True, budget=least - 1))


class _DropoutStep(torch.nn.Module):
    """x + W2 dropout(exp(W1 x) + 1): in training mode its graph also saves dropout's mask, in eval mode not; with
    W2 requiring grad also W2's input, an intermediate of its own."""

    def __init__(self):
        super().__init__()
        self.up, self.down, self.drop = torch.nn.Linear(16, 64), torch.nn.Linear(64, 16), torch.nn.Dropout(0.3)

    def forward(self, k, x):
        return x + self.down(self.drop(torch.exp(self.up(x)) + 1))


@pytest.mark.parametrize("first", ["train", "eval", "frozen"])
def test_a_module_steps_tape_is_measured_again_in_another_mode_or_with_other_layers_frozen(first):
    """A tape's size is kept per step and state shape for later calls; a module step's tape in training mode
    (dropout's masks among it) is larger than in eval mode, and with every layer trained than with one frozen
    (its input saved for its weight's gradient). Measured in eval mode or frozen and reused, the plan priced
    tapes too small: 2.5x the budget (eval mode, a tanh in place of the exp), 43,008 bytes within 30,720 here
    (frozen)."""
    from remat.torch._saved import SavedBytes

    torch.manual_seed(0)
    step = _DropoutStep()
    x0 = torch.randn(8, 16, requires_grad=True)
    budget = 60 * x0.numel() * x0.element_size()

    def iteration():
        remat.torch.checkpoint_loop(step, x0, 40, budget=budget, taped=True,
                                    preserve_rng_state=False).sum().backward()

    step.train(first != "eval")
    step.down.weight.requires_grad_(first != "frozen")
    iteration()
    step.train()
    step.down.weight.requires_grad_()
    counter = SavedBytes(list(step.parameters()))
    with counter.hooks(), counted_snapshots(counter):
        iteration()
    assert 0 < counter.peak <= budget


def test_a_steps_tape_is_measured_again_under_autocast():
    """Under torch.autocast a step's graph also saves its low-precision copies of the weights (tensors the step
    made), more than its float32 graph saves where the weights are large beside the state. A tape's size measured
    outside autocast and reused under it priced tapes too small: 698,880 bytes held within a budget of 128,000."""
    from remat.torch._saved import SavedBytes

    torch.manual_seed(0)
    up, down = torch.nn.Linear(16, 256), torch.nn.Linear(256, 16)
    params = [*up.parameters(), *down.parameters()]

    def step(k, x):
        return x + down(torch.tanh(up(x)))

    x0 = torch.randn(2, 16, requires_grad=True)
    budget = 1000 * x0.numel() * x0.element_size()

    def iteration(autocast):
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=autocast):
            x = remat.torch.checkpoint_loop(step, x0, 40, budget=budget, taped=True, preserve_rng_state=False)
        x.float().sum().backward()

    iteration(False)
    counter = SavedBytes(params)
    with counter.hooks(), counted_snapshots(counter):
        iteration(True)
    assert 0 < counter.peak <= budget


def test_an_x0_viewing_a_larger_storage_has_the_tape_of_its_own_bytes():
    """x_0 sliced from a larger tensor (initial states taken from a buffer of them) counted that tensor's whole
    storage as the input state in step 0's tape: 3,200,384 bytes, and a budget of 40 snapshots was refused as
    below the least. The tape is the same as for a copy of x_0 now, and so are the plan and the peak."""
    from remat.torch import _loop

    torch.manual_seed(0)
    loop = GruLoop(50, 2, features=4, hidden=8)
    bank = torch.randn(100000, 8)
    sizes = []
    for h0 in (bank[10:12].clone(), bank[10:12]):
        step = (lambda k, h: loop.step(k, h))  # a step of its own each time: its tape measured afresh
        budget = 40 * h0.numel() * h0.element_size()
        x = remat.torch.checkpoint_loop(step, h0, 50, budget=budget, taped=True, preserve_rng_state=False)
        x.sum().backward()
        sizes.append(list(_loop._tape_bytes[step].values()))
    assert sizes[0] == sizes[1] == [7 * 2 * 8 * 4]  # a GRUCell's tape: 7 states
