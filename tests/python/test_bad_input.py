"""Bad input through the public API, as a careless user gives it: a wrong type, 0, a negative, NaN, inf, a
count past 64 bits, a malformed byte size or chain step. Each must raise a remat.Error subclass naming the
argument, never nanobind's TypeError (which lists C++ signatures and names no argument), a KeyError from
inside the package, or a hang; and the package must work normally after it."""

import math

import pytest

import remat

NANOBIND = "incompatible function arguments"
C = [(1.0, 2.0, 1024)] * 10


def case(id, call, error, match):
    return pytest.param(call, error, match, id=id)


PLANS = [
    # counts: type, bool, float, beyond 64 bits
    case("revolve steps str", lambda: remat.revolve("10", 3), remat.ArgumentError, "steps: expected an int, got str"),
    case("revolve steps float", lambda: remat.revolve(10.0, 3), remat.ArgumentError, "steps: expected an int"),
    case("revolve steps nan", lambda: remat.revolve(math.nan, 3), remat.ArgumentError, "steps: expected an int"),
    case("revolve steps bool", lambda: remat.revolve(True, 3), remat.ArgumentError, "steps: expected an int, got bool"),
    case("revolve steps None", lambda: remat.revolve(None, 3), remat.ArgumentError, "steps"),
    case("revolve steps 2**63", lambda: remat.revolve(2**63, 3), remat.CountOverflowError, "steps: .* 64 bits"),
    case("revolve steps 2**64", lambda: remat.revolve(2**64, 3), remat.CountOverflowError, "steps"),
    case("revolve steps -2**64", lambda: remat.revolve(-2**64, 3), remat.CountOverflowError, "steps"),
    case("revolve slots str", lambda: remat.revolve(10, "3"), remat.ArgumentError, "slots: expected an int"),
    case("revolve slots 2**64", lambda: remat.revolve(10, 2**64), remat.CountOverflowError, "slots"),
    case("revolve online 1", lambda: remat.revolve(10, 3, online=1), remat.ArgumentError, "online"),
    case("revolve step_cost str", lambda: remat.revolve(10, 3, step_cost="1"), remat.ArgumentError, "step_cost"),
    case("revolve reverse_cost None", lambda: remat.revolve(10, 3, reverse_cost=None), remat.ArgumentError,
         "reverse_cost"),
    case("taped_revolve tape_units 2**63", lambda: remat.taped_revolve(10, 30, 2**63), remat.CountOverflowError,
         "tape_units"),
    case("taped_revolve units None", lambda: remat.taped_revolve(10, None, 3), remat.ArgumentError, "units"),
    case("uniform every 2**64", lambda: remat.uniform(100, every=2**64), remat.CountOverflowError, "every"),
    case("uniform slots 2.5", lambda: remat.uniform(100, slots=2.5), remat.ArgumentError, "slots"),
    case("store_all slots str", lambda: remat.store_all(100, slots="99"), remat.ArgumentError, "slots"),
    case("batches -1", lambda: remat.revolve(10, 3).batches(-1), remat.ArgumentError, "size"),
    case("batches 0", lambda: remat.revolve(10, 3).batches(0), remat.ArgumentError, "size"),
    case("batches 2**64", lambda: remat.revolve(10, 3).batches(2**64), remat.CountOverflowError, "size"),
    # byte sizes
    case("budget 2**64", lambda: remat.plan_for_budget(100, 2**64, 64), remat.CountOverflowError, "budget_bytes"),
    case("budget 1e30GiB", lambda: remat.plan_for_budget(100, "1e30GiB", 64), remat.CountOverflowError,
         "budget_bytes"),
    case("state_bytes 2**64", lambda: remat.plan_for_budget(100, "1GiB", 2**64), remat.CountOverflowError,
         "state_bytes"),
    case("budget -1GiB", lambda: remat.plan_for_budget(100, "-1GiB", 64), remat.ArgumentError, "budget_bytes"),
    case("budget abc", lambda: remat.plan_for_budget(100, "abc", 64), remat.ArgumentError, "budget_bytes"),
    case("parse_bytes 2e19", lambda: remat.parse_bytes("2e19"), remat.CountOverflowError, "2e19"),
    # past a float's range: Python's own OverflowError ("cannot convert float infinity"), not remat's, before
    case("parse_bytes 1e400", lambda: remat.parse_bytes("1e400"), remat.CountOverflowError, "1e400"),
    case("parse_bytes 1e99999GiB", lambda: remat.parse_bytes("1e99999GiB"), remat.CountOverflowError, "1e99999GiB"),
    # a float read 1.0000000000000001 as a whole 1 byte
    case("parse_bytes 1.0000000000000001", lambda: remat.parse_bytes("1.0000000000000001"), remat.ArgumentError,
         "not a whole number of bytes"),
    # ints of more than 4300 digits have no str: the message raised Python's ValueError instead of remat's error
    case("parse_bytes 10**5000", lambda: remat.parse_bytes(10**5000), remat.CountOverflowError, "an int of 16610 bits"),
    case("parse_bytes -10**5000", lambda: remat.parse_bytes(-10**5000), remat.ArgumentError, "an int of 16610 bits"),
    case("revolve steps 10**5000", lambda: remat.revolve(10**5000, 3), remat.CountOverflowError, "steps: an int of"),
    # multilevel levels
    case("level no slots", lambda: remat.multilevel(1000, [("host",)]), remat.ArgumentError, "level"),
    # levels not a sequence: None was a TypeError, a str's letters were read as levels ("level 'h'")
    case("levels None", lambda: remat.multilevel(1000, None), remat.ArgumentError, "levels: expected a sequence"),
    case("levels a str", lambda: remat.multilevel(1000, "host:4"), remat.ArgumentError,
         "levels: expected a sequence.*'host:4'"),
    case("levels a dict", lambda: remat.multilevel(1000, {"name": "host", "slots": 4}), remat.ArgumentError,
         "levels: expected a sequence"),
    case("level a str", lambda: remat.multilevel(1000, ["host"]), remat.ArgumentError, "level 'host'"),
    case("level slots str", lambda: remat.multilevel(1000, [("host", "4")]), remat.ArgumentError,
         "level host: slots"),
    case("level slots 4.5", lambda: remat.multilevel(1000, [("host", 4.5)]), remat.ArgumentError, "level host: slots"),
    case("level slots -inf", lambda: remat.multilevel(1000, [("host", -math.inf)]), remat.ArgumentError,
         "level host: slots"),
    case("level dict no name", lambda: remat.multilevel(1000, [{"slots": 3}]), remat.ArgumentError, "no name"),
    case("level dict typo", lambda: remat.multilevel(1000, [{"name": "h", "slot": 3}]), remat.ArgumentError,
         "unknown field 'slot'"),
    case("level name int", lambda: remat.multilevel(1000, [(1, 3)]), remat.ArgumentError, "level name"),
    case("level write_cost str", lambda: remat.multilevel(1000, [("host", 4, "5", 5)]), remat.ArgumentError,
         "write_cost"),
    case("multilevel method None", lambda: remat.multilevel(1000, [("host", 4)], method=None), remat.ArgumentError,
         "method"),
    # chains
    case("chain step short", lambda: remat.chain([(1, 2)], 4096), remat.ArgumentError, "chain step 0"),
    case("chain step long", lambda: remat.chain([(1, 2, 3, 4, 5, 6)], 4096), remat.ArgumentError, "chain step 0"),
    case("chain forward str", lambda: remat.chain([("a", 2, 1)], 4096), remat.ArgumentError, "chain step 0: forward"),
    case("chain state_bytes 1.5", lambda: remat.chain([(1, 2, 1.5)] * 3, 4096), remat.ArgumentError,
         "chain step 0: state_bytes"),
    case("chain state_bytes -1", lambda: remat.chain(C[:2] + [(1, 2, -1)], 4096), remat.ArgumentError,
         "chain step 2: state_bytes"),
    case("chain state_bytes 2**64", lambda: remat.chain([(1, 2, 2**64)], 4096), remat.CountOverflowError,
         "chain step 0: state_bytes"),
    # four-field tuples take a shorter path (remat._plans._chain_step): the same refusals
    case("chain_taped forward bool", lambda: remat.chain_taped([(True, 2, 8, 0)], 4096), remat.ArgumentError,
         "chain step 0: forward"),
    case("chain_taped adjoint str", lambda: remat.chain_taped([(1, "2", 8, 0)], 4096), remat.ArgumentError,
         "chain step 0: adjoint"),
    case("chain_taped state_bytes 8.0", lambda: remat.chain_taped([(1, 2, 8.0, 0)], 4096), remat.ArgumentError,
         "chain step 0: state_bytes"),
    case("chain_taped adjoint_bytes -1", lambda: remat.chain_taped([(1, 2, 8, 0), (1, 2, 8, -1)], 4096),
         remat.ArgumentError, "chain step 1: adjoint_bytes"),
    case("chain_taped adjoint_bytes 2**64", lambda: remat.chain_taped([(1, 2, 8, 2**64)], 4096),
         remat.CountOverflowError, "chain step 0: adjoint_bytes"),
    # five-field tuples (auto_checkpoint's, with the tape's bytes) likewise
    case("chain_taped tape_bytes 8.0", lambda: remat.chain_taped([(1, 2, 8, 0, 8.0)], 4096), remat.ArgumentError,
         "chain step 0: tape_bytes"),
    case("chain_taped tape_bytes -1", lambda: remat.chain_taped([(1, 2, 8, 0, 4), (1, 2, 8, 0, -1)], 4096),
         remat.ArgumentError, "chain step 1: tape_bytes"),
    case("chain_taped tape_bytes 2**64", lambda: remat.chain_taped([(1, 2, 8, 0, 2**64)], 4096),
         remat.CountOverflowError, "chain step 0: tape_bytes"),
    case("chain_taped dict tape_bytes str", lambda: remat.chain_taped([{"forward": 1, "adjoint": 2, "state_bytes": 8,
                                                                        "tape_bytes": "x"}], 4096),
         remat.ArgumentError, "chain step 0: tape_bytes"),
    case("chain_taped forward nan", lambda: remat.chain_taped([(math.nan, 2, 8, 0)], 4096), remat.ArgumentError,
         "forward"),
    case("chain dict missing", lambda: remat.chain([{"forward": 1}], 4096), remat.ArgumentError, "no adjoint"),
    case("chain_taped dict missing", lambda: remat.chain_taped([{"forward": 1}], 4096), remat.ArgumentError,
         "no adjoint"),
    case("chain_taped unknown field", lambda: remat.chain_taped({"steps": C, "bogus": 1}, 4096), remat.ArgumentError,
         "unknown field 'bogus'"),
    case("chain_taped no steps", lambda: remat.chain_taped({"final_state_bytes": 1}, 4096), remat.ArgumentError, "no steps"),
    case("chain a number", lambda: remat.chain(3, 4096), remat.ArgumentError, "chain: expected a sequence"),
    case("chain final_state_bytes -1", lambda: remat.chain(C, 8192, final_state_bytes=-1), remat.ArgumentError,
         "final_state_bytes"),
    case("chain budget 2**64", lambda: remat.chain(C, 2**64), remat.CountOverflowError, "budget"),
    case("chain horizon 1.5", lambda: remat.chain(C, 8192, horizon=1.5), remat.ArgumentError, "horizon"),
    case("chain greedy_fallback str", lambda: remat.chain(C, 8192, greedy_fallback="no"), remat.ArgumentError,
         "greedy_fallback"),
    # actions
    case("parse_action int", lambda: remat.parse_action(3), remat.ArgumentError, "parse_action: expected a str"),
    case("Advance start str", lambda: remat.Advance("1", 3), remat.ArgumentError, "Advance start: expected an int"),
    case("Advance stop 2**64", lambda: remat.Advance(1, 2**64), remat.CountOverflowError, "Advance stop"),
    case("Advance taped 1", lambda: remat.Advance(1, 2, 1), remat.ArgumentError, "Advance taped"),
    case("Store step 2**64", lambda: remat.Store(0, 0, 2**64), remat.CountOverflowError, "Store step"),
    case("Store level 2**40", lambda: remat.Store(2**40, 0, 0), remat.CountOverflowError, "Store level"),
    case("Restore slot float", lambda: remat.Restore(0, 1.0, 0), remat.ArgumentError, "Restore slot"),
    case("Free level bool", lambda: remat.Free(True, 0), remat.ArgumentError, "Free level"),
    case("Reverse step None", lambda: remat.Reverse(None), remat.ArgumentError, "Reverse step"),
    # tradeoff
    case("tradeoff steps str", lambda: remat.tradeoff("100"), remat.ArgumentError, "steps"),
    case("tradeoff steps 2**64", lambda: remat.tradeoff(2**64), remat.CountOverflowError, "steps"),
    case("tradeoff max_overhead nan", lambda: remat.tradeoff(100, max_overhead=math.nan), remat.ArgumentError,
         "max_overhead"),
    case("tradeoff max_overhead 0", lambda: remat.tradeoff(100, max_overhead=0), remat.ArgumentError,
         "max_overhead"),
    case("tradeoff state_bytes 0", lambda: remat.tradeoff(100, budget="1GiB", state_bytes=0), remat.ArgumentError,
         "state_bytes"),
    case("tradeoff budget alone", lambda: remat.tradeoff(100, budget="1GiB"), remat.ArgumentError, "state_bytes"),
    # a Tradeoff's single questions (IndexError and TypeError from inside the package before)
    case("Tradeoff.row unknown schedule", lambda: remat.tradeoff(100).row("binomial", 3), remat.ArgumentError,
         "schedule: expected one of revolve, online, uniform, sqrt-rule, store-all, got 'binomial'"),
    case("Tradeoff.row multilevel without levels", lambda: remat.tradeoff(100).row("multilevel", 3),
         remat.ArgumentError, "levels="),
    case("Tradeoff.row slots str", lambda: remat.tradeoff(100).row("revolve", "3"), remat.ArgumentError, "slots"),
    case("Tradeoff.least_slots unknown schedule", lambda: remat.tradeoff(100).least_slots("sqrt", 2.0),
         remat.ArgumentError, "schedule"),
    # refused as tradeoff(max_overhead=) refuses them: least_slots answered None (no schedule within)
    case("Tradeoff.least_slots max_overhead nan", lambda: remat.tradeoff(100).least_slots("revolve", math.nan),
         remat.ArgumentError, "max_overhead: expected a number > 0"),
    case("Tradeoff.least_slots max_overhead -1", lambda: remat.tradeoff(100).least_slots("online", -1),
         remat.ArgumentError, "max_overhead: expected a number > 0"),
    case("Tradeoff.least_slots max_overhead str", lambda: remat.tradeoff(100).least_slots("revolve", "2"),
         remat.ArgumentError, "max_overhead"),
    case("Tradeoff.within unknown schedule", lambda: remat.tradeoff(100).within(None, 3), remat.ArgumentError,
         "schedule"),
    case("Tradeoff.within slots str", lambda: remat.tradeoff(100).within("uniform", "3"), remat.ArgumentError,
         "slots"),
]


@pytest.mark.parametrize("call, error, match", PLANS)
def test_plans_refuse_bad_input_naming_it(call, error, match):
    with pytest.raises(error, match=match) as caught:
        call()
    assert isinstance(caught.value, remat.Error)
    assert NANOBIND not in str(caught.value)
    assert remat.revolve(10, 3).forward_steps == 15  # still usable


def test_a_chain_step_reads_alike_in_every_form():
    # the four-field tuple's shorter path against the general one (a list, a dict), at the 64-bit edge too
    for step in [(1, 2.5, 8, 0), (0.0, 0, 1, 2**64 - 1), (3, 1e-300, 2**64 - 1, 7)]:
        as_dict = dict(zip(("forward", "adjoint", "state_bytes", "adjoint_bytes"), step))
        want = remat._plans._chain_step(0, list(step))
        assert remat._plans._chain_step(0, step) == want == remat._plans._chain_step(0, as_dict)
        assert all(type(a) is type(b) for a, b in zip(remat._plans._chain_step(0, step), want))


def test_numpy_style_integers_and_good_values_still_pass():
    class Index:  # what numpy's integers are to Python: not an int, but an __index__
        def __init__(self, n):
            self.n = n

        def __index__(self):
            return self.n

    assert remat.Advance(Index(1), Index(3)) == remat.Advance(1, 3)
    # every count takes them as the action classes do (docs/python.md: "Integers of other types that have
    # __index__"): the plan functions, byte counts and batch sizes refused them ("expected an int, got Index")
    assert remat.revolve(Index(10), Index(3)) == remat.revolve(10, 3)
    assert remat.parse_bytes(Index(4096)) == 4096
    assert remat.plan_for_budget(Index(100), Index(8192), Index(64)) == remat.plan_for_budget(100, 8192, 64)
    assert [len(b) for b in remat.revolve(10, 3).batches(Index(16))] == [16, 16, 8]
    assert remat.tradeoff(Index(100)).steps == 100
    assert remat.Store(0, 1, 2**63 - 1).step == 2**63 - 1
    assert remat.parse_bytes(2**64 - 1) == 2**64 - 1
    assert remat.chain([(1, 2, "1KiB")] * 10, budget="5KiB").forward_steps == remat.chain(C, 5 * 1024).forward_steps
    assert remat.multilevel(1000, [("host", math.inf)]).levels[0].slots is None


def test_byte_sizes_are_read_exactly_from_their_decimal_digits():
    # Python's integers are the reference: the digits and the unit multiplied exactly. A float rounded these
    # (2^53 + 1 to 2^53; 2^64 - 1 written with an exponent up to 2^64, then refused).
    assert remat.parse_bytes("9007199254740993.0") == 2**53 + 1
    assert remat.parse_bytes("1.8446744073709551615e19") == 2**64 - 1
    assert remat.parse_bytes("0.75KiB") == 3 * 1024 // 4
    assert remat.parse_bytes("1.5e3 kB") == 15 * 10**5
    assert remat.parse_bytes("0e99999") == 0
    assert remat.plan_for_budget(100, "9007199254740993.0", 1).slots == 2**53 + 1



@pytest.fixture
def torch_():
    return pytest.importorskip("torch")


def loop_cases(torch):
    cell = torch.nn.Linear(4, 4)
    x0 = torch.randn(2, 4)

    def step(k, x):
        return torch.tanh(cell(x))

    def cl(**kw):
        return lambda: remat.torch.checkpoint_loop(kw.pop("step", step), kw.pop("x0", x0), **kw)

    until = lambda k, x: k >= 5  # noqa: E731
    return step, x0, cell, [
        ("steps str", cl(steps="10", slots=3), remat.ArgumentError, "steps: expected an int"),
        ("steps float", cl(steps=10.0, slots=3), remat.ArgumentError, "steps"),
        ("steps bool", cl(steps=True, slots=3), remat.ArgumentError, "steps"),
        ("steps 2**64", cl(steps=2**64, slots=3), remat.CountOverflowError, "steps"),
        ("slots str", cl(steps=10, slots="3"), remat.ArgumentError, "slots: expected an int"),
        ("slots 2**63", cl(steps=10, slots=2**63), remat.CountOverflowError, "slots"),
        ("online slots nan", cl(until=until, slots=math.nan), remat.ArgumentError, "slots"),
        ("online slots 2**64", cl(until=until, slots=2**64), remat.CountOverflowError, "slots"),
        ("budget 2**64", cl(steps=10, budget=2**64), remat.CountOverflowError, "budget"),
        ("online budget 1e30GiB", cl(until=until, budget="1e30GiB"), remat.CountOverflowError, "budget"),
        ("taped 1", cl(steps=10, slots=3, taped=1), remat.ArgumentError, "taped"),
        ("step not callable", cl(step=3, steps=10, slots=3), remat.ArgumentError, "step must be"),
        ("until not callable", cl(until=3, slots=3), remat.ArgumentError, "until must be"),
        ("params not tensors", cl(steps=10, slots=3, params=[3]), remat.ArgumentError, r"params\[0\]"),
        # a module iterates over nothing, a tensor over its rows (not the parameter: refused only in the backward)
        ("params a module", cl(steps=10, slots=3, params=cell), remat.ArgumentError,
         r"params must be an iterable of tensors \(module.parameters\(\) for a module\), got Linear"),
        ("params a tensor", cl(steps=10, slots=3, params=cell.weight), remat.ArgumentError,
         r"params must be an iterable of tensors \(\[t\] for one tensor\), got Parameter"),
        ("params an int", cl(steps=10, slots=3, params=3), remat.ArgumentError, "params must be an iterable"),
        ("directory int", cl(steps=10, slots=3, snapshots="disk", directory=3), remat.ArgumentError,
         "directory must be a path"),
        # checked where no snapshot is taken too: a loop of no steps, the plain loop under no_grad
        ("snapshots gpu", cl(steps=10, slots=3, snapshots="gpu"), remat.ArgumentError, "snapshots must be one of"),
        ("snapshots gpu, no steps", cl(steps=0, slots=3, snapshots="gpu"), remat.ArgumentError,
         "snapshots must be one of device, host, disk, got 'gpu'"),
        ("snapshots gpu, until at x0", cl(until=lambda k, x: True, slots=3, snapshots="gpu"), remat.ArgumentError,
         "snapshots must be one of"),
        ("snapshots gpu, no_grad", lambda: torch.no_grad()(cl(steps=10, slots=3, snapshots="gpu"))(),
         remat.ArgumentError, "snapshots must be one of"),
    ]


def test_checkpoint_loop_refuses_bad_input_naming_it(torch_):
    import remat.torch

    step, x0, cell, cases = loop_cases(torch_)
    for name, call, error, match in cases:
        with pytest.raises(error, match=match) as caught:
            call()
        assert isinstance(caught.value, remat.Error), name
        assert NANOBIND not in str(caught.value), name
    # a huge budget holds every snapshot the online schedule can use: no refusal
    assert remat.torch.checkpoint_loop(step, x0, until=lambda k, x: k >= 5, budget=2**64 - 1).shape == x0.shape


def test_integer_tensors_are_counts_and_bool_and_float_ones_are_not(torch_):
    """A 0-dim integer tensor has an __index__ (steps=lengths.max()), taken as docs/python.md says; a bool tensor
    has one too and a float tensor's raises: both refused naming the argument, as numpy's bool is."""
    import numpy
    import remat.torch

    step, x0, cell, _ = loop_cases(torch_)
    out = remat.torch.checkpoint_loop(step, x0, steps=torch_.tensor(10), slots=torch_.tensor(3))
    assert torch_.equal(out, remat.torch.checkpoint_loop(step, x0, steps=10, slots=3))
    assert remat.revolve(torch_.tensor(10), numpy.int64(3)) == remat.revolve(10, 3)
    for bad in (torch_.tensor(True), torch_.tensor(3.0), torch_.tensor([3, 4]), numpy.bool_(True), numpy.float64(3)):
        with pytest.raises(remat.ArgumentError, match="steps: expected an int"):
            remat.revolve(bad, 3)
        with pytest.raises(remat.ArgumentError, match="budget"):
            remat.parse_bytes(bad)
    assert remat.Advance(torch_.tensor(1), numpy.int64(3)) == remat.Advance(1, 3)
    for bad in (torch_.tensor(True), numpy.bool_(True)):  # an action's field took them as 1
        with pytest.raises(remat.ArgumentError, match="Advance start: expected an int"):
            remat.Advance(bad, 3)


def test_checkpoint_loop_reads_a_generator_of_params_once(torch_):
    import remat.torch

    step, x0, cell, _ = loop_cases(torch_)
    remat.torch.checkpoint_loop(step, x0, steps=10, slots=3, params=(p for p in cell.parameters())).sum().backward()
    got = [p.grad.clone() for p in cell.parameters()]
    cell.zero_grad()
    x = x0
    for k in range(10):
        x = step(k, x)
    x.sum().backward()
    assert all(torch_.equal(g, p.grad) for g, p in zip(got, cell.parameters()))


def test_huge_repeats_and_rounds_are_refused_not_run(torch_):
    import remat.torch

    model = torch_.nn.Sequential(torch_.nn.Linear(4, 4))
    x = torch_.randn(2, 4)
    for repeats in (2**63, 2**64, 10**5):
        with pytest.raises(remat.ArgumentError, match="repeats"):
            remat.torch.auto_checkpoint(model, x, repeats=repeats)
    with pytest.raises(remat.ArgumentError, match="rounds"):
        remat.torch.tradeoff(model, x, rounds=2**64)


def test_numpy_integers_are_taken_as_repeats_and_rounds(torch_):
    """Every count of remat takes numpy's integers (docs/python.md, "Errors"); auto_checkpoint's repeats= and
    tradeoff's rounds= refused them, saying "got 2"."""
    import numpy
    import remat.torch

    model = torch_.nn.Sequential(torch_.nn.Linear(4, 4), torch_.nn.Tanh())
    x = torch_.randn(2, 4)
    assert remat.torch.auto_checkpoint(model, x, repeats=numpy.int64(1)).method == "plain autograd"
    assert len(remat.torch.tradeoff(model, x, rounds=numpy.int32(1), repeats=numpy.uint8(0), segments=[1]).points) >= 2
    with pytest.raises(remat.ArgumentError, match="repeats must be an int in 0..10000 .*got float 2.0"):
        remat.torch.auto_checkpoint(model, x, repeats=2.0)
    with pytest.raises(remat.ArgumentError, match="rounds must be an int in 1..10000, got int64 0"):
        remat.torch.tradeoff(model, x, rounds=numpy.int64(0))


def test_numpy_integers_are_taken_as_segment_counts(torch_):
    """tradeoff's segments= refused numpy's integers ("a segment count must be an int in 1..2, got 1"), which
    every count of remat takes (docs/python.md, "Errors"); the points hold them as ints, as_dict() JSON."""
    import json

    import numpy
    import remat.torch

    model = torch_.nn.Sequential(torch_.nn.Linear(4, 4), torch_.nn.Tanh())
    x = torch_.randn(2, 4)
    t = remat.torch.tradeoff(model, x, rounds=1, repeats=0, segments=numpy.array([2, 1, 2]))
    assert [(type(p.segments), p.segments) for p in t.sequential] == [(int, 1), (int, 2)]
    json.dumps(t.as_dict())  # a numpy int64 in it is no JSON (TypeError)
    with pytest.raises(remat.ArgumentError, match="a segment count must be an int in 1..2, got int64 3"):
        remat.torch.tradeoff(model, x, rounds=1, repeats=0, segments=[numpy.int64(3)])


def test_double_backward_is_refused_not_silently_wrong(torch_):
    """create_graph=True through a re-run step or block gave first derivatives that autograd could not
    differentiate again (the documented 'not supported' went unsaid). Now refused, and the module still works."""
    import remat.torch

    step, x0, cell, _ = loop_cases(torch_)
    x = x0.clone().requires_grad_()
    with pytest.raises(remat.BackwardError, match="double backward"):
        torch_.autograd.grad(remat.torch.checkpoint_loop(step, x, steps=6, slots=2).sum(), x, create_graph=True)
    remat.torch.checkpoint_loop(step, x, steps=6, slots=2).sum().backward()  # still usable

    model = torch_.nn.Sequential(*[torch_.nn.Linear(16, 16) for _ in range(6)])
    sample = torch_.randn(4, 16, requires_grad=True)
    least = remat.torch.auto_checkpoint(model, sample, budget="1GiB", repeats=0).least_budget_bytes
    fast = remat.torch.auto_checkpoint(model, sample, budget=least, repeats=0)
    assert fast.method != "plain autograd"
    with pytest.raises(remat.BackwardError, match="double backward"):
        torch_.autograd.grad(fast(sample).sum(), sample, create_graph=True)
    fast(sample).sum().backward()


def test_a_second_backward_through_the_same_run_is_a_backward_error(torch_):
    """Refused as plain autograd refuses it (a RuntimeError), and a remat.Error: remat.BackwardError."""
    import remat.torch

    step, x0, cell, _ = loop_cases(torch_)
    y = remat.torch.checkpoint_loop(step, x0.clone().requires_grad_(), steps=6, slots=2).sum()
    y.backward(retain_graph=True)
    with pytest.raises(remat.BackwardError, match="backward through the same loop twice"):
        y.backward()
    model = torch_.nn.Sequential(*[torch_.nn.Linear(16, 16) for _ in range(6)])
    sample = torch_.randn(4, 16, requires_grad=True)
    least = remat.torch.auto_checkpoint(model, sample, budget="1GiB", repeats=0).least_budget_bytes
    y = remat.torch.auto_checkpoint(model, sample, budget=least, repeats=0)(sample).sum()
    y.backward(retain_graph=True)
    with pytest.raises(remat.BackwardError, match="backward through the same forward twice"):
        y.backward()
    assert issubclass(remat.BackwardError, RuntimeError) and issubclass(remat.BackwardError, remat.Error)


def test_tradeoff_refuses_what_is_not_a_function_or_a_list_before_profiling(torch_):
    """budgets="1MiB" was read a character at a time ('got "M"'), budgets=4096 and segments=2 were TypeErrors,
    and a bad budget was found only after profiling and measuring every other point (minutes)."""
    import remat.torch

    model = torch_.nn.Sequential(torch_.nn.Linear(4, 4))
    forwards = []
    model[0].register_forward_pre_hook(lambda module, inputs: forwards.append(1))
    x = torch_.randn(2, 4)
    for kwargs, match in ((dict(loss=3), "loss must be a function"), (dict(progress="stderr"), "progress must be"),
                          (dict(segments="12"), "segments must be a list"),
                          (dict(segments=2), "segments must be a list of ints, got int"),
                          (dict(budgets="1MiB"), "budgets must be a list of byte counts .*got str"),
                          (dict(budgets=4096), "budgets must be a list of byte counts .*got int"),
                          (dict(budgets=["1MiB", "lots"]), 'budget: expected a byte count .*got "lots"')):
        with pytest.raises(remat.ArgumentError, match=match):
            remat.torch.tradeoff(model, x, rounds=1, repeats=0, **kwargs)
    assert not forwards
    assert [p.budget_bytes for p in remat.torch.tradeoff(model, x, budgets=("1MiB",), rounds=1, repeats=0,
                                                         segments=[1]).auto] == [1 << 20]


def test_flags_given_as_strings_are_refused_not_taken_as_true(torch_):
    """taped="no" and preserve_rng_state="False" were read as True (bool() of a non-empty str)."""
    import remat.torch

    model = torch_.nn.Sequential(torch_.nn.Linear(4, 4))
    x = torch_.randn(2, 4)
    step, x0, _, _ = loop_cases(torch_)
    calls = [lambda: remat.torch.auto_checkpoint(model, x, taped="no", repeats=0),
             lambda: remat.torch.auto_checkpoint(model, x, preserve_rng_state="False", repeats=0),
             lambda: remat.torch.tradeoff(model, x, taped="no", rounds=1, repeats=0),
             lambda: remat.torch.checkpoint_loop(step, x0, steps=4, slots=2, preserve_rng_state="False")]
    for call, match in zip(calls, ["taped", "preserve_rng_state", "taped", "preserve_rng_state"]):
        with pytest.raises(remat.ArgumentError, match=match):
            call()


def test_a_torch_tradeoffs_methods_refuse_bad_input_naming_it(torch_, tmp_path):
    """auto_within(None), svg(123) and save_svg(None) raised TypeError and AttributeError from inside the package,
    svg(width=0) drew a picture of negative size; auto_within takes a byte count as every remat function does
    ("2MiB" was a TypeError)."""
    import remat.torch

    model = torch_.nn.Sequential(torch_.nn.Linear(4, 4), torch_.nn.Tanh())
    t = remat.torch.tradeoff(model, torch_.randn(2, 4), rounds=1, repeats=0, segments=[1])
    assert t.auto_within("1MiB") == t.auto_within(1 << 20) is not None
    for call, match in ((lambda: t.auto_within(None), "auto_within: peak_bytes"),
                        (lambda: t.auto_within("lots"), "auto_within: peak_bytes"),
                        (lambda: t.svg(123), "svg: title must be a str, got int"),
                        (lambda: t.svg("t", 0, 440), "svg: width must be an int of 320 to"),
                        (lambda: t.svg("t", 720, "440"), "svg: height must be an int of 160 to"),
                        (lambda: t.save_svg(None), "save_svg: path must be"),
                        (lambda: t.save_svg(tmp_path / "t.svg", title=b"t"), "svg: title")):
        with pytest.raises(remat.ArgumentError, match=match):
            call()
    t.save_svg(tmp_path / "t.svg", "t")  # a pathlib.Path, as open() takes
    assert (tmp_path / "t.svg").read_text().startswith("<svg") and t.svg("t", 320, 160).startswith("<svg")
