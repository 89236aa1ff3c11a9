"""The loop's state: a tensor or a tuple of tensors, whose shapes, dtypes and devices every step keeps."""

from __future__ import annotations

from typing import Sequence, Tuple, Union

import torch

from .._errors import ArgumentError

#: A loop's state: one tensor, or a tuple of tensors.
State = Union[torch.Tensor, Tuple[torch.Tensor, ...]]


def _describe(t: torch.Tensor) -> str:
    return f"shape {tuple(t.shape)}, dtype {t.dtype}, device {t.device}"


class StateSpec:
    """What x_0 looks like; packs and unpacks states and checks what each step returns."""

    def __init__(self, x0):
        self.is_tuple = isinstance(x0, tuple)
        parts = x0 if self.is_tuple else (x0,)
        if not parts or not all(isinstance(p, torch.Tensor) for p in parts):
            raise ArgumentError("remat.torch: the state must be a tensor or a non-empty tuple of tensors, got "
                                f"{type(x0).__name__}" + (f" of {[type(p).__name__ for p in parts]}"
                                                          if self.is_tuple else ""))
        self.shapes = [p.shape for p in parts]
        self.dtypes = [p.dtype for p in parts]
        self.devices = [p.device for p in parts]
        self.part_bytes = [p.numel() * p.element_size() for p in parts]
        self.nbytes = sum(self.part_bytes)
        self.differentiable = [p.is_floating_point() or p.is_complex() for p in parts]

    def parts(self, x) -> Tuple[torch.Tensor, ...]:
        return x if self.is_tuple else (x,)

    def pack(self, parts: Sequence[torch.Tensor]):
        return tuple(parts) if self.is_tuple else parts[0]

    def check(self, k: int, x) -> Tuple[torch.Tensor, ...]:
        """The parts of x_{k+1} as step k returned it; remat.ArgumentError naming step k when it is not a state
        like x_0 (another type, number of parts, shape, dtype or device)."""
        # A tensor state as it should be, checked in line (every step a loop runs; the loop below costs twice)
        if (not self.is_tuple and isinstance(x, torch.Tensor) and x.shape == self.shapes[0]
                and x.dtype == self.dtypes[0] and x.device == self.devices[0]):
            return (x,)
        if self.is_tuple:
            if not isinstance(x, tuple) or len(x) != len(self.shapes):
                raise ArgumentError(f"remat.torch: step {k} returned {type(x).__name__}"
                                    + (f" of {len(x)} parts" if isinstance(x, tuple) else "")
                                    + f", but the state is a tuple of {len(self.shapes)} tensors")
            parts = x
        else:
            if not isinstance(x, torch.Tensor):
                raise ArgumentError(f"remat.torch: step {k} returned {type(x).__name__}, but the state is a tensor")
            parts = (x,)
        for i, p in enumerate(parts):
            if not isinstance(p, torch.Tensor):
                raise ArgumentError(f"remat.torch: step {k} returned {type(p).__name__} as part {i} of the state, "
                                    "expected a tensor")
            if p.shape != self.shapes[i] or p.dtype != self.dtypes[i] or p.device != self.devices[i]:
                where = f" part {i} of" if self.is_tuple else ""
                raise ArgumentError(f"remat.torch: step {k} changed{where} the state: it returned {_describe(p)}, "
                                    f"but x_0 has shape {tuple(self.shapes[i])}, dtype {self.dtypes[i]}, device "
                                    f"{self.devices[i]}; every step must keep the state's shapes, dtypes and devices")
        return parts
