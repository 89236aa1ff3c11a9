"""auto_checkpoint at the memory checkpoint_sequential measures (issue #38's goal: at equal or lower measured
peak, never slower): the segments' own schedule written as remat actions and priced by an independent replay
of the chain model (docs/heterogeneous.md) gives exactly the segments' measured peak, so at that budget the
plan auto_checkpoint follows costs no more than the segments' schedule and, blocks costing alike, re-runs no
more blocks; its gradients are plain autograd's, bit for bit; and it measures no more than it predicts."""

import dataclasses
import sys

import pytest

from conftest import ROOT, gradients

torch = pytest.importorskip("torch")
import remat  # noqa: E402
import remat.torch  # noqa: E402
from remat.torch._auto import AutoCheckpoint  # noqa: E402

sys.path.insert(0, str(ROOT / "bench" / "python"))
from stack_bench import segments_actions  # noqa: E402  (checkpoint_sequential's schedule as remat actions)


def transformer_stack(layers=12):
    torch.manual_seed(5)
    blocks = [torch.nn.TransformerEncoderLayer(16, 2, dim_feedforward=48, dropout=0.0, batch_first=True)
              for _ in range(layers)]
    return torch.nn.Sequential(*blocks), torch.randn(2, 6, 16)


def model_price(steps, final_bytes, actions):
    """(peak bytes, cost) under the chain model with taped advances, replayed from its written rules: memory
    is the snapshots held, the current state (both sides of a step while it runs), a_k while step k runs
    taped or inside its untaped adjoint, and each kept tape (t_k where given, else m_k + a_k) until its reverse."""
    m = [s[2] for s in steps] + [final_bytes]
    snapshots, tapes, current = {}, {}, m[0]
    peak, cost = current, 0.0

    def held():
        return sum(m[k] for k in snapshots.values()) + sum(tapes.values())

    for a in actions:
        if a.kind == "store":
            snapshots[a.slot] = a.step
            peak = max(peak, held() + current)
        elif a.kind == "restore":
            current = m[a.step]
            peak = max(peak, held() + current)
        elif a.kind == "free":
            del snapshots[a.slot]
        elif a.kind == "advance":
            for k in range(a.start, a.stop):
                f, _, _, extra, _ = steps[k]
                peak = max(peak, held() + max(m[k], m[k + 1]) + (extra if a.taped else 0))
                cost += f
            if a.taped:
                tapes[a.start] = steps[a.start][4] or m[a.start] + steps[a.start][3]
            current = m[a.stop]
            peak = max(peak, held() + current)
        else:
            f, b, _, extra, _ = steps[a.step]
            if a.step in tapes:
                peak = max(peak, held())
                del tapes[a.step]
                cost += max(0.0, b - f)
            else:
                peak = max(peak, held() + max(m[a.step], m[a.step + 1]) + extra)
                cost += b
            current = 0
    return peak, cost


def test_at_the_segments_measured_peak_the_plan_re_runs_no_more_blocks_than_the_segments():
    model, x = transformer_stack()
    n = len(model)
    x.requires_grad_()
    measured = remat.torch.tradeoff(model, x, budgets=[], rounds=1, repeats=0)
    probe = remat.torch.auto_checkpoint(model, x, budget=1 << 40, repeats=0)
    plain = gradients(model, model, x)
    # every block costs alike (1 forward, 3 forward and backward), so that cost orders the re-run counts
    profiles = [dataclasses.replace(p, forward_seconds=1.0, backward_seconds=2.0) for p in probe.profiles]
    for point in measured.sequential:
        s = point.segments
        budget = point.peak_bytes
        fast = AutoCheckpoint(model, x, budget, profiles, probe.plain_peak_bytes, True)
        segments_peak, segments_cost = model_price(fast.chain_steps, fast.final_state_bytes,
                                                   segments_actions(n, s))
        assert segments_peak == budget, s  # the model prices the segments exactly as they measure
        assert fast.recomputed_blocks <= (n // s) * (s - 1), s
        assert fast.predicted_cost <= segments_cost, s
        if fast.plan is not None:
            assert model_price(fast.chain_steps, fast.final_state_bytes, fast.actions()) == \
                (fast.predicted_peak_bytes, pytest.approx(fast.predicted_cost))
        assert all(torch.equal(a, b) for a, b in zip(gradients(model, fast, x), plain)), s
        assert fast.measured_peak_bytes <= fast.predicted_peak_bytes <= budget, s


def test_identical_blocks_share_their_profiled_times_and_so_re_run_no_more_blocks_than_the_segments():
    """As profiled (public auto_checkpoint): identical blocks get the same times (their profiled times differ
    by noise alone, which the planner would otherwise chase: re-running more blocks, each profiled a little
    cheaper), distinct ones their own; so at each segment count's measured peak, no more re-runs."""
    model, x = transformer_stack(8)
    n = len(model)
    x.requires_grad_()
    fast = remat.torch.auto_checkpoint(model, x, budget=1 << 40, repeats=1)
    assert len({(p.forward_seconds, p.backward_seconds) for p in fast.profiles}) == 1
    mixed = torch.nn.Sequential(*model[:2], torch.nn.Linear(16, 16), *model[2:4])
    times = [(p.forward_seconds, p.backward_seconds) for p in
             remat.torch.auto_checkpoint(mixed, x, budget=1 << 40, repeats=1).profiles]
    assert times[0] == times[1] == times[3] == times[4] != times[2]
    measured = remat.torch.tradeoff(model, x, budgets=[], rounds=1, repeats=0)
    for point in measured.sequential:
        s = point.segments
        planned = remat.torch.auto_checkpoint(model, x, budget=point.peak_bytes, repeats=1)
        assert planned.recomputed_blocks <= (n // s) * (s - 1), s


def test_given_actions_are_followed_priced_and_checked():
    """AutoCheckpoint(actions=...) follows a plan given as its actions (stack_bench.py runs the segments' schedule
    with it, to time the runtime apart from the plan): it reports their price under the chain model (the
    replay above), its gradients are plain autograd's bit for bit, its measured peak is within the price; an
    action that breaks the model's rules is refused, naming it."""
    model, x = transformer_stack()
    x.requires_grad_()
    probe = remat.torch.auto_checkpoint(model, x, budget=1 << 40, repeats=1)
    steps, final = probe.chain_steps, probe.final_state_bytes
    expected = gradients(model, model, x)
    for s in (2, 3, 5):
        actions = segments_actions(len(model), s)
        peak, cost = model_price(steps, final, actions)
        fast = AutoCheckpoint(list(model), x, peak, probe.profiles, probe.plain_peak_bytes, True, actions=actions)
        assert fast.method == "given actions" and fast.actions() == actions
        assert (fast.predicted_peak_bytes, fast.predicted_cost) == (peak, pytest.approx(cost))
        assert fast.recomputed_blocks == (len(model) // s) * (s - 1)
        got = gradients(model, fast, x)
        assert all(torch.equal(a, b) for a, b in zip(got, expected))
        assert fast.measured_peak_bytes <= peak
    broken = segments_actions(len(model), 2)[1:]  # the first snapshot never stored
    with pytest.raises(remat.ArgumentError, match="action"):
        AutoCheckpoint(list(model), x, 1 << 40, probe.profiles, probe.plain_peak_bytes, True, actions=broken)
    # plain autograd's plan as a module reports it, given back: the same gradients (its last block is reversed
    # where x_{T-1} stands, never advanced: an advance of it, which the chain model prices, ran the block twice)
    plain = probe.actions()
    assert not any(a.kind == "advance" and a.stop == len(model) for a in plain)
    again = AutoCheckpoint(list(model), x, 1 << 40, probe.profiles, probe.plain_peak_bytes, True, actions=plain)
    assert all(torch.equal(a, b) for a, b in zip(gradients(model, again, x), expected))
    twice = plain[:len(model) - 1] + [remat.Advance(len(model) - 1, len(model), True)] + plain[len(model) - 1:]
    with pytest.raises(remat.ArgumentError, match="advances the last block"):
        AutoCheckpoint(list(model), x, 1 << 40, probe.profiles, probe.plain_peak_bytes, True, actions=twice)
    with pytest.raises(remat.CapacityError, match="above the budget of 1"):
        AutoCheckpoint(list(model), x, 1, probe.profiles, probe.plain_peak_bytes, True, actions=plain)
