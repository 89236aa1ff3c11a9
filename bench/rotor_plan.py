"""rockmate's rotor solver on a remat chain: plans it and prints the plan as JSON.

    python rotor_plan.py --chain costs.json --budget BYTES --unit-bytes G
    python rotor_plan.py --cases cases.json     # [{"chain": {...}, "budget": B, "unit_bytes": G, "repeats": N}, ...]

rockmate 2.0.0 (installed by scripts/install-python.sh, without its dependencies) ships rotor's dynamic
program as a C extension (rockmate/solvers/rk_rotor/csolver). Importing the rockmate package itself needs
rkgb's PyTorch graph builder (and rkgb 2.0.0 lacks the module it imports), so the extension and its
sequence classes are loaded from their files, with no PyTorch involved.

remat's model (include/remat/schedule/chain_model.hpp) in rotor's terms, memory in units of G bytes
(sizes rounded up, the budget down, as remat's own tables do):
  cw[k]       = the units of x_k (cw[T] = x_T's, which rotor leaves out of the budget, as rockmate does)
  ff_fw[k]    = f_k: a forward step that keeps nothing (Fn) or keeps its input as a checkpoint (Fc)
  Fe (the one option per step): keeps x_k through the rest of the sweep (a_bar = x_k and x_{k+1}),
  fw[k] = f_k, bw[k] = b_k, bwd_tmp[k] = a_k.
rotor also counts the gradient of each segment's output and an input next to each output (remat's model
runs a step in place and keeps the adjoint outside the budget), so its plans are more cautious than
remat's for the same budget: what is compared is its plan priced under remat's model (bench/chain_plan),
and the planning time at the same granularity.

Prints {"seconds": planning time (table and sequence; the median of "solves" solves where a case asks for
"repeats"), "rotor_cost": rotor's own optimum,
"units": the budget in units, "sequence": ["Fc 0", "Fn 1", "Fe 2", "Loss", "Bwd 2", ...]}, or a list of
them for --cases (tests/schedule/chain_rotor_test plans many small chains in one process).
"""
import argparse
import glob
import importlib.util
import json
import math
import os
import resource
import sys
import time
import types


def load_rotor():
    import site

    for root in site.getsitepackages():
        found = glob.glob(os.path.join(root, "rockmate", "solvers", "rk_rotor", "csolver*.so"))
        if found:
            break
    else:
        sys.exit("rotor_plan: rockmate is not installed (scripts/install-python.sh installs it)")
    here = os.path.dirname(found[0])
    # Empty parent packages, so that the extension's own `import ...csequence` resolves to the file.
    for name, path in (("rockmate", "../.."), ("rockmate.solvers", ".."), ("rockmate.solvers.rk_rotor", ".")):
        package = types.ModuleType(name)
        package.__path__ = [os.path.normpath(os.path.join(here, path))]
        sys.modules[name] = package
    for name, path in (("csequence", os.path.join(here, "csequence.py")), ("csolver", found[0])):
        spec = importlib.util.spec_from_file_location("rockmate.solvers.rk_rotor." + name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
    return sys.modules["rockmate.solvers.rk_rotor.csolver"]


def rotor_chain(chain, unit_bytes):
    steps = chain["steps"]
    T = len(steps)
    units = lambda b: int(math.ceil(b / unit_bytes))
    u = [units(s["state_bytes"]) for s in steps] + [units(chain["final_state_bytes"])]
    c = types.SimpleNamespace()
    c.ln = T
    c.cw = u + [0]
    c.ff_fw = [s["forward"] for s in steps] + [0.0]
    c.ff_fwd_tmp = [0] * (T + 1)
    c.fw = [[s["forward"]] for s in steps] + [[0.0]]
    c.bw = [[s["adjoint"]] for s in steps] + [[0.0]]
    c.cbw = [[]] + [[u[k] + u[k + 1]] for k in range(T)] + [[0]]
    c.cbw[T] = [c.cbw[T][0] - u[T]]  # x_T is outside the budget (rockmate's convention)
    c.fwd_tmp = [[0] for _ in range(T)] + [[0]]
    c.bwd_tmp = [[units(s["adjoint_bytes"])] for s in steps] + [[0]]
    c.nb_sol = [1] * (T + 1)
    return c


def plan(csolver, chain, budget, unit_bytes, repeats=1):
    """repeats: solve up to this many times (fewer once 2 s are spent) and report the median time."""
    c = rotor_chain(chain, unit_bytes)
    budget_units = budget // unit_bytes
    mmax = budget_units - c.cw[0] - c.cw[c.ln]  # as rockmate's discretize_budget
    out = {"units": budget_units, "seconds": None, "rotor_cost": None, "sequence": []}
    if mmax > 0:
        times = []
        while len(times) < max(1, repeats) and sum(times) < 2.0:
            start = time.perf_counter()
            table = csolver.RkTable(c, mmax)
            cost = table.get_opt(mmax)
            try:
                # The sequence of get_opt's optimum (rockmate itself passes mmax - cw[0] here, a plan for less).
                sequence = table.build_sequence(mmax)
            except ValueError:
                sequence = None  # no plan fits
            times.append(time.perf_counter() - start)
        out["seconds"] = sorted(times)[len(times) // 2]
        out["solves"] = len(times)
        if sequence is not None:
            out["rotor_cost"] = cost
            out["sequence"] = [" ".join(str(op).split("_")[:2]) for op in sequence]  # "Fe_3_0" -> "Fe 3"
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chain")
    parser.add_argument("--budget", type=int, help="bytes")
    parser.add_argument("--unit-bytes", type=int)
    parser.add_argument("--cases", help="a JSON list of {chain, budget, unit_bytes}")
    args = parser.parse_args()
    csolver = load_rotor()
    if args.cases:
        with open(args.cases) as f:
            cases = json.load(f)
        out = [plan(csolver, c["chain"], c["budget"], c["unit_bytes"], c.get("repeats", 1)) for c in cases]
    else:
        if args.chain is None or args.budget is None or args.unit_bytes is None:
            parser.error("give --chain, --budget and --unit-bytes (or --cases)")
        with open(args.chain) as f:
            out = plan(csolver, json.load(f), args.budget, args.unit_bytes)
        out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    json.dump(out, sys.stdout)
    print()


if __name__ == "__main__":
    main()
