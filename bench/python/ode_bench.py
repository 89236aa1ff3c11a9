"""The spiral neural ODE (torchdiffeq's examples/ode_demo.py) trained three ways: torchdiffeq's odeint (autograd
through the solver: every state stored), odeint_adjoint (the continuous adjoint, solved backwards), and
remat.torch.checkpoint_loop over the same RK4 steps holding 5% of the states: peak activation bytes, time per
iteration, and each gradient's error against the exact discrete gradient.

    python bench/python/ode_bench.py [--quick] [--format json] [--rounds N] [--steps N] [--batch B]

dy/dt = MLP(y^3) (Linear(2, 50), tanh, Linear(50, 2)), y in R^2 for a batch of 64 initial states, t from 0 to
25 in N = 1000 RK4 steps (torchdiffeq's "rk4": the 3/8 rule), loss: the squared distance of y(25) to a fixed
target. --quick: N = 40, batch 16.

The exact discrete gradient (the reference) is plain autograd through the same N RK4 steps, every
intermediate stored. torchdiffeq gets the same time grid (t = the N+1 grid points, so its fixed-grid solver
steps exactly on them); odeint_adjoint solves the adjoint ODE backwards with the same RK4 steps, so its
gradient differs from the discrete one by the discretisation error. checkpoint_loop gets max(2, N/20) slots.
Errors: the parameters' gradient as one vector, |g - g_ref| / |g_ref| (2-norms). Peak activation bytes:
saved-tensor hooks (what autograd saves, each storage once), plus checkpoint_loop's snapshots (its plan's
peak_slots x the state's bytes) and odeint's stored solution (N+1 states; autograd does not save it).
torchdiffeq 0.2.5 (pinned in scripts/python-nodeps-requirements.txt, installed by scripts/install-python.sh).
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_common as bc  # noqa: E402


def main():
    p = bc.parser(bc.summary(__doc__), "N = 1000 steps, batch 64, 3 rounds", "N = 40, batch 16, 2 rounds")
    p.add_argument("--steps", type=int, default=None)
    p.add_argument("--batch", type=int, default=None)
    args = p.parse_args()
    rounds = bc.rounds_of(args, 3, 2)
    N = args.steps if args.steps is not None else (40 if args.quick else 1000)
    B = args.batch if args.batch is not None else (16 if args.quick else 64)
    if N < 2 or B < 1:
        bc.fail("--steps must be at least 2 and --batch at least 1", usage=True)
    import torch

    try:
        import torchdiffeq
    except ImportError:
        bc.fail("torchdiffeq is not installed (scripts/install-python.sh installs it into build/python-venv)")
    import remat.torch
    from remat.torch._saved import SavedBytes

    bc.set_threads(args)
    torch.manual_seed(0)

    class ODEFunc(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.net = torch.nn.Sequential(torch.nn.Linear(2, 50), torch.nn.Tanh(), torch.nn.Linear(50, 2))

        def forward(self, t, y):
            return self.net(y ** 3)

    func = ODEFunc()
    params = list(func.parameters())
    grid = torch.linspace(0.0, 25.0, N + 1)
    y0 = torch.tensor([2.0, 0.0]) + 0.1 * torch.randn(B, 2)
    target = torch.randn(B, 2) * 0.5
    slots = max(2, N // 20)
    third, two_thirds = 1.0 / 3, 2.0 / 3

    def rk4(k, y):
        """One step of torchdiffeq's rk4 (rk4_alt_step_func, the 3/8 rule) on its grid, as its solver takes it."""
        t0, t1 = grid[k], grid[k + 1]
        dt = t1 - t0
        k1 = func(t0, y)
        k2 = func(t0 + dt * third, y + dt * k1 * third)
        k3 = func(t0 + dt * two_thirds, y + dt * (k2 - k1 * third))
        k4 = func(t1, y + dt * (k1 - k2 + k3))
        return y + (k1 + 3 * (k2 + k3) + k4) * dt * 0.125

    def loss(y):
        return (y - target).pow(2).sum()

    def reference():
        y = y0
        for k in range(N):
            y = rk4(k, y)
        return loss(y)

    runs = {
        "store every state (plain autograd)": reference,
        "torchdiffeq odeint": lambda: loss(torchdiffeq.odeint(func, y0, grid, method="rk4")[-1]),
        "torchdiffeq odeint_adjoint": lambda: loss(torchdiffeq.odeint_adjoint(func, y0, grid, method="rk4")[-1]),
        f"checkpoint_loop slots={slots}": lambda: loss(remat.torch.checkpoint_loop(rk4, y0, steps=N, slots=slots,
                                                                                   params=params)),
    }
    state_bytes = y0.numel() * y0.element_size()
    extra = {f"checkpoint_loop slots={slots}": remat.revolve(N, slots).peak_slots * state_bytes,
             "torchdiffeq odeint": (N + 1) * state_bytes}

    def iteration(run):
        for q in params:
            q.grad = None
        run().backward()
        return torch.cat([q.grad.reshape(-1) for q in params])

    grads, peaks = {}, {}
    for name, run in runs.items():
        bc.progress(f"ode_bench: measuring {name}")
        counter = SavedBytes(params + [grid, target])
        with counter.hooks():
            grads[name] = iteration(run)
        peaks[name] = counter.peak + extra.get(name, 0)
    times = bc.interleaved({k: (lambda r=r: iteration(r)) for k, r in runs.items()}, rounds, name="ode_bench: ")
    reference_name = "store every state (plain autograd)"
    ref = grads[reference_name]
    rows = []
    for name in runs:
        g = grads[name]
        rows.append({"method": name, "peak bytes": peaks[name], "s/iter": bc.median(times[name]),
                     "x reference time": bc.median(times[name]) / bc.median(times[reference_name]),
                     "gradient error": float((g - ref).norm() / ref.norm()), "bit-equal": bool(torch.equal(g, ref))})
    bc.emit(args, [{"title": f"spiral neural ODE, {N} RK4 steps, batch {B} ({rounds} rounds, medians)",
                    "columns": ["method", "peak bytes", "s/iter", "x reference time", "gradient error", "bit-equal"],
                    "rows": rows,
                    "notes": [f"checkpoint_loop holds {slots} of {N} states ({slots / N:.0%}); gradient error "
                              "|g - g_ref| / |g_ref| against store-every-state autograd of the same RK4 steps"]}],
            {"steps": N, "batch": B, "rounds": rounds, "times": times, "torchdiffeq": torchdiffeq.__version__})


if __name__ == "__main__":
    main()
