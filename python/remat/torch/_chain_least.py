"""The least budget of a taped chain in true bytes, and a plan within it: the least peak of any plan of
remat.chain_taped's model (docs/heterogeneous.md, "Taped advances"), exactly as remat.chain_taped finds it at
a granularity of one byte, for chains whose table at that unit would be far too large.

The planner's recurrence (H: x_s current; E: x_s current and stored; P: step s advanced taped) with its costs
left out is a recurrence over peaks, exact in bytes and with no memory axis, as a part's peak is its own plus
what is held around it:

    H(s, 1) = r_s = max(m_s, m_{s+1}) + a_s            E(s, 1) = max(2 m_s, r_s)
    P(s, l) = max(r_s, t_s + H(s+1, l-1))               with t_s the tape: tape_bytes, or m_s + a_s where 0
    E(s, l) = min(max(2 m_s, P(s, l)), min over j < l of max(m_s + max(m_k, m_{k+1}) over k = s..s+j-1,
                                                           m_s + H(s+j, l-j), E(s, j)))
    H(s, l) = min(P(s, l), E(s, l))

so that remat.chain_taped at a granularity of one byte plans a budget B if and only if H(0, T) <= B (the
recurrence's conditions on its memory are these, tests/python/test_chain_budget.py checks it on random chains).
"""

from __future__ import annotations

import sys
from typing import List, Sequence, Tuple

import numpy as np

from .._remat import Advance, Free, Restore, Reverse, Store

Step = Tuple[float, float, int, int, int]  # (f_k, b_k, m_k, a_k, t_k or 0 for m_k + a_k)

_TAPED = -1


class LeastPeak:
    """The least peak of every part of the chain (H and E above) and the option each took."""

    def __init__(self, steps: Sequence[Step], final_state_bytes: int):
        n = len(steps)
        self.n = n
        m = [int(s[2]) for s in steps] + [int(final_state_bytes)]
        a = [int(s[3]) for s in steps]
        # the tape: a step's own size where given (a fifth field, not 0), else its input and a_k
        t = [int(s[4]) if len(s) > 4 and s[4] else mk + ak for s, mk, ak in zip(steps, m, a)]
        # exact integers: int64 where every sum this takes fits (sums of the chain's sizes), else Python's ints
        dtype = np.int64 if 2 * (sum(m) + sum(a) + sum(t)) < 2 ** 62 else object
        self.m = np.array(m, dtype=dtype)
        run = np.maximum(self.m[:-1], self.m[1:])  # the current state while step k runs
        self.r = run + np.array(a, dtype=dtype)
        self.t = np.array(t, dtype=dtype)
        self.h = np.zeros((n + 1, n + 1), dtype=dtype)  # [s, l]
        self.e = np.zeros((n + 1, n + 1), dtype=dtype)
        self.h_taped = np.zeros((n + 1, n + 1), dtype=bool)
        self.e_option = np.zeros((n + 1, n + 1), dtype=np.int64)  # the split j, or _TAPED
        self.h[:n, 1] = self.r
        self.e[:n, 1] = np.maximum(2 * self.m[:n], self.r)
        # widest[s, j - 1]: the widest current state over the steps s..s+j-1 (an advance of j steps from x_s)
        widest = np.zeros((n, n), dtype=dtype)
        for s in range(n):
            widest[s, :n - s] = np.maximum.accumulate(run[s:])
        # every part of l steps at once, from each start s (the parts of fewer steps are final)
        for l in range(2, n + 1):
            s = np.arange(0, n - l + 1)
            j = np.arange(1, l)
            taped = np.maximum(self.r[s], self.t[s] + self.h[s + 1, l - 1])
            splits = np.maximum(np.maximum(self.m[s, None] + widest[s, :l - 1],
                                           self.m[s, None] + self.h[s[:, None] + j, l - j]), self.e[s, 1:l])
            best = np.argmin(splits, axis=1)  # the least split among the cheapest (as the planner breaks ties)
            least_split = splits[np.arange(len(s)), best]
            e_taped = np.maximum(2 * self.m[s], taped)
            use_taped = e_taped < least_split
            self.e[s, l] = np.where(use_taped, e_taped, least_split)
            self.e_option[s, l] = np.where(use_taped, _TAPED, best + 1)
            self.h_taped[s, l] = taped <= self.e[s, l]
            self.h[s, l] = np.minimum(taped, self.e[s, l])

    @property
    def least_bytes(self) -> int:
        """The least budget any plan of the model fits, in true bytes: H(0, T)."""
        return int(self.h[0, self.n])

    def actions(self) -> List:
        """A plan whose peak is the least (as remat.chain_taped emits its plans)."""
        out: List = []
        depth = sys.getrecursionlimit()
        sys.setrecursionlimit(max(depth, 4 * self.n + 1000))  # one frame or two per step of the chain
        try:
            self._h(0, self.n, 0, out)
        finally:
            sys.setrecursionlimit(depth)
        return out

    def _h(self, s: int, l: int, slot: int, out: List) -> None:
        if l == 1:
            out.append(Reverse(s))
        elif self.h_taped[s, l]:
            self._taped(s, l, slot, out)
        else:
            out.append(Store(0, slot, s))
            self._e(s, l, slot, out)

    def _taped(self, s: int, l: int, slot: int, out: List) -> None:
        out.append(Advance(s, s + 1, True))
        self._h(s + 1, l - 1, slot, out)
        out.append(Reverse(s))

    def _e(self, s: int, l: int, slot: int, out: List) -> None:
        if l == 1:
            out += [Free(0, slot), Reverse(s)]
            return
        option = int(self.e_option[s, l])
        if option == _TAPED:
            out.append(Free(0, slot))
            self._taped(s, l, slot, out)
            return
        out.append(Advance(s, s + option, False))
        self._h(s + option, l - option, slot + 1, out)
        out.append(Restore(0, slot, s))
        self._e(s, option, slot, out)
