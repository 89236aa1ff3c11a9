"""Whether remat's runtime is running blocks or steps on this thread: a forward's runs inside an autograd.Function
(auto_checkpoint's, checkpoint_loop's), a backward's re-runs. An auto_checkpoint nested there (a block of
another's, a loop's step module) takes its parameters as its autograd node's inputs whatever reach_parameters
says: the outer runtime may back-propagate the graph it is part of with torch.autograd.grad (to sum a shared
parameter's gradients, or where a parameter has a hook), under which the nested one could not add its
parameters' gradients to their .grad."""

from __future__ import annotations

import contextlib
import functools
import threading
from typing import Callable, Iterator, TypeVar

_state = threading.local()

F = TypeVar("F", bound=Callable)


def inside() -> bool:
    """Whether this thread is inside remat's runtime now."""
    return getattr(_state, "depth", 0) > 0


@contextlib.contextmanager
def running() -> Iterator[None]:
    """This thread inside remat's runtime while the block runs."""
    _state.depth = getattr(_state, "depth", 0) + 1
    try:
        yield
    finally:
        _state.depth -= 1


def runtime(function: F) -> F:
    """`function` run inside remat's runtime (its signature and docstring kept)."""

    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        with running():
            return function(*args, **kwargs)

    return wrapper  # type: ignore[return-value]
