"""Where the loop's snapshots live: with the state's tensors on their device, in host memory, or on disk
through remat's HDF5 level. Each placement keeps, per slot, the state's parts and what the loop keeps beside
them (`kept`, opaque here: the RNG state of that step and a module step's buffers, _loop.py)."""

from __future__ import annotations

import os
import shutil
import tempfile
import weakref
from typing import Dict, Optional, Sequence, Tuple

import torch

from .. import _remat
from .._errors import ArgumentError, IoError, UnavailableError
from ._state import StateSpec
from ._versions import modified, snapshot_modified, versions

PLACEMENTS = ("device", "host", "disk")


class MemorySlots:
    """Snapshots as tensors: the state's own ("device"; a step returns new tensors, so the snapshot is the
    tensor itself, no copy) or copies in host memory ("host"; the same tensors where the state is on the CPU).
    Each keeps its tensors' version counters: x_0 is the caller's tensor, which the caller may modify in place
    after the forward (plain autograd refuses that backward where the graph saved x_0), and a re-run from it
    would then compute from other values; restoring it is refused instead (remat.BackwardError)."""

    def __init__(self, spec: StateSpec, to_host: bool):
        self.spec = spec
        self.to_host = to_host
        self.slots: Dict[int, tuple] = {}

    def store(self, slot: int, step: int, parts: Sequence[torch.Tensor], kept) -> None:
        if self.to_host:
            parts = tuple(p if p.device.type == "cpu" else p.to("cpu") for p in parts)
        parts = tuple(parts)
        self.slots[slot] = (step, parts, kept, versions(parts))

    def restore(self, slot: int, step: int) -> Tuple[tuple, object]:
        held, parts, kept, before = self.slots[slot]
        assert held == step, f"slot {slot} holds x_{held}, not x_{step}"
        i = modified(parts, before)
        if i >= 0:
            where = f" (part {i})" if self.spec.is_tuple else ""
            raise snapshot_modified("remat.torch.checkpoint_loop", f"x_{step}{where}", "steps")
        if self.to_host:
            parts = tuple(p.to(d) for p, d in zip(parts, self.spec.devices))
        return parts, kept

    def free(self, slot: int) -> None:
        self.slots.pop(slot, None)

    def close(self) -> None:
        self.slots.clear()


class DiskSlots:
    """Snapshots in one HDF5 file (remat's HDF5 level: checksummed, refused when damaged) in a directory of
    its own under `directory` (the system's temporary directory when None), removed when the loop is done.
    What the loop keeps beside each snapshot (its RNG state, a few KiB; a module step's buffers) stays in memory."""

    def __init__(self, spec: StateSpec, slots: int, directory: Optional[str]):
        if not _remat.has_hdf5:
            raise UnavailableError("remat.torch: snapshots='disk' needs remat's HDF5 level, and this remat was built "
                                   "without it (no HDF5 was found: install libhdf5-dev, then pip install . again)")
        self.spec = spec
        try:
            self.directory = tempfile.mkdtemp(prefix="remat-snapshots-", dir=directory)
        except OSError as e:
            where = "the system's temporary directory" if directory is None else f"{os.fspath(directory)!r}"
            raise IoError(e.errno, f"remat.torch: snapshots='disk' cannot make its directory in {where}: "
                          f"{e.strerror or e}", e.filename) from e
        self.level = None
        try:
            self.level = _remat.DiskLevel(os.path.join(self.directory, "snapshots.h5"), slots)
        except BaseException:
            shutil.rmtree(self.directory, ignore_errors=True)
            raise
        self.kept: Dict[int, object] = {}
        # A loop whose backward never runs is collected without close(): its directory goes then.
        self._remove = weakref.finalize(self, shutil.rmtree, self.directory, True)

    def store(self, slot: int, step: int, parts: Sequence[torch.Tensor], kept) -> None:
        # Each part as its bytes: the extension reads tensors through DLPack, which PyTorch 1.13 has no bool for.
        self.level.write(slot, step, [p.detach().to("cpu").contiguous().reshape(-1).view(torch.uint8) for p in parts])
        # and its layout, as a copy keeps it (a dense column-major state stays so; a strided view becomes dense):
        # restored row-major, a re-run reduced in another order than the forward's run (gradients up to 8e-6 off)
        layouts = [torch.empty_like(p, device="meta").stride() for p in parts]
        self.kept[slot] = (kept, layouts)

    def restore(self, slot: int, step: int) -> Tuple[tuple, object]:
        # each part's bytes as x_0 has them, which every stored state shares (StateSpec checks each step)
        buffers = [torch.empty(n, dtype=torch.uint8) for n in self.spec.part_bytes]
        self.level.read(slot, step, buffers)
        kept, layouts = self.kept[slot]
        parts = []
        for b, dtype, shape, device, stride in zip(buffers, self.spec.dtypes, self.spec.shapes, self.spec.devices,
                                                   layouts):
            p = b.view(dtype).reshape(shape)
            if p.stride() != stride:
                p = torch.empty_strided(shape, stride, dtype=dtype).copy_(p)
            parts.append(p.to(device))
        return tuple(parts), kept

    def free(self, slot: int) -> None:
        self.level.release(slot)
        self.kept.pop(slot, None)

    def close(self) -> None:
        self.kept.clear()
        try:
            if self.level is not None:
                self.level.close()
        finally:
            self.level = None
            self._remove()


def make_slots(placement: str, spec: StateSpec, slots: int, directory: Optional[str]):
    if placement == "device":
        return MemorySlots(spec, to_host=False)
    if placement == "host":
        return MemorySlots(spec, to_host=True)
    if placement == "disk":
        return DiskSlots(spec, slots, directory)
    raise ArgumentError(f"remat.torch: snapshots must be one of {', '.join(PLACEMENTS)}, got {placement!r}")
