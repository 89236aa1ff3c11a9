"""Activation bytes as autograd holds them: every tensor a graph saves for its backward (seen through
torch.autograd.graph.saved_tensors_hooks) and every snapshot the front end keeps, each storage counted once
however many tensors view it, from the moment it is saved until the graph (or the front end) lets it go.
Parameters and buffers are not activations and are left out."""

from __future__ import annotations

from typing import Dict, Iterable, Optional, Tuple

import torch

Key = Tuple[str, int, int]


def storage_key(t: torch.Tensor) -> Tuple[Optional[Key], int]:
    """(a key naming t's storage, the storage's bytes); (None, bytes) for a tensor without one (sparse)."""
    try:
        s = t.untyped_storage() if hasattr(t, "untyped_storage") else t.storage()
        return (t.device.type, -1 if t.device.index is None else t.device.index, s.data_ptr()), s.nbytes()
    except (RuntimeError, NotImplementedError):
        return None, t.numel() * t.element_size()


class _Held:
    """What a graph keeps for a saved tensor: the tensor itself (detached, so that a saved output does not
    hold its own graph), released from the count when the graph drops it."""

    __slots__ = ("tensor", "key", "counter")

    def __init__(self, tensor: torch.Tensor, key, counter: "SavedBytes"):
        self.tensor = tensor
        self.key = key
        self.counter = counter

    def __del__(self):
        self.counter.release(self.key)


class SavedBytes:
    """Live activation bytes and their peak since reset_peak()."""

    def __init__(self, excluded: Iterable[torch.Tensor] = ()):
        self.exclude(excluded)
        self.live: Dict[object, list] = {}  # key -> [holders, bytes]
        self.own: Dict[object, int] = {}  # key -> bytes counted for that storage in place of its own (own_bytes)
        self.current = 0
        self.peak = 0
        self._anonymous = 0

    def exclude(self, tensors: Iterable[torch.Tensor]) -> None:
        """Leaves these tensors' storages out from now on (in place of those left out before)."""
        self.excluded = {storage_key(t)[0] for t in tensors}

    def own_bytes(self, t: torch.Tensor) -> None:
        """From now on (until the next call) t's storage counts as t's own bytes where it is larger: an input
        that views a larger storage (a batch sliced from a dataset tensor) holds that storage, which its owner
        holds anyway; what it adds is its own bytes, as the chain model prices a state (counting the storage, a
        32-row slice of a 100,000-row tensor measured 6.4 MB where the model priced 6 KB)."""
        key, nbytes = storage_key(t)
        mine = t.numel() * t.element_size()
        self.own = {key: mine} if key is not None and nbytes > mine else {}

    def hold(self, t: torch.Tensor):
        """Counts t's storage (once however often held); returns the key to release, None when excluded."""
        key, nbytes = storage_key(t)
        nbytes = self.own.get(key, nbytes)
        if key is None:
            self._anonymous += 1
            key = ("anonymous", self._anonymous, 0)
        elif key in self.excluded:
            return None
        entry = self.live.get(key)
        if entry is None:
            self.live[key] = [1, nbytes]
            self.current += nbytes
            self.peak = max(self.peak, self.current)
        else:
            entry[0] += 1
        return key

    def release(self, key) -> None:
        if key is None:
            return
        entry = self.live.get(key)
        if entry is None:
            return
        entry[0] -= 1
        if entry[0] == 0:
            del self.live[key]
            self.current -= entry[1]

    def reset_peak(self) -> None:
        self.peak = self.current

    def hooks(self):
        """The context in which graphs built are counted."""

        def pack(t):
            return _Held(t.detach(), self.hold(t), self)

        def unpack(held):
            return held.tensor

        return torch.autograd.graph.saved_tensors_hooks(pack, unpack)
