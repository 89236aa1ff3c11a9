"""The independent reference of the ODE crosscheck test: the same discrete solve and gradient in JAX with
diffrax (float64), read from and written to JSON by tests/ode/ode_crosscheck_test.cpp.

Input: the MLP's shape and flat parameters in remat's layout (per layer W column-major out x in, the time
column last when t is an input, then b), the batch of initial states (dim x batch, column-major), the
fixed step times, the method ("rk4": a classical RK4 Butcher tableau given to diffrax; "dopri5":
diffrax.Dopri5), and the quadratic loss L = sum_k w_k/2 |y_k - d_k|^2 over the states after each step.
Output: L and its gradient with respect to the parameters and the initial states, through diffrax's
RecursiveCheckpointAdjoint, and the versions used.

    python diffrax_reference.py case.json result.json
"""
import json
import sys

import jax

jax.config.update("jax_enable_x64", True)
import diffrax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from diffrax_rk4 import ClassicalRK4  # noqa: E402 (beside this file)


def unflatten(case, flat):
    """[(W, w_t or None, b)] per layer from remat's flat layout."""
    dim = case["dim"]
    widths = case["hidden"] + [dim]
    layers, offset, fan_in = [], 0, dim
    for index, out in enumerate(widths):
        time_column = case["time_input"] and index == 0
        cols = fan_in + (1 if time_column else 0)
        w = flat[offset : offset + out * cols].reshape(cols, out).T  # column-major out x cols
        offset += out * cols
        b = flat[offset : offset + out]
        offset += out
        layers.append((w[:, :fan_in], w[:, fan_in] if time_column else None, b))
        fan_in = out
    assert offset == flat.shape[0], (offset, flat.shape)
    return layers


def activation(name):
    return {"tanh": jnp.tanh, "softplus": jax.nn.softplus}[name]


def main(case_path, result_path):
    with open(case_path) as f:
        case = json.load(f)
    act = activation(case["activation"])
    dim, batch = case["dim"], case["batch"]
    ts = np.array(case["times"], dtype=np.float64)  # t_0 .. t_T
    targets = jnp.array(case["targets"], dtype=jnp.float64).reshape(len(ts) - 1, batch, dim)  # states 1..T, member-major
    weights = jnp.array(case["weights"], dtype=jnp.float64)

    def field(t, y, flat):
        x = y  # batch x dim
        layers = unflatten(case, flat)
        for index, (w, w_t, b) in enumerate(layers):
            z = x @ w.T + b
            if w_t is not None:
                z = z + t * w_t
            x = act(z) if index + 1 < len(layers) else z
        return x

    solver = {"rk4": ClassicalRK4(), "dopri5": diffrax.Dopri5()}[case["method"]]

    def loss(flat, y0):
        solution = diffrax.diffeqsolve(
            diffrax.ODETerm(field),
            solver,
            t0=ts[0],
            t1=ts[-1],
            dt0=None,
            y0=y0,
            args=flat,
            stepsize_controller=diffrax.StepTo(ts=jnp.array(ts)),
            saveat=diffrax.SaveAt(steps=True),
            adjoint=diffrax.RecursiveCheckpointAdjoint(checkpoints=case.get("checkpoints")),
            max_steps=len(ts) - 1,
        )
        ys = solution.ys  # T x batch x dim
        return 0.5 * jnp.sum(weights[:, None, None] * (ys - targets) ** 2)

    flat = jnp.array(case["params"], dtype=jnp.float64)
    y0 = jnp.array(case["y0"], dtype=jnp.float64).reshape(batch, dim)
    value, (g_flat, g_y0) = jax.value_and_grad(loss, argnums=(0, 1))(flat, y0)
    result = {
        "loss": float(value),
        "grad_params": [float(v) for v in np.asarray(g_flat)],
        "grad_y0": [float(v) for v in np.asarray(g_y0).reshape(-1)],
        "versions": {"jax": jax.__version__, "diffrax": diffrax.__version__},
    }
    with open(result_path, "w") as f:
        json.dump(result, f)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
