"""remat: optimal checkpointing for gradients of long loops (docs/python.md).

Plans are made and iterated in C++ (the extension remat._remat):

    >>> import remat
    >>> plan = remat.revolve(10, 3)
    >>> plan.forward_steps, plan.peak_slots
    (15, 3)
    >>> [str(a) for a in plan][:3]
    ['store 0 0 0', 'advance 0 4', 'store 0 1 4']

remat.torch (imported on its own: `import remat.torch`) runs PyTorch loops within a memory budget.
"""

from ._errors import (ArgumentError, BackwardError, CapacityError, CountOverflowError, Error, IntegrityError, IoError,
                      ScheduleError, UnavailableError)
from . import _remat
from ._remat import Advance, Free, Restore, Reverse, Store
from ._bytes import parse_bytes
from ._plans import (ChainStep, Level, LevelCost, Plan, TapedChainPlan, chain, chain_taped, multilevel, parse_action,
                     plan_for_budget, revolve, store_all, taped_revolve, uniform)
from ._tradeoff import OmittedRow, Tradeoff, TradeoffRow, tradeoff

__version__ = "0.1.0"

#: Whether this installation has remat's HDF5 level (snapshots on disk).
has_hdf5: bool = _remat.has_hdf5

__all__ = [
    "Error", "ArgumentError", "CountOverflowError", "ScheduleError", "CapacityError", "IoError", "IntegrityError",
    "UnavailableError", "BackwardError",
    "Advance", "Store", "Restore", "Free", "Reverse", "parse_action",
    "Plan", "LevelCost", "Level", "ChainStep",
    "revolve", "taped_revolve", "uniform", "store_all", "multilevel", "chain", "chain_taped", "TapedChainPlan",
    "plan_for_budget",
    "tradeoff", "Tradeoff", "TradeoffRow", "OmittedRow",
    "parse_bytes", "has_hdf5",
]
