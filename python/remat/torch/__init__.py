"""remat for PyTorch (docs/python.md): loops and models differentiated within a memory budget, along remat's
optimal schedules.

    import remat.torch
    x_T = remat.torch.checkpoint_loop(step, x0, steps=1000, slots=32)   # step(k, x) -> x_{k+1}
    fast = remat.torch.auto_checkpoint(model, sample, budget="2GiB")    # an nn.Sequential within 2 GiB
    remat.torch.tradeoff(model, sample).save_svg("t.svg")             # measured peak bytes against time
"""

try:
    import torch as _torch  # noqa: F401
except ImportError as e:  # remat itself needs no PyTorch: say what this part needs, not just "no module torch"
    raise ModuleNotFoundError("remat.torch needs PyTorch 1.13 or newer: on Debian 12, python3-torch seen from a "
                              "virtual environment made with --system-site-packages; elsewhere pip install "
                              "torch", name="torch") from e

from ._auto import AutoCheckpoint, auto_checkpoint
from ._loop import checkpoint_loop
from ._tradeoff import Tradeoff, TradeoffPoint, tradeoff

__all__ = ["checkpoint_loop", "auto_checkpoint", "AutoCheckpoint", "tradeoff", "Tradeoff", "TradeoffPoint"]
