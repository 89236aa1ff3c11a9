"""auto_checkpoint's measured peak counts every state it holds (remat.torch._stretch_input): a census of the
blocks' outputs still alive (torch's own storage reference counts, read through StorageWeakRef) taken at the
end of every block's forward, the running block's input and output left out (the current state, which the
measure leaves out everywhere), against the storages the measure counts at that moment. The blocks save their
output and not their input, so the chain model counts no input in their tapes: where a stretch of taped blocks
began from a restored snapshot, the stretch's leaf held that state, uncounted, until the stretch was reversed
(one state above the model; torch.utils.checkpoint holds its segment's input so too)."""

import dataclasses

import pytest

torch = pytest.importorskip("torch")
from remat.torch._auto import AutoCheckpoint, _least_budget  # noqa: E402
from remat.torch._profile import profile_blocks  # noqa: E402
from torch.multiprocessing.reductions import StorageWeakRef  # noqa: E402

nn = torch.nn


def _storage(t):
    return t.untyped_storage() if hasattr(t, "untyped_storage") else t.storage()


class Census:
    """Every block output's storage (a weak reference, its address and bytes) and, at each block's end, which
    of them are alive besides the block's own input and output."""

    def __init__(self):
        self.outputs = []
        self.moments = []  # (alive: {address: bytes}, counted addresses)
        self.counter = None

    def take(self, x, y):
        s = _storage(y)
        self.outputs.append((StorageWeakRef(s), s.data_ptr(), s.nbytes()))
        self.outputs = [o for o in self.outputs if not o[0].expired()]
        current = {_storage(x).data_ptr(), s.data_ptr()}
        alive = {ptr: size for _, ptr, size in self.outputs if ptr not in current}
        self.moments.append((alive, {key[2] for key in self.counter.live}))


class SavesItsOutput(nn.Module):
    """sigmoid(x + b): the sum saves nothing, the sigmoid its output."""

    def __init__(self, width, census):
        super().__init__()
        self.b = nn.Parameter(torch.randn(width))
        self.census = [census]  # a list: not a submodule

    def forward(self, x):
        y = torch.sigmoid(x + self.b)
        census = self.census[0]
        if census.counter is not None:
            census.take(x, y)
        return y


def test_every_state_alive_is_counted_and_the_peak_is_within_the_model():
    torch.manual_seed(5)
    census = Census()
    blocks = [SavesItsOutput(32, census) for _ in range(8)]
    x = torch.randn(64, 32, requires_grad=True)
    # the blocks' sizes as profiled, their times set (a block's backward twice its forward), so that the plans,
    # which re-run stretches of several taped blocks from restored snapshots, do not follow the timing noise
    profiles, plain_peak, _ = profile_blocks(blocks, x, repeats=0)
    profiles = [dataclasses.replace(p, forward_seconds=1.0, backward_seconds=2.0) for p in profiles]
    state = 64 * 32 * 4
    least = _least_budget([(1.0, 3.0, p.input_bytes, p.adjoint_bytes) for p in profiles], state, True)
    stretches = 0
    for budget in range(least, plain_peak, state // 2):
        fast = AutoCheckpoint(blocks, x, budget, profiles, plain_peak, preserve_rng_state=False)
        actions = fast.actions()
        stretches += any(a.kind == "restore" and b.kind == "free" and c.kind == "advance" and c.taped and
                         d.kind == "advance" and d.taped for a, b, c, d in zip(actions, actions[1:], actions[2:],
                                                                                actions[3:]))
        census.counter, census.moments = fast._counter, []
        fast(x).sum().backward()
        census.counter = None
        for alive, counted in census.moments:
            assert set(alive) <= counted, (budget, fast.actions())
        most = max(sum(alive.values()) for alive, _ in census.moments)
        assert most <= fast.measured_peak_bytes <= fast.predicted_peak_bytes <= budget
    assert stretches >= 2  # the stretches whose leaf was held
