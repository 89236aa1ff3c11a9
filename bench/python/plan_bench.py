"""Planning time of remat.chain_taped (remat::plan_taped_chain, the planner auto_checkpoint uses) against
rockmate's rotor solver on the same profiled chains and budgets, and each one's predicted cost.

    python bench/python/plan_bench.py [--quick] [--format json] [--rounds N] [--sizes 24,100,300,1000]
                                      [--write-chains DIR]

--write-chains DIR writes each profiled chain as DIR/<chain>.json (`remat plan --chain`'s format) with the two
budgets in DIR/<chain>.budgets, so the planner can be timed and profiled alone on them:
`remat plan --chain DIR/hetero_x1000.json --budget BYTES --taped-advances --format actions`.

The chains: three stacks of bench/python/stack_bench.py (transformer, hetero, resnet) profiled on this machine
(remat.torch's profiler: forward and backward seconds, input bytes, saved activation bytes per block), 24 or 25 blocks each, and the heterogeneous one's 24
blocks repeated to each larger size, as they are ("hetero xN": a chain of repeated blocks, whose alike parts remat fills
once) and with each block's seconds moved by up to 1% ("hetero xN distinct": no two blocks alike). Budgets: 30% and 60% of the way from the least budget to the chain's all-taped
peak (remat.chain_taped's least_budget_bytes and all_taped_bytes). Both planners get the same memory unit: the
granularity remat picks for that chain and budget.

rotor (rockmate 2.0.0's C solver, loaded as bench/rotor_plan.py loads it; scripts/install-python.sh installs it)
gets the chain in its own model with its "forward keeping all" (Fe) as remat's taped advance: Fe costs f_k and keeps
x_k, the block's saved bytes a_k and x_{k+1} (its a-bar), its backward costs b_k - f_k (b_k is remat's adjoint, a
re-run included). Its model also counts x_{k+1} in each kept block and a gradient per segment, so its optimum is a
more cautious plan; the two costs are each planner's own prediction in the same profiled seconds. Time: the median
of `rounds` plans, interleaved (table, optimum and action sequence; fewer rounds once 20 s are spent), in wall
seconds and in this process's CPU seconds (both planners run single-threaded in it): on a shared, loaded machine the
wall time counts the other programs' turns too, so the speedup is taken from the CPU seconds.

Goals (issue #38): >= 10x faster than rotor, same or lower predicted cost; 1000 blocks planned in <= 1 s.
"""

from __future__ import annotations

import math
import os
import sys
import time
import types

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_common as bc  # noqa: E402


def load_rotor():
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    import rotor_plan

    return rotor_plan.load_rotor()


def rotor_taped_chain(steps, final_state_bytes, unit):
    """The chain in rotor's terms (see the module's docstring); memory in units of `unit` bytes, rounded up."""
    T = len(steps)
    units = lambda b: int(math.ceil(b / unit))
    u = [units(s[2]) for s in steps] + [units(final_state_bytes)]
    c = types.SimpleNamespace()
    c.ln = T
    c.cw = u + [0]
    c.ff_fw = [s[0] for s in steps] + [0.0]
    c.ff_fwd_tmp = [0] * (T + 1)
    c.fw = [[s[0]] for s in steps] + [[0.0]]
    c.bw = [[max(0.0, s[1] - s[0])] for s in steps] + [[0.0]]
    c.cbw = [[]] + [[u[k] + units(steps[k][3]) + u[k + 1]] for k in range(T)] + [[0]]
    c.cbw[T] = [c.cbw[T][0] - u[T]]  # x_T outside the budget, as rockmate counts it
    c.fwd_tmp = [[0] for _ in range(T)] + [[0]]
    c.bwd_tmp = [[0] for _ in range(T)] + [[0]]
    c.nb_sol = [1] * (T + 1)
    return c


def rotor_plan(csolver, steps, final_state_bytes, budget, unit):
    c = rotor_taped_chain(steps, final_state_bytes, unit)
    mmax = budget // unit - c.cw[0] - c.cw[c.ln]
    if mmax <= 0:
        return None
    table = csolver.RkTable(c, mmax)
    cost = table.get_opt(mmax)
    try:
        table.build_sequence(mmax)
    except ValueError:
        return None
    return cost if math.isfinite(cost) else None


def write_chain(folder, name, steps, final_bytes, budgets):
    """The chain in `remat plan --chain`'s JSON and its budgets, one a line."""
    import json

    os.makedirs(folder, exist_ok=True)
    stem = os.path.join(folder, name.replace(" ", "_"))
    with open(stem + ".json", "w") as out:
        json.dump({"steps": [{"forward": f, "adjoint": b, "state_bytes": m, "adjoint_bytes": a}
                             for f, b, m, a in steps], "final_state_bytes": final_bytes}, out)
    with open(stem + ".budgets", "w") as out:
        out.write("".join(f"{b}\n" for b in budgets))


PROFILED = ("transformer", "hetero", "resnet")  # the stacks of stack_bench.py this program plans


def profiled_chains(quick):
    import torch

    import stack_bench
    from remat.torch._profile import profile_blocks

    out = {}
    for name in PROFILED:  # not stack_bench's later "hvit": the documented tables stay reproducible
        make = stack_bench.MODELS[name]
        bc.progress(f"plan_bench: profiling the {name} stack")
        model, x = make(quick, torch.device("cpu"))
        profiles, _, _ = profile_blocks(list(model), x, 1)
        out[name] = ([(p.forward_seconds, p.forward_seconds + p.backward_seconds, p.input_bytes, p.adjoint_bytes)
                      for p in profiles], profiles[-1].output_bytes)
    return out


def distinct_times(steps):
    """The steps with their seconds moved by up to 1%, no two blocks alike: remat fills the table's parts alike
    (the same steps, step by step) once, which a tiled chain has many of; this chain shows the planner without."""
    return [(f * q, b * q, m, a) for k, (f, b, m, a) in enumerate(steps) for q in [1 + ((k * 7919) % 2001 - 1000) * 1e-5]]


def main():
    p = bc.parser(bc.summary(__doc__), "the two 24-block stacks and the heterogeneous one tiled to 100, 300 "
                  "and 1000 blocks, 3 rounds", "the quick stacks and the heterogeneous one tiled to 12 blocks, 1 round")
    p.add_argument("--sizes", default=None, help="comma-separated block counts of the tiled chains")
    p.add_argument("--write-chains", default=None, metavar="DIR",
                   help="write each chain as DIR/<chain>.json and its budgets as DIR/<chain>.budgets")
    args = p.parse_args()
    rounds = bc.rounds_of(args, 3, 1)
    try:
        sizes = [int(s) for s in (args.sizes or ("12" if args.quick else "100,300,1000")).split(",")]
    except ValueError:
        bc.fail("--sizes: expected comma-separated integers", usage=True)
    if any(s < 1 for s in sizes):
        bc.fail("--sizes: every size must be at least 1", usage=True)
    import remat

    bc.set_threads(args)
    csolver = load_rotor()
    chains = profiled_chains(args.quick)
    base, final = chains["hetero"]
    cases = [(name, steps, f) for name, (steps, f) in chains.items()]
    for n in sizes:
        tiled = [base[k % len(base)] for k in range(n)]
        cases.append((f"hetero x{n}", tiled, base[(n - 1) % len(base)][2]))
        cases.append((f"hetero x{n} distinct", distinct_times(tiled), base[(n - 1) % len(base)][2]))
    rows = []
    for name, steps, final_bytes in cases:
        top = remat.chain_taped(steps, 10**18, final_state_bytes=final_bytes).all_taped_bytes
        # The least budget at the granularity of a plan for the all-taped peak (a roomier budget's coarser
        # units would make it larger than that peak).
        least = remat.chain_taped(steps, top, final_state_bytes=final_bytes).least_budget_bytes
        if args.write_chains:
            write_chain(args.write_chains, name, steps, final_bytes,
                        [int(least + frac * (top - least)) for frac in (0.3, 0.6)])
        for frac in (0.3, 0.6):
            budget = int(least + frac * (top - least))
            bc.progress(f"plan_bench: {name} ({len(steps)} blocks) at {frac:.0%} from the least budget to all-taped")
            remat_times, rotor_times, remat_cpu, rotor_cpu = [], [], [], []
            plan, rotor_cost = None, None
            for _ in range(rounds):
                if sum(remat_times) + sum(rotor_times) > 20.0:  # enough: the largest chains take seconds
                    break
                start, cpu = time.perf_counter(), time.process_time()
                plan = remat.chain_taped(steps, budget, final_state_bytes=final_bytes)
                actions = list(plan)
                remat_times.append(time.perf_counter() - start)
                remat_cpu.append(time.process_time() - cpu)
                start, cpu = time.perf_counter(), time.process_time()
                rotor_cost = rotor_plan(csolver, steps, final_bytes, budget, plan.granularity_bytes)
                rotor_times.append(time.perf_counter() - start)
                rotor_cpu.append(time.process_time() - cpu)
            remat_s, rotor_s = bc.median(remat_times), bc.median(rotor_times)
            remat_c, rotor_c = bc.median(remat_cpu), bc.median(rotor_cpu)
            rows.append({"chain": name, "blocks": len(steps), "budget": f"{frac:.0%}", "budget bytes": budget,
                         "unit bytes": plan.granularity_bytes, "units": budget // plan.granularity_bytes,
                         "remat s": remat_s, "rotor s": rotor_s, "remat cpu s": remat_c, "rotor cpu s": rotor_c,
                         "speedup": rotor_c / max(remat_c, 1e-9),
                         "remat cost": plan.predicted_cost, "rotor cost": rotor_cost,
                         "remat <= rotor": None if rotor_cost is None else plan.predicted_cost <= rotor_cost + 1e-9,
                         "actions": len(actions)})
    bc.emit(args, [{"title": f"planning: remat.chain_taped against rotor ({rounds} rounds, medians)",
                    "columns": ["chain", "blocks", "budget", "unit bytes", "units", "remat s", "rotor s", "remat cpu s",
                                "rotor cpu s", "speedup",
                                "remat cost", "rotor cost", "remat <= rotor"], "rows": rows,
                    "notes": ["s: wall seconds; cpu s: this process's CPU seconds; speedup: rotor cpu s / remat cpu s",
                              "cost: predicted seconds per iteration, each planner under its own model; rotor cost "
                              "'-' where rotor plans nothing within the budget"]}])


if __name__ == "__main__":
    main()
