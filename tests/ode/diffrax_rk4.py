"""Kutta's classical RK4 for diffrax, shared by the ODE crosscheck's reference (tests/ode/diffrax_reference.py)
and diffrax's side of bench/neural_ode (bench/neural_ode_diffrax.py)."""
import diffrax
import numpy as np


class ClassicalRK4(diffrax.AbstractERK):
    """Kutta's fourth-order method as a Butcher tableau (diffrax has no RK4 of its own)."""

    tableau = diffrax.ButcherTableau(
        c=np.array([0.5, 0.5, 1.0]),
        b_sol=np.array([1 / 6, 1 / 3, 1 / 3, 1 / 6]),
        b_error=np.zeros(4),
        a_lower=(np.array([0.5]), np.array([0.0, 0.5]), np.array([0.0, 0.0, 1.0])),
    )
    interpolation_cls = diffrax.ThirdOrderHermitePolynomialInterpolation.from_k

    def order(self, terms):
        return 4
