"""RNG states saved with each snapshot and set again where a step is recomputed, so that dropout and any
other random draw inside a step replays exactly (as torch.utils.checkpoint does: the CPU generator, and the
CUDA generators of the devices the state and the parameters live on)."""

from __future__ import annotations

from typing import Iterable, List, Tuple

import torch


class RngStates:
    def __init__(self, tensors: Iterable[torch.Tensor]):
        self.devices: List[int] = sorted({t.get_device() for t in tensors if t.is_cuda})
        self.nbytes = torch.get_rng_state().numel() + sum(torch.cuda.get_rng_state(d).numel() for d in self.devices)

    def get(self) -> Tuple[torch.Tensor, List[torch.Tensor]]:
        return torch.get_rng_state(), [torch.cuda.get_rng_state(d) for d in self.devices]

    def set(self, state) -> None:
        cpu, cuda = state
        torch.set_rng_state(cpu)
        for d, s in zip(self.devices, cuda):
            torch.cuda.set_rng_state(s, d)
