"""diffrax's side of bench/neural_ode: the gradient of L = |y_T|^2 / 2 over T fixed RK4 steps of an MLP
field (one tanh hidden layer of `width`) over a batch, float64 on the CPU, through
RecursiveCheckpointAdjoint(checkpoints=N). Prints the median seconds per gradient after a warm-up (the
compilation) and nothing else.

    python neural_ode_diffrax.py --steps 1000 --batch 1024 --dim 2 --width 128 --checkpoints 99 --repeats 3
"""
import argparse
import statistics
import sys
import time
from pathlib import Path

import jax

jax.config.update("jax_enable_x64", True)
import diffrax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "ode"))
from diffrax_rk4 import ClassicalRK4  # noqa: E402 (shared with the crosscheck's reference)


def main():
    p = argparse.ArgumentParser()
    for name in ("steps", "batch", "dim", "width", "checkpoints", "repeats"):
        p.add_argument("--" + name, type=int, required=True)
    a = p.parse_args()
    rng = np.random.default_rng(7)
    bound1, bound2 = 1 / np.sqrt(a.dim), 1 / np.sqrt(a.width)
    params = (
        jnp.array(rng.uniform(-bound1, bound1, (a.width, a.dim))),
        jnp.array(rng.uniform(-bound1, bound1, a.width)),
        jnp.array(rng.uniform(-bound2, bound2, (a.dim, a.width))),
        jnp.array(rng.uniform(-bound2, bound2, a.dim)),
    )
    y0 = jnp.sin(0.37 * jnp.arange(a.batch * a.dim, dtype=jnp.float64)).reshape(a.batch, a.dim)

    def field(t, y, p):
        w1, b1, w2, b2 = p
        return jnp.tanh(y @ w1.T + b1) @ w2.T + b2

    def loss(p):
        sol = diffrax.diffeqsolve(
            diffrax.ODETerm(field), ClassicalRK4(), t0=0.0, t1=1.0, dt0=1.0 / a.steps, y0=y0, args=p,
            saveat=diffrax.SaveAt(t1=True), max_steps=a.steps + 1,
            adjoint=diffrax.RecursiveCheckpointAdjoint(checkpoints=a.checkpoints),
        )
        return 0.5 * jnp.sum(sol.ys[-1] ** 2)

    grad = jax.jit(jax.grad(loss))
    jax.block_until_ready(grad(params))  # compile
    runs = []
    for _ in range(a.repeats):
        start = time.perf_counter()
        jax.block_until_ready(grad(params))
        runs.append(time.perf_counter() - start)
    print(statistics.median(runs))


if __name__ == "__main__":
    main()
