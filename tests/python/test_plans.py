"""Plans from Python against the `remat` tool: the same actions, line for line, and the same report fields,
over a grid of cases; the action values' semantics; errors as remat.Error subclasses with the library's
messages; iteration speed."""

import dataclasses
import json
import math
import sys
import threading
import time

import pytest

import remat

REVOLVE_GRID = [(t, s) for t in (1, 2, 3, 5, 10, 17, 50, 100) for s in (1, 2, 3, 5, 10)]


def same_report(plan, tool_json):
    """Every field the tool reports, equal; no field the tool does not report (but a chain plan's per-level
    counts, which the tool's chain report leaves out)."""
    expected = json.loads(tool_json)
    got = plan.as_dict()
    if plan.schedule == "chain":
        assert got.pop("levels") == [{"level": 0, "stores": plan.stores, "restores": plan.restores,
                                      "peak_slots": plan.peak_slots}]
    assert got == expected


@pytest.mark.parametrize("steps,units,tape_units,rerun_units", [(1, 1, 1, 0), (10, 3, 2, 0), (60, 44, 7, 0),
                                                              (200, 40, 3, 0), (50, 400, 7, 0), (1, 2, 2, 2),
                                                              (60, 44, 7, 7), (200, 40, 3, 1), (50, 400, 7, 7)])
def test_taped_revolve_equals_the_tool(remat_tool, steps, units, tape_units, rerun_units):
    plan = remat.taped_revolve(steps, units, tape_units, step_cost=0.5, reverse_cost=2.0, rerun_units=rerun_units)
    args = ("plan", "-T", steps, "-s", units, "--schedule", "taped", "--tape-units", tape_units, "--step-cost", 0.5,
            "--reverse-cost", 2.0, "--rerun-units", rerun_units)
    assert plan.actions_text() == remat_tool(*args, "--format", "actions")
    same_report(plan, remat_tool(*args, "--format", "json"))


@pytest.mark.parametrize("steps,slots", REVOLVE_GRID)
def test_revolve_equals_the_tool(remat_tool, steps, slots):
    plan = remat.revolve(steps, slots)
    assert plan.actions_text() == remat_tool("plan", "-T", steps, "-s", slots, "--format", "actions")
    same_report(plan, remat_tool("plan", "-T", steps, "-s", slots, "--format", "json"))


@pytest.mark.parametrize("steps,slots", [(t, s) for t in (1, 2, 7, 20, 60) for s in (1, 2, 4)])
def test_online_revolve_equals_the_tool(remat_tool, steps, slots):
    plan = remat.revolve(steps, slots, online=True)
    args = ("plan", "-T", steps, "-s", slots, "--online")
    assert plan.actions_text() == remat_tool(*args, "--format", "actions")
    same_report(plan, remat_tool(*args, "--format", "json"))


@pytest.mark.parametrize("steps,every,slots", [(10, 3, None), (100, 7, None), (100, None, 20), (57, None, 15),
                                               (1, 1, None), (30, 5, 12)])
def test_uniform_equals_the_tool(remat_tool, steps, every, slots):
    plan = remat.uniform(steps, every=every, slots=slots)
    args = ["plan", "-T", steps, "--schedule", "uniform"]
    if every is not None:
        args += ["--every", every]
    if slots is not None:
        args += ["--slots", slots]
    assert plan.actions_text() == remat_tool(*args, "--format", "actions")
    same_report(plan, remat_tool(*args, "--format", "json"))


@pytest.mark.parametrize("steps", [1, 2, 9, 40])
def test_store_all_equals_the_tool(remat_tool, steps):
    plan = remat.store_all(steps)
    args = ("plan", "-T", steps, "--schedule", "store-all")
    assert plan.actions_text() == remat_tool(*args, "--format", "actions")
    same_report(plan, remat_tool(*args, "--format", "json"))


@pytest.mark.parametrize("steps", [1, 2, 3])
def test_store_all_holds_t_minus_1_snapshots_and_reports_the_slots_given(steps):
    """Its docstring said T-1 slots, and store_all(1).slots is 1: the plan holds T-1 snapshots at the peak
    (peak_slots, counted here from its actions), while `slots` is the slots given, at least 1 as every plan's."""
    plan = remat.store_all(steps)
    held = peak = 0
    for action in plan:
        held += isinstance(action, remat.Store) - isinstance(action, remat.Free)
        peak = max(peak, held)
    assert peak == plan.peak_slots == plan.forward_steps == steps - 1 and held == 0
    assert plan.slots == max(steps - 1, 1)
    with pytest.raises(remat.ArgumentError, match="at least 1"):
        remat.store_all(steps, slots=0)
    if steps > 2:
        with pytest.raises(remat.CapacityError, match="T-1"):
            remat.store_all(steps, slots=steps - 2)


@pytest.mark.parametrize("steps,budget,state", [(100, 1000, 64), (1000, "1MiB", "64KiB"), (7, 64, 64),
                                                (100000, "2GiB", "64MiB")])
def test_plan_for_budget_equals_the_tool(remat_tool, steps, budget, state):
    plan = remat.plan_for_budget(steps, budget, state)
    args = ("plan", "-T", steps, "--budget", budget, "--state-bytes", state)
    if steps <= 1000:
        assert plan.actions_text() == remat_tool(*args, "--format", "actions")
    same_report(plan, remat_tool(*args, "--format", "json"))


@pytest.mark.parametrize("steps,levels,method", [
    (50, [("host", 3), ("disk", None, 5, 5)], "auto"),
    (200, [("device", 2, 0, 0), ("host", 4, 1, 1), ("disk", float("inf"), 10, 8)], "auto"),
    (30, [("host", 2, 0, 0), ("disk", 4, 2, 3)], "exact"),
    (5000, [("host", 4), ("disk", None, 5, 5)], "near-optimal"),
])
def test_multilevel_equals_the_tool(remat_tool, steps, levels, method):
    plan = remat.multilevel(steps, levels, method=method, reverse_cost=1.5)
    texts = []
    for name, slots, *costs in levels:
        w, r = (costs + [0, 0])[:2]
        texts += ["--level", f"{name}:{'inf' if slots in (None, float('inf')) else slots}:{w}:{r}"]
    args = ("plan", "-T", steps, *texts, "--method", method, "--reverse-cost", 1.5)
    assert plan.actions_text() == remat_tool(*args, "--format", "actions")
    same_report(plan, remat_tool(*args, "--format", "json"))


def chain_costs(n, seed):
    # Deterministic, uneven steps: widths, costs and adjoint extras differ from step to step.
    steps = []
    for k in range(n):
        w = (k * 7 + seed) % 5 + 1
        steps.append({"forward": float(w), "adjoint": 2.0 * w + (k % 3), "state_bytes": 1024 * w,
                      "adjoint_bytes": 512 * ((k + seed) % 3)})
    return {"steps": steps, "final_state_bytes": 2048}


@pytest.mark.parametrize("n,seed,budget", [(8, 1, 12 * 1024), (20, 2, 20 * 1024), (40, 3, 30 * 1024),
                                           (12, 4, 200 * 1024)])
def test_chain_equals_the_tool(remat_tool, tmp_path, n, seed, budget):
    costs = chain_costs(n, seed)
    path = tmp_path / "chain.json"
    path.write_text(json.dumps(costs))
    plan = remat.chain(costs, budget)
    args = ("plan", "--chain", path, "--budget", budget)
    assert plan.actions_text() == remat_tool(*args, "--format", "actions")
    same_report(plan, remat_tool(*args, "--format", "json"))
    # the other spellings of the same chain
    as_steps = [remat.ChainStep(**s) for s in costs["steps"]]
    assert remat.chain(as_steps, budget, final_state_bytes=2048).as_dict() == plan.as_dict()


@pytest.mark.parametrize("n,seed", [(8, 1), (20, 2)])
def test_chain_taped_with_tape_sizes_equals_the_tool(remat_tool, tmp_path, n, seed):
    """A step's tape of its own size (tape_bytes: remat.ChainStep's fifth field, a dict's key, a 5-tuple's last),
    read by the tool from its --chain file alike: the same plan, and not the plan without them; the same report,
    field by field (remat.TapedChainPlan lacked schedule, store_all_cost, store_all_bytes, overhead, exact, method,
    reverse_steps, stores, restores, peak_slots and repetition)."""
    costs = chain_costs(n, seed)
    for k, s in enumerate(costs["steps"]):
        if k % 3 != 2:  # below m_k + a_k on most (a tape sharing storage with its neighbour's), above on some
            s["tape_bytes"] = s["state_bytes"] // (1 + k % 2) + 256 * (k % 4)
    path = tmp_path / "chain.json"
    path.write_text(json.dumps(costs))
    without = [{k: v for k, v in s.items() if k != "tape_bytes"} for s in costs["steps"]]
    top = remat.chain_taped(costs, 1 << 40).all_taped_bytes
    assert top < remat.chain_taped(without, 1 << 40, final_state_bytes=2048).all_taped_bytes
    for budget in (top // 2, top):
        plan = remat.chain_taped(costs, budget)
        tool = remat_tool("plan", "--chain", path, "--budget", budget, "--taped-advances", "--format", "actions")
        assert "\n".join(map(str, plan.actions)) == tool.strip()
        report = json.loads(remat_tool("plan", "--chain", path, "--budget", budget, "--taped-advances", "--format",
                                       "json"))
        assert plan.as_dict() == report
        assert {key: getattr(plan, key) for key in report} == report
        as_steps = [remat.ChainStep(**s) for s in costs["steps"]]
        as_tuples = [(s["forward"], s["adjoint"], s["state_bytes"], s["adjoint_bytes"], s.get("tape_bytes", 0))
                     for s in costs["steps"]]
        for spelling in (as_steps, as_tuples):
            assert remat.chain_taped(spelling, budget, final_state_bytes=2048).actions == plan.actions


@pytest.mark.parametrize("steps,reverse_cost", [(1, 0), (30, 0), (1000, 2.0), (12345, 0.5)])
def test_tradeoff_equals_the_tool(remat_tool, steps, reverse_cost):
    t = remat.tradeoff(steps, reverse_cost=reverse_cost)
    expected = json.loads(remat_tool("tradeoff", "--steps", steps, "--reverse-cost", reverse_cost,
                                     "--format", "json"))
    assert t.store_all_slots == expected["store_all_slots"]
    assert t.store_all_forward_steps == expected["store_all_forward_steps"]
    assert t.one_extra_sweep_slots == expected["one_extra_sweep_slots"]
    assert (t.sqrt_rule.every, t.sqrt_rule.slots, t.sqrt_rule.overhead) == (
        expected["sqrt_rule"]["every"], expected["sqrt_rule"]["slots"], expected["sqrt_rule"]["overhead"])
    rows = [{k: v for k, v in vars(r).items() if v is not None} for r in t.rows]
    assert rows == expected["rows"]
    assert not t.omitted_rows and "omitted_rows" not in expected


def answers(found):
    return {name: None if r is None else {k: v for k, v in vars(r).items() if v is not None}
            for name, r in found.items()}


@pytest.mark.parametrize("steps,max_overhead,budget", [(1000, 2.5, "64KiB"), (100, 1.2, "1KiB"), (5000, 4.0, "1MiB")])
def test_tradeoff_answers_equal_the_tool(remat_tool, steps, max_overhead, budget):
    t = remat.tradeoff(steps, state_bytes=64, max_overhead=max_overhead, budget=budget)
    expected = json.loads(remat_tool("tradeoff", "--steps", steps, "--state-bytes", 64, "--max-overhead",
                                     max_overhead, "--budget", budget, "--format", "json"))
    assert answers(t.least) == expected["least_slots"]
    assert t.budget_slots == expected["within_budget"]["slots"]
    assert answers(t.within_budget) == expected["within_budget"]["schedules"]


def test_tradeoff_with_levels_and_bytes_equals_the_tool(remat_tool):
    t = remat.tradeoff(500, state_bytes="1MiB", levels=[("host", 1), ("disk", None, 4, 4)])
    expected = json.loads(remat_tool("tradeoff", "--steps", 500, "--state-bytes", "1MiB", "--level", "host:1",
                                     "--level", "disk:inf:4:4", "--format", "json"))
    rows = [{k: v for k, v in vars(r).items() if v is not None} for r in t.rows]
    assert rows == expected["rows"]


def test_tradeoff_rows_whose_bytes_pass_64_bits_say_so_as_the_tool_does(remat_tool):
    # The tool refused the whole report (exit 2: "snapshot bytes past 64 bits") where remat.tradeoff gave rows of
    # 2^66 bytes. Both now keep every row's counts and mark those whose bytes do not fit 64 bits.
    steps = 2**63 - 1
    t = remat.tradeoff(steps, state_bytes=8, max_overhead=1.01)
    fit = beyond = 0
    for r in list(t.rows) + [r for r in t.least.values() if r is not None]:
        if r.peak_slots * 8 < 2**64:
            assert (r.snapshot_bytes, r.snapshot_bytes_beyond_64_bits) == (r.peak_slots * 8, None)
            fit += 1
        else:
            assert (r.snapshot_bytes, r.snapshot_bytes_beyond_64_bits) == (None, True)
            beyond += 1
    assert fit and beyond
    expected = json.loads(remat_tool("tradeoff", "--steps", steps, "--state-bytes", 8, "--max-overhead", 1.01,
                                     "--format", "json"))
    assert [{k: v for k, v in vars(r).items() if v is not None} for r in t.rows] == expected["rows"]
    assert answers(t.least) == expected["least_slots"]


def test_tradeoff_least_charges_each_online_count_once(remat_tool):
    # least_slots priced the online count it answered with twice, charging the report's online work twice: at
    # T = 3e6 and an overhead of 2.5, what the rows left covered it once, not twice, and the answer was refused.
    steps, limit = 3 * 10**6, 2.5
    t = remat.tradeoff(steps)
    left = t.online_work_left
    offline = t.least_slots("revolve", limit)
    online = t.least_slots("online", limit)
    assert online is not None and online.overhead <= limit
    tried = range(offline.slots, online.slots + 1)
    assert left - t.online_work_left == sum(remat._remat.online_cost_work(steps, s) for s in tried)
    assert 2 * remat._remat.online_cost_work(steps, online.slots) > left
    whole = remat.tradeoff(steps, max_overhead=limit)
    assert whole.least["online"] == online and not whole.least_omitted
    expected = json.loads(remat_tool("tradeoff", "--steps", steps, "--max-overhead", limit, "--format", "json"))
    assert answers(whole.least) == expected["least_slots"] and "least_slots_not_answered" not in expected


@pytest.mark.parametrize("steps", [2**62, 2**63 - 1])
def test_tradeoff_at_the_64_bit_edge(steps):
    # Uniform's best spacing scanned sqrt(T) = 3e9 spacings per slot count before (a minute each, hours for
    # the whole report, past the suite's TIMEOUT); now milliseconds. Its rows fit their slots, start at the
    # fewest slots any spacing needs, and their forward steps do not grow with more slots.
    t = remat.tradeoff(steps, state_bytes=8, max_overhead=3.0, budget=8 * 2**40)
    fewest = remat.uniform(steps, every=round(steps ** 0.5)).peak_slots  # an upper bound on the fewest
    rows = [r for r in t.rows if r.schedule == "uniform"]
    assert rows and all(r.peak_slots <= r.slots for r in rows)
    assert rows[0].slots <= fewest
    with pytest.raises(remat.CapacityError):
        remat.uniform(steps, slots=rows[0].slots - 1)
    assert all(a.forward_steps >= b.forward_steps for a, b in zip(rows, rows[1:]))
    assert all(r.forward_steps < 2 * steps for r in rows)  # one extra sweep at most: no overflow
    assert t.within_budget["uniform"].slots == 2**40 and t.least["uniform"].overhead <= 3.0


def test_actions_are_immutable_values():
    a = remat.Advance(3, 4, taped=True)
    assert a == remat.parse_action("advance 3 4 tape") and str(a) == "advance 3 4 tape"
    assert a != remat.Advance(3, 4) and a != remat.Reverse(3) and a != "advance 3 4 tape"
    assert hash(a) == hash(remat.Advance(3, 4, True))
    assert len({remat.Store(0, 1, 2), remat.Store(0, 1, 2), remat.Restore(0, 1, 2)}) == 2
    kinds = [x.kind for x in (remat.Advance(0, 1), remat.Store(0, 0, 0), remat.Restore(0, 0, 0),
                              remat.Free(0, 0), remat.Reverse(0))]
    assert kinds == ["advance", "store", "restore", "free", "reverse"]
    for text in ("store 1 2 3", "restore 0 5 17", "free 2 7", "reverse 9", "advance 5 9"):
        assert str(remat.parse_action(text)) == text
    with pytest.raises(AttributeError):
        a.start = 5
    with pytest.raises(AttributeError):
        a.extra = 1
    match remat.Restore(0, 4, 17):
        case remat.Restore(level, slot, step):
            assert (level, slot, step) == (0, 4, 17)
    assert repr(remat.Free(1, 2)) == "Free(level=1, slot=2)"


def test_bad_input_raises_remat_errors_with_the_librarys_messages():
    with pytest.raises(remat.ArgumentError, match="slots"):
        remat.revolve(10, 0)
    with pytest.raises(remat.ArgumentError, match="steps"):
        remat.revolve(0, 3)
    with pytest.raises(remat.CapacityError):
        remat.plan_for_budget(100, 10, 64)
    with pytest.raises(remat.CapacityError):
        remat.uniform(1000, slots=3)
    with pytest.raises(remat.ArgumentError):
        remat.parse_action("advance 4 2")
    with pytest.raises(remat.ArgumentError):
        remat.Advance(4, 2)
    with pytest.raises(remat.Error):
        remat.chain([(1, 1, 1024)] * 4, budget=100)
    with pytest.raises(remat.ArgumentError):
        remat.multilevel(10, [("host", 0)])
    with pytest.raises(ValueError):  # remat.ArgumentError is a ValueError too
        remat.revolve(10, 0)
    assert issubclass(remat.CountOverflowError, remat.Error)


def test_a_million_actions_take_under_a_second():
    plan = remat.revolve(300000, 50)  # about 1.4 million actions
    start = time.perf_counter()
    count = 0
    for _ in plan:
        count += 1
        if count == 1000000:
            break
    assert count == 1000000
    assert time.perf_counter() - start < 1.0


def test_actions_come_in_batches_too():
    plan = remat.revolve(1000, 10)
    batches = list(plan.batches(100))
    assert all(len(b) <= 100 for b in batches)
    assert [str(a) for b in batches for a in b] == [str(a) for a in plan]


def test_actions_and_plans_copy_and_actions_pickle_as_values():
    """Immutable values copy and pickle (a list of actions sent to a worker process, copy.deepcopy of a
    structure holding a plan); nanobind's classes refused all three ("cannot pickle 'Advance' object")."""
    import copy
    import pickle

    plan = remat.revolve(20, 4)
    actions = list(plan) + [remat.Advance(3, 4, True), remat.parse_action("advance 3 4 tape")]
    for a in actions:
        for again in (pickle.loads(pickle.dumps(a)), copy.copy(a), copy.deepcopy(a)):
            assert type(again) is type(a) and again == a and hash(again) == hash(a) and str(again) == str(a)
    assert pickle.loads(pickle.dumps(actions)) == actions
    twin = copy.deepcopy(plan)
    assert twin == plan or twin.as_dict() == plan.as_dict()
    assert list(twin) == list(plan)  # each pass over the shared schedule makes its own cursor


def test_a_long_plan_lets_other_threads_run():
    # The planners run without the GIL. With a switch interval far past the test, the other thread, which hands the
    # GIL back at every count, counts only while this one has let it go: never, were the GIL held through the plan.
    steps = [(1.0 + k % 7 / 8, 2.0 + k % 5 / 4, 4096 * (1 + k % 3), 8192 * (1 + k % 4)) for k in range(200)]
    top = remat.chain_taped(steps, 10**18).all_taped_bytes
    count, stop = [0], threading.Event()

    def counter():
        while not stop.is_set():
            count[0] += 1
            time.sleep(0)

    interval = sys.getswitchinterval()
    sys.setswitchinterval(100.0)
    thread = threading.Thread(target=counter)
    try:
        thread.start()
        time.sleep(0.02)
        before = count[0]
        start = time.perf_counter()
        plan = remat.chain_taped(steps, top // 2)
        elapsed, during = time.perf_counter() - start, count[0] - before
        before = count[0]
        for _ in range(20000):  # the same wait in Python, holding the GIL: no count
            pass
        held = count[0] - before
    finally:
        stop.set()
        thread.join()
        sys.setswitchinterval(interval)
    assert plan.predicted_cost > 0 and elapsed > 0.01, elapsed
    assert during > 0 and held == 0, (during, held)


@pytest.mark.parametrize("steps", [10**8, 10**14, 2**63 - 1])
def test_tradeoff_spends_one_budget_on_its_online_counts(remat_tool, steps):
    # Each online count past C(s+2,2) replays the forward sweep (about T/r decisions): at T = 10^14 the report
    # took 17 s before, each row within online revolve's own limit. Now the rows share one limit, cheapest
    # first: what the priced rows cost stays within it, each row left out would not have fit in what was left
    # (so costs at least as much as any priced one past level one), says so, and the tool agrees row for row.
    t = remat.tradeoff(steps)
    grid = t.grid()
    work = {s: remat._remat.online_cost_work(steps, s) for s in grid}
    priced = [r.slots for r in t.rows if r.schedule == "online"]
    left_out = [o for o in t.omitted_rows if o.schedule == "online"]
    assert sorted(priced + [o.slots for o in left_out]) == grid
    spent = remat._remat.online_cost_work_limit - t.online_work_left  # a count beyond 64 bits spends too
    assert sum(work[s] for s in priced) <= spent <= remat._remat.online_cost_work_limit
    over_budget = [o for o in left_out if "this report spends on online counts" in o.reason]
    assert over_budget and all(work[o.slots] > t.online_work_left for o in over_budget)
    assert max(work[s] for s in priced) <= min(work[o.slots] for o in over_budget)
    assert any(work[s] == 0 and s < steps - 1 for s in priced)  # the wave's closed form: no replay
    expected = json.loads(remat_tool("tradeoff", "--steps", steps, "--format", "json"))
    assert [{k: v for k, v in vars(r).items() if v is not None} for r in t.rows] == expected["rows"]
    assert [(o.schedule, o.slots, o.reason) for o in t.omitted_rows] == [
        (o["schedule"], o["slots"], o["reason"]) for o in expected["omitted_rows"]]


def test_plans_are_values_equal_where_made_from_the_same_parameters():
    """Plans compared by identity (remat.revolve(10, 3) == remat.revolve(10, 3) was False). Now equal, with equal
    hashes, where the same function made them from the same parameters, however spelled; unequal where any
    parameter differs, a chain's steps included (its report leaves them out)."""
    a, b = remat.revolve(10, 3), remat.revolve(10, 3)
    assert a is not b and a == b and hash(a) == hash(b) and list(a) == list(b)
    for other in (remat.revolve(10, 4), remat.revolve(11, 3), remat.revolve(10, 3, online=True),
                  remat.revolve(10, 3, step_cost=2.0), remat.uniform(10, slots=4), remat.taped_revolve(10, 3, 1)):
        assert a != other
    assert len({a, b, remat.uniform(10, slots=4), remat.uniform(10, slots=4)}) == 2
    assert remat.plan_for_budget(100, "8KiB", 64) == remat.plan_for_budget(100, 8192, "64")
    assert remat.multilevel(100, [("host", 3), ("disk", None, 5, 5)]) == remat.multilevel(
        100, [remat.Level("host", 3), {"name": "disk", "slots": math.inf, "write_cost": 5, "read_cost": 5}])
    assert remat.taped_revolve(20, 6, 2) != remat.taped_revolve(20, 6, 2, rerun_units=2)
    # a chain: its steps however spelled; another step's cost makes another plan
    steps = [(1.0, 2.0, 1024), (3.0, 1.0, 2048), (1.0, 2.0, 1024), (2.0, 5.0, 512)] * 3
    same = [remat.ChainStep(f, b, m) for f, b, m in steps]
    assert remat.chain(steps, 5000) == remat.chain(same, "5000") and hash(remat.chain(steps, 5000)) == hash(
        remat.chain(same, 5000))
    changed = steps[:-1] + [(2.0, 5.5, 512)]
    assert remat.chain(steps, 5000) != remat.chain(changed, 5000)
    # a report field NaN (0/0) makes no plan unequal to its twin
    assert math.isnan(remat.multilevel(1, [("host", 1)]).gap_to_lower_bound)
    assert remat.multilevel(1, [("host", 1)]) == remat.multilevel(1, [("host", 1)])
    assert math.isnan(remat.chain([(0.0, 0.0, 1)], 10).overhead)
    assert remat.chain([(0.0, 0.0, 1)], 10) == remat.chain([(0.0, 0.0, 1)], 10)
    # compared without making the actions: 10^12 steps
    started = time.perf_counter()
    assert remat.revolve(10**12, 60) == remat.revolve(10**12, 60) != remat.revolve(10**12, 61)
    assert time.perf_counter() - started < 5


def test_a_plan_whose_fields_were_replaced_is_another_value():
    """dataclasses.replace keeps the planner's parameters, by which alone plans were compared: a plan with
    another step count or cost compared equal to the plan it was made from. Every report field is part of the
    value; equal plans still hash alike, and a replaced copy with nothing changed stays equal."""
    plan = remat.revolve(10, 3)
    for changes in ({"forward_steps": plan.forward_steps + 1}, {"predicted_cost": 1.5}, {"slots": 4},
                    {"levels": ()}, {"gap_to_lower_bound": 0.0}):
        other = dataclasses.replace(plan, **changes)
        assert other != plan and plan != other
    same = dataclasses.replace(plan)
    assert same == plan and hash(same) == hash(plan) and len({plan, same}) == 1
    nan = remat.multilevel(1, [("host", 1)])  # gap_to_lower_bound 0/0
    assert dataclasses.replace(nan) == nan != dataclasses.replace(nan, gap_to_lower_bound=0.0)


def test_taped_chain_plans_are_equal_by_value_and_unhashable():
    costs = [(1.0, 2.0, 1024, 512)] * 8
    plan = remat.chain_taped(costs, 12 * 1024)
    assert plan == remat.chain_taped(costs, 12 * 1024)
    assert plan != remat.chain_taped(costs, 20 * 1024)
    assert plan != remat.chain_taped([(1.0, 2.5, 1024, 512)] * 8, 12 * 1024)
    with pytest.raises(TypeError, match="unhashable"):
        hash(plan)
    # a report field NaN (overhead 0/0 of a chain of zero costs) makes no plan unequal to its twin, as Plan's
    zero = [(0.0, 0.0, 1024, 0, 1024)] * 4
    assert math.isnan(remat.chain_taped(zero, 64 * 1024).overhead)
    assert remat.chain_taped(zero, 64 * 1024) == remat.chain_taped(zero, 64 * 1024)
    assert remat.chain_taped(zero, 64 * 1024) != remat.chain_taped([(0.0, 0.0, 1024, 0, 1024)] * 5, 64 * 1024)


def test_taped_revolve_takes_the_work_limit_its_refusal_tells_the_user_to_raise():
    """Past the planner's default work (under 1 s) remat.taped_revolve is refused with the library's "pass
    taped_revolve a larger work_limit", which it did not take (a TypeError). It takes one now: the plan is the
    same (its equality leaves the limit out, as the report does), and a limit below the work refuses it."""
    with pytest.raises(remat.ArgumentError, match="larger work_limit"):
        remat.taped_revolve(8000, 100, 3)
    limit = remat._remat.taped_revolve_work_limit
    plan = remat.taped_revolve(8000, 100, 3, work_limit=4 * limit)
    assert plan.evaluations >= 8000 and plan.peak_units <= 100
    small = remat.taped_revolve(40, 10, 3)
    assert small == remat.taped_revolve(40, 10, 3, work_limit=limit) and hash(small) == hash(
        remat.taped_revolve(40, 10, 3, work_limit=10 * limit))
    with pytest.raises(remat.ArgumentError, match="needs more planning work than work_limit = 1 "):
        remat.taped_revolve(40, 10, 3, work_limit=1)
    for bad, error in (("1e9", remat.ArgumentError), (-1, remat.ArgumentError), (2**64, remat.CountOverflowError)):
        with pytest.raises(error, match="work_limit"):
            remat.taped_revolve(40, 10, 3, work_limit=bad)


def test_tradeoff_least_slots_is_exact_near_1e18():
    """least_slots compares costs exactly, as the tool does: at T = 1e18 the fewest revolve slots within 1.5x
    store-all's cost are 5e17, and within 1.2x at reverse cost 2, 4e17, checked here against the plans' own
    counts in integers; compared as doubles (costs rounded to multiples of 128 there) both answers were 130
    slots short (the float comparison of the rows' overheads answered 499999999999999870)."""
    for limit, rc, want in ((1.5, 0.0, 5 * 10**17), (1.2, 2.0, 4 * 10**17)):
        t = remat.tradeoff(10**18, max_overhead=limit, reverse_cost=rc)
        assert t.least["revolve"].slots == want
        num, den = (3, 2) if limit == 1.5 else (6, 5)
        base = remat.store_all(10**18, slots=10**18 - 1, reverse_cost=rc)

        def cost(p):  # in units of the step cost, exactly: forward steps + rc x reverse steps (rc an integer)
            return p.forward_steps + int(rc) * p.reverse_steps

        assert cost(remat.revolve(10**18, want, reverse_cost=rc)) * den <= cost(base) * num
        assert cost(remat.revolve(10**18, want - 1, reverse_cost=rc)) * den > cost(base) * num
