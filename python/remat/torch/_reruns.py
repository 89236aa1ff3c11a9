"""What a backward's re-runs run under, shared by checkpoint_loop (_loop.py) and auto_checkpoint (_auto.py): the
modes the forward ran the modules in (_modes.py: the caller may have switched since, model.eval() for a
validation pass), the RNG states forked (each re-run sets its snapshot's), and the forward's autocast settings
without the cache of casts (_autocast.py). The settings the backward itself was called in are kept for its engine
calls (the stretches' backward), which run as plain autograd's backward kernels run."""

from __future__ import annotations

import contextlib
from contextlib import nullcontext
from typing import Iterator, Optional

import torch

from ._autocast import AutocastState
from ._inside import running
from ._rng import RngStates


@contextlib.contextmanager
def rerunning(modes, rng: Optional[RngStates], autocast: AutocastState) -> Iterator[Optional[AutocastState]]:
    """The block runs as a backward's re-runs run; it is given the backward's own autocast settings where they
    compute otherwise than the forward's (AutocastState.differing_now), else None. `modes`: a ProfiledModes or
    ForwardModes (None: none to enter)."""
    engine = autocast.differing_now()  # read before the forward's settings are entered
    devices = rng.devices if rng is not None else []
    with running(), modes.entered() if modes is not None else nullcontext(), \
            torch.random.fork_rng(devices=devices, enabled=rng is not None), autocast.uncached():
        yield engine
