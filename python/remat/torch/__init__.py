"""remat for PyTorch (docs/python.md): loops and models differentiated within a memory budget, along remat's
optimal schedules.

    import remat.torch
    x_T = remat.torch.checkpoint_loop(step, x0, steps=1000, slots=32)   # step(k, x) -> x_{k+1}
"""

from ._loop import checkpoint_loop

__all__ = ["checkpoint_loop"]
